#!/usr/bin/env bash
# Runs one measurement command on a machine made as quiet as this user can make it, and
# prints what was done, so that a figure in docs/PERFORMANCE.md can be rerun the same way.
#
#   bench/quiet.sh [options] -- COMMAND [ARGS...]
#
#   --freeze           stop (SIGSTOP) this user's other processes that are using CPU now
#                      (more than --busy percent over one second), and continue (SIGCONT)
#                      them when COMMAND ends, however it ends. Never touches the command's
#                      own process tree, this script's ancestors, or other users' processes.
#   --freeze-pid PID   stop exactly this process for the duration (repeatable; its children
#                      are not included).
#   --busy PCT         CPU share that makes a process "busy" for --freeze (default 5).
#   --governor NAME    set every CPU's cpufreq governor (e.g. performance) for the duration
#                      and restore it afterwards; reports when the machine has no cpufreq
#                      (virtual machines usually have none) or it is not writable.
#   --idle-wait S      then wait up to S seconds for the machine to be < 10 % busy
#                      (bench/idle.sh; default 30, 0 = do not wait).
#   --dry-run          print what would be frozen and exit.
# --freeze is for a machine you measure on alone or with colleagues who agreed: it stops
# every busy process of your user, builds and editors included, until COMMAND ends.
#
# The record it prints on stderr (one JSON line, prefix "quiet:") names the commit, the
# kernel, the load and what was frozen; COMMAND's own output is untouched.
# Exit status: COMMAND's.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=SCRIPTDIR/idle.sh
source "$here/idle.sh"

freeze=0 busy=5 governor="" idle_wait=30 dry=0
pids=()
while [ $# -gt 0 ]; do
  case "$1" in
    --freeze) freeze=1 ;;
    --freeze-pid) pids+=("$2"); shift ;;
    --busy) busy="$2"; shift ;;
    --governor) governor="$2"; shift ;;
    --idle-wait) idle_wait="$2"; shift ;;
    --dry-run) dry=1 ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    --) shift; break ;;
    *) echo "quiet.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ $# -gt 0 ] || [ $dry = 1 ] || { echo "quiet.sh: no command (see --help)" >&2; exit 2; }

# Our ancestors (never frozen: freezing the shell that waits for us would hang the run).
ancestors=" $$ "
p=$$
while [ "$p" -gt 1 ]; do
  p=$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null || echo 1)
  ancestors+="$p "
done

# CPU ticks per pid of this user, over one second: "pid ticks".
ticks() {
  local f pid
  for f in /proc/[0-9]*/stat; do
    pid=${f#/proc/}; pid=${pid%/stat}
    [ -O "/proc/$pid" ] || continue
    awk -v p="$pid" '{sub(/^.*\) /, ""); print p, $12 + $13}' "$f" 2>/dev/null || true
  done
}
if [ $freeze = 1 ]; then
  hz=$(getconf CLK_TCK)
  declare -A before=()
  while read -r pid t; do before[$pid]=$t; done < <(ticks)
  sleep 1
  while read -r pid t; do
    [ -n "${before[$pid]:-}" ] || continue
    case "$ancestors" in *" $pid "*) continue ;; esac
    if [ $(((t - before[$pid]) * 100 / hz)) -ge "$busy" ]; then pids+=("$pid"); fi
  done < <(ticks)
fi

if [ $dry = 1 ]; then
  for pid in "${pids[@]}"; do
    echo "would freeze $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-100)"
  done
  exit 0
fi

frozen=()
saved_gov=()
# shellcheck disable=SC2317  # called through the EXIT trap
restore() {
  local i
  for pid in "${frozen[@]}"; do kill -CONT "$pid" 2>/dev/null || true; done
  for i in "${!saved_gov[@]}"; do
    echo "${saved_gov[$i]}" >"/sys/devices/system/cpu/cpu$i/cpufreq/scaling_governor" 2>/dev/null || true
  done
}
trap restore EXIT
trap 'exit 130' INT TERM

for pid in "${pids[@]}"; do
  if kill -STOP "$pid" 2>/dev/null; then frozen+=("$pid"); fi
done

gov_note="none"
if [ -n "$governor" ]; then
  gov_note="unavailable"
  for g in /sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor; do
    [ -e "$g" ] || break
    i=${g#/sys/devices/system/cpu/cpu}; i=${i%%/*}
    old=$(cat "$g")
    if echo "$governor" >"$g" 2>/dev/null; then saved_gov[$i]=$old; gov_note="$governor"; else gov_note="not writable"; fi
  done
fi

wait_idle "$idle_wait" quiet.sh
commit=$(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown)
printf 'quiet: {"commit":"%s","kernel":"%s","cpus":%d,"load1":"%s","frozen":[%s],"governor":"%s","command":"%s"}\n' \
  "$commit" "$(uname -r)" "$(nproc)" "$(cut -d' ' -f1 /proc/loadavg)" \
  "$(IFS=,; echo "${frozen[*]}")" "$gov_note" "$*" >&2

status=0
"$@" || status=$?
exit $status
