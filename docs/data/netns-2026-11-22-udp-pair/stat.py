import sys, statistics, collections
rows=[l.split() for l in open(sys.argv[1]) if l.strip()]
base=sys.argv[2]; col=int(sys.argv[3]) if len(sys.argv)>3 else 1
by=collections.defaultdict(list)
for r in rows: by[r[0]].append(float(r[col]))
for k,v in by.items(): print(f"{k}: n={len(v)} median {statistics.median(v):.2f} [{min(v):.2f}-{max(v):.2f}]")
for k,v in by.items():
    if k in (base,'raw'): continue
    b=by[base]; n=min(len(b),len(v))
    d=[v[i]-b[i] for i in range(n)]; q=[v[i]/b[i] for i in range(n)]
    print(f"{k} vs {base}: lower in {sum(x<0 for x in d)} of {n}, median diff {statistics.median(d):+.2f}, median ratio {statistics.median(q):.3f}")
