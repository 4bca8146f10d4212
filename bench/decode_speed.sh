#!/usr/bin/env bash
# Decode-dominated A/B of two deepbatch binaries: alternating rounds of
# `deepbatch generate` (short prompt, N greedy tokens, T threads) so both see
# the same machine load; prints each round, the medians and the ratio B / A.
#
#   bench/decode_speed.sh BINARY_A BINARY_B [ROUNDS=5] [TOKENS=256] [THREADS=2] [MODEL]
set -euo pipefail
a=$(realpath "$1") b=$(realpath "$2") rounds=${3:-5} tokens=${4:-256} threads=${5:-2}
model=${6:-$(dirname "$0")/../models/SmolLM2-135M-Instruct.Q4_1.gguf}
prompt="Write a short story about a lighthouse keeper."

decode_rate() {  # prints the decode tok/s of one run of binary $1
  "$1" generate -m "$model" -t "$threads" -q --ignore-eos -n "$tokens" -p "$prompt" 2>&1 >/dev/null |
    sed -n 's/.*decode \([0-9.]*\) tok\/s.*/\1/p' | tail -1
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

ra=() rb=()
for ((i = 1; i <= rounds; ++i)); do
  x=$(decode_rate "$a") y=$(decode_rate "$b")
  [[ -n $x && -n $y ]] || { echo "could not read a decode rate from the generate output" >&2; exit 1; }
  ra+=("$x") rb+=("$y")
  echo "round $i: A $x tok/s, B $y tok/s"
done
ma=$(printf '%s\n' "${ra[@]}" | median) mb=$(printf '%s\n' "${rb[@]}" | median)
echo "median decode: A $ma tok/s, B $mb tok/s, B/A $(awk -v a="$ma" -v b="$mb" 'BEGIN {printf "%.2f", b / a}')"
