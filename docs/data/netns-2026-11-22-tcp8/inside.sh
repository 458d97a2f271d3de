#!/bin/bash
# Run by ab.sh inside tests/netns/netns.sh (NETNS_HOSTS); RAWPROBE=1 runs raw_pingpong built with
# raw_pingpong-probe.patch (RAWPROBE_BIN) with and without an epoll registration.
# ITERS=default: sluice-bench's own iteration count (no --iters).
# inside netns.sh run: VARIANTS="dir1 dir2 ..." PAIRS=N ITERS=N RAW=0|1 LOOP=0|1 DRIVERS=tcp|udp|shm,tcp (SLUICE_DRIVERS)
IFS=, read -r A B <<<"$NETNS_HOSTS"
port=$((21000 + RANDOM % 8000))
iters_opt="$iters_opt"
[ "${ITERS:-}" = default ] && iters_opt=
for i in $(seq 1 ${PAIRS:-4}); do
  for v in $VARIANTS; do
    port=$((port+1))
    if [ "${LOOP:-0}" = 1 ]; then
      r=$(SLUICE_DRIVERS=${DRIVERS:-tcp} $v/sluicerun -n 2 --bind core $v/sluice-bench pingpong --sizes ${SIZE:-8} $iters_opt 2>>${ERRDIR:-/tmp}/stderr.$(basename $v) | awk -v s=${SIZEB:-8} '$1==s{print $3, $4, $7, $8}')
    else
      r=$(SLUICE_DRIVERS=${DRIVERS:-tcp} ip netns exec $A timeout 120 $v/sluicerun --hosts "$A,$B" --launch 'ip netns exec {host}' \
        --launch-keeps-env --boot-addr 10.77.1.1:$port --bind core $v/sluice-bench pingpong --sizes ${SIZE:-8} $iters_opt \
        2>>${ERRDIR:-/tmp}/stderr.$(basename $v) | awk -v s=${SIZEB:-8} '$1==s{print $3, $4, $7, $8}')
    fi
    echo "$i $(basename $v) $r"
  done
  if [ "${RAW:-0}" = 1 ] && [ "${LOOP:-0}" = 0 ]; then
    port=$((port+1))
    ip netns exec $A taskset -c 0 timeout 120 $REPO/build-peers/raw_pingpong tcp --listen 10.77.1.1:$port --sizes 8 >/dev/null &
    srv=$!
    sleep 0.2
    r=$(ip netns exec $B taskset -c 1 timeout 120 $REPO/build-peers/raw_pingpong tcp --connect 10.77.1.1:$port --sizes 8 --json)
    wait $srv
    echo "$i raw $(echo "$r" | grep -o '"lat_us":[0-9.]*')"
  fi
done
if [ -n "${RAWPROBE:-}" ]; then
  for e in 0 1 0 1; do
    port=$((port+1))
    if [ $e = 1 ]; then export RAW_EPOLL=1; else unset RAW_EPOLL; fi
    ip netns exec $A taskset -c 0 timeout 120 ${RAWPROBE_BIN:-raw_probe} tcp --listen 10.77.1.1:$port --sizes 8 --iters 50000 >/dev/null 2>>${ERRDIR:-/tmp}/rawprobe.txt &
    srv=$!
    sleep 0.2
    r=$(ip netns exec $B taskset -c 1 timeout 120 ${RAWPROBE_BIN:-raw_probe} tcp --connect 10.77.1.1:$port --sizes 8 --iters 50000 --json 2>>${ERRDIR:-/tmp}/rawprobe.txt)
    wait $srv
    echo "rawprobe epoll=$e $(echo "$r" | grep -o '"lat_us":[0-9.]*')" | tee -a ${ERRDIR:-/tmp}/rawprobe.txt
  done
fi
