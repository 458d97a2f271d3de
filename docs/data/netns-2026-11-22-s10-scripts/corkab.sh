#!/bin/bash
# old (cork always) vs new (cork only with gso), GSO and GRO off, 1472 B datagrams, loopback
cd /work/main
for i in 1 2 3 4; do
  for v in old new; do
    if [ $v = old ]; then B=/tmp/lead/old/bin; else B=build/bin; fi
    r=$(SLUICE_DRIVERS=udp SLUICE_UDP_DATAGRAM=1472 SLUICE_UDP_GSO=0 SLUICE_UDP_GRO=0 $B/sluicerun -n 2 --bind core $B/sluice-bench pingpong --sizes 1M --iters 200 2>&1 | grep 1048576)
    echo "$v $r"
  done
done
