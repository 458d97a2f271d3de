#!/bin/bash
IFS=, read -r A B <<<"$NETNS_HOSTS"
port=$((21000 + RANDOM % 8000))
run() { local V=$1; shift; port=$((port+1))
  env "$@" SLUICE_DRIVERS=tcp ip netns exec $A timeout 120 $V/sluicerun --hosts "$A,$B" --launch 'ip netns exec {host}' \
        --launch-keeps-env --boot-addr 10.77.1.1:$port --bind core $V/sluice-bench pingpong --sizes 1M 2>/dev/null | awk '$1==1048576{print $7}'; }
ucx() { port=$((port+1))
  UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 ip netns exec $A taskset -c 0 timeout 60 ucx_perftest -p $port -t tag_bw -s 1048576 -n ${UN:-1024} >/dev/null 2>&1 &
  sleep 0.3
  UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 ip netns exec $B taskset -c 1 timeout 60 ucx_perftest 10.77.1.1 -p $port -t tag_bw -s 1048576 -n ${UN:-1024} 2>/dev/null | awk '$1=="Final:"{printf "%.0f", $6*1.048576}'
  wait; }
run /tmp/progress/old X=1 >/dev/null
for i in $(seq 1 ${N:-6}); do
  echo "$i old $(run /tmp/progress/old X=1) new $(run /tmp/progress/new X=1) ucx $(ucx)"
done
