#!/usr/bin/env bash
# sluice-tune --quick measures this machine (2-rank jobs over tcp and udp) and writes a
# profile that --check and the engine load; a bad profile stops the start-up with a message
# naming the file, the line and the reason. No figure is checked.
#
#   tune_profile.sh BINDIR
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAILED: $*"
  for f in "$work"/*.txt; do [[ -f $f ]] && sed "s|^|  $(basename "$f"): |" "$f" | tail -30; done
  exit 1
}

env SLUICE_TUNE_PROFILE=off timeout 800 "$bin/sluice-tune" --quick --drivers tcp,udp \
  --output "$work/tune.profile" >"$work/tune.txt" 2>&1 || fail "sluice-tune --quick exited $?"
grep -qF "profile written: $work/tune.profile" "$work/tune.txt" || fail "no 'profile written' line"
for key in 'reg.MBps' 'copy.4096' 'driver.tcp.zc_MBps' 'driver.udp.gap_us' 'c0' 'q'; do
  grep -q "^$key = " "$work/tune.profile" || fail "the profile has no '$key'"
done
"$bin/sluice-tune" --check "$work/tune.profile" >"$work/check.txt" 2>&1 || fail "--check refused it"

# The engine loads it: sluice-info names it as the model in force.
env SLUICE_TUNE_PROFILE="$work/tune.profile" SLUICE_DRIVERS=tcp SLUICE_TCP_ZEROCOPY=on \
  SLUICE_REG_STRATEGY=superpipeline timeout 120 "$bin/sluicerun" -n 2 "$bin/sluice-info" \
  --protocols >"$work/info.txt" 2>&1 || fail "sluice-info with the profile exited $?"
grep -qF "cost model ([NewMadeleine]): $work/tune.profile" "$work/info.txt" ||
  fail "sluice-info does not name the profile"

# A bad profile: a clear error, not a start with other settings.
printf 'version = 1\nq = fast\n' >"$work/bad.profile"
env SLUICE_TUNE_PROFILE="$work/bad.profile" timeout 60 "$bin/sluicerun" -n 1 "$bin/sluice-info" \
  --protocols >"$work/bad.txt" 2>&1
status=$?
((status != 0 && status < 128)) || fail "a bad profile: exit status $status"
grep -qF "$work/bad.profile: line 2: q = 'fast': expected a number from 1 to 4" "$work/bad.txt" ||
  fail "a bad profile: no message naming the file, line and value"
"$bin/sluice-tune" --check "$work/bad.profile" >"$work/badcheck.txt" 2>&1 && fail "--check took a bad profile"
echo "tune_profile: ok"
