#!/bin/sh
# Shows that check_driver_names.sh catches a driver name re-added to core or proto: on a
# copy of the tree it passes, then fails for each of a few re-added names.
#   check_driver_names_selftest.sh <source root>
set -eu
root=${1:?usage: check_driver_names_selftest.sh <source root>}
check="$root/tests/layout/check_driver_names.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fresh() {
  rm -rf "$tmp/t"
  mkdir -p "$tmp/t/src"
  cp -r "$root/src/core" "$root/src/proto" "$root/src/drivers" "$tmp/t/src/"
}
fresh
sh "$check" "$tmp/t" >/dev/null 2>&1 || { echo "FAIL: the unmodified copy does not pass"; exit 1; }
for injection in 'core/engine.cpp:// route local peers to shm' \
                 'core/engine_wireup.cpp:#include "drivers/tcp/tcp_driver.hpp"' \
                 'proto/p2p.cpp:// see UdpDriver'; do
  fresh
  file=${injection%%:*}
  line=${injection#*:}
  printf '%s\n' "$line" >>"$tmp/t/src/$file"
  if sh "$check" "$tmp/t" >/dev/null 2>&1; then
    echo "FAIL: '$line' in src/$file was not caught"
    exit 1
  fi
  echo "caught: '$line' in src/$file"
done
echo "1 passed, 0 failed"
