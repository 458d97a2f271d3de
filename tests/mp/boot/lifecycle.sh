#!/usr/bin/env bash
# Ends a hanging job from outside and checks that nothing is left behind.
#
#   lifecycle.sh SLUICERUN BOOT_PROBE signal|timeout|kill-launcher NRANKS
#
# signal:        sends SIGTERM to sluicerun once every rank runs; expects exit 143.
# timeout:       runs with --timeout 2; expects exit 124 within a few seconds.
# kill-launcher: SIGKILLs sluicerun; its ranks must die with it (nothing can remove the
#                socket then, so that check is skipped).
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
elif [[ $how == kill-launcher ]]; then
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
# Ranks orphaned by a killed launcher die by their parent-death signal: allow a moment.
for pid in $(sed -n 's/.* pid \([0-9]*\) .*/\1/p' "$work/out"); do
  for _ in $(seq 20); do
    [[ -d /proc/$pid ]] && ! grep -q zombie "/proc/$pid/status" 2>/dev/null || break
    sleep 0.1
  done
  [[ -d /proc/$pid ]] && ! grep -q zombie "/proc/$pid/status" 2>/dev/null &&
    fail "rank process $pid is still alive"
done
socket=$(sed -n 's/.* addr \([^ ]*\) .*/\1/p' "$work/out" | head -1)
[[ -n $socket ]] || fail "no socket path reported"
if [[ $how == kill-launcher ]]; then
  rm -rf "$(dirname "$socket")"
  echo "ok: $how with $nranks ranks: exit $status, every rank gone"
  exit 0
fi
[[ ! -e $socket && ! -e $(dirname "$socket") ]] || fail "bootstrap socket $socket left behind"
echo "ok: $how with $nranks ranks: exit $status after ${elapsed_ms} ms, nothing left behind"
