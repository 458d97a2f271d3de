#!/usr/bin/env bash
# Runs a command and checks its exit status, output and duration.
#
#   expect.sh [--exit N|nonzero] [--stdout RE]... [--stderr RE]... [--no-stdout RE]...
#             [--no-stderr RE]... [--max-seconds S] [--count-stdout RE N] -- command...
#
# Regular expressions are grep -E, matched per line. Prints what it saw on failure.
set -u

expected_exit=0
max_seconds=""
declare -a stdout_res=() stderr_res=() no_stdout_res=() no_stderr_res=() count_res=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --exit) expected_exit=$2; shift 2 ;;
    --stdout) stdout_res+=("$2"); shift 2 ;;
    --stderr) stderr_res+=("$2"); shift 2 ;;
    --no-stdout) no_stdout_res+=("$2"); shift 2 ;;
    --no-stderr) no_stderr_res+=("$2"); shift 2 ;;
    --count-stdout) count_res+=("$2" "$3"); shift 3 ;;
    --max-seconds) max_seconds=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "expect.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s%N)
# No test reads stdin; a launcher that forwards it (mpirun) must not stop on SIGTTIN.
"$@" </dev/null >"$work/out" 2>"$work/err"
status=$?
end=$(date +%s%N)
elapsed_ms=$(( (end - start) / 1000000 ))

problems=()
if [[ "$expected_exit" == nonzero ]]; then
  [[ $status -ne 0 ]] || problems+=("exit status was 0, expected non-zero")
elif [[ $status -ne $expected_exit ]]; then
  problems+=("exit status was $status, expected $expected_exit")
fi
for re in "${stdout_res[@]+"${stdout_res[@]}"}"; do
  grep -Eq -- "$re" "$work/out" || problems+=("stdout has no line matching: $re")
done
for re in "${stderr_res[@]+"${stderr_res[@]}"}"; do
  grep -Eq -- "$re" "$work/err" || problems+=("stderr has no line matching: $re")
done
for re in "${no_stdout_res[@]+"${no_stdout_res[@]}"}"; do
  ! grep -Eq -- "$re" "$work/out" || problems+=("stdout has a line matching: $re")
done
for re in "${no_stderr_res[@]+"${no_stderr_res[@]}"}"; do
  ! grep -Eq -- "$re" "$work/err" || problems+=("stderr has a line matching: $re")
done
for ((i = 0; i < ${#count_res[@]}; i += 2)); do
  re=${count_res[i]} want=${count_res[i+1]}
  got=$(grep -Ec -- "$re" "$work/out")
  [[ $got -eq $want ]] || problems+=("stdout has $got lines matching '$re', expected $want")
done
if [[ -n "$max_seconds" ]] && (( elapsed_ms > max_seconds * 1000 )); then
  problems+=("took ${elapsed_ms} ms, limit ${max_seconds} s")
fi

if [[ ${#problems[@]} -gt 0 ]]; then
  echo "command: $*"
  echo "exit status $status after ${elapsed_ms} ms"
  echo "---- stdout ----"; cat "$work/out"
  echo "---- stderr ----"; cat "$work/err"
  printf 'FAILED: %s\n' "${problems[@]}"
  exit 1
fi
echo "ok: exit status $status after ${elapsed_ms} ms: $*"
