# pool.py COL FILE... : rotated base/recv pairs (abr.sh lines, pair id first) pooled; COL 3 = lat_us (lower better), 6 = bw (higher better)
import sys, statistics
col = int(sys.argv[1]); pairs = []
for f in sys.argv[2:]:
    d = {}; order = {}
    for l in open(f):
        w = l.split()
        if len(w) < 8: continue
        d.setdefault(w[0], {})[w[1]] = float(w[col]); order.setdefault(w[0], []).append(w[1])
    for k, v in d.items():
        if 'base' in v and 'recv' in v: pairs.append((v['base'], v['recv'], order[k][1] == 'recv'))
better = lambda b, r: r < b if col == 3 else r > b
diff = [r - b for b, r, _ in pairs]
print(f"pairs {len(pairs)}: recv better in {sum(better(b, r) for b, r, _ in pairs)}; "
      f"median base {statistics.median(b for b, _, _ in pairs):.3f} recv {statistics.median(r for _, r, _ in pairs):.3f}; "
      f"median per-pair diff (recv-base) {statistics.median(diff):+.3f}")
for second in (True, False):
    s = [(b, r) for b, r, x in pairs if x == second]
    print(f"  recv {'second' if second else 'first '}: better in {sum(better(b, r) for b, r in s)} of {len(s)}, "
          f"median diff {statistics.median(r - b for b, r in s):+.3f}")
