#!/usr/bin/env bash
# check-format.sh [ROOT]: fails when a C/C++ file under src/ include/ tools/ tests/ differs
# from what clang-format (the repository's .clang-format) makes of it. Fix with:
#   clang-format -i <file>...
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
command -v clang-format >/dev/null ||
  { echo "check-format: clang-format not found (Debian: clang-format)"; exit 1; }
# Regular files only: include/sluice/errc.hpp is a link to src/util/errc.hpp.
mapfile -d '' files < <(find src include tools tests -type f \
  \( -name '*.c' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' \) -print0 2>/dev/null | sort -z)
[ ${#files[@]} -gt 0 ] || { echo "check-format: no source file under $root"; exit 1; }
# One clang-format run for all files; it names each unformatted file in its diagnostics.
if ! out=$(clang-format --dry-run --Werror "${files[@]}" 2>&1); then
  mapfile -t bad < <(printf '%s\n' "$out" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: .*/\1/p' | sort -u)
  [ ${#bad[@]} -gt 0 ] || { printf '%s\n' "$out"; exit 1; }
  printf 'not clang-formatted: %s\n' "${bad[@]}"
  echo "check-format: ${#bad[@]} of ${#files[@]} files need clang-format -i ($(clang-format --version))"
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
