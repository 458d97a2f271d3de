#!/usr/bin/env bash
# Overlap of nonblocking collectives (IMB-NBC method, bench/peers/mpi_nbc_overlap.c) for
# Sluice without and with its progress thread, Debian's Open MPI and MPICH, interleaved
# (run r of every stack before run r+1 of any) so that a change in the machine's load hits
# all stacks alike. Appends JSON lines to OUT (default bench/results/nbc-overlap.jsonl),
# each tagged with "impl" (sluice, openmpi, mpich), "label" (the Sluice variant or the
# peer) and "run".
#
# Usage: bench/nbc-overlap.sh [--build DIR] [--ranks "2 4"] [--ops LIST] [--sizes LIST]
#                             [--runs N] [--out FILE] [--stacks "sluice-off sluice-on
#                             openmpi mpich"] [-- extra mpi_nbc_overlap args]
#   stacks sluice-push-off / sluice-push-on: Sluice with the pushed rendezvous
#   (SLUICE_SHM_PUSH_MAX=${PUSH_MAX:-128K}), thread off / on
#   --build DIR  Sluice build directory (default build): DIR/bin/mpicc and DIR/bin/sluicerun
#   --idle-wait S  before each run, wait up to S seconds (default 120, 0 = no wait) for the
#                  machine to be < 10 % busy over 1 s (a concurrent build halves the figures)
# Ranks are bound one per core where there are enough cores (sluicerun's default,
# --bind-to core for the peers), else left to the kernel (--oversubscribe for Open MPI).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
build="$repo/build"
ranks="2"
ops="ibcast,igather,iscatter,ialltoall,iallreduce,isendrecv"
sizes="1,64,1K,16K,64K,256K,1M,4M"
runs=2
out="$repo/bench/results/nbc-overlap.jsonl"
stacks="sluice-off sluice-on openmpi mpich"
idle_wait=120
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$(cd "${2:?}" && pwd)"; shift 2 ;;
    --ranks) ranks="${2:?}"; shift 2 ;;
    --ops) ops="${2:?}"; shift 2 ;;
    --sizes) sizes="${2:?}"; shift 2 ;;
    --runs) runs="${2:?}"; shift 2 ;;
    --out) out="${2:?}"; shift 2 ;;
    --stacks) stacks="${2:?}"; shift 2 ;;
    --idle-wait) idle_wait="${2:?}"; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "nbc-overlap.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
extra=("$@")
bin="$build/peers"
BUILD="$build" "$here/peers/build.sh" "$bin" >&2
mkdir -p "$(dirname "$out")"
ncpu=$(nproc)

# shellcheck source=bench/idle.sh
source "$here/idle.sh"

for ((r = 1; r <= runs; r++)); do
  for n in $ranks; do
    for stack in $stacks; do
      args=(--json --ops "$ops" --sizes "$sizes" "${extra[@]}")
      wait_idle "$idle_wait" nbc-overlap.sh
      echo "nbc-overlap.sh: run $r/$runs, $n ranks, $stack ($(uptime | sed 's/.*load/load/'))" >&2
      case "$stack" in
        sluice-off | sluice-on)
          SLUICE_PROGRESS_THREAD="${stack#sluice-}" "$build/bin/sluicerun" -n "$n" --timeout 900 \
            "$bin/mpi_nbc_overlap.sluice" --impl sluice --label "$stack" "${args[@]}" ;;
        sluice-push-off | sluice-push-on)
          SLUICE_SHM_PUSH_MAX="${PUSH_MAX:-128K}" SLUICE_PROGRESS_THREAD="${stack#sluice-push-}" \
            "$build/bin/sluicerun" -n "$n" --timeout 900 \
            "$bin/mpi_nbc_overlap.sluice" --impl sluice --label "$stack" "${args[@]}" ;;
        openmpi)
          o=(--allow-run-as-root --mca pml ob1 --mca btl self,vader)
          if [ "$n" -le "$ncpu" ]; then o+=(--bind-to core); else o+=(--oversubscribe --bind-to none); fi
          mpirun.openmpi -n "$n" "${o[@]}" "$bin/mpi_nbc_overlap.openmpi" --impl openmpi \
            --label openmpi "${args[@]}" ;;
        mpich)
          b=(-bind-to core)
          [ "$n" -le "$ncpu" ] || b=(-bind-to none)
          mpirun.mpich -n "$n" "${b[@]}" "$bin/mpi_nbc_overlap.mpich" --impl mpich --label mpich \
            "${args[@]}" ;;
        *) echo "nbc-overlap.sh: unknown stack '$stack'" >&2; exit 2 ;;
      esac | sed "s/}\$/,\"run\":$r}/" >>"$out"
    done
  done
done
echo "nbc-overlap.sh: results appended to $out" >&2
