#!/usr/bin/env bash
# Install the llama.cpp peer (PyPI package llama-cpp-python, which builds its bundled
# llama.cpp from source with CMake) into a virtual environment.
# Usage: bench/peer/install_llama_cpp_python.sh [VENV_DIR]   (default: build-peer/venv in the repo root)
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="${1:-$REPO/build-peer/venv}"
VERSION="0.3.36"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --upgrade pip numpy
CMAKE_ARGS="-DGGML_NATIVE=ON" CMAKE_BUILD_PARALLEL_LEVEL="${JOBS:-2}" \
  "$VENV/bin/pip" install --no-cache-dir "llama-cpp-python==$VERSION"
"$VENV/bin/python" -c "import llama_cpp; print('llama-cpp-python', llama_cpp.__version__)"
