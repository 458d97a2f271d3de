#!/usr/bin/env bash
# expect_failure.sh MAX_SECONDS REGEX -- command...
# Passes when the command fails (non-zero exit), its output matches REGEX, and it ends
# within MAX_SECONDS.
set -u
max=$1 regex=$2
shift 3
start=$(date +%s%N)
out=$("$@" 2>&1)
rc=$?
end=$(date +%s%N)
elapsed_ms=$(( (end - start) / 1000000 ))
elapsed="$((elapsed_ms / 1000)).$(printf %03d $((elapsed_ms % 1000)))"
echo "$out"
echo "exit status $rc after ${elapsed}s"
[ "$rc" -ne 0 ] || { echo "FAIL: the command succeeded"; exit 1; }
echo "$out" | grep -Eq "$regex" || { echo "FAIL: output does not match /$regex/"; exit 1; }
(( elapsed_ms < max * 1000 )) || { echo "FAIL: took ${elapsed}s (limit ${max}s)"; exit 1; }
echo "PASS"
