#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fetches Debian's arm64 XNNPACK, pthreadpool and cpuinfo packages with `apt-get download`
# and unpacks them into a private sysroot (default: build/arm64-sysroot). The :arm64 -dev
# packages are NOT installed: they are not Multi-Arch: same and would remove the amd64 ones
# the host build links. Needs `dpkg --add-architecture arm64 && apt-get update` once (done
# here when missing, as root). Idempotent: does nothing when the sysroot is complete.
#   ports/aarch64-linux/fetch-sysroot.sh [SYSROOT_DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
sysroot=${1:-$root/build/arm64-sysroot}
lib=$sysroot/usr/lib/aarch64-linux-gnu
if [ -f "$sysroot/usr/include/xnnpack.h" ] && [ -e "$lib/libXNNPACK.so" ] && [ -e "$lib/libpthreadpool.so" ] \
   && [ -e "$lib/libcpuinfo.so" ]; then
  echo "fetch-sysroot: $sysroot is complete"
  exit 0
fi
A="-o DPkg::Lock::Timeout=900"
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  dpkg --add-architecture arm64
  # Foreign-arch indexes can fail transiently (mirror sync): retry, then go on.
  apt-get $A update || { sleep 15; apt-get $A update; } || true
fi
debs=$(mktemp -d)
chmod 777 "$debs"   # apt's _apt sandbox user writes the downloads here
trap 'rm -rf "$debs"' EXIT
pkgs="libxnnpack0:arm64 libxnnpack-dev:arm64 libpthreadpool0:arm64 libpthreadpool-dev:arm64 libcpuinfo0:arm64 libcpuinfo-dev:arm64"
if ! (cd "$debs" && apt-get $A download $pkgs); then
  apt-get $A update || true
  (cd "$debs" && apt-get $A download $pkgs)
fi
mkdir -p "$sysroot"
for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$sysroot"; done
echo "fetch-sysroot: unpacked $(ls "$debs" | wc -l) packages into $sysroot"
