import sys,collections,statistics
d=collections.defaultdict(list); e=collections.defaultdict(list); o=collections.defaultdict(list)
for l in open(sys.argv[1]):
  f=l.split()
  if len(f)<5: continue
  d[f[1]].append(float(f[3])); e[f[1]].append(float(f[2])); o[f[1]].append(int(f[4].split('=')[1]))
for k in d: print(k, 'bw median %.0f'%statistics.median(d[k]), sorted(int(x) for x in d[k]), 'lat med %.0f max %.0f'%(statistics.median(e[k]),max(e[k])), 'ofo+rtx', o[k])
