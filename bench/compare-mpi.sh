#!/usr/bin/env bash
# The MPI-level figures users measure first, Sluice's MPI against Debian's Open MPI and MPICH,
# interleaved in one session on one machine: R rounds of (Open MPI, MPICH, Sluice) for
#   pp-reused   bench/peers/mpi_pingpong: latency, windowed and bidirectional bandwidth, one
#               buffer pair reused for every message (as common suites do);
#   pp-fresh    the same with new, never-touched buffers per size (--fresh);
#   mrate-nN    bench/peers/mpi_mrate: 8 B multi-pair message rate with N ranks (N/2 pairs).
# then one table per part: medians [min-max] over rounds and Sluice's ratio to the better peer.
#
#   bench/compare-mpi.sh [ROUNDS] [SIZES] [RANKS]   (defaults: 3 rounds, 8,64K,1M,4M, 2,4)
#
# Launch options: Open MPI with ob1/vader (OMPI_OPTS overrides), MPICH's defaults, Sluice's
# sluicerun; two ranks are bound to a core each; ranks beyond the core count run unbound and
# oversubscribed for every stack alike. Run it under bench/quiet.sh on a shared machine.
# Results: bench/results/mpi-<timestamp>/<part>/{openmpi,mpich,sluice}.jsonl and table.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
rounds="${1:-3}"
sizes="${2:-8,64K,1M,4M}"
ranks_list="${3:-2,4}"
build="${BUILD:-$repo/build}"
out="$repo/bench/results/mpi-$(date -u +%Y%m%dT%H%M%S)"
peers="$repo/build-peers"
BUILD="$build" "$repo/bench/peers/build.sh" "$peers" >/dev/null
[ -x "$peers/mpi_pingpong.sluice" ] || { echo "build Sluice first (make)" >&2; exit 1; }
cores=$(nproc)
ompi_opts="${OMPI_OPTS:---mca pml ob1 --mca btl self,vader}"

# run STACK PART NRANKS PROGRAM ARGS...: one run, its JSON lines appended to the part's file.
run() {
  local stack=$1 part=$2 n=$3 prog=$4
  shift 4
  mkdir -p "$out/$part"
  local obind=(--bind-to core) mbind=(-bind-to core) sbind=(--bind core)
  if ((n > cores)); then obind=(--oversubscribe --bind-to none) mbind=() sbind=(--bind none); fi
  case $stack in
    openmpi)
      # shellcheck disable=SC2086
      OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi -n "$n" \
        "${obind[@]}" $ompi_opts "$peers/$prog.openmpi" "$@" ;;
    mpich) mpirun.mpich -n "$n" "${mbind[@]}" "$peers/$prog.mpich" "$@" ;;
    sluice) "$build/bin/sluicerun" -n "$n" "${sbind[@]}" "$peers/$prog.sluice" "$@" ;;
  esac 2>/dev/null | grep '^{' >>"$out/$part/$stack.jsonl" || echo "$stack $part: failed" >&2
}

for ((r = 1; r <= rounds; r++)); do
  echo "round $r/$rounds" >&2
  for stack in openmpi mpich sluice; do
    run "$stack" pp-reused 2 mpi_pingpong --sizes "$sizes" --json --no-progress --impl "$stack"
    run "$stack" pp-fresh 2 mpi_pingpong --sizes "$sizes" --json --no-progress --fresh \
      --impl "$stack"
    for n in ${ranks_list//,/ }; do
      run "$stack" "mrate-n$n" "$n" mpi_mrate --sizes 8 --json --impl "$stack"
    done
  done
done

{
  for part in pp-reused pp-fresh; do
    echo "## $part (2 ranks)"
    "$here/compare-table.py" "$out/$part" --stacks openmpi,mpich,sluice --peers openmpi,mpich \
      --figures lat_us,bw_MBps,bibw_MBps
    echo
  done
  for n in ${ranks_list//,/ }; do
    echo "## 8 B message rate, $n ranks ($((n / 2)) pairs)"
    "$here/compare-table.py" "$out/mrate-n$n" --stacks openmpi,mpich,sluice \
      --peers openmpi,mpich --figures rate_Mmsgs
    echo
  done
} | tee "$out/table.md"
echo "results in $out" >&2
