#!/usr/bin/env bash
# `make flaky-check`: runs the ctest labels that start real servers and real Slurm labs
# (integration, slurm) FLAKY_RUNS times over an existing build and lists every test that did not
# pass every run, with the runs it failed in and the log of each run. With FLAKY_LOAD=1 a
# parallel build of this tree without ccache (so it really compiles) runs beside the tests the
# whole time, to find the tests that wait for speed instead of for a condition.
#
# Usage: tests/flaky_check.sh [BUILD_DIR]   (default: build; it must be built already)
# Environment:
#   FLAKY_RUNS    how many times the labels run (default 3)
#   FLAKY_LABELS  the ctest label regex (default 'integration|slurm')
#   FLAKY_LOAD    1: the parallel build beside the tests (default 0)
#   JOBS          ctest -j (default: nproc); the load build runs 2 x JOBS compilers
#   FLAKY_TIMEOUT ctest --timeout per test, seconds (default 300, as `make test`)
# Logs: BUILD_DIR/flaky-check/run-<i>.log (ctest --output-on-failure), load.log.
# Exit status: 0 when every test passed every run, 1 when one did not, 2 on bad usage.
set -uo pipefail

build=${1:-build}
runs=${FLAKY_RUNS:-3}
labels=${FLAKY_LABELS:-integration|slurm}
load=${FLAKY_LOAD:-0}
jobs=${JOBS:-$(nproc)}
timeout=${FLAKY_TIMEOUT:-300}
source_dir=$(cd "$(dirname "$0")/.." && pwd)

fail_usage() {
  echo "flaky-check: $1" >&2
  exit 2
}
[[ $runs =~ ^[1-9][0-9]*$ ]] || fail_usage "FLAKY_RUNS must be a positive number, got '$runs'"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || fail_usage "JOBS must be a positive number, got '$jobs'"
[[ $load == 0 || $load == 1 ]] || fail_usage "FLAKY_LOAD must be 0 or 1, got '$load'"
[[ -f $build/CTestTestfile.cmake ]] || fail_usage "$build is not a build directory (make build)"
build=$(cd "$build" && pwd)
out=$build/flaky-check
rm -rf "$out"
mkdir -p "$out" || fail_usage "cannot make $out"

# ---- the load: a build of this tree in a scratch directory, again and again, in its own
# process group, which the exit trap ends.
load_pid=""
load_dir=""
stop_load() {
  if [[ -n $load_pid ]]; then
    kill -TERM -- "-$load_pid" 2> /dev/null
    wait "$load_pid" 2> /dev/null
    load_pid=""
  fi
  if [[ -n $load_dir ]]; then rm -rf "$load_dir"; fi
}
trap stop_load EXIT
trap 'exit 130' INT TERM
if [[ $load == 1 ]]; then
  load_dir=$(mktemp -d "${TMPDIR:-/tmp}/orch-flaky-load.XXXXXX") || fail_usage "no scratch dir"
  # setsid: the build and every compiler it starts are one process group, ended as one. The
  # script's words are its own ($1..$3), expanded by the inner bash.
  # shellcheck disable=SC2016
  setsid bash -c '
    cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Dev -DCMAKE_CXX_COMPILER_LAUNCHER= || exit 1
    while :; do
      ninja -C "$2" -t clean > /dev/null
      ninja -C "$2" -k 0 -j "$3" > /dev/null
    done' _ "$source_dir" "$load_dir" "$((2 * jobs))" > "$out/load.log" 2>&1 &
  load_pid=$!
  echo "flaky-check: a parallel build (ninja -j $((2 * jobs)), no ccache) runs beside the tests"
fi

# ---- the runs
declare -A failed_in  # test name -> " 1 3": the runs it did not pass
order=()            # the test names, in the order they first failed
for ((i = 1; i <= runs; i++)); do
  log=$out/run-$i.log
  start=$SECONDS
  (cd "$build" && ctest -L "$labels" -j "$jobs" --timeout "$timeout" --no-tests=error --output-on-failure) \
    > "$log" 2>&1
  rc=$?
  summary=$(grep -E 'tests passed|No tests were found' "$log" | tail -n 1)
  echo "flaky-check: run $i of $runs ($((SECONDS - start)) s): ${summary:-ctest exited $rc}"
  # The failures as this run's own output lists them ("  1988 - Suite.Test (Failed)"), not
  # Testing/Temporary/LastTestsFailed.log, which any other ctest in the build directory rewrites.
  mapfile -t failed < <(sed -n '/^The following tests FAILED:/,$p' "$log" |
    sed -nE 's/^[[:space:]]+[0-9]+ - (.*) \([^()]*\)$/\1/p')
  if ((${#failed[@]} > 0)); then
    for name in "${failed[@]}"; do
      [[ -n ${failed_in[$name]+x} ]] || order+=("$name")
      failed_in[$name]+=" $i"
    done
  elif ((rc != 0)); then
    name="(ctest itself: exit $rc, see run-$i.log)"
    [[ -n ${failed_in[$name]+x} ]] || order+=("$name")
    failed_in[$name]+=" $i"
  fi
done

stop_load
echo "flaky-check: $runs runs of ctest -L '$labels' in $build (load: $([[ $load == 1 ]] && echo on || echo off)); logs in $out"
if ((${#order[@]} == 0)); then
  echo "flaky-check: every test passed every run"
  exit 0
fi
echo "flaky-check: ${#order[@]} tests failed at least once:"
for name in "${order[@]}"; do
  read -r -a which <<< "${failed_in[$name]}"
  echo "  $name: failed ${#which[@]} of $runs runs (runs:${failed_in[$name]}; see run-${which[0]}.log)"
done
exit 1
