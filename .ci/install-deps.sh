#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages floe builds and tests with (only what is
# missing, so repeated runs are fast). Runs apt-get as root, else via sudo.
#   .ci/install-deps.sh          host build + tests (demo.sh, test.sh)
#   .ci/install-deps.sh --all    plus cross toolchains, QEMU, clang/fuzzing, valgrind, and node/npm
#                                with ../shared/tools/peers/node_modules for the oracle tests (CI)
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libflatbuffers-dev flatbuffers-compiler
  libprotobuf-dev protobuf-compiler
  libsnappy-dev libcli11-dev googletest zlib1g-dev
  libxnnpack-dev libpthreadpool-dev libcpuinfo-dev
  python3 python3-numpy python3-flatbuffers python3-sklearn pybind11-dev python3-pytest python3-venv python3-setuptools python3-wheel
  librsvg2-bin graphviz
)
if [ "${1:-}" = "--all" ]; then
  packages+=(
    g++-aarch64-linux-gnu qemu-user
    gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-dev qemu-system-arm
    clang libclang-rt-14-dev valgrind
  )
  # node/npm for the oracle tests (TF.js, TFLite peers); Debian's nodejs is enough
  # when no node is installed already.
  command -v node >/dev/null 2>&1 || packages+=(nodejs)
  command -v npm >/dev/null 2>&1 || packages+=(npm)
fi

# The oracle tests' peers (../shared/tools/peers) need their node_modules: npm ci
# there (or, when ../shared is read-only, in a copy at build/host/peers, which
# the tests also look at). Optional: offline, the tests skip with a message.
install_peers() {
  local peers
  peers="$(cd "$(dirname "$0")/.." && pwd)/../shared/tools/peers"
  if [ ! -f "$peers/package-lock.json" ]; then
    echo "install-deps: $peers not found: the oracle tests will skip"
    return 0
  fi
  if [ -d "$peers/node_modules" ]; then
    echo "install-deps: $peers/node_modules present"
    return 0
  fi
  if ! command -v npm >/dev/null 2>&1; then
    echo "install-deps: npm not installed: the oracle tests will skip"
    return 0
  fi
  local dir="$peers"
  if [ ! -w "$peers" ]; then
    dir="$(cd "$(dirname "$0")/.." && pwd)/build/host/peers"
    echo "install-deps: $peers is read-only: installing its node_modules in a copy at $dir"
    mkdir -p "$dir" && cp -r "$peers/." "$dir/"
    [ -d "$dir/node_modules" ] && { echo "install-deps: $dir/node_modules present"; return 0; }
  fi
  echo "install-deps: npm ci in $dir (ONNXRUNTIME_NODE_INSTALL=skip: no CUDA bits from NuGet)"
  (cd "$dir" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund) ||
    echo "install-deps: npm ci failed (offline?): the oracle tests will skip"
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  [ "${1:-}" != "--all" ] || install_peers
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
apt_opts=(-o DPkg::Lock::Timeout=900)
"${sudo_cmd[@]}" apt-get "${apt_opts[@]}" update -qq || { sleep 15; "${sudo_cmd[@]}" apt-get "${apt_opts[@]}" update -qq; } || true
"${sudo_cmd[@]}" apt-get "${apt_opts[@]}" install -y -qq --no-install-recommends "${missing[@]}"
[ "${1:-}" != "--all" ] || install_peers
