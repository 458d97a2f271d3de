#!/bin/bash
b=/work/wt-net/build-n
for i in 1 2 3 4; do for o in "SLUICE_UDP_GRO=1 SLUICE_UDP_GSO=1" "SLUICE_UDP_GRO=0 SLUICE_UDP_GSO=1" "SLUICE_UDP_GRO=0 SLUICE_UDP_GSO=0"; do
  env $o /tmp/net/ab.sh $b 1500 8 udp 2>/dev/null | grep -o '"lat_us":[0-9.]*' | sed "s/^/$o /"
done; /tmp/net/ab.sh /tmp/net/base 1500 8 udp 2>/dev/null | grep -o '"lat_us":[0-9.]*' | sed "s/^/base /"; done
