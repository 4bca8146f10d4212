#!/usr/bin/env bash
# Builds XGrammar's C++ core (the grammar engine behind structured outputs) into
# third_party/xgrammar/, from the source distribution of the PyPI package
# `xgrammar` (checked by SHA-256): a static library and its headers, built once
# in Release and linked by every build of this project (sanitizer builds too).
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=0.2.8
SHA256=8305646fd2b319d6c3003f51a1665e54cbbe9cba1fb636bc41d0b46434ccbb80
DEST=third_party/xgrammar
STAMP=$DEST/install/VERSION

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$VERSION" && -f "$DEST/install/lib/libxgrammar.a" ]]; then
  echo "[xgrammar] $DEST/install present ($VERSION)"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "[xgrammar] downloading the xgrammar $VERSION source distribution"
python3 -m pip download --quiet --no-deps --no-binary xgrammar "xgrammar==$VERSION" -d "$tmp"
tarball="$tmp/xgrammar-$VERSION.tar.gz"
if ! echo "$SHA256  $tarball" | sha256sum --check --status; then
  echo "[xgrammar] ERROR: checksum mismatch for $tarball" >&2
  exit 1
fi
tar -xzf "$tarball" -C "$tmp"
src="$tmp/xgrammar-$VERSION"
echo "[xgrammar] building its C++ core (a few minutes)"
# A config.cmake in the build folder takes the place of the package's own (which
# turns the Python bindings on). Its flags add -Werror and LTO; ours come after
# them and turn both off, so the archive links with any compiler of the project's builds.
mkdir -p "$tmp/build"
printf 'set(XGRAMMAR_BUILD_PYTHON_BINDINGS OFF)\nset(XGRAMMAR_BUILD_CXX_TESTS OFF)\n' >"$tmp/build/config.cmake"
# ccache, when installed, serves the objects of an earlier build of the same version (the
# temporary folder's path is made relative so that it does not change the key).
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$tmp
fi
cmake -S "$src" -B "$tmp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS="-Wno-error -fno-lto" \
  "${launcher[@]}" -DCMAKE_INSTALL_PREFIX="$PWD/$DEST/install" >/dev/null
ninja -C "$tmp/build" xgrammar
rm -rf "$DEST/install"
cmake --install "$tmp/build" >/dev/null
install -m 644 "$src/LICENSE" "$DEST/install/LICENSE"
echo "$VERSION" >"$STAMP"
echo "[xgrammar] $DEST/install ready"
