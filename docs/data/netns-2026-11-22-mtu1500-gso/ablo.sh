#!/bin/bash
# ablo.sh SIZES: loopback, base then new, udp and tcp, 3 times
for i in 1 2 3; do for b in /tmp/net/base /work/wt-net/build-n; do for d in udp tcp; do
  SLUICE_DRIVERS=$d timeout 60 $b/bin/sluicerun -n 2 --bind core $b/bin/sluice-bench pingpong --sizes $1 --json --no-progress 2>/dev/null | python3 -c '
import sys, json
for l in sys.stdin:
    if not l.startswith("{"): continue
    d = json.loads(l); print(sys.argv[1], d["size"], "lat_us=%.3f" % d["lat_us"], "bw_MBps=%.1f" % d["bw_MBps"], "pp_MBps=%.1f" % (d["size"]/d["lat_us"]))' "$(basename $(dirname $b/x))/$d"
done; done; done
