#!/bin/bash
b=/work/wt-net/build-n
for i in 1 2 3; do for a in 4 16 64; do
  XACK=$a SLUICE_STATS=1 /tmp/net/ab.sh $b 1500 1M udp > /tmp/net/ack.$a.$i 2>&1
  echo "ack_every=$a $(grep -o '"bw_MBps":[0-9.]*' /tmp/net/ack.$a.$i) $(grep -o 'acks_standalone=[0-9]*' /tmp/net/ack.$a.$i | paste -sd' ')"
done; done
