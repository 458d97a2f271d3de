#!/usr/bin/env bash
# inside netns.sh: perf record -a for a sluice udp run and a raw udp run
set -u
repo=/work/wt-hosts
IFS=, read -r A B <<<"$NETNS_HOSTS"
out=/tmp/hosts/prof
iters=${ITERS:-150000}
port=$((20000 + RANDOM % 20000))
BIN=${BIN:-/tmp/hosts/ab/base}
perf record -a -g -e cpu-clock -F 20000 -o $out/sluice.data -- env SLUICE_DRIVERS=udp ip netns exec "$A" timeout 120 $repo/build-h/bin/sluicerun --hosts "$A,$B" \
      --launch 'ip netns exec {host}' --launch-keeps-env --boot-addr "10.77.1.1:$port" \
      --bind core $BIN pingpong --sizes 8 --iters "$iters" --no-progress > $out/sluice.out 2>&1
port=$((port+1))
raw=$repo/build-peers/raw_pingpong
perf record -a -g -e cpu-clock -F 20000 -o $out/raw.data -- bash -c "ip netns exec $A taskset -c 0 timeout 120 $raw udp --listen 10.77.1.1:$port --sizes 8 --iters $iters >/dev/null & sleep 0.2; ip netns exec $B taskset -c 1 timeout 120 $raw udp --connect 10.77.1.1:$port --sizes 8 --iters $iters; wait" > $out/raw.out 2>&1
