import sys, statistics as st, collections
d = collections.defaultdict(list); pairs = collections.defaultdict(dict)
for f in sys.argv[1:]:
    for l in open(f):
        p = l.split()
        if len(p) >= 3 and p[0].isdigit():
            try: v = float(p[2].split(':')[-1])
            except: continue
            d[p[1]].append(v); pairs[(f, p[0])][p[1]] = v
names = list(d)
for n in names: print(f"{n:8s} n={len(d[n]):3d} median {st.median(d[n]):.3f} min {min(d[n]):.3f} max {max(d[n]):.3f}")
if len(names) >= 2:
    a, b = names[0], names[1]
    r = [x[b] / x[a] for x in pairs.values() if a in x and b in x]
    w = sum(1 for x in r if x < 1)
    print(f"{b}/{a} per pair: median {st.median(r):.3f}, {b} faster in {w} of {len(r)}")
