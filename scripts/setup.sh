#!/usr/bin/env bash
# Sets up everything deepbatch needs on a fresh Debian machine (run as root):
# system packages, the default model in models/, and a Release build in build/.
# Re-running is fast and harmless: each step checks before it acts.
#
#   scripts/setup.sh [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates unzip
  nlohmann-json3-dev libpcre2-dev libcli11-dev libxxhash-dev
  libgtest-dev libgmock-dev libbenchmark-dev libboost-dev curl
  python3 python3-pip
  clang lld libclang-rt-14-dev llvm  # the fuzz targets (libFuzzer, sanitizer runtimes, symbolized stacks)
  prometheus  # the end-to-end test that scrapes a running server and runs the dashboard's queries
)
# Python packages for the end-to-end tests: the official OpenAI client drives the server;
# gguf (with numpy) writes the random-weight deepseek2 models of tests/e2e/deepseek;
# matplotlib draws `deepbatch loadtest --plot`; pybind11 builds the Python package's
# extension (python/) and scikit-build-core installs it with pip; pytest runs its tests,
# tqdm draws its progress bar, and Ray (with Ray Data) runs deepbatch.ray and its test's
# local cluster.
# Each is installed when its module (the name before "==" and any "[extras]", "-" read as
# "_") cannot be imported.
PY_PACKAGES=(openai==3.57.0 gguf==0.19.0 matplotlib==3.9.2 jsonschema==4.26.0 pybind11==2.13.6
  scikit-build-core==0.10.7 pytest==8.3.4 tqdm==4.67.1 "ray[data]==2.60.0")

log() { echo "[setup] $*"; }

install_packages() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  # python3/pip may come from elsewhere than Debian (e.g. a managed interpreter): accept a working one.
  if command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1; then
    local keep=()
    for p in "${missing[@]}"; do [[ "$p" == python3 || "$p" == python3-pip ]] || keep+=("$p"); done
    missing=("${keep[@]}")
  fi
  if ((${#missing[@]})); then
    log "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    log "Debian packages present"
  fi
}

install_python_packages() {
  local missing=()
  for p in "${PY_PACKAGES[@]}"; do  # an importable module of any recent version will do
    local module=${p%%==*}
    module=${module%%\[*}
    python3 -c "import ${module//-/_}" 2>/dev/null || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    log "Python packages present"
    return
  fi
  log "installing Python packages: ${missing[*]}"
  python3 -m pip install -q "${missing[@]}" ||
    python3 -m pip install -q --break-system-packages "${missing[@]}"
}

build() {
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
  ninja -C "$dir"
}

# The deepbatch Python package, from the Release build in build/ (pyproject.toml uses
# the same build directory, so this only links and installs the extension).
install_python_package() {
  log "installing the deepbatch Python package"
  python3 -m pip install -q --no-build-isolation . ||
    python3 -m pip install -q --no-build-isolation --break-system-packages .
}

install_packages
install_python_packages
bash scripts/fetch_default_model.sh
bash scripts/fetch_xgrammar.sh
if [[ "${1:-}" != "--no-build" ]]; then
  log "building Release in build/"
  build build -DCMAKE_BUILD_TYPE=Release
  install_python_package
fi
