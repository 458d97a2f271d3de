#!/bin/sh
# Shows that config_docs.sh check catches drift: on a copy of docs/CONFIGURATION.md it
# passes, then fails after a default is edited by hand, and after a key's row is dropped.
#   config_docs_selftest.sh <source root> <sluice-info>
set -eu
root=${1:?source root}
tool=${2:?sluice-info}
script="$root/tools/sluice-info/config_docs.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$root/docs/CONFIGURATION.md" "$tmp/ok.md"
sh "$script" check "$tool" "$tmp/ok.md" >/dev/null || { echo "FAIL: the copy does not pass"; exit 1; }
sed 's/^| `SLUICE_EAGER_LIMIT` | bytes | `4K` |/| `SLUICE_EAGER_LIMIT` | bytes | `8K` |/' "$tmp/ok.md" >"$tmp/edited.md"
sed '/^| `SLUICE_TCP_QUEUE_LIMIT` /d' "$tmp/ok.md" >"$tmp/dropped.md"
for bad in edited dropped; do
  if cmp -s "$tmp/ok.md" "$tmp/$bad.md"; then echo "FAIL: the $bad fixture changed nothing"; exit 1; fi
  if sh "$script" check "$tool" "$tmp/$bad.md" >/dev/null 2>&1; then
    echo "FAIL: the $bad copy passed the check"
    exit 1
  fi
  echo "caught: $bad"
done
echo "1 passed, 0 failed"
