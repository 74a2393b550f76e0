#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages floe builds and tests with (only what is
# missing, so repeated runs are fast). Runs apt-get as root, else via sudo.
#   .ci/install-deps.sh          host build + tests (demo.sh, test.sh)
#   .ci/install-deps.sh --all    plus cross toolchains, QEMU, clang/fuzzing, valgrind (CI)
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libflatbuffers-dev flatbuffers-compiler
  libprotobuf-dev protobuf-compiler
  libsnappy-dev libcli11-dev googletest
  libxnnpack-dev libpthreadpool-dev libcpuinfo-dev
  python3 python3-numpy python3-sklearn pybind11-dev python3-pytest
  librsvg2-bin
)
if [ "${1:-}" = "--all" ]; then
  packages+=(
    g++-aarch64-linux-gnu qemu-user
    gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-dev qemu-system-arm
    clang libclang-rt-14-dev valgrind
  )
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
apt_opts=(-o DPkg::Lock::Timeout=900)
"${sudo_cmd[@]}" apt-get "${apt_opts[@]}" update -qq || { sleep 15; "${sudo_cmd[@]}" apt-get "${apt_opts[@]}" update -qq; } || true
"${sudo_cmd[@]}" apt-get "${apt_opts[@]}" install -y -qq --no-install-recommends "${missing[@]}"
