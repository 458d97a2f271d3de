#!/usr/bin/env bash
# Builds and runs the peer ping-pong benchmark with Debian's Open MPI and MPICH, two ranks
# each bound to its own core, and writes one JSON object per size and line to
# bench/results/peers-<impl>.jsonl (overwritten; --append adds to it instead).
#
# Usage: bench/peers/run.sh [--impl openmpi|mpich|all] [--append] [--runs N]
#                           [--idle-wait S] [-- mpi_pingpong args...]
#   --idle-wait S  before each run, wait up to S seconds (default 300, 0 = no wait) for
#                  the machine to be idle (< 10 % CPU busy over 1 s): on 2 cores a
#                  concurrent build halves the figures.
#   default mpi_pingpong args: --json --fresh --no-bibw (full sweep 1 B .. 16 MiB, powers
#   of 1.05, new buffers per size: the method of sluice-bench pingpong)
#   e.g.   bench/peers/run.sh -- --sizes 8,64K,1M,4M
#
# Launch options (the fastest intra-node settings found on the reference machine, see
# docs/PERFORMANCE.md); override with the environment variables OMPI_OPTS / MPICH_OPTS:
#   Open MPI 4.1: mpirun.openmpi -n 2 --bind-to core --mca pml ob1 --mca btl self,vader
#                   --mca btl_vader_single_copy_mechanism none
#                 (copy-in/copy-out through vader's shared-memory fragments: on this KVM
#                 guest it beats the default CMA single copy from 1 MiB up and ties below;
#                 --allow-run-as-root and --oversubscribe are added when needed)
#   MPICH 4.0:    mpirun.mpich -n 2 -bind-to core   (ch4, POSIX shared-memory module)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="$repo/build-peers"
results="$repo/bench/results"

impls="openmpi mpich"
append=0
runs=1
idle_wait=300
while [ $# -gt 0 ]; do
  case "$1" in
    --impl) [ "${2:-}" = all ] && impls="openmpi mpich" || impls="${2:?--impl needs a value}"; shift 2 ;;
    --append) append=1; shift ;;
    --runs) runs="${2:?--runs needs a value}"; shift 2 ;;
    --idle-wait) idle_wait="${2:?--idle-wait needs seconds}"; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
args=("$@")
has_json=0
for a in "${args[@]}"; do [ "$a" = --json ] && has_json=1; done
[ $has_json = 1 ] || args=(--json --fresh --no-bibw "${args[@]}")

"$here/build.sh" "$bin" >&2
mkdir -p "$results"

ompi_launch() {
  local extra=()
  [ "$(id -u)" -eq 0 ] && extra+=(--allow-run-as-root)
  # Two ranks need two cores; oversubscribe only where there are fewer.
  [ "$(nproc)" -lt 2 ] && extra+=(--oversubscribe)
  # shellcheck disable=SC2086
  mpirun.openmpi -n 2 "${extra[@]}" ${OMPI_OPTS:---bind-to core --mca pml ob1 --mca btl self,vader --mca btl_vader_single_copy_mechanism none} "$@"
}
mpich_launch() {
  # shellcheck disable=SC2086
  mpirun.mpich -n 2 ${MPICH_OPTS:--bind-to core} "$@"
}

# shellcheck source=bench/idle.sh
source "$here/../idle.sh"

for impl in $impls; do
  out="$results/peers-$impl.jsonl"
  [ $append = 1 ] || : >"$out"
  for ((r = 1; r <= runs; r++)); do
    wait_idle "$idle_wait" run.sh
    echo "run.sh: $impl run $r/$runs -> $out" >&2
    case "$impl" in
      openmpi) ompi_launch "$bin/mpi_pingpong.openmpi" --impl openmpi "${args[@]}" >>"$out" ;;
      mpich) mpich_launch "$bin/mpi_pingpong.mpich" --impl mpich "${args[@]}" >>"$out" ;;
      *) echo "run.sh: unknown implementation '$impl' (openmpi, mpich)" >&2; exit 2 ;;
    esac
  done
done
