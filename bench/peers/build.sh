#!/usr/bin/env bash
# Builds the peer benchmarks with Debian's Open MPI and MPICH:
#   build-peers/mpi_pingpong.openmpi   (mpicc.openmpi)
#   build-peers/mpi_pingpong.mpich     (mpicc.mpich)
#   build-peers/mpi_nbc_overlap.{openmpi,mpich}
# and, when Sluice's wrapper exists (SLUICE_MPICC, default <repo>/build/bin/mpicc),
#   build-peers/mpi_nbc_overlap.sluice
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
  echo "built $out/mpi_pingpong.$impl"
  "mpicc.$impl" -O2 -std=c11 -Wall -Wextra "${extra[@]}" -o "$out/mpi_nbc_overlap.$impl" \
    "$here/mpi_nbc_overlap.c" -lm
  echo "built $out/mpi_nbc_overlap.$impl"
done
sluice_mpicc="${SLUICE_MPICC:-$repo/build/bin/mpicc}"
if [ -x "$sluice_mpicc" ]; then
  "$sluice_mpicc" -O2 -std=c11 -Wall -Wextra -o "$out/mpi_nbc_overlap.sluice" \
    "$here/mpi_nbc_overlap.c" -lm
  echo "built $out/mpi_nbc_overlap.sluice"
fi
cc -O2 -std=c11 -Wall -Wextra -o "$out/copy_ceiling" "$here/copy_ceiling.c"
echo "built $out/copy_ceiling"
