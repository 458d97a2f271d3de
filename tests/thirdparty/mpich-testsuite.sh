#!/usr/bin/env bash
# Build and run MPICH's own MPI test suite (test/mpi of the Debian MPICH source
# package) unmodified against Sluice's mpicc/mpirun, or against Debian's MPICH
# for comparison. Not part of `make test`: it takes long. See docs/MPI.md,
# "Third-party test suites".
#
# Usage: tests/thirdparty/mpich-testsuite.sh [options] [dir ...]
#   --impl=sluice|mpich  MPI to test (default sluice: <build>/bin/mpicc, mpirun;
#                        mpich: mpicc.mpich, mpirun.mpich)
#   --build=DIR          Sluice build directory (default: <repo>/build)
#   --maxnp=N            largest process count a test may use (default 4)
#   --timeout=S          per-test time limit in seconds (default 60)
#   --jobs=N             make -j for building the tests (default 2)
#   --fortran            also configure the Fortran (f77/f90/f08) tests
#   --reconfigure        configure again even if already configured
# dirs default to: pt2pt coll comm group datatype attr init info topo rma errhan
# The source is downloaded once to ${XDG_CACHE_HOME:-~/.cache}/sluice and
# checked against the SHA-256 listed in the Debian .dsc; nothing of it enters
# the repository. Per-directory results (TAP) and a summary go to
# <cache>/mpich-<impl>/results/.
set -euo pipefail

version=4.0.2
debrev=3
pool=http://deb.debian.org/debian/pool/main/m/mpich
# SHA-256 of mpich_${version}.orig.tar.xz, as listed in mpich_${version}-${debrev}.dsc.
orig_sha256=b27039f964afeb6b8a3e009c56b441cbe368c26d6d6476ad3bb7190996875860

repo=$(cd "$(dirname "$0")/../.." && pwd)
impl=sluice
build=$repo/build
maxnp=4
timeout=60
jobs=2
fortran=0
reconfigure=0
dirs=()
for arg in "$@"; do
    case $arg in
    --impl=*) impl=${arg#*=} ;;
    --build=*) build=$(cd "${arg#*=}" && pwd) ;;
    --maxnp=*) maxnp=${arg#*=} ;;
    --timeout=*) timeout=${arg#*=} ;;
    --jobs=*) jobs=${arg#*=} ;;
    --fortran) fortran=1 ;;
    --reconfigure) reconfigure=1 ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    -*)
        echo "unknown option $arg" >&2
        exit 2
        ;;
    *) dirs+=("$arg") ;;
    esac
done
[ ${#dirs[@]} -gt 0 ] || dirs=(pt2pt coll comm group datatype attr init info topo rma errhan)

case $impl in
sluice)
    cc=$build/bin/mpicc
    fc=$build/bin/mpifort
    mpiexec=$build/bin/mpirun
    ;;
mpich)
    cc=$(command -v mpicc.mpich)
    fc=$(command -v mpifort.mpich || true)
    mpiexec=$(command -v mpirun.mpich)
    ;;
*)
    echo "--impl must be sluice or mpich" >&2
    exit 2
    ;;
esac
[ -x "$cc" ] && [ -x "$mpiexec" ] || {
    echo "no $cc or $mpiexec (build Sluice first)" >&2
    exit 2
}

cache=${XDG_CACHE_HOME:-$HOME/.cache}/sluice
mkdir -p "$cache"
tarball=$cache/mpich_${version}.orig.tar.xz
if ! echo "$orig_sha256  $tarball" | sha256sum -c --quiet 2>/dev/null; then
    echo "downloading $pool/mpich_${version}.orig.tar.xz"
    curl -fsS -o "$cache/mpich_${version}-${debrev}.dsc" "$pool/mpich_${version}-${debrev}.dsc"
    grep -q "$orig_sha256 .* mpich_${version}.orig.tar.xz" "$cache/mpich_${version}-${debrev}.dsc" || {
        echo "the .dsc does not list the expected SHA-256" >&2
        exit 1
    }
    curl -fsS -o "$tarball.part" "$pool/mpich_${version}.orig.tar.xz"
    mv "$tarball.part" "$tarball"
    echo "$orig_sha256  $tarball" | sha256sum -c --quiet || {
        echo "checksum mismatch for $tarball" >&2
        rm -f "$tarball"
        exit 1
    }
fi

# One in-tree configured copy per MPI (the suite's configure bakes the compiler in).
top=$cache/mpich-$impl
src=$top/mpich-$version/test/mpi
if [ ! -f "$src/configure" ]; then
    mkdir -p "$top"
    tar -C "$top" -xJf "$tarball" "mpich-$version/test/mpi"
fi
results=$top/results
mkdir -p "$results"
cd "$src"
if [ $reconfigure = 1 ] || [ ! -f Makefile ]; then
    opts=(--disable-spawn --disable-romio --disable-ft-tests --disable-cxx --disable-perftest
        --disable-checkpointing --disable-dtpools --disable-part --enable-strictmpi)
    if [ $fortran = 1 ] && [ -n "$fc" ]; then
        opts+=(--enable-fortran=all)
    else
        opts+=(--enable-fortran=no)
    fi
    echo "configuring test/mpi for $impl ($cc)"
    # The suite's configure takes the MPI from MPICC/MPIFC/MPIF77 (CC is ignored and it
    # would find whatever `mpicc` is on PATH).
    MPICC=$cc MPIFC=$fc MPIF77=$fc MPIEXEC=$mpiexec ./configure "${opts[@]}" \
        >"$results/configure.log" 2>&1 || {
        echo "configure failed; see $results/configure.log" >&2
        exit 1
    }
    # Programs built by an earlier configuration would otherwise count as up to date.
    make -k clean >/dev/null 2>&1 || true
fi
grep -qx "CC = $cc" Makefile || {
    echo "test/mpi is configured with another compiler than $cc; use --reconfigure" >&2
    exit 1
}
make -C util -j"$jobs" >"$results/util.log" 2>&1 || {
    echo "building test/mpi/util failed; see $results/util.log" >&2
    exit 1
}

export MPITEST_TIMEOUT=$timeout
summary=$results/summary.txt
printf '%-10s %6s %6s %6s %6s\n' dir tests pass fail nobuild | tee "$summary"
for d in "${dirs[@]}"; do
    [ -d "$d" ] || {
        echo "$d: no such test directory" >&2
        continue
    }
    # Build in parallel first (-k: a test that fails to build is reported by runtests).
    make -C "$d" -k -j"$jobs" >"$results/$d.build.log" 2>&1 || true
    (cd "$d" && ../runtests -srcdir=. -tests=testlist -mpiexec="$mpiexec" -maxnp="$maxnp" \
        -tapfile="$results/$d.tap" >"$results/$d.run.log" 2>&1) || true
    total=$(grep -cE '^(not )?ok ' "$results/$d.tap" || true)
    pass=$(grep -cE '^ok ' "$results/$d.tap" || true)
    fail=$(grep -cE '^not ok ' "$results/$d.tap" || true)
    nobuild=$(grep -c 'Failed to build' "$results/$d.run.log" || true)
    printf '%-10s %6s %6s %6s %6s\n' "$d" "$total" "$pass" "$fail" "$nobuild" | tee -a "$summary"
done
echo "failing tests: grep '^not ok' $results/<dir>.tap; output in $results/<dir>.run.log"
