#!/usr/bin/env bash
# Ends a hanging job from outside and checks that nothing is left behind.
#
#   lifecycle.sh SLUICERUN BOOT_PROBE signal|timeout|kill-launcher NRANKS
#
# signal:        sends SIGTERM to sluicerun once every rank runs; expects exit 143.
# timeout:       runs with --timeout 2; expects exit 124 within a few seconds.
# kill-launcher: SIGKILLs sluicerun; its ranks must die with it. Its socket directory is
#                gone already (the launcher removes it once every rank has joined); a
#                directory left by a launcher killed earlier than that (made up here: a
#                socket nobody listens on) is removed by the next sluicerun start.
# kill-launcher-forking: the same with --hosts and a launch command that runs the rank as
#                its child (as sshd does), so the launcher's parent-death signal reaches only
#                the launch command: the ranks must see the store connection close and exit.
#                (The shell passes its standard input, which carries the launch token, to
#                the rank: "cmd &" alone would give it /dev/null.)
# All: every rank process is gone; signal and timeout also remove the socket directory.
set -u
sluicerun=$1 probe=$2 how=$3 nranks=$4

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAILED: $*"
  echo "---- stdout ----"; cat "$work/out"
  echo "---- stderr ----"; cat "$work/err"
  exit 1
}

options=()
[[ $how == timeout ]] && options=(--timeout 2)
[[ $how == kill-launcher-forking ]] &&
  options=(--hosts a:2,b:2 --boot-addr 127.0.0.1 --launch "env PROBE_HOST={host} sh -c '{ \"\$@\" <&3 & } 3<&0 && wait' fork")
start=$(date +%s%N)
"$sluicerun" -n "$nranks" "${options[@]}" "$probe" hang >"$work/out" 2>"$work/err" &
launcher=$!

# Wait (bounded) until every rank has reported its pid.
for _ in $(seq 100); do
  [[ $(grep -c hanging "$work/out") -eq $nranks ]] && break
  sleep 0.1
done
[[ $(grep -c hanging "$work/out") -eq $nranks ]] || fail "ranks did not all start"

if [[ $how == signal ]]; then
  kill -TERM "$launcher"
  expected_status=143 expected_message='received signal 15'
elif [[ $how == kill-launcher* ]]; then
  kill -KILL "$launcher"
  expected_status=137 expected_message=''
else
  expected_status=124 expected_message='job timed out after 2 s; killing [0-9]+ ranks'
fi
wait "$launcher"
status=$?
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))

[[ $status -eq $expected_status ]] || fail "exit status $status, expected $expected_status"
[[ -z $expected_message ]] || grep -Eq "$expected_message" "$work/err" || fail "no message matching '$expected_message'"
[[ $how == timeout ]] && (( elapsed_ms > 6000 )) && fail "took ${elapsed_ms} ms"
# Ranks orphaned by a killed launcher die by their parent-death signal, or when their store
# connection closes: allow a moment.
for pid in $(sed -n 's/.* pid \([0-9]*\) .*/\1/p' "$work/out"); do
  for _ in $(seq 50); do
    [[ -d /proc/$pid ]] && ! grep -q zombie "/proc/$pid/status" 2>/dev/null || break
    sleep 0.1
  done
  [[ -d /proc/$pid ]] && ! grep -q zombie "/proc/$pid/status" 2>/dev/null &&
    { kill -9 $(sed -n 's/.* pid \([0-9]*\) .*/\1/p' "$work/out") 2>/dev/null
      fail "rank process $pid is still alive"; }
done
socket=$(sed -n 's/.* addr \([^ ]*\) .*/\1/p' "$work/out" | head -1)
[[ -n $socket ]] || fail "no socket path reported"
if [[ $how == kill-launcher-forking ]]; then
  echo "ok: $how with $nranks ranks: exit $status, every rank gone"
  exit 0
fi
if [[ $how == kill-launcher ]]; then
  if [[ -e $(dirname "$socket") ]]; then
    rm -rf "$(dirname "$socket")"
    fail "the killed launcher's socket directory $(dirname "$socket") is still there"
  fi
  # A stale directory as a launcher killed before its ranks joined leaves it: a socket
  # nobody listens on, older than a second (younger ones may be a job being set up).
  stale=$(mktemp -d "$(dirname "$(dirname "$socket")")/sluicerun-XXXXXX")
  python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
    "$stale/boot.sock" || fail "cannot make a stale socket in $stale"
  touch -d '10 seconds ago' "$stale/boot.sock"
  "$sluicerun" -n 1 "$probe" ok >"$work/out2" 2>&1 || fail "the next job failed: $(cat "$work/out2")"
  if [[ -e $stale ]]; then
    rm -rf "$stale"
    fail "the next start did not remove the stale socket directory $stale"
  fi
  echo "ok: $how with $nranks ranks: exit $status, every rank gone, no directory left; a stale one removed by the next start"
  exit 0
fi
[[ ! -e $socket && ! -e $(dirname "$socket") ]] || fail "bootstrap socket $socket left behind"
echo "ok: $how with $nranks ranks: exit $status after ${elapsed_ms} ms, nothing left behind"
