#!/usr/bin/env bash
# Sets up everything deepbatch needs on a fresh Debian machine (run as root):
# system packages, the default model in models/, XGrammar, and a Release build of the
# `deepbatch` binary and the Python package in build/. Prints each stage with its
# elapsed time. Re-running is fast and harmless: each step checks before it acts.
#
#   scripts/setup.sh [--no-build] [--for-tests]
#     --no-build   install only; build nothing
#     --for-tests  also install what the test suite needs (clang for the fuzzers,
#                  Prometheus, pytest, Ray, the OpenAI client, ...)
set -euo pipefail
cd "$(dirname "$0")/.."

no_build=0
for_tests=0
for arg in "$@"; do
  case "$arg" in
    --no-build) no_build=1 ;;
    --for-tests) for_tests=1 ;;
    *) echo "[setup] unknown argument: $arg (expected --no-build, --for-tests)" >&2; exit 2 ;;
  esac
done

# What the main job needs: the compilers and libraries of the build, Python with pip
# (the model's download, XGrammar's source, the Python package); ccache serves
# unchanged objects to later builds (never required: CMake uses it when present).
# Open MPI (mpirun and its headers) and hwloc belong to the main job: with them the
# build gets the communicator that splits one model across processes (`mpirun -np N
# deepbatch ...`; CMake's DB_MPI=AUTO finds them); a build without them runs one process.
APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates unzip ccache
  nlohmann-json3-dev libpcre2-dev libcli11-dev libxxhash-dev libboost-dev curl
  python3 python3-pip
  openmpi-bin libopenmpi-dev libhwloc-dev
)
# What the test suite adds: GoogleTest, the fuzz targets (libFuzzer, sanitizer runtimes,
# symbolized stacks), a real Prometheus for the end-to-end test that scrapes a
# running server and runs the dashboard's queries, and iproute2 (ip, tc) for the tests
# that put each rank of an mpirun job in its own network namespace.
APT_TEST_PACKAGES=(
  libgtest-dev libgmock-dev libbenchmark-dev
  clang lld libclang-rt-14-dev llvm
  prometheus iproute2
)
# Python packages. The main job: pybind11 builds the Python package's extension
# (python/) and scikit-build-core installs it with pip; tqdm draws its progress bar.
# The tests add: the official OpenAI client drives the server; gguf (with numpy) writes
# the random-weight deepseek2 models of tests/e2e/deepseek; matplotlib draws
# `deepbatch loadtest --plot`; jsonschema checks structured outputs; pytest runs the
# package's tests, and Ray (with Ray Data) runs deepbatch.ray and its test's local cluster.
# Each is installed when its module (the name before "==" and any "[extras]", "-" read as
# "_") cannot be imported.
PY_PACKAGES=(pybind11==2.13.6 scikit-build-core==0.10.7 tqdm==4.67.1)
PY_TEST_PACKAGES=(openai==3.57.0 gguf==0.19.0 matplotlib==3.9.2 jsonschema==4.26.0
  pytest==8.3.4 "ray[data]==2.60.0")
if ((for_tests)); then
  APT_PACKAGES+=("${APT_TEST_PACKAGES[@]}")
  PY_PACKAGES+=("${PY_TEST_PACKAGES[@]}")
fi

start=$SECONDS
log() { printf '[setup %3ds] %s\n' $((SECONDS - start)) "$*"; }

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

# The main job's targets only (the `deepbatch` binary and the Python extension);
# scripts/test.sh builds the rest of the tree in the same directory.
build_main() {
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDB_BUILD_TESTS=OFF >/dev/null
  ninja -C build deepbatch _core
}

# The deepbatch Python package, from the Release build in build/ (pyproject.toml uses
# the same build directory, so this only links and installs the extension).
install_python_package() {
  python3 -m pip install -q --no-build-isolation . ||
    python3 -m pip install -q --no-build-isolation --break-system-packages .
}

log "system packages"
install_packages
log "Python packages"
install_python_packages
log "the default model"
bash scripts/fetch_default_model.sh
log "XGrammar"
bash scripts/fetch_xgrammar.sh
if ((no_build == 0)); then
  log "building deepbatch (Release) in build/"
  build_main
  log "installing the deepbatch Python package"
  install_python_package
fi
log "done"
