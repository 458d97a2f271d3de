import sys,collections,statistics
# paired: ratio of each cfg's bw to the base cfg's bw in the same round (argv[2] = base cfg name)
rows=collections.defaultdict(dict); lat=collections.defaultdict(dict)
for l in open(sys.argv[1]):
  f=l.split()
  if len(f)<5: continue
  rows[f[0]][f[1]]=float(f[3]); lat[f[0]][f[1]]=float(f[2])
base=sys.argv[2]
cfgs=list(next(iter(rows.values())).keys())
for c in cfgs:
  r=[rows[k][c]/rows[k][base] for k in rows if c in rows[k] and base in rows[k]]
  lr=[lat[k][c]/lat[k][base] for k in rows if c in lat[k] and base in lat[k]]
  bw=[rows[k][c] for k in rows if c in rows[k]]
  print(f"{c:28s} bw/base median {statistics.median(r):.3f} (wins {sum(x>1 for x in r)}/{len(r)}), geo-mean {statistics.geometric_mean(r):.3f}; bw median {statistics.median(bw):.0f}; lat/base median {statistics.median(lr):.3f}")
