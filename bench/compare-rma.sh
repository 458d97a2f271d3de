#!/usr/bin/env bash
# MPI one-sided figures, Sluice's MPI against Debian's Open MPI and MPICH, interleaved in one
# session on one machine: R rounds of (Open MPI, MPICH, Sluice) running bench/peers/mpi_rma
# (2 ranks, a core each) with reused buffers, then with --fresh ones, for MPI_Win_allocate
# windows (and, with WIN=create, MPI_Win_create over malloc'd memory):
#   put-lat-flush (8 B put + flush under lock_all), put-lat-fence (8 B put + fence),
#   fop-lat (fetch-and-op + flush), acc-rate (8 B accumulates), get-bw (sizes).
# Then one table per part: medians [min-max] over rounds and Sluice's ratio to the better peer
# (Sluice / best peer: for latencies lower is better, for rates and bandwidths higher).
#
#   bench/compare-rma.sh [ROUNDS] [SIZES]      (defaults: 5 rounds, 1K,64K,1M,4M)
#
# Launch options as bench/compare-mpi.sh (Open MPI: ob1/vader, OMPI_OPTS overrides). Run it
# under bench/quiet.sh on a shared machine. Results:
# bench/results/rma-<timestamp>/<part>/{openmpi,mpich,sluice}.jsonl and table.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
rounds="${1:-5}"
sizes="${2:-1K,64K,1M,4M}"
win="${WIN:-allocate}"
build="${BUILD:-$repo/build}"
out="$repo/bench/results/rma-$(date -u +%Y%m%dT%H%M%S)"
peers="$repo/build-peers"
BUILD="$build" "$repo/bench/peers/build.sh" "$peers" >/dev/null
[ -x "$peers/mpi_rma.sluice" ] || { echo "build Sluice first (make)" >&2; exit 1; }
ompi_opts="${OMPI_OPTS:---mca pml ob1 --mca btl self,vader}"

run() {
  local stack=$1 part=$2
  shift 2
  mkdir -p "$out/$part"
  case $stack in
    openmpi)
      # shellcheck disable=SC2086
      OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 mpirun.openmpi -n 2 \
        --bind-to core $ompi_opts "$peers/mpi_rma.openmpi" "$@" ;;
    mpich) timeout 300 mpirun.mpich -n 2 -bind-to core "$peers/mpi_rma.mpich" "$@" ;;
    sluice) timeout 300 "$build/bin/sluicerun" -n 2 --bind core "$peers/mpi_rma.sluice" "$@" ;;
  esac 2>/dev/null | grep '^{' >>"$out/$part/$stack.jsonl" || echo "$stack $part: failed" >&2
}

for ((r = 1; r <= rounds; r++)); do
  echo "round $r/$rounds" >&2
  for stack in openmpi mpich sluice; do
    run "$stack" reused --json --impl "$stack" --win "$win" --sizes "$sizes"
    run "$stack" fresh --json --impl "$stack" --win "$win" --sizes "$sizes" --fresh
  done
done

python3 - "$out" <<'PY' | tee "$out/table.md"
import json, os, statistics, sys
out = sys.argv[1]
stacks = ["openmpi", "mpich", "sluice"]
for part in ["reused", "fresh"]:
    rows = {}
    for s in stacks:
        path = os.path.join(out, part, s + ".jsonl")
        if not os.path.exists(path):
            continue
        for line in open(path):
            o = json.loads(line)
            rows.setdefault((o["test"], o["size"], o["unit"]), {}).setdefault(s, []).append(o["value"])
    print(f"## {part} buffers (2 ranks, median [min-max] over rounds)\n")
    print("| test | size | unit | Open MPI | MPICH | Sluice | Sluice / better peer |")
    print("|---|---|---|---|---|---|---|")
    for (test, size, unit), by in sorted(rows.items()):
        cells, med = [], {}
        for s in stacks:
            v = by.get(s, [])
            if v:
                med[s] = statistics.median(v)
                cells.append(f"{med[s]:.3f} [{min(v):.3f}-{max(v):.3f}]")
            else:
                cells.append("-")
        lower_better = unit == "us"
        peers = [med[s] for s in ("openmpi", "mpich") if s in med]
        ratio = "-"
        if peers and "sluice" in med:
            best = min(peers) if lower_better else max(peers)
            ratio = f"{med['sluice'] / best:.2f}x" if best else "-"
        print(f"| {test} | {size} | {unit} | " + " | ".join(cells) + f" | {ratio} |")
    print()
PY
echo "results in $out" >&2
