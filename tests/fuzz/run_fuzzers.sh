#!/bin/sh
# `make fuzz`: runs every fuzz target in BIN_DIR for SECONDS each, over a copy of its committed
# seeds in WORK_DIR/<name>/corpus (libFuzzer adds what it finds to that copy, never to
# tests/fuzz/corpus). Crashes, leaks and timeouts are saved as WORK_DIR/<name>/crash-* etc.
# Every target runs even after one fails; the exit status says whether any did.
# Usage: run_fuzzers.sh BIN_DIR SECONDS WORK_DIR
set -u
bin_dir=$1
seconds=$2
work_dir=$3
corpus_dir=$(cd "$(dirname "$0")" && pwd)/corpus

failed=""
for fuzzer in "$bin_dir"/fuzz_*; do
  name=${fuzzer##*/fuzz_}
  work="$work_dir/$name"
  rm -rf "$work/corpus"
  mkdir -p "$work/corpus"
  cp "$corpus_dir/$name"/* "$work/corpus/"
  echo "== fuzz_$name: ${seconds}s, corpus and findings in $work"
  # -timeout: one input running over 10 s is a hang. -print_final_stats: the coverage reached.
  if ! "$fuzzer" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$work/" "$work/corpus" >"$work/log.txt" 2>&1; then
    failed="$failed $name"
    # The report without ASan's shadow-memory dump.
    grep -v -E '^(=>)? *0x[0-9a-f]+: |^  [A-Za-z ]+: +[0-9a-f ]+$|^Shadow byte' "$work/log.txt" |
      tail -n 50
  fi
  grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$work/log.txt" | tr '\n' ' '
  echo
done
if [ -n "$failed" ]; then
  echo "fuzz: FAILED:$failed (the inputs are under $work_dir; see tests/fuzz/README.md)" >&2
  exit 1
fi
echo "fuzz: every target ran ${seconds}s without a finding"
