#!/bin/bash
# Decode speed of one model in one process against the same model split over 2 ranks of
# an mpirun job on this machine: A = one process x 2 threads, T = tensor parallelism,
# E = expert parallelism (deepseek2 only), 2 ranks x 1 thread. Runs alternate within each
# round so that load on a shared machine falls on all three alike; prints the
# `decode_t/s` of `deepbatch bench --phase decode` per run.
#
#   bench/scaleout/compare_split.sh BINARY MODEL.gguf [ROUNDS]
set -euo pipefail
bin=${1:?usage: compare_split.sh BINARY MODEL.gguf [ROUNDS]}
model=${2:?usage: compare_split.sh BINARY MODEL.gguf [ROUNDS]}
rounds=${3:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun -np 2 --oversubscribe --bind-to none)

one() {  # label batch requests launcher-prefix... -- options...
  local label=$1 batch=$2 requests=$3; shift 3
  local prefix=() opts=()
  while [ "$1" != "--" ]; do prefix+=("$1"); shift; done
  shift
  opts=("$@")
  local out line
  out=$("${prefix[@]}" "$bin" bench -m "$model" --phase decode --batch-sizes "$batch" --num-requests "$requests" \
        --input-len 8 --output-len 32 "${opts[@]}" 2>&1) || { echo "$out" | tail -5; return 1; }
  line=$(echo "$out" | grep -A1 "decode_t/s" | grep " decode " | head -1 | awk '{print $NF}')
  echo "round $r  batch $batch  $label  decode tok/s $line  (load $(cut -d' ' -f1 /proc/loadavg))"
}

for r in $(seq 1 "$rounds"); do
  for batch in 1 64; do
    requests=$([ "$batch" = 1 ] && echo 4 || echo 64)
    one "A 1 x 2 threads" "$batch" "$requests" env -- -t 2
    one "T 2 ranks, TP  " "$batch" "$requests" "${mpi[@]}" -- -t 1 --tensor-parallel-size 2
    one "E 2 ranks, EP  " "$batch" "$requests" "${mpi[@]}" -- -t 1 --expert-parallel-size 2
  done
done
