#!/usr/bin/env bash
# Heat maps of nonblocking-collective overlap like [MPC-Threads]' figure 3: one panel per stack
# (rows) and operation (columns), ranks (y) x message size (x) -> overlap (colour, %), the
# number in each cell. Input: the JSON lines of bench/nbc-overlap.sh; where a (stack, op,
# ranks, size) was measured several times, the median overlap is drawn.
#
# Usage: bench/nbc-overlap-plot.sh [IN.jsonl] [OUT.png] [--ops "ialltoall igather iscatter"]
#                                  [--stacks "sluice-on sluice-off openmpi mpich"]
#        (defaults: bench/results/nbc-overlap.jsonl, docs/img/nbc-overlap-heatmap.png)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
in="$repo/bench/results/nbc-overlap.jsonl"
out="$repo/docs/img/nbc-overlap-heatmap.png"
ops="ialltoall igather iscatter"
stacks="sluice-on sluice-off openmpi mpich"
pos=0
while [ $# -gt 0 ]; do
  case "$1" in
    --ops) ops="${2:?}"; shift 2 ;;
    --stacks) stacks="${2:?}"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) if [ $pos = 0 ]; then in="$1"; else out="$1"; fi; pos=$((pos + 1)); shift ;;
  esac
done
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# One grid file per (stack, op): "size_index ranks overlap_percent" rows, plus the labels.
python3 - "$in" "$tmp" "$ops" "$stacks" <<'EOF'
import json, sys, statistics
src, tmp, ops, stacks = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
cells = {}
for line in open(src):
    line = line.strip()
    if not line.startswith("{"):
        continue
    d = json.loads(line)
    if d.get("bench") != "nbc-overlap":
        continue
    key = (d.get("label") or d.get("impl"), d["op"], d["ranks"], d["size"])
    cells.setdefault(key, []).append(d["overlap"] * 100)
sizes = sorted({k[3] for k in cells})
ranks = sorted({k[2] for k in cells})
def label(s):
    for unit, n in (("M", 1 << 20), ("K", 1 << 10)):
        if s >= n and s % n == 0:
            return f"{s // n}{unit}"
    return str(s)
with open(f"{tmp}/xtics", "w") as f:
    f.write(", ".join(f'"{label(s)}" {i}' for i, s in enumerate(sizes)))
with open(f"{tmp}/ytics", "w") as f:
    f.write(", ".join(f'"{r}" {r}' for r in ranks))
with open(f"{tmp}/range", "w") as f:
    f.write(f"{len(sizes)} {min(ranks)} {max(ranks)}\n")
for st in stacks:
    for op in ops:
        with open(f"{tmp}/{st}.{op}.dat", "w") as f:
            for r in ranks:
                for i, s in enumerate(sizes):
                    v = cells.get((st, op, r, s))
                    f.write(f"{i} {r} {statistics.median(v) if v else 'NaN'}\n")
                f.write("\n")
EOF

read -r nsizes rmin rmax <"$tmp/range"
nrows=$(wc -w <<<"$stacks")
ncols=$(wc -w <<<"$ops")
{
  echo "set terminal pngcairo size $((ncols * 420)),$((nrows * 260 + 40)) font ',9'"
  echo "set output '$out'"
  echo "set multiplot layout $nrows,$ncols title 'Overlap of nonblocking collectives (IMB-NBC method, %) — ranks x message size'"
  echo "set palette defined (0 '#2c0c4a', 30 '#b5367a', 60 '#fb8a3c', 100 '#fcfdbf')"
  echo "set cbrange [0:100]"
  echo "set xrange [-0.5:$nsizes-0.5]"
  echo "set yrange [$rmin-0.5:$rmax+0.5]"
  echo "set xtics ($(cat "$tmp/xtics")) rotate by 45 right"
  echo "set ytics ($(cat "$tmp/ytics"))"
  echo "set ylabel 'ranks'"
  echo "unset key"
  for st in $stacks; do
    for op in $ops; do
      echo "set title '$st: $op'"
      echo "plot '$tmp/$st.$op.dat' using 1:2:(\$1-0.5):(\$1+0.5):(\$2-0.5):(\$2+0.5):3 \
            with boxxy fs solid 1.0 noborder lc palette, \
            '' using 1:2:(\$3 == \$3 ? sprintf('%d', \$3) : 'n/a') with labels tc rgb '#808080'"
    done
  done
  echo "unset multiplot"
} | gnuplot
echo "nbc-overlap-plot.sh: wrote $out" >&2
