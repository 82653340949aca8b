#!/bin/sh
# expect_refused.sh VALIDATE DIR: validate.mjs must refuse every DIR/<case>.json (exit 1) and
# print the line "<file>: " + the text of DIR/<case>.expect (the JSON path and the complaint).
validate=$1
dir=$2
status=0
n=0
for f in "$dir"/*.json; do
  [ -e "$f" ] || break
  n=$((n + 1))
  expect="$f: $(cat "${f%.json}.expect")"
  out=$(node "$validate" "$f" 2>&1)
  rc=$?
  printf '%s\n' "$out"
  if [ "$rc" -ne 1 ]; then
    echo "FAIL: $f: validate.mjs exited $rc, not 1 (refused)"
    status=1
  elif ! printf '%s\n' "$out" | grep -qF -- "$expect"; then
    echo "FAIL: $f: no line containing: $expect"
    status=1
  fi
done
if [ "$n" -eq 0 ]; then
  echo "FAIL: no planted manifest in $dir"
  exit 1
fi
exit $status
