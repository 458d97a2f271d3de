#!/usr/bin/env bash
set -u
repo=/work/wt-hosts
IFS=, read -r A B <<<"$NETNS_HOSTS"
iters=${ITERS:-30000}
out=/tmp/hosts/prof
port=$((20000 + RANDOM % 20000))
raw=$repo/build-peers/raw_pingpong
EV="-e syscalls:sys_enter_sendto -e syscalls:sys_exit_sendto -e syscalls:sys_exit_recvfrom -e syscalls:sys_exit_recvmsg"
for BIN in ${BINS:-/tmp/hosts/ab/base}; do
port=$((port+1))
n=$(basename $BIN)
perf record -a $EV -o $out/t-$n.data -- env SLUICE_DRIVERS=udp ip netns exec "$A" timeout 120 $repo/build-h/bin/sluicerun --hosts "$A,$B" \
      --launch 'ip netns exec {host}' --launch-keeps-env --boot-addr "10.77.1.1:$port" \
      --bind core $BIN pingpong --sizes 8 --iters "$iters" --no-progress 2>&1 | grep -E "^ +8 "
done
port=$((port+1))
perf record -a $EV -o $out/t-raw.data -- bash -c "ip netns exec $A taskset -c 0 timeout 120 $raw udp --listen 10.77.1.1:$port --sizes 8 --iters $iters >/dev/null & sleep 0.2; ip netns exec $B taskset -c 1 timeout 120 $raw udp --connect 10.77.1.1:$port --sizes 8 --iters $iters; wait" 2>&1 | grep raw
