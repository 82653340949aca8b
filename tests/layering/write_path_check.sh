#!/usr/bin/env bash
# The write path's check: only the folders and files that scheduler/store/README.md lists on its
# line "Holds a `Store` (checked by `make test`):" may name the writer: `Store&`, `Store*`,
# `unique_ptr<Store>`, `Store::open` or an include of scheduler/store/store.h. Everyone else
# reads through a StoreReader (a write through one does not compile: tests/unit/store).
#
#   write_path_check.sh ROOT DIR...   (DIR: the top folders to check)
#
# Exit 0 when no other file names the writer, 1 otherwise (each use named at its file and line),
# 2 on bad usage or when the README has no such line.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: write_path_check.sh ROOT DIR..." >&2; exit 2; }
root=$1
shift
readme=scheduler/store/README.md
marker='Holds a `Store` (checked by `make test`):'
# The line and the rest of its paragraph.
rule=$(awk -v m="$marker" 'index($0, m) { on = 1 } on && /^$/ { exit } on { print }' "$root/$readme")
[ -n "$rule" ] || { echo "$readme: no line \"$marker\"" >&2; exit 2; }
mapfile -t holders < <(printf '%s\n' "${rule#*"$marker"}" | grep -o '`[^`]*`' | tr -d '`')
[ ${#holders[@]} -gt 0 ] || { echo "$readme: no holder named after \"$marker\"" >&2; exit 2; }

held_by_holder() {
  local file=$1 h
  for h in "${holders[@]}"; do
    [ "$file" = "$h" ] && return 0
    case "$file" in "$h"/*) return 0 ;; esac
  done
  return 1
}

pattern='(^|[^A-Za-z0-9_:])Store( ?[&*]|>|::open)|unique_ptr<Store>|#include "scheduler/store/store\.h"'
cd "$root"
problems=0
while IFS=: read -r file line _; do
  held_by_holder "$file" && continue
  echo "$file:$line: names the writer (Store), which $readme gives only to: ${holders[*]}"
  problems=$((problems + 1))
done < <(grep -rnE --include='*.h' --include='*.cpp' -- "$pattern" "$@" | sort -t: -k1,1 -k2,2n)
if [ "$problems" -gt 0 ]; then
  echo "write_path_check: $problems uses of the writer outside its holders"
  exit 1
fi
echo "write_path_check: only ${holders[*]} name the writer"
