#!/usr/bin/env bash
# Interleaved ping-pong comparison of Sluice against Debian's Open MPI and MPICH, in one
# session on one machine: R rounds of (Open MPI, MPICH, Sluice), then a table of medians
# [min-max] over rounds and Sluice's ratios to the better peer. Sluice runs twice per round:
# its native API (sluice-bench) and the peers' own MPI program built with Sluice's mpicc.
#
#   bench/compare-pingpong.sh [ROUNDS] [SIZES]      (defaults: 7 rounds, 8,64K,1M,4M)
#
# Results: bench/results/compare-<timestamp>/{openmpi,mpich,sluice}.jsonl and table.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
rounds="${1:-7}"
sizes="${2:-8,64K,1M,4M}"
build="${BUILD:-$repo/build}"
out="$repo/bench/results/compare-$(date -u +%Y%m%dT%H%M%S)"
mkdir -p "$out"

BUILD="$build" "$repo/bench/peers/build.sh" >/dev/null
[ -x "$build/bin/sluice-bench" ] || { echo "build Sluice first (make)" >&2; exit 1; }

ompi_opts="${OMPI_OPTS:---bind-to core --mca pml ob1 --mca btl self,vader --mca btl_vader_single_copy_mechanism none}"
for ((r = 1; r <= rounds; r++)); do
  echo "round $r/$rounds" >&2
  # shellcheck disable=SC2086
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi -n 2 $ompi_opts \
    "$repo/build-peers/mpi_pingpong.openmpi" --sizes "$sizes" --json --fresh --no-bibw --no-progress \
    >>"$out/openmpi.jsonl" 2>/dev/null
  mpirun.mpich -n 2 -bind-to core "$repo/build-peers/mpi_pingpong.mpich" --sizes "$sizes" \
    --json --fresh --no-bibw --no-progress >>"$out/mpich.jsonl" 2>/dev/null
  "$build/bin/sluicerun" -n 2 --bind core "$build/bin/sluice-bench" pingpong --sizes "$sizes" \
    --json --no-progress >>"$out/sluice.jsonl"
  "$build/bin/sluicerun" -n 2 --bind core "$repo/build-peers/mpi_pingpong.sluice" \
    --sizes "$sizes" --json --fresh --no-bibw --no-progress >>"$out/sluice-mpi.jsonl"
done

"$here/compare-table.py" "$out" --stacks openmpi,mpich,sluice,sluice-mpi --peers openmpi,mpich |
  tee "$out/table.md"
echo "results in $out" >&2
