#!/usr/bin/env bash
# Inside `netns.sh run --hosts 2`: a udp job (one rank per host) loses host 2 mid-run: when
# rank 0 is halfway through its messages, host 2's only link is cut at the switch. The
# processes live on, but nothing gets through any more: the reliability layer must declare
# the peer dead after SLUICE_REL_PEER_TIMEOUT (3 s here), the requests involving it must
# fail, and the job must end with an error instead of hanging.
#
#   hostloss.sh SLUICERUN NET_STRESS MESSAGES
set -u
[[ $# -eq 3 && -n ${NETNS_PREFIX:-} ]] || {
  echo "usage (inside netns.sh run): hostloss.sh SLUICERUN NET_STRESS MESSAGES" >&2
  exit 2
}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
run=$1 stress=$2 messages=$3
log=$(mktemp)
trap 'rm -f "$log"' EXIT

cut=0 cut_at=0
while IFS= read -r line; do
  echo "$line" >>"$log"
  if [[ $cut == 0 && $line == *"rank 0 halfway"* ]]; then
    # (a flag apart from the time: $SECONDS is 0 when the cut comes within the first second)
    ip -n "${NETNS_PREFIX}sw" link set h2l1 down && cut=1 cut_at=$SECONDS
    echo "hostloss.sh: cut host 2's link (switch port h2l1)" >>"$log"
  fi
done < <("$here/run_job.sh" 1 "$run" --timeout 60 env SLUICE_DRIVERS=udp \
  SLUICE_REL_PEER_TIMEOUT=3s NET_STRESS_PAUSE_MS=500 "$stress" "$messages" 2>&1)
wait $!
status=$?
cat "$log"

problems=()
[[ $cut == 1 ]] || problems+=("the link was never cut (no halfway mark)")
[[ $status != 0 ]] || problems+=("the job succeeded although a host was gone")
[[ $status != 124 ]] || problems+=("the job hung until sluicerun's timeout")
grep -q "all verified" "$log" && problems+=("the job claims every message arrived")
grep -Eq "rank [01] is unreachable: its requests fail" "$log" ||
  problems+=("no rank declared its peer dead")
if [[ ${#problems[@]} -gt 0 ]]; then
  printf 'hostloss.sh: FAILED: %s\n' "${problems[@]}" >&2
  exit 1
fi
echo "hostloss.sh: passed: host lost mid-run, peer declared dead, job ended with status" \
  "$status $((SECONDS - cut_at)) s after the cut"
