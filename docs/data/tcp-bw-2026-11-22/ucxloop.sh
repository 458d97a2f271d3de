#!/bin/bash
port=$((21000 + RANDOM % 8000))
run() { local V=$1; SLUICE_DRIVERS=tcp timeout 120 $V/sluicerun -n 2 --bind core $V/sluice-bench pingpong --sizes 1M 2>/dev/null | awk '$1==1048576{print $7}'; }
ucx() { port=$((port+1))
  UCX_TLS=tcp,self UCX_NET_DEVICES=lo taskset -c 0 timeout 60 ucx_perftest -p $port -t tag_bw -s 1048576 -n 1024 >/dev/null 2>&1 &
  sleep 0.3
  UCX_TLS=tcp,self UCX_NET_DEVICES=lo taskset -c 1 timeout 60 ucx_perftest 127.0.0.1 -p $port -t tag_bw -s 1048576 -n 1024 2>/dev/null | awk '$1=="Final:"{printf "%.0f", $6*1.048576}'
  wait; }
run /tmp/progress/old >/dev/null
for i in $(seq 1 ${N:-6}); do echo "$i old $(run /tmp/progress/old) new $(run /tmp/progress/new) ucx $(ucx)"; done
