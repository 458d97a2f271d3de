#!/usr/bin/env bash
# Interleaved collective comparison (bench/peers/mpi_coll.c) of Sluice's MPI against Debian's
# Open MPI and MPICH, one session, one machine: R rounds of (Open MPI, MPICH, Sluice) for each
# rank count, then a table of medians [min-max] over rounds and Sluice's ratio to the better
# peer (time: lower is better).
#
#   bench/compare-coll.sh [ROUNDS] [RANKS]      (defaults: 5 rounds, ranks 2,4)
#
# Defaults of mpi_coll: Allreduce 8 B and 64 KiB, Alltoall 1 KiB and 64 KiB. Ranks beyond the
# core count are oversubscribed for every stack alike (Open MPI --oversubscribe, MPICH and
# Sluice without binding).
# Results: bench/results/coll-<timestamp>/{openmpi,mpich,sluice}.jsonl and table.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
rounds="${1:-5}"
ranks_list="${2:-2,4}"
build="${BUILD:-$repo/build}"
out="$repo/bench/results/coll-$(date -u +%Y%m%dT%H%M%S)"
mkdir -p "$out"
BUILD="$build" "$repo/bench/peers/build.sh" >/dev/null
cores=$(nproc)

for ((r = 1; r <= rounds; r++)); do
  for n in ${ranks_list//,/ }; do
    echo "round $r/$rounds, $n ranks" >&2
    if ((n <= cores)); then
      obind=(--bind-to core); mbind=(-bind-to core); sbind=(--bind core); args=()
    else
      # Oversubscribed: MPICH busy-polls (milliseconds per call), so fewer calls per rep.
      obind=(--oversubscribe --bind-to none); mbind=(); sbind=(--bind none)
      args=(--iters 200 --reps 5)
    fi
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi -n "$n" "${obind[@]}" \
      --mca pml ob1 --mca btl self,vader "$repo/build-peers/mpi_coll.openmpi" --json \
      --impl openmpi "${args[@]}" >>"$out/openmpi.jsonl" 2>/dev/null
    mpirun.mpich -n "$n" "${mbind[@]}" "$repo/build-peers/mpi_coll.mpich" --json --impl mpich "${args[@]}" \
      >>"$out/mpich.jsonl" 2>/dev/null
    "$build/bin/sluicerun" -n "$n" "${sbind[@]}" "$repo/build-peers/mpi_coll.sluice" --json \
      --impl sluice "${args[@]}" >>"$out/sluice.jsonl"
  done
done

python3 - "$out" <<'PY' | tee "$out/table.md"
import json, sys, statistics, os
out = sys.argv[1]
data = {}
for impl in ("openmpi", "mpich", "sluice"):
    for line in open(os.path.join(out, impl + ".jsonl")):
        d = json.loads(line)
        data.setdefault((impl, d["bench"], d["ranks"], d["size"]), []).append(d["lat_us"])
keys = sorted({k[1:] for k in data})
def cell(impl, k):
    v = data[(impl,) + k]
    return statistics.median(v), min(v), max(v)
fmt = lambda t: f"{t[0]:.3g} [{t[1]:.3g}–{t[2]:.3g}]"
print("| op | ranks | size (B) | Open MPI µs | MPICH µs | Sluice µs | Sluice / better peer |")
print("|---|---|---|---|---|---|---|")
for k in keys:
    o, m, s = cell("openmpi", k), cell("mpich", k), cell("sluice", k)
    best = min(o[0], m[0])
    print(f"| {k[0]} | {k[1]} | {k[2]} | {fmt(o)} | {fmt(m)} | {fmt(s)} | {s[0] / best:.2f}× |")
PY
echo "results in $out" >&2
