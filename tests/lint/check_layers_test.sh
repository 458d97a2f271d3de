#!/usr/bin/env bash
# check_layers_test.sh SRCDIR: the layer check (tools/check-layers.py) fails on each kind of
# upward include. Every case edits a fresh copy of the tree in a temporary directory (never
# the real one): the untouched copy must pass, the copy with one wrong include must fail
# and name the file.
set -euo pipefail
src=$1
check=$src/tools/check-layers.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fresh_copy() {
  rm -rf "$tmp/tree"
  mkdir -p "$tmp/tree"
  cp -a "$src/src" "$src/include" "$src/tools" "$tmp/tree/"
}

fresh_copy
python3 "$check" "$tmp/tree" >/dev/null || { echo "FAIL: the untouched copy does not pass"; exit 1; }

# expect_caught <file> <include line>: append the include to <file> in a fresh copy.
expect_caught() {
  local file=$1 line=$2
  fresh_copy
  [ -f "$tmp/tree/$file" ] || { echo "FAIL: fixture file $file is gone"; failures=$((failures + 1)); return; }
  printf '%s\n' "$line" >>"$tmp/tree/$file"
  local out status=0
  out=$(python3 "$check" "$tmp/tree") || status=$?
  if [ "$status" -ne 1 ] || ! grep -qF "$file:" <<<"$out"; then
    echo "FAIL: not caught: $file: $line (exit $status)"
    printf '%s\n' "$out" | sed 's/^/    /'
    failures=$((failures + 1))
  else
    echo "ok: caught $file: $line"
  fi
}

expect_caught src/drivers/shm/shm_driver.cpp '#include "core/engine.hpp"'     # drivers -> core
expect_caught src/drivers/driver.hpp '#include "sluice/sluice.hpp"'            # drivers -> core's public header
expect_caught src/proto/p2p.cpp '#include "coll/coll.hpp"'                     # proto -> coll
expect_caught src/core/engine.cpp '#include "boot/boot.hpp"'                   # core -> boot
expect_caught src/core/matching.cpp '#include "mpi/mpi_internal.hpp"'          # core -> mpi
expect_caught src/core/matching.hpp '#include "sluice/collectives.hpp"'        # core -> coll's public header
expect_caught src/coll/schedule.cpp '#include "api/session.cpp"'               # coll -> api
expect_caught src/util/log.cpp '#include "../proto/p2p.hpp"'                   # relative path upward
expect_caught include/sluice/sluice.hpp '#include "core/engine.hpp"'           # public header -> internals
expect_caught tools/sluice-bench/main.cpp '#include "core/engine.hpp"'         # tool -> src
expect_caught tools/sluicerun/launcher.cpp '#include "core/engine.hpp"'        # launcher: only its contract
expect_caught tools/sluice-bench/main.cpp '#include "../sluicerun/posix.hpp"'  # tool -> another tool

if [ "$failures" -ne 0 ]; then
  echo "check_layers_test: $failures case(s) not caught"
  exit 1
fi
echo "check_layers_test: every upward include caught"
