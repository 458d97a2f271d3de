#!/usr/bin/env bash
# Inside `netns.sh run`: starts a sluicerun job from host 1 over every namespace host.
#
#   run_job.sh SLOTS SLUICERUN [sluicerun options] [--] prog [args...]
#
# SLOTS ranks per host (placement in blocks: host 1 gets ranks 0..SLOTS-1, and so on).
set -u
[[ $# -ge 3 && -n ${NETNS_HOSTS:-} ]] || {
  echo "usage (inside netns.sh run): run_job.sh SLOTS SLUICERUN [args...]" >&2
  exit 2
}
slots=$1 run=$2
shift 2
hosts=${NETNS_HOSTS//,/:$slots,}:$slots
exec ip netns exec "$NETNS_HEAD" "$run" --hosts "$hosts" --launch "$NETNS_LAUNCH" \
  --boot-addr "$NETNS_BOOT_ADDR" "$@"
