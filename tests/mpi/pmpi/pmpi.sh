#!/bin/sh
# pmpi.sh MODE RANKS WORKDIR: builds the profiling library prof.c and the application app.c
# with an MPI's compiler wrapper and runs the application, which checks that the library saw
# exactly its calls (see app.c).
#   MODE preload  app linked with libmpi.so alone, libprof.so put in front by LD_PRELOAD
#        link     `mpicc app.c -lprof` (libprof.so before libmpi.so on the link line)
#        static   libprof.a and libmpi.a (SLUICE_MPI_STATIC=1): the static MPI_ names give way
# Environment: MPICC and MPIRUN (with its options) name the MPI, e.g. build/bin/mpicc and
# build/bin/sluicerun, or Debian MPICH's mpicc.mpich and mpirun.mpich (proving the test).
set -eu
mode=$1 ranks=$2 work=$3
src=$(cd "$(dirname "$0")" && pwd)
: "${MPICC:?}" "${MPIRUN:?}"
rm -rf "$work" && mkdir -p "$work" && cd "$work"

case "$mode" in
  preload)
    $MPICC -shared -fPIC -o libprof.so "$src/prof.c"
    $MPICC -o app "$src/app.c"
    # Only the ranks get the tool (not the launcher): env sets LD_PRELOAD inside each rank.
    # A sanitizer runtime the program links must stay first in the library list.
    preload="$work/libprof.so"
    runtime=$(ldd ./app | sed -n 's/.*\(lib[at]san\.so[^ ]*\) => \([^ ]*\).*/\2/p' | head -n 1)
    [ -n "$runtime" ] && preload="$runtime:$preload"
    # shellcheck disable=SC2086  # MPIRUN carries options
    exec $MPIRUN -n "$ranks" env LD_PRELOAD="$preload" ./app ;;
  link)
    $MPICC -shared -fPIC -o libprof.so "$src/prof.c"
    $MPICC -o app "$src/app.c" -L"$work" -Wl,-rpath,"$work" -lprof
    # The tool must come before libmpi among the program's libraries.
    readelf -d app | grep NEEDED
    # shellcheck disable=SC2086
    exec $MPIRUN -n "$ranks" ./app ;;
  static)
    $MPICC -c -o prof.o "$src/prof.c"
    ar rcs libprof.a prof.o
    SLUICE_MPI_STATIC=1 $MPICC -o app "$src/app.c" -L"$work" -lprof
    if readelf -d app | grep -q 'NEEDED.*libmpi'; then
      echo "pmpi.sh: the static build links libmpi.so" >&2
      exit 1
    fi
    # shellcheck disable=SC2086
    exec $MPIRUN -n "$ranks" ./app ;;
  *)
    echo "pmpi.sh: unknown mode $mode" >&2
    exit 2 ;;
esac
