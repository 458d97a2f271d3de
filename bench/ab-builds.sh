#!/usr/bin/env bash
# Interleaved A/B of two Sluice builds (an old commit and a new one) against Debian's Open MPI
# and MPICH, in one session: the no-regression check of a refactor. Each round runs every
# stack once; the old and new builds swap places every round (on this VM whichever of two
# back-to-back runs goes second tends to win by 0.1-0.2 us at 8 B).
#
#   bench/ab-builds.sh OLD_BUILD NEW_BUILD [ROUNDS]      (default 5 rounds)
#
# Figures (medians over rounds, two ranks pinned one per core):
#   shm   sluice-bench pingpong 8 B .. 4 MiB: latency and windowed bandwidth
#   mpi   bench/peers/mpi_pingpong built with each build's mpicc, 8 B .. 4 MiB, latency and bandwidth
#   tcp   SLUICE_DRIVERS=tcp, 8 B and 1 MiB; Open MPI's tcp BTL as the peer
#   udp   SLUICE_DRIVERS=udp (udp under the reliability layer), 8 B and 1 MiB
# Results: bench/results/ab-<timestamp>/<stack>.jsonl and table.md (the new/old column is the
# ratio of medians: < 1 is faster for latency, > 1 is faster for bandwidth).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
old="$(cd "${1:?old build dir}" && pwd)"
new="$(cd "${2:?new build dir}" && pwd)"
rounds="${3:-5}"
out="${OUT:-$repo/bench/results/ab-$(date -u +%Y%m%dT%H%M%S)}"
mkdir -p "$out"
shm_sizes=8,64K,1M,4M
net_sizes=8,1M

peers="$out/peers"
BUILD="$new" "$here/peers/build.sh" "$peers" >/dev/null
BUILD="$old" "$here/peers/build.sh" "$out/peers-old" >/dev/null
cp "$out/peers-old/mpi_pingpong.sluice" "$peers/mpi_pingpong.sluice-old"

ompi() {
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi -n 2 --bind-to core \
    --mca pml ob1 "$@" 2>/dev/null
}
sluice() {  # TAG BUILD SIZES [env...]: one native ping-pong run of BUILD
  local tag=$1 b=$2 sizes=$3
  shift 3
  env "$@" "$b/bin/sluicerun" -n 2 --bind core "$b/bin/sluice-bench" pingpong --sizes "$sizes" \
    --json --no-progress >>"$out/$tag.jsonl"
}
one_build() {  # old|new
  local b=$old mpi=$peers/mpi_pingpong.sluice-old
  [ "$1" = new ] && b=$new mpi=$peers/mpi_pingpong.sluice
  sluice "shm-$1" "$b" "$shm_sizes"
  "$b/bin/sluicerun" -n 2 --bind core "$mpi" --sizes "$shm_sizes" --json --fresh --no-bibw \
    --no-progress >>"$out/mpi-$1.jsonl"
  sluice "tcp-$1" "$b" "$net_sizes" SLUICE_DRIVERS=tcp
  sluice "udp-$1" "$b" "$net_sizes" SLUICE_DRIVERS=udp
}

for ((r = 1; r <= rounds; r++)); do
  echo "round $r/$rounds" >&2
  ompi --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
    "$peers/mpi_pingpong.openmpi" --sizes "$shm_sizes" --json --fresh --no-bibw --no-progress \
    >>"$out/openmpi.jsonl"
  mpirun.mpich -n 2 -bind-to core "$peers/mpi_pingpong.mpich" --sizes "$shm_sizes" --json \
    --fresh --no-bibw --no-progress >>"$out/mpich.jsonl" 2>/dev/null
  ompi --mca btl self,tcp "$peers/mpi_pingpong.openmpi" --sizes "$net_sizes" --json --fresh \
    --no-bibw --no-progress >>"$out/ompi-tcp.jsonl"
  if ((r % 2)); then one_build old; one_build new; else one_build new; one_build old; fi
done

{
  echo "## shm (sluice-bench pingpong)"
  "$here/compare-table.py" "$out" --stacks openmpi,mpich,shm-old,shm-new --peers openmpi,mpich \
    --vs shm-new/shm-old
  echo
  echo "## MPI level (mpi_pingpong)"
  "$here/compare-table.py" "$out" --stacks openmpi,mpich,mpi-old,mpi-new --peers openmpi,mpich \
    --figures lat_us,bw_MBps --vs mpi-new/mpi-old
  echo
  echo "## tcp and udp (loopback)"
  "$here/compare-table.py" "$out" --stacks ompi-tcp,tcp-old,tcp-new,udp-old,udp-new \
    --peers ompi-tcp --vs tcp-new/tcp-old --vs udp-new/udp-old
} | tee "$out/table.md"
echo "results in $out" >&2
