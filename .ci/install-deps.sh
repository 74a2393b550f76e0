#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages floe builds and tests with (only what is
# missing, so repeated runs are fast). Runs apt-get as root, else via sudo.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libflatbuffers-dev flatbuffers-compiler
  libprotobuf-dev protobuf-compiler
  libsnappy-dev libcli11-dev googletest
  python3 python3-numpy python3-sklearn
)

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
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
