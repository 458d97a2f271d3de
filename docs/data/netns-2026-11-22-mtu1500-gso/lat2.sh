#!/bin/bash
# lat2.sh: merged build, udp 8 B latency, GRO on (recvmsg path) vs off (recv path); netns MTU 1500 and loopback
b=/work/wt-net/build-n
for i in 1 2 3 4; do for o in 1 0; do
  SLUICE_UDP_GRO=$o /tmp/net/ab.sh $b 1500 8 udp 2>/dev/null | grep -o '"lat_us":[0-9.]*' | sed "s/^/netns gro=$o /"
  SLUICE_UDP_GRO=$o SLUICE_DRIVERS=udp timeout 60 $b/bin/sluicerun -n 2 --bind core $b/bin/sluice-bench pingpong --sizes 8 --iters 20000 --json --no-progress 2>/dev/null | grep -o '"lat_us":[0-9.]*' | sed "s/^/lo gro=$o /"
done; done
