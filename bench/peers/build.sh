#!/usr/bin/env bash
# Builds the peer benchmarks with Debian's Open MPI and MPICH:
#   build-peers/mpi_pingpong.openmpi   (mpicc.openmpi)
#   build-peers/mpi_pingpong.mpich     (mpicc.mpich)
#   build-peers/mpi_nbc_overlap.{openmpi,mpich}, mpi_coll.*, mpi_mrate.* (multi-pair rate)
#   build-peers/mpi_msgrate.{openmpi,mpich}   (one pair's windowed rate; --count-mode)
#   build-peers/mpi_rma.{openmpi,mpich,sluice} (one-sided: put latency, get bandwidth, ...)
#   build-peers/copy_ceiling, raw_pingpong   (plain cc: the memcpy and kernel socket floors)
#   build-peers/mpi_pingpong.sluice, mpi_coll.sluice, mpi_nbc_overlap.sluice,
#   mpi_msgrate.sluice
#                                      (Sluice's $BUILD/bin/mpicc, default build/, when built)
# Installs the Debian MPI packages first if a compiler wrapper is missing.
# Usage: bench/peers/build.sh [OUTDIR]      (default: <repo>/build-peers)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:-$repo/build-peers}"

if ! command -v mpicc.openmpi >/dev/null || ! command -v mpirun.openmpi >/dev/null ||
   ! command -v mpicc.mpich >/dev/null || ! command -v mpirun.mpich >/dev/null; then
  echo "build.sh: installing Debian's Open MPI and MPICH" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y \
    openmpi-bin libopenmpi-dev mpich libmpich-dev
fi

mkdir -p "$out"
for impl in openmpi mpich; do
  extra=()
  # GCC 12 false positive on MPICH's MPI_STATUSES_IGNORE ((MPI_Status *)1) in MPI_Waitall.
  [ "$impl" = mpich ] && extra=(-Wno-stringop-overflow)
  "mpicc.$impl" -O2 -std=c11 -Wall -Wextra "${extra[@]}" -o "$out/mpi_pingpong.$impl" \
    "$here/mpi_pingpong.c" -lm
  "mpicc.$impl" -O2 -std=c11 -Wall -Wextra "${extra[@]}" -o "$out/mpi_coll.$impl" "$here/mpi_coll.c"
  "mpicc.$impl" -O2 -std=c11 -Wall -Wextra "${extra[@]}" -o "$out/mpi_mrate.$impl" "$here/mpi_mrate.c"
  "mpicc.$impl" -O2 -std=c11 -Wall -Wextra "${extra[@]}" -o "$out/mpi_nbc_overlap.$impl" \
    "$here/mpi_nbc_overlap.c" -lm
  "mpicc.$impl" -O2 -std=c11 -Wall -Wextra "${extra[@]}" -o "$out/mpi_msgrate.$impl" \
    "$here/mpi_msgrate.c"
  "mpicc.$impl" -O2 -std=c11 -Wall -Wextra "${extra[@]}" -o "$out/mpi_rma.$impl" "$here/mpi_rma.c"
  echo "built $out/mpi_pingpong.$impl $out/mpi_coll.$impl $out/mpi_nbc_overlap.$impl" \
    "$out/mpi_msgrate.$impl"
done
# The same sources through Sluice's own wrapper (MPI-level figures for Sluice).
sluice_build="${BUILD:-$repo/build}"
if [ -x "$sluice_build/bin/mpicc" ]; then
  "$sluice_build/bin/mpicc" -O2 -std=c11 -Wall -Wextra -o "$out/mpi_pingpong.sluice" \
    "$here/mpi_pingpong.c" -lm
  "$sluice_build/bin/mpicc" -O2 -std=c11 -Wall -Wextra -o "$out/mpi_coll.sluice" "$here/mpi_coll.c"
  "$sluice_build/bin/mpicc" -O2 -std=c11 -Wall -Wextra -o "$out/mpi_mrate.sluice" \
    "$here/mpi_mrate.c"
  "$sluice_build/bin/mpicc" -O2 -std=c11 -Wall -Wextra -o "$out/mpi_nbc_overlap.sluice" \
    "$here/mpi_nbc_overlap.c" -lm
  "$sluice_build/bin/mpicc" -O2 -std=c11 -Wall -Wextra -o "$out/mpi_msgrate.sluice" \
    "$here/mpi_msgrate.c"
  # Builds from before MPI_Win existed (A/B runs against an old commit) skip the RMA program.
  sluice_inc=$("$sluice_build/bin/mpicc" -show | grep -o -- '-I[^ ]*' | head -1 | cut -c3-)
  if grep -qs MPI_Win_allocate "$sluice_inc/mpi.h"; then
    "$sluice_build/bin/mpicc" -O2 -std=c11 -Wall -Wextra -o "$out/mpi_rma.sluice" "$here/mpi_rma.c"
  else
    echo "mpi_rma.sluice not built: $sluice_build's mpi.h has no MPI_Win" >&2
  fi
  echo "built $out/mpi_pingpong.sluice $out/mpi_coll.sluice $out/mpi_nbc_overlap.sluice" \
    "$out/mpi_msgrate.sluice"
fi
cc -O2 -std=c11 -Wall -Wextra -o "$out/copy_ceiling" "$here/copy_ceiling.c"
cc -O2 -std=c11 -Wall -Wextra -o "$out/raw_pingpong" "$here/raw_pingpong.c"
echo "built $out/copy_ceiling $out/raw_pingpong"
