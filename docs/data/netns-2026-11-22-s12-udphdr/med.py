import sys,collections,statistics
d=collections.defaultdict(dict); col=int(sys.argv[2]) if len(sys.argv)>2 else 6
for f in sys.argv[1].split(','):
  for l in open(f):
    w=l.split()
    if len(w)<8: continue
    d[(f,w[0])][w[1]]=float(w[col])
cfgs=sorted({c for v in d.values() for c in v})
for c in cfgs: print(c, 'median', statistics.median([v[c] for v in d.values() if c in v]), 'n', sum(c in v for v in d.values()))
if 'base' in cfgs:
  for c in cfgs:
    if c=='base': continue
    pr=[(v[c],v['base']) for v in d.values() if c in v and 'base' in v]
    better = sum((a>b) if col==6 else (a<b) for a,b in pr)
    print(c,'better than base in',better,'of',len(pr))
