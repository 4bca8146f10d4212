#!/usr/bin/env bash
# The CUDA check on a machine with a GPU, in one command (scripts/README.md):
#   bash scripts/gpu_check.sh
# builds only the kernels, the CUDA cases and the CUDA speed bench (-DDB_KERNELS_ONLY=ON:
# none of the server, tokenizer, grammar or test dependencies, no GTest), runs the cases
# against the CPU kernels (tests/unit/cuda/cuda_cases.cpp) and prints the speed table
# (bench/cuda/README.md). Everything printed also goes to $OUT/gpu_check.txt when OUT is
# set. Needs cmake >= 3.22 (on PATH or the `cmake` Python package), a C++20 compiler and
# nvcc (on PATH, $CUDACXX, $CUDA_HOME/bin or /usr/local/cuda/bin); Ninja when present.
# Without cmake it runs the binaries already in BUILD_DIR (built by this script on
# another machine with nvcc; no GPU is needed to build).
# Environment: BUILD_DIR (default build-gpu-check), CUDA_ARCH (default: the GPU's
# compute capability from nvidia-smi, else 90), JOBS (default: all CPUs).
# Exit status: 0 when every case passed; 1 when the build failed, no device answered,
# or a case failed.
set -uo pipefail
cd "$(dirname "$0")/.."

build=${BUILD_DIR:-build-gpu-check}
jobs=${JOBS:-$(nproc)}
check_bin=$build/tests/unit/cuda/cuda_check
speed_bin=$build/bench/cuda/cuda_speed

step() { echo; echo "== $* ($(date -u +%H:%M:%S))"; }

# A tool on PATH, else the one the Python package of the same name ships.
find_tool() {
  command -v "$1" 2>/dev/null && return 0
  python3 -c "import os, $1 as m; print(os.path.join(getattr(m, 'CMAKE_BIN_DIR', None) or m.BIN_DIR, '$1'))" \
    2>/dev/null
}

configure_and_build() {
  local cmake_bin=$1 generator=() arch
  if ninja_bin=$(find_tool ninja); then generator=(-G Ninja -DCMAKE_MAKE_PROGRAM="$ninja_bin"); fi
  arch=${CUDA_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.[:space:]')}
  arch=${arch:-90}
  echo "cmake: $("$cmake_bin" --version | head -1); CUDA architecture: $arch; jobs: $jobs; build: $build"
  step "configure (kernels only)"
  mkdir -p "$build"
  "$cmake_bin" -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DDB_KERNELS_ONLY=ON -DDB_CUDA=ON \
    -DDB_CCACHE=OFF -DCMAKE_CUDA_ARCHITECTURES="$arch" >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log"; echo "gpu_check: FAILED to configure"; return 1; }
  grep -E "deepbatch:|CUDA compiler identification" "$build/configure.log"
  step "build cuda_check and cuda_speed (log: $build/build.log)"
  local start=$SECONDS
  if ! "$cmake_bin" --build "$build" -j "$jobs" --target cuda_check cuda_speed >"$build/build.log" 2>&1; then
    grep -E -B2 -A12 "error|FAILED" "$build/build.log" | head -150
    echo "gpu_check: FAILED to build"
    return 1
  fi
  echo "built in $((SECONDS - start)) s"
}

main() {
  step "machine"
  nvidia-smi -L 2>&1 || echo "(nvidia-smi: not available)"
  if [[ -z "${CUDACXX:-}" ]] && ! command -v nvcc >/dev/null && [[ -n "${CUDA_HOME:-}" ]]; then
    export CUDACXX=$CUDA_HOME/bin/nvcc
  fi
  "${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}" --version 2>&1 | tail -2
  if cmake_bin=$(find_tool cmake); then
    configure_and_build "$cmake_bin" || return 1
  elif [[ -x $check_bin && -x $speed_bin ]]; then
    echo "no cmake here: running the binaries already in $build"
  else
    echo "gpu_check: no cmake (PATH or the cmake Python package) and no binaries in $build"
    return 1
  fi

  step "CUDA cases against the CPU kernels"
  "$check_bin" --require-device
  local cases=$?
  step "speed table"
  "$speed_bin" --require-device
  local speed=$?
  step "summary"
  echo "cases: $([[ $cases == 0 ]] && echo passed || echo FAILED), speed table: $([[ $speed == 0 ]] && echo done || echo FAILED)"
  [[ $cases == 0 && $speed == 0 ]]
}

if [[ -n "${OUT:-}" ]]; then
  mkdir -p "$OUT"
  main 2>&1 | tee "$OUT/gpu_check.txt"
  exit "${PIPESTATUS[0]}"
fi
main
