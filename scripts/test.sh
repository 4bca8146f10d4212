#!/usr/bin/env bash
# Sets up everything and runs the whole test suite:
#  1. Release build, all tests (unit + integration with the real default model);
#  2. AddressSanitizer + UndefinedBehaviorSanitizer build, unit tests;
#  3. the fuzz targets (clang, libFuzzer under ASan + UBSan), each run for a bounded time.
# Fails loudly (non-zero exit) when anything is missing or any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh --no-build

jobs=$(nproc)
echo "[test] Release build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build -j"$jobs"
echo "[test] the Python package, installed from that build"
python3 -m pip install -q --no-build-isolation . ||
  python3 -m pip install -q --no-build-isolation --break-system-packages .
echo "[test] all tests (Release)"
ctest --test-dir build --output-on-failure -j"$jobs" --timeout 900

echo "[test] sanitizer build (ASan + UBSan)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDB_SANITIZE=ON >/dev/null
ninja -C build-asan -j"$jobs" sanitizer_suite  # only what the unit|asan tests run
echo "[test] unit tests and the server bad-input test under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -L "unit|asan" --timeout 900

echo "[test] fuzz targets (libFuzzer + ASan + UBSan), 50 s each"
bash tests/fuzz/run_fuzzers.sh 50
