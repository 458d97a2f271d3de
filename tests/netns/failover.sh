#!/usr/bin/env bash
# Inside `netns.sh run --dual`: a udp job striped over both links of every host
# (SLUICE_UDP_RAILS=eth0,eth1); when rank 0 is halfway through its messages, host 2's
# second link is cut at the switch (as a failed cable or switch port would be). Every
# message must still arrive exactly once with its contents; the switch port must have
# carried packets before the cut (the second rail was in use, in either direction), and the
# reliability layer's statistics must show traffic on both rails and failovers. (Failovers
# also count rails taken out after congestion losses, so their number alone does not prove
# the cut.)
#
#   failover.sh SLUICERUN NET_STRESS MESSAGES
set -u
[[ $# -eq 3 && -n ${NETNS_PREFIX:-} ]] || {
  echo "usage (inside netns.sh run --dual): failover.sh SLUICERUN NET_STRESS MESSAGES" >&2
  exit 2
}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
run=$1 stress=$2 messages=$3
log=$(mktemp)
trap 'rm -f "$log"' EXIT

cut=0
while IFS= read -r line; do
  echo "$line" >>"$log"
  if [[ $cut == 0 && $line == *"rank 0 halfway"* ]]; then
    before=$(ip netns exec "${NETNS_PREFIX}sw" sh -c \
      'cat /sys/class/net/h2l2/statistics/rx_packets /sys/class/net/h2l2/statistics/tx_packets' |
      tr '\n' ' ')
    ip -n "${NETNS_PREFIX}sw" link set h2l2 down && cut=1
    echo "failover.sh: cut host 2's second link (switch port h2l2) after it carried" \
      "rx/tx packets: $before" >>"$log"
  fi
done < <("$here/run_job.sh" 1 "$run" --timeout 100 env SLUICE_DRIVERS=udp \
  SLUICE_UDP_RAILS=eth0,eth1 SLUICE_STATS=1 "$stress" "$messages" 2>&1)
wait $! 2>/dev/null
status=$?
cat "$log"

problems=()
[[ $cut == 1 ]] || problems+=("the link was never cut (no halfway mark)")
# Both directions together: each sender stripes by its own view of the rails (a rail it saw
# lose packets under load gets less), so one direction may carry few before the cut.
read -r rx tx <<<"${before:-0 0}"
[[ $((${rx:-0} + ${tx:-0})) -gt 200 ]] ||
  problems+=("the second link carried almost nothing before the cut (rx/tx ${before:-?})")
grep -q "messages per peer, max [0-9]* bytes: all verified" "$log" ||
  problems+=("not every message arrived exactly once and intact")
grep -Eq "rail0_packets=[1-9][0-9]* rail1_packets=[1-9][0-9]* rail_failovers=[1-9]" "$log" ||
  problems+=("no rank shows traffic on both rails and a failover in its statistics")
[[ $status == 0 ]] || problems+=("the job exited with status $status")
if [[ ${#problems[@]} -gt 0 ]]; then
  printf 'failover.sh: FAILED: %s\n' "${problems[@]}" >&2
  exit 1
fi
echo "failover.sh: passed: link cut mid-run, every message delivered once, failover counted"
