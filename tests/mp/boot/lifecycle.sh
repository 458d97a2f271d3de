#!/usr/bin/env bash
# Ends a hanging job from outside and checks that nothing is left behind.
#
#   lifecycle.sh SLUICERUN BOOT_PROBE signal|timeout NRANKS
#
# signal:  sends SIGTERM to sluicerun once every rank runs; expects exit 143.
# timeout: runs with --timeout 2; expects exit 124 within a few seconds.
# Both: every rank process is gone and the bootstrap socket and its directory removed.
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
else
  expected_status=124 expected_message='job timed out after 2 s; killing [0-9]+ ranks'
fi
wait "$launcher"
status=$?
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))

[[ $status -eq $expected_status ]] || fail "exit status $status, expected $expected_status"
grep -Eq "$expected_message" "$work/err" || fail "no message matching '$expected_message'"
[[ $how == timeout ]] && (( elapsed_ms > 6000 )) && fail "took ${elapsed_ms} ms"
for pid in $(sed -n 's/.* pid \([0-9]*\) .*/\1/p' "$work/out"); do
  if kill -0 "$pid" 2>/dev/null && ! grep -q zombie "/proc/$pid/status" 2>/dev/null; then
    fail "rank process $pid is still alive"
  fi
done
socket=$(sed -n 's/.* addr \([^ ]*\) .*/\1/p' "$work/out" | head -1)
[[ -n $socket ]] || fail "no socket path reported"
[[ ! -e $socket && ! -e $(dirname "$socket") ]] || fail "bootstrap socket $socket left behind"
echo "ok: $how with $nranks ranks: exit $status after ${elapsed_ms} ms, nothing left behind"
