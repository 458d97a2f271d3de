#!/usr/bin/env bash
# check_format_test.sh SRCDIR: tools/check-format.sh fails on an unformatted file (in a
# temporary tree with the repository's .clang-format) and passes once it is formatted.
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/util"
cp "$src/.clang-format" "$tmp/"
printf 'int  f( int x ){return x+1;}\n' >"$tmp/src/util/bad.cpp"
if out=$("$src/tools/check-format.sh" "$tmp"); then
  echo "FAIL: an unformatted file passed"; exit 1
fi
grep -q 'src/util/bad.cpp' <<<"$out" || { echo "FAIL: the file is not named: $out"; exit 1; }
clang-format -i "$tmp/src/util/bad.cpp"
"$src/tools/check-format.sh" "$tmp" >/dev/null || { echo "FAIL: the formatted file fails"; exit 1; }
echo "check_format_test: caught the unformatted file, passed the formatted one"
