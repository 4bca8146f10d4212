#!/usr/bin/env bash
# The CUDA check on a machine with a GPU, in one command (scripts/README.md):
#   bash scripts/gpu_check.sh
# builds only the kernels, the CUDA cases and the CUDA speed bench (-DDB_KERNELS_ONLY=ON:
# none of the server, tokenizer, grammar or test dependencies, no GTest), runs the cases
# against the CPU kernels (tests/unit/cuda/cuda_cases.cpp) and prints the speed table
# (bench/cuda/README.md). Everything printed also goes to $OUT/gpu_check.txt when OUT is
# set. Needs cmake >= 3.22 (on PATH or the `cmake` Python package), a C++20 compiler and
# nvcc (on PATH, $CUDACXX, or /usr/local/cuda/bin/nvcc); Ninja when present.
# Environment: BUILD_DIR (default build-gpu-check), CUDA_ARCH (default: the GPU's
# compute capability from nvidia-smi, else 90), JOBS (default: all CPUs).
# Exit status: 0 when every case passed; 1 when the build failed, no device answered,
# or a case failed.
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ -n "${OUT:-}" ]]; then
  mkdir -p "$OUT"
  exec > >(tee "$OUT/gpu_check.txt") 2>&1
fi
step() { echo; echo "== $* ($(date -u +%H:%M:%S))"; }

# A tool on PATH, else the one a Python package of the same name ships.
find_tool() {
  command -v "$1" 2>/dev/null && return 0
  python3 -c "import $1, os; print(os.path.join($1.BIN_DIR, '$1'))" 2>/dev/null
}
cmake_bin=$(find_tool cmake) || { echo "gpu_check: no cmake (PATH or the cmake Python package)"; exit 1; }
generator=()
if ninja_bin=$(find_tool ninja); then generator=(-G Ninja -DCMAKE_MAKE_PROGRAM="$ninja_bin"); fi
if [[ -z "${CUDACXX:-}" ]] && ! command -v nvcc >/dev/null && [[ -n "${CUDA_HOME:-}" ]]; then
  export CUDACXX=$CUDA_HOME/bin/nvcc
fi
build=${BUILD_DIR:-build-gpu-check}
jobs=${JOBS:-$(nproc)}
arch=${CUDA_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.[:space:]')}
arch=${arch:-90}

step "machine"
nvidia-smi -L 2>&1 || echo "(nvidia-smi: not available)"
"${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}" --version 2>&1 | tail -2
echo "cmake: $("$cmake_bin" --version | head -1); CUDA architecture: $arch; jobs: $jobs; build: $build"

step "configure (kernels only)"
mkdir -p "$build"
"$cmake_bin" -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DDB_KERNELS_ONLY=ON -DDB_CUDA=ON \
  -DDB_CCACHE=OFF -DCMAKE_CUDA_ARCHITECTURES="$arch" >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; echo "gpu_check: FAILED to configure"; exit 1; }
grep -E "deepbatch:|CUDA compiler identification" "$build/configure.log"

step "build cuda_check and cuda_speed (log: $build/build.log)"
start=$(date +%s)
if ! "$cmake_bin" --build "$build" -j "$jobs" --target cuda_check cuda_speed >"$build/build.log" 2>&1; then
  grep -E -B2 -A12 "error|FAILED" "$build/build.log" | head -150
  echo "gpu_check: FAILED to build"
  exit 1
fi
echo "built in $(($(date +%s) - start)) s"

step "CUDA cases against the CPU kernels"
"$build/tests/unit/cuda/cuda_check" --require-device
cases=$?

step "speed table"
"$build/bench/cuda/cuda_speed" --require-device
speed=$?

step "summary"
echo "cases: $([[ $cases == 0 ]] && echo passed || echo FAILED), speed table: $([[ $speed == 0 ]] && echo done || echo FAILED)"
[[ $cases == 0 && $speed == 0 ]]
