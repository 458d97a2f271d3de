#!/bin/bash
# Sluice 8 B latency with short (1000) vs long (20000) runs, interleaved; DRV=udp|tcp, LOOP=1 or inside netns
IFS=, read -r A B <<<"${NETNS_HOSTS:-x,y}"
port=$((23000 + RANDOM % 8000))
for i in $(seq 1 ${PAIRS:-4}); do
  for it in 1000 20000; do
    port=$((port+1))
    if [ "${LOOP:-0}" = 1 ]; then
      r=$(SLUICE_DRIVERS=$DRV $EXTRA /tmp/lead/new/sluicerun -n 2 --bind core /tmp/lead/new/sluice-bench pingpong --sizes 8 --iters $it 2>&1)
    else
      r=$(env SLUICE_DRIVERS=$DRV $EXTRA ip netns exec $A timeout 60 /tmp/lead/new/sluicerun --hosts "$A,$B" --launch 'ip netns exec {host}' --launch-keeps-env --boot-addr 10.77.1.1:$port --bind core /tmp/lead/new/sluice-bench pingpong --sizes 8 --iters $it 2>&1)
    fi
    echo "$i $DRV iters=$it $(echo "$r" | awk '$1==8{print "lat", $3, "best", $4}')"
  done
done
