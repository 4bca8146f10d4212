#!/usr/bin/env bash
# The CUDA check on a machine with a GPU, in one command (scripts/README.md):
#   bash scripts/gpu_check.sh
# First tries the full build (-DDB_CUDA=ON with the tests: needs the project's
# dependencies, scripts/setup.sh); where that cannot configure or build, falls back to
# the kernels-only build (-DDB_KERNELS_ONLY=ON: the kernels, the compute backends, the
# CUDA cases and the CUDA speed bench; none of the server, tokenizer, grammar or test
# dependencies, no GTest). Both run the cases against the CPU (tests/unit/cuda:
# the kernels' and the CUDA backend's ops) and print the speed table
# (bench/cuda/README.md). The full build then also runs the model cases
# (Fixtures/CudaModelTest.*: the tiny fixtures through the CUDA backend) and
# `deepbatch run --device cuda` against `--device cpu` (greedy texts compared) and
# `deepbatch bench --phase decode` at batch 1 and 64 on random-weight GGUFs generated
# here (bench/make_random_gguf.py: r1-qwen-mini q8_0 and r1-qwen-1.5b q4_0), with the
# weight bytes read per second against the device's memory bandwidth.
# Everything printed also goes to $OUT/gpu_check.txt when OUT is set. Needs cmake >=
# 3.22 (on PATH or the `cmake` Python package), a C++20 compiler and nvcc (on PATH,
# $CUDACXX, $CUDA_HOME/bin or /usr/local/cuda/bin); Ninja when present; python3 with
# numpy for the random models. Without cmake it runs the binaries already in BUILD_DIR
# (built by this script on another machine with nvcc; no GPU is needed to build).
# Environment: BUILD_DIR (kernels-only build, default build-gpu-check), FULL_BUILD_DIR
# (default build-gpu-full), CUDA_ARCH (default: the GPU's compute capability from
# nvidia-smi, else 90), JOBS (default: all CPUs), FULL=0 for the kernels-only build alone,
# MODEL_CHECKS=0 to skip the model runs.
# Exit status: 0 when every case and model check passed; 1 when no build worked, no
# device answered, or a case or check failed.
set -uo pipefail
cd "$(dirname "$0")/.."

build=${BUILD_DIR:-build-gpu-check}
full=${FULL_BUILD_DIR:-build-gpu-full}
have_full=0
bandwidth_gbs=0
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

cuda_arch() {
  local arch
  arch=${CUDA_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.[:space:]')}
  echo "${arch:-90}"
}

# The full build: deepbatch, model_test and the CUDA checks. Returns 1 (quietly, with
# the log's tail) where the project's dependencies are not all here.
full_build() {
  local cmake_bin=$1 generator=() arch
  arch=$(cuda_arch)
  if ninja_bin=$(find_tool ninja); then generator=(-G Ninja -DCMAKE_MAKE_PROGRAM="$ninja_bin"); fi
  step "configure (full, tests on; log: $full/configure.log)"
  mkdir -p "$full"
  if ! "$cmake_bin" -S . -B "$full" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DDB_CUDA=ON -DDB_BUILD_TESTS=ON \
    -DDB_CCACHE=OFF -DCMAKE_CUDA_ARCHITECTURES="$arch" >"$full/configure.log" 2>&1; then
    tail -5 "$full/configure.log"
    echo "gpu_check: the full build does not configure here; falling back to kernels only"
    return 1
  fi
  step "build deepbatch, model_test, cuda_check, cuda_speed (log: $full/build.log)"
  local start=$SECONDS
  if ! "$cmake_bin" --build "$full" -j "$jobs" --target deepbatch model_test cuda_check cuda_speed \
    >"$full/build.log" 2>&1; then
    grep -E -B2 -A12 "error|FAILED" "$full/build.log" | head -80
    echo "gpu_check: the full build failed; falling back to kernels only"
    return 1
  fi
  echo "built in $((SECONDS - start)) s"
  check_bin=$full/tests/unit/cuda/cuda_check
  speed_bin=$full/bench/cuda/cuda_speed
}

# Binaries of a full build made elsewhere and brought along in FULL_BUILD_DIR (deepbatch,
# model_test, cuda_check, cuda_speed at their build paths), used when they start here.
prebuilt_full() {
  local bins=("$full/deepbatch" "$full/tests/integration/model/model_test" "$full/tests/unit/cuda/cuda_check"
              "$full/bench/cuda/cuda_speed")
  local b
  for b in "${bins[@]}"; do [[ -x $b ]] || return 1; done
  "$full/deepbatch" --help >/dev/null 2>&1 || { echo "gpu_check: the prebuilt deepbatch in $full does not start here"; return 1; }
  echo "gpu_check: running the prebuilt full build in $full"
  check_bin=$full/tests/unit/cuda/cuda_check
  speed_bin=$full/bench/cuda/cuda_speed
}

# One model: greedy texts of --device cuda against --device cpu, then the decode speed
# at batch 1 and 64 against the device's bandwidth. $1: the GGUF, $2: prompts; the
# requests, outputs and logs stay in $1.check.
model_check() {
  local model=$1 n=$2 dir="$1.check"  # the requests, outputs and logs
  mkdir -p "$dir"
  python3 - "$dir/in.jsonl" "$n" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(int(sys.argv[2])):
        body = {"model": "m", "prompt": f"Question {i}: what is {i} plus {i * 7}? Answer:", "max_tokens": 32,
                "temperature": 0}
        f.write(json.dumps({"custom_id": f"r{i}", "method": "POST", "url": "/v1/completions", "body": body}) + "\n")
PY
  # cuda one request at a time and 16 at a time must agree exactly (batch invariance);
  # cuda against cpu is reported (the CPU multiplies quantized weights with int8 activations,
  # the device with f32 ones, so a near-tie of random weights may differ).
  local run rc=0
  for run in "cpu 16" "cuda 1" "cuda 16"; do
    local device=${run% *} seqs=${run#* } start=$SECONDS
    "$full/deepbatch" run -m "$model" -i "$dir/in.jsonl" -o "$dir/out_${device}_$seqs.jsonl" --device "$device" \
      --max-num-seqs "$seqs" --kv-cache-memory 2G >"$dir/run_${device}_$seqs.log" 2>&1 ||
      { tail -5 "$dir/run_${device}_$seqs.log"; echo "run --device $device --max-num-seqs $seqs: FAILED"; return 1; }
    echo "run --device $device --max-num-seqs $seqs: $((SECONDS - start)) s"
  done
  python3 - "$dir/out_cpu_16.jsonl" "$dir/out_cuda_1.jsonl" "$dir/out_cuda_16.jsonl" <<'PY' || rc=1
import json, sys
def texts(path):
    out = {}
    for line in open(path):
        r = json.loads(line)
        out[r["custom_id"]] = r["response"]["body"]["choices"][0]["text"]
    return out
cpu, alone, batched = (texts(p) for p in sys.argv[1:4])
def same(a, b): return sum(a[k] == b.get(k) for k in a)
print(f"greedy texts: cuda alone vs cuda in 16: {same(alone, batched)} of {len(alone)} identical (required)")
print(f"greedy texts: cuda vs cpu: {same(batched, cpu)} of {len(cpu)} identical")
for k in cpu:
    if batched.get(k) != alone.get(k) or batched.get(k) != cpu[k]:
        print(f"  {k}: cpu {cpu[k]!r}\n  {k}: cuda alone {alone.get(k)!r}\n  {k}: cuda in 16 {batched.get(k)!r}")
sys.exit(0 if same(alone, batched) == len(alone) else 1)
PY
  "$full/deepbatch" bench -m "$model" --device cuda --phase decode --batch-sizes 1,64 --num-requests 64 \
    --input-len 128 --output-len 64 --output-json "$dir/bench.json" >"$dir/bench.log" 2>&1 ||
    { tail -5 "$dir/bench.log"; echo "bench --device cuda: FAILED"; return 1; }
  python3 - "$dir/bench.json" "$model" "$bandwidth_gbs" <<'PY' || rc=1
import json, os, sys
report, model, peak = json.load(open(sys.argv[1])), sys.argv[2], float(sys.argv[3] or 0)
weights = os.path.getsize(model)  # the file: every weight (an upper bound: embedding rows are read one by one)
for r in report["runs"]:
    b, tps = r["max_num_seqs"], r["decode_tokens_per_s"]
    gbs = weights * tps / b / 1e9  # every step reads every weight once
    share = f", {100 * gbs / peak:.0f}% of the device's {peak:.0f} GB/s" if peak > 0 else ""
    print(f"decode batch {b}: {tps:.1f} tok/s, {tps / b:.1f} steps/s, {gbs:.0f} GB/s of weights{share}")
PY
  return $rc
}

configure_and_build() {
  local cmake_bin=$1 generator=() arch
  if ninja_bin=$(find_tool ninja); then generator=(-G Ninja -DCMAKE_MAKE_PROGRAM="$ninja_bin"); fi
  arch=$(cuda_arch)
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
    if [[ ${FULL:-1} != 0 ]] && full_build "$cmake_bin"; then
      have_full=1
    elif [[ ${FULL:-1} != 0 ]] && prebuilt_full; then
      have_full=1
    else
      configure_and_build "$cmake_bin" || return 1
    fi
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
  local speed_log
  speed_log=$(mktemp)
  "$speed_bin" --require-device | tee "$speed_log"
  local speed=${PIPESTATUS[0]}
  local models=0 model_note="not run (kernels-only build)"
  if [[ $have_full == 1 && ${MODEL_CHECKS:-1} != 0 ]]; then
    bandwidth_gbs=$(grep -oE "peak memory bandwidth [0-9.]+" "$speed_log" | grep -oE "[0-9.]+$")
    step "model cases: the tiny fixtures through the CUDA backend"
    "$full/tests/integration/model/model_test" --gtest_filter='Fixtures/CudaModelTest.*' >"$full/cuda_model_test.log" 2>&1 ||
      models=1
    grep -E "cuda \]|OK \]|FAILED|SKIPPED|PASSED|Failure|Expected|Which is" "$full/cuda_model_test.log" | head -60
    local vocab=tests/data/tokenizer/deepseek-r1-distill-qwen/vocab.gguf shape type n
    for spec in "r1-qwen-mini q8_0 16" "r1-qwen-1.5b q4_0 16"; do
      read -r shape type n <<<"$spec"
      step "deepbatch run and bench --device cuda: random $shape $type"
      python3 bench/make_random_gguf.py --shape "$shape" --type "$type" --vocab-from "$vocab" \
        --out "$full/random-$shape-$type.gguf" >/dev/null || { echo "make_random_gguf: FAILED"; models=1; continue; }
      model_check "$full/random-$shape-$type.gguf" "$n" || models=1
    done
    model_note=$([[ $models == 0 ]] && echo passed || echo FAILED)
  fi
  step "summary"
  echo "cases: $([[ $cases == 0 ]] && echo passed || echo FAILED), speed table: $([[ $speed == 0 ]] && echo done || echo FAILED), model checks: $model_note"
  [[ $cases == 0 && $speed == 0 && $models == 0 ]]
}

if [[ -n "${OUT:-}" ]]; then
  mkdir -p "$OUT"
  main 2>&1 | tee "$OUT/gpu_check.txt"
  exit "${PIPESTATUS[0]}"
fi
main
