#!/usr/bin/env bash
# Start-up of a model file, whole commands timed in alternating rounds so that
# each sees the same machine load: `deepbatch generate` of one token on the
# GGUF file as given (its matrices repacked at load), the same on a copy packed
# by `deepbatch convert --pack` (mapped, nothing computed per matrix), and,
# when a llama.cpp-family `llama-cli` is given, the peer on the original file.
# Each run's wall time and peak RSS (/usr/bin/time) are printed, then medians
# and the ratios to the peer. The page cache is warmed by one untimed run of each.
#
#   bench/load/compare_load.sh DEEPBATCH MODEL.gguf [ROUNDS=5] [THREADS=2] [LLAMA_CLI]
#
# The packed copy is written next to the model as MODEL.packed.gguf (kept, and
# rewritten when older than the model or this deepbatch binary).
set -euo pipefail
db=$(realpath "$1") model=$(realpath "$2") rounds=${3:-5} threads=${4:-2} peer=${5:-}
packed=${model%.gguf}.packed.gguf
prompt="Hello"

if [[ ! -f $packed || $packed -ot $model || $packed -ot $db ]]; then
  "$db" convert "$model" -o "$packed" --pack
fi

timing=$(mktemp)
trap 'rm -f "$timing"' EXIT
run() {  # run NAME CMD...: prints "seconds max_rss_kib" of one run
  /usr/bin/time -o "$timing" -f "%e %M" "${@:2}" </dev/null >/dev/null 2>&1 || { echo "$1 failed: ${*:2}" >&2; exit 1; }
  tail -1 "$timing"
}
db_cmd() { echo "$db" generate -m "$1" -t "$threads" -n 1 -p "$prompt"; }
peer_cmd() { echo "$peer" -m "$model" -t "$threads" -n 1 -p "$prompt" -c 4096 --no-warmup; }

names=(repack packed) cmds=("$(db_cmd "$model")" "$(db_cmd "$packed")")
[[ -n $peer ]] && names+=(peer) cmds+=("$(peer_cmd)")
for i in "${!names[@]}"; do run "${names[$i]}" ${cmds[$i]} >/dev/null; done  # warm the page cache

declare -A times rss
for ((r = 1; r <= rounds; ++r)); do
  line="round $r:"
  for i in "${!names[@]}"; do
    read -r s m < <(run "${names[$i]}" ${cmds[$i]})
    times[${names[$i]}]+="$s " rss[${names[$i]}]+="$m "
    line+=" ${names[$i]} ${s} s ${m} KiB;"
  done
  echo "$line"
done

median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
declare -A med
for n in "${names[@]}"; do
  med[$n]=$(echo "${times[$n]}" | median)
  printf '%-7s median %6.2f s, peak RSS median %8.0f MiB\n' "$n" "${med[$n]}" "$(echo "${rss[$n]}" | median | awk '{print $1 / 1024}')"
done
awk -v a="${med[repack]}" -v b="${med[packed]}" 'BEGIN {printf "packed / repack %.2f\n", b / a}'
if [[ -n $peer ]]; then
  awk -v a="${med[repack]}" -v b="${med[packed]}" -v p="${med[peer]}" \
    'BEGIN {printf "repack / peer %.2f, packed / peer %.2f\n", a / p, b / p}'
fi
