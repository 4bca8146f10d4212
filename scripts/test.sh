#!/usr/bin/env bash
# Sets up everything and runs the whole test suite:
#  1. Release build, all tests (unit + integration with the real default model + e2e);
#  2. AddressSanitizer + UndefinedBehaviorSanitizer build, the unit tests and the
#     server's bad-input test;
#  3. the fuzz targets (clang, libFuzzer under ASan + UBSan), each run for a bounded time.
# Prints the time of each stage at the end. Fails loudly (non-zero exit) when anything
# is missing, any test fails, or the whole run takes longer than its budget
# (DB_TEST_BUDGET_MINUTES, default 60: CI stops a run at 90 minutes; see tests/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."

budget_minutes=${DB_TEST_BUDGET_MINUTES:-60}
jobs=$(nproc)
# Objects compiled in another clone of the tree are served by ccache (when installed)
# only if their paths are rewritten relative to the tree, and (for the sanitizer
# build's line tables) if the working directory is left out of the key.
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true

stage_names=()
stage_seconds=()
stage_start=$SECONDS
run_start=$SECONDS
stage() {  # stage NAME: closes the running stage and opens NAME
  local now=$SECONDS
  if ((${#stage_names[@]})); then stage_seconds+=($((now - stage_start))); fi
  stage_names+=("$1")
  stage_start=$now
  echo "[test] $1"
}
report() {  # the stage table; called on every exit, failed or not
  local status=$?
  if ((${#stage_names[@]} > ${#stage_seconds[@]})); then stage_seconds+=($((SECONDS - stage_start))); fi
  echo "[test] time per stage:"
  for i in "${!stage_names[@]}"; do
    printf '[test]   %-58s %5d s\n' "${stage_names[$i]}" "${stage_seconds[$i]}"
  done
  local total=$((SECONDS - run_start))
  printf '[test]   %-58s %5d s (%d min %02d s)\n' "total" "$total" $((total / 60)) $((total % 60))
  if ((status == 0 && total > budget_minutes * 60)); then
    echo "[test] FAILED: the suite took $((total / 60)) min, over its budget of $budget_minutes min." >&2
    echo "[test] CI stops a run at 90 min: make the slowest stage above faster (tests/README.md)." >&2
    exit 1
  fi
}
trap report EXIT

stage "set-up (packages, model, XGrammar)"
bash scripts/setup.sh --no-build --for-tests

stage "Release build"
# DB_CUDA=AUTO: the CUDA kernels and their tests (label cuda) where nvcc is found, even
# if an earlier configuration of build/ turned them off.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDB_BUILD_TESTS=ON -DDB_CUDA=AUTO >/dev/null
ninja -C build -j"$jobs"

stage "the Python package, installed from that build"
python3 -m pip install -q --no-build-isolation . ||
  python3 -m pip install -q --no-build-isolation --break-system-packages .

stage "all tests (Release)"
ctest --test-dir build --output-on-failure -j"$jobs" --timeout 900

stage "sanitizer build (ASan + UBSan)"
# No Python extension here (the stage runs none of its tests), so nothing is compiled -fPIC;
# no CUDA kernels either (the sanitizers do not see device code; the Release build has them).
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDB_SANITIZE=ON -DDB_BUILD_TESTS=ON \
  -DDB_BUILD_PYTHON=OFF -DDB_CUDA=OFF >/dev/null
ninja -C build-asan -j"$jobs" sanitizer_suite  # only what the unit|asan tests run

stage "unit tests and the server bad-input test under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -L "unit|asan" --timeout 900

stage "fuzz targets (libFuzzer + ASan + UBSan), build and 60 s side by side"
bash tests/fuzz/run_fuzzers.sh 60  # the three targets side by side
