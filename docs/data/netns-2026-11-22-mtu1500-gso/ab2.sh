#!/bin/bash
# ab2.sh MTU SIZES: base then new build, tcp and udp, between two netns hosts
for b in /tmp/net/base /work/wt-net/build-n; do
  /tmp/net/ab.sh $b $1 $2 "tcp udp" 2>/dev/null | grep '^\(tcp\|udp\) {' | sed "s|^|$(basename $(dirname $b/x))/|" | python3 -c '
import sys, json
for l in sys.stdin:
    tag, js = l.split(" ", 1); d = json.loads(js)
    print(tag, d["size"], "lat_us=%.3f" % d["lat_us"], "best_us=%.3f" % d["best_us"], "bw_MBps=%.1f" % d["bw_MBps"], "pp_MBps=%.1f" % (d["size"]/d["lat_us"]))'
done
