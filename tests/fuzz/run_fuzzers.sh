#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) in build-fuzz/ and runs each for a
# bounded time, starting from its committed corpus in tests/fuzz/corpus/<target>/.
# New inputs go to a temporary directory, never into the repository. Prints libFuzzer's
# final statistics (executions, coverage) for each target and fails (non-zero exit) on a
# crash, leak, timeout or out-of-memory, naming the saved reproducer.
#
#   tests/fuzz/run_fuzzers.sh [seconds per target (default 60)] [target ...]
# Environment: FUZZ_BUILD_DIR (default build-fuzz), FUZZ_JOBS (build jobs, default nproc),
# FUZZ_SEED (default 1: the same mutations every run, so that the CI stage replays the
# same inputs and a failure is one this change brought; set another seed, or 0 for a
# random one, to explore).
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(http_request_fuzz json_request_fuzz batch_input_fuzz)
build=${FUZZ_BUILD_DIR:-build-fuzz}
src=tests/fuzz

command -v clang++ >/dev/null || { echo "[fuzz] clang++ not found (scripts/setup.sh installs it)" >&2; exit 1; }
echo "[fuzz] building ${targets[*]} in $build/"
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DDB_BUILD_FUZZ=ON -DDB_BUILD_TESTS=OFF -DDB_UNITY_BUILD=OFF -DDB_CUDA=OFF >/dev/null  # no CUDA detection
ninja -C "$build" -j"${FUZZ_JOBS:-$(nproc)}" "${targets[@]}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
artifacts="$build/fuzz-artifacts/$(date +%Y%m%d-%H%M%S)"  # this run's failing inputs
mkdir -p "$artifacts"
# The targets run side by side (each for the whole time, sharing the cores), so the
# stage takes `seconds` rather than `seconds` per target.
run_target() {  # run_target T: runs T, then writes its exit status to $work/T.status
  local t=$1 status=0
  mkdir -p "$work/$t"
  # The temporary directory comes first: libFuzzer writes new inputs there; the committed
  # corpus is only read. A failing input is saved under $artifacts/ as crash-*, leak-*,
  # timeout-* or oom-*.
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$build/tests/fuzz/$t" "$work/$t" "$src/corpus/$t" -dict="$src/$t.dict" \
    -seed="${FUZZ_SEED:-1}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
    -print_final_stats=1 -artifact_prefix="$artifacts/$t-" >"$work/$t.log" 2>&1 || status=$?
  echo "$status" >"$work/$t.status"
}
echo "[fuzz] ${targets[*]} for ${seconds}s, side by side"
for t in "${targets[@]}"; do run_target "$t" & done
wait
failed=()
for t in "${targets[@]}"; do
  log="$work/$t.log"
  status=$(cat "$work/$t.status" 2>/dev/null || echo "no status")
  echo "[fuzz] $t:"
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)|^#[0-9]+[[:space:]]+DONE' "$log" || true
  if [[ $status != 0 ]]; then
    echo "[fuzz] FAILED: $t exited with $status; the end of its log:" >&2
    tail -n 60 "$log" >&2
    ls -1 "$artifacts"/"$t"-* 2>/dev/null | sed 's/^/[fuzz] reproducer: /' >&2 || true
    failed+=("$t")
  fi
done
if ((${#failed[@]})); then
  echo "[fuzz] failing targets: ${failed[*]} (rerun one input: $build/tests/fuzz/<target> <file>)" >&2
  exit 1
fi
echo "[fuzz] no crashes"
