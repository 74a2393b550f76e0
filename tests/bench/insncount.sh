#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# aarch64 instructions per inference, floe vs the raw-XNNPACK program
# (../shared/tools/peers/xnnpack_c/xnn_bench.c cross-built against the same
# Debian arm64 XNNPACK), on mlp b1 / mlp b64 / cnn, and int8 KWS (MLPerf Tiny,
# ../shared/corpus/int8) through XNNPACK vs floe's int8 reference kernels vs
# TF Lite 2.9's anchors (../shared/docs/arm-anchors.md), under qemu-aarch64 with
# ../shared/tools/qemu-insncount. Deterministic: single thread, env -i, fixed
# -cpu; per inference = (C(2N) - C(N)) / N, so start-up, Init and weight packing
# cancel out.
#   tests/bench/insncount.sh [--build DIR] [--cpu cortex-a53] [--n N]
# DIR: an aarch64-linux build (default build/aarch64-linux) with bin/floe-bench.
# Models: build/bench/peers/models (run tests/bench/compare.sh once, or it makes them).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build/aarch64-linux
cpu=cortex-a53
n=4
host_convert=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --cpu) cpu=$2; shift 2 ;;
    --n) n=$2; shift 2 ;;
    --convert) host_convert=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--cpu CPU] [--n N] [--convert HOST_FLOE_CONVERT]" >&2; exit 2 ;;
  esac
done
shared=${FLOE_SHARED_DIR:-$root/../shared}
sysroot=$(sed -n 's/^FLOE_ARM64_SYSROOT:[A-Z]*=//p' "$build/CMakeCache.txt")
lib=$sysroot/usr/lib/aarch64-linux-gnu
work=$root/build/bench
peers=$work/peers
mkdir -p "$work/insn"
if [ ! -f "$peers/models/cnn.pb" ]; then
  mkdir -p "$peers" && cp -r "$shared/tools/peers/." "$peers/" && chmod -R u+w "$peers"
  (cd "$peers" && /usr/bin/python3 make_bench_models.py models > /dev/null)
fi
m=$peers/models
[ -n "$host_convert" ] || host_convert=$(ls "$build/host-tools/bin/floe-convert" "$root/build/host/bin/floe-convert" 2>/dev/null | head -1)
[ -x "$host_convert" ] || { echo "insncount: no host floe-convert (pass --convert PATH)" >&2; exit 2; }
c="$host_convert -q --target aarch64"
$c --graph "$m/mlp.pb" --outputs prob --input-shape x=1,784 -o "$work/insn/mlp_b1.floe"
$c --graph "$m/mlp.pb" --outputs prob --input-shape x=64,784 -o "$work/insn/mlp_b64.floe"
$c --graph "$m/cnn.pb" --outputs prob -o "$work/insn/cnn.floe"
plugin=$work/insn/libinsncount.so
[ -f "$plugin" ] || gcc -shared -fPIC -O2 -o "$plugin" "$shared/tools/qemu-insncount/insncount.c"
xnn=$work/insn/xnn_bench_aarch64
[ -f "$xnn" ] || aarch64-linux-gnu-gcc -O2 -I"$sysroot/usr/include" "$peers/xnnpack_c/xnn_bench.c" -o "$xnn" \
  -L"$lib" -Wl,-rpath-link,"$lib" -lXNNPACK -lpthreadpool -lcpuinfo -lm

count() {  # count N cmd...: instructions of one run
  out=$work/insn/count.txt
  env -i qemu-aarch64 -cpu "$cpu" -L /usr/aarch64-linux-gnu -plugin "$plugin",out="$out" \
    -E LD_LIBRARY_PATH="$lib" "$@" > /dev/null
  sed -n 's/^insns: //p' "$out"
}
per_inference() {  # per_inference KIND ARGS: floe | xnn
  kind=$1; shift
  if [ "$kind" = floe ]; then
    a=$(count "$build/bin/floe-bench" "$@" --runs "$n" --warmup 1 --profile-runs 0 --no-input-reload)
    b=$(count "$build/bin/floe-bench" "$@" --runs $((2 * n)) --warmup 1 --profile-runs 0 --no-input-reload)
  else
    a=$(count "$xnn" "$@" --runs "$n")
    b=$(count "$xnn" "$@" --runs $((2 * n)))
  fi
  echo $(((b - a) / n))
}
printf '%-8s %14s %14s %8s   (qemu-aarch64 -cpu %s, 1 thread, (C(2N)-C(N))/N, N=%s)\n' \
  model floe raw-XNNPACK ratio "$cpu" "$n"
for spec in "mlp_b1:mlp models --batch 1" "mlp_b64:mlp models --batch 64" "cnn:cnn models"; do
  name=${spec%%:*}
  f=$(per_inference floe "$work/insn/$name.floe")
  x=$(cd "$peers" && per_inference xnn ${spec#*:})
  printf '%-8s %14s %14s %8s\n' "$name" "$f" "$x" "$(echo "$f $x" | awk '{printf "%.4f", $1 / $2}')"
done

# int8 KWS: floe's default (exact: its own integer kernels), XNNPACK's int8
# (--int8-rounding fast: QC8/QS8, within a step per op) and the reference
# kernels, vs TF Lite 2.9 on the same plain -cpu cortex-a53 set-up
# (arm-anchors.md): builtin kernels 1,395,585, XNNPACK delegate (QS8) 2,004,623.
kws=$shared/corpus/int8/mlperf_tiny/kws
if [ -f "$kws/kws_ref_model.tflite" ]; then
  $c --graph "$kws/kws_ref_model.tflite" -o "$work/insn/kws_int8.floe"
  $c --int8-rounding fast --graph "$kws/kws_ref_model.tflite" -o "$work/insn/kws_int8_fast.floe"
  $host_convert -q --target reference --graph "$kws/kws_ref_model.tflite" -o "$work/insn/kws_int8_ref.floe"
  in="--input input_1=$kws/kws_input0_int8.npy"
  e=$(per_inference floe "$work/insn/kws_int8.floe" $in)
  x=$(per_inference floe "$work/insn/kws_int8_fast.floe" $in)
  r=$(per_inference floe "$work/insn/kws_int8_ref.floe" $in)
  printf '\n%-8s %14s %14s %14s %14s %8s\n' model floe-exact floe-fast floe-reference TFLite-builtin ratio
  printf '%-8s %14s %14s %14s %14s %8s\n' kws_int8 "$e" "$x" "$r" 1395585 "$(echo "$e" | awk '{printf "%.4f", $1 / 1395585}')"
else
  echo "kws int8: skipped ($kws/kws_ref_model.tflite not found)"
fi
# person_detect: TF Lite 2.9 refuses the file, so no peer figure.
pd=$shared/corpus/int8/tflite_micro/person_detection
if [ -f "$pd/person_detect.tflite" ]; then
  $c --graph "$pd/person_detect.tflite" -o "$work/insn/person_detect.floe"
  $c --int8-rounding fast --graph "$pd/person_detect.tflite" -o "$work/insn/person_detect_fast.floe"
  in="--input input=$pd/person_tflm_int8.npy"
  e=$(per_inference floe "$work/insn/person_detect.floe" $in)
  x=$(per_inference floe "$work/insn/person_detect_fast.floe" $in)
  printf '%-8s %14s %14s %14s %14s\n' person "$e" "$x" - -
fi
