#!/usr/bin/env bash
# Interleaved collective comparison (bench/peers/mpi_coll.c) of Sluice's MPI against Debian's
# Open MPI and MPICH, one session, one machine: R rounds of (Open MPI, MPICH, Sluice) for each
# rank count, then a table of medians [min-max] over rounds and Sluice's ratio to the better
# peer (time: lower is better).
#
#   bench/compare-coll.sh [ROUNDS] [RANKS]      (defaults: 5 rounds, ranks 2,4)
#
# Defaults of mpi_coll: Bcast and Allreduce at 8 B, 64 KiB and 1 MiB, Alltoall at 8 B,
# 1 KiB, 64 KiB and 1 MiB (per peer), time per call of the slowest rank, median over
# repetitions, each result checked once. Ranks beyond the core count are oversubscribed for
# every stack alike (Open MPI --oversubscribe, MPICH and Sluice without binding); MPICH then
# busy-polls for milliseconds per call and mpi_coll cuts its calls per repetition (--rep-ms).
#
# Environment:
#   BUILD=DIR   the Sluice build measured (default <repo>/build)
#   BASE=DIR    a second Sluice build (e.g. main's) measured in the same rounds, right after
#               the first: an A/B in one window. Adds the columns "Sluice base" and
#               "Sluice / base".
#   OPS=..., SIZES=...   passed to mpi_coll as --ops / --sizes (default: all).
# Results: bench/results/coll-<timestamp>/{openmpi,mpich,sluice[,base]}.jsonl and table.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
rounds="${1:-5}"
ranks_list="${2:-2,4}"
build="${BUILD:-$repo/build}"
base="${BASE:-}"
out="$repo/bench/results/coll-$(date -u +%Y%m%dT%H%M%S)"
mkdir -p "$out"
BUILD="$build" "$repo/bench/peers/build.sh" >/dev/null
if [ -n "$base" ]; then
  BUILD="$base" "$repo/bench/peers/build.sh" "$repo/build-peers-base" >/dev/null
fi
cores=$(nproc)
sel=()
[ -n "${OPS:-}" ] && sel+=(--ops "$OPS")
[ -n "${SIZES:-}" ] && sel+=(--sizes "$SIZES")

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
      --impl openmpi "${args[@]}" "${sel[@]}" >>"$out/openmpi.jsonl" 2>/dev/null
    mpirun.mpich -n "$n" "${mbind[@]}" "$repo/build-peers/mpi_coll.mpich" --json --impl mpich \
      "${args[@]}" "${sel[@]}" >>"$out/mpich.jsonl" 2>/dev/null
    "$build/bin/sluicerun" -n "$n" "${sbind[@]}" "$repo/build-peers/mpi_coll.sluice" --json \
      --impl sluice "${args[@]}" "${sel[@]}" >>"$out/sluice.jsonl"
    if [ -n "$base" ]; then
      "$base/bin/sluicerun" -n "$n" "${sbind[@]}" "$repo/build-peers-base/mpi_coll.sluice" --json \
        --impl base "${args[@]}" "${sel[@]}" >>"$out/base.jsonl"
    fi
  done
done

python3 - "$out" <<'PY' | tee "$out/table.md"
import json, sys, statistics, os
out = sys.argv[1]
impls = ["openmpi", "mpich", "sluice"]
if os.path.exists(os.path.join(out, "base.jsonl")):
    impls.append("base")
data = {}
for impl in impls:
    for line in open(os.path.join(out, impl + ".jsonl")):
        d = json.loads(line)
        data.setdefault((impl, d["bench"], d["ranks"], d["size"]), []).append(d["lat_us"])
order = {"bcast": 0, "allreduce": 1, "alltoall": 2}
keys = sorted({k[1:] for k in data}, key=lambda k: (order.get(k[0], 9), k[0], k[1], k[2]))
def cell(impl, k):
    v = data.get((impl,) + k)
    return (statistics.median(v), min(v), max(v)) if v else None
fmt = lambda t: f"{t[0]:.3g} [{t[1]:.3g}–{t[2]:.3g}]" if t else "—"
def size(b):
    for unit, m in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= m and b % m == 0:
            return f"{b // m} {unit}"
    return f"{b} B"
has_base = "base" in impls
head = "| op | ranks | size | Open MPI µs | MPICH µs | Sluice µs | Sluice / better peer |"
rule = "|---|---|---|---|---|---|---|"
if has_base:
    head += " Sluice base µs | base / better peer | Sluice / base |"
    rule += "---|---|---|"
print(head)
print(rule)
for k in keys:
    o, m, s = cell("openmpi", k), cell("mpich", k), cell("sluice", k)
    peers = [c[0] for c in (o, m) if c]
    best = min(peers) if peers else None
    ratio = lambda c: f"{c[0] / best:.2f}×" if c and best else "—"
    line = f"| {k[0]} | {k[1]} | {size(k[2])} | {fmt(o)} | {fmt(m)} | {fmt(s)} | {ratio(s)} |"
    if has_base:
        b = cell("base", k)
        sb = f"{s[0] / b[0]:.2f}×" if s and b else "—"
        line += f" {fmt(b)} | {ratio(b)} | {sb} |"
    print(line)
PY
echo "results in $out" >&2
