#!/bin/bash
# gsoab.sh: same build, GSO/GRO on vs off; netns MTU 1500 and loopback with 1472 B datagrams
b=/work/wt-net/build-n
fmt() { python3 -c '
import sys, json
for l in sys.stdin:
    l = l.split(" ", 1)[-1]
    if not l.startswith("{"): continue
    d = json.loads(l); print(sys.argv[1], d["size"], "lat_us=%.3f" % d["lat_us"], "bw_MBps=%.1f" % d["bw_MBps"], "pp_MBps=%.1f" % (d["size"]/d["lat_us"]))' "$1"; }
for i in 1 2; do
  for o in 1 0; do
    SLUICE_UDP_GSO=$o SLUICE_UDP_GRO=$o /tmp/net/ab.sh $b 1500 8,1M udp 2>/dev/null | fmt netns1500/gso=$o
    SLUICE_UDP_DATAGRAM=1472 SLUICE_UDP_GSO=$o SLUICE_UDP_GRO=$o SLUICE_DRIVERS=udp timeout 60 $b/bin/sluicerun -n 2 --bind core $b/bin/sluice-bench pingpong --sizes 8,1M --json --no-progress 2>/dev/null | fmt lo1472/gso=$o
  done
done
