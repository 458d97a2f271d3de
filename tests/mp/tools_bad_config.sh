#!/usr/bin/env bash
# The tools with a bad SLUICE_* value: each prints the configuration error (key, value,
# range) and exits non-zero, never an uncaught exception (abort, status 134) or a hang.
#
#   tools_bad_config.sh BINDIR
#
# sluice-scale reads no configuration (it only reads allconn results): it must behave
# exactly as without the bad value.
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# One bad value of each kind: out of range, and one that does not parse.
bad_values=('SLUICE_SHM_RING_CELLS=-1' 'SLUICE_EAGER_LIMIT=garbage')
expected_messages=('bad value SLUICE_SHM_RING_CELLS="-1": out of range 2..16384'
                   'bad value SLUICE_EAGER_LIMIT="garbage": expected a size in bytes')

# check NAME BAD_INDEX -- command...: non-zero, not a signal, the message (on stderr; the
# listing of sluice-info --config shows it in place, on stdout), no C++ terminate.
check() {
  local name=$1 index=$2
  shift 3
  env "${bad_values[$index]}" timeout 60 "$@" >"$work/out" 2>"$work/err" </dev/null
  local status=$? problem=
  if ((status == 0)); then
    problem="exit status 0"
  elif ((status == 124)); then
    problem="hung (killed after 60 s)"
  elif ((status > 128)); then
    problem="killed by signal $((status - 128)) (exit status $status)"
  elif ! grep -qF -- "${expected_messages[$index]}" "$work/err" "$work/out"; then
    problem="no message containing '${expected_messages[$index]}'"
  elif grep -q "terminate called" "$work/err"; then
    problem="an uncaught exception"
  fi
  if [[ -n $problem ]]; then
    echo "FAILED: $name with ${bad_values[$index]}: $problem"
    sed 's/^/  stderr: /' "$work/err" | head -5
    sed 's/^/  stdout: /' "$work/out" | head -3
    failures=$((failures + 1))
  else
    echo "ok: $name with ${bad_values[$index]}: exit $status, $(grep -hF -- "${expected_messages[$index]}" "$work/err" "$work/out" | head -1)"
  fi
}

for i in 0 1; do
  check "sluice-info" $i -- "$bin/sluice-info"
  check "sluice-info --protocols" $i -- "$bin/sluice-info" --protocols
  check "sluice-info --config" $i -- "$bin/sluice-info" --config
  check "sluice-bench pingpong" $i -- "$bin/sluice-bench" pingpong --sizes 8
  check "sluice-demo" $i -- "$bin/sluice-demo"
  # Under the launcher: every rank stops with the message, the launcher ends the job.
  check "sluicerun -n 2 sluice-info" $i -- "$bin/sluicerun" -n 2 "$bin/sluice-info"
  check "sluicerun -n 2 sluice-bench" $i -- "$bin/sluicerun" -n 2 "$bin/sluice-bench" pingpong \
    --sizes 8
  check "sluicerun -n 2 sluice-demo" $i -- "$bin/sluicerun" -n 2 "$bin/sluice-demo"
done

# sluice-scale: the same output and status with and without a bad value.
printf '%s\n' '{"bench":"allconn","driver":"shm","n":2,"cpus":2,"time_us":10,"rss_kB":1000}' \
  '{"bench":"allconn","driver":"shm","n":4,"cpus":2,"time_us":30,"rss_kB":1100}' \
  '{"bench":"allconn","driver":"shm","n":8,"cpus":2,"time_us":120,"rss_kB":1300}' \
  >"$work/allconn.json"
"$bin/sluice-scale" "$work/allconn.json" >"$work/good" 2>&1
good=$?
for v in "${bad_values[@]}"; do
  env "$v" "$bin/sluice-scale" "$work/allconn.json" >"$work/bad" 2>&1
  bad=$?
  if ((bad != good)) || ! cmp -s "$work/good" "$work/bad"; then
    echo "FAILED: sluice-scale with $v: status $bad (without: $good), or other output"
    failures=$((failures + 1))
  else
    echo "ok: sluice-scale with $v: exit $bad as without it (it reads no configuration)"
  fi
done

((failures == 0)) && echo "PASS" || echo "$failures FAILED"
exit $((failures != 0))
