#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# floe vs TF Lite 2.9 + XNNPACK vs ONNX Runtime on the same networks, inputs and
# weights (../shared/tools/peers/make_bench_models.py), at 1 and 2 threads:
# checks the outputs agree, prints medians and the latency ratios floe/TFLite
# and floe/ORT. MobileNet (ARM_ML-examples/yeah-world/mnet.pb) runs on floe.
# int8 KWS (../shared/corpus/int8, MLPerf Tiny): floe vs TF Lite 2.9 + XNNPACK
# in QS8 mode (tests/bench/tflite_int8_bench.c, built here against the same
# TF Lite library).
#   tests/bench/compare.sh [--build DIR] [--runs N] [--rounds R]
# DIR: a host build with floe-convert and floe-bench (default build/host).
# Needs Debian python3-numpy python3-onnx python3-flatbuffers, nodejs/npm (the
# peers' pinned npm packages are installed into the work dir on first use).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build/host
runs=300
rounds=5
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--runs N] [--rounds R]" >&2; exit 2 ;;
  esac
done
shared=${FLOE_SHARED_DIR:-$root/../shared}
work=$root/build/bench
peers=$work/peers
mkdir -p "$work"
# The peers folder is read-only in shared/: work on a copy (models, node_modules, binaries).
if [ ! -f "$peers/make_bench_models.py" ]; then
  mkdir -p "$peers" && cp -r "$shared/tools/peers/." "$peers/" && chmod -R u+w "$peers"
fi
cd "$peers"
[ -f models/cnn.pb ] || /usr/bin/python3 make_bench_models.py models > /dev/null
[ -d node_modules/onnxruntime-node ] || ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund > npm.log 2>&1
[ -x tflite_c/tflite_bench ] || sh tflite_c/build.sh > /dev/null
[ -x xnnpack_c/xnn_bench ] || sh xnnpack_c/build.sh > /dev/null
tfl=node_modules/tfjs-tflite-node/cc_deps
if [ ! -x tflite_int8_bench ] || [ "$root/tests/bench/tflite_int8_bench.c" -nt tflite_int8_bench ]; then
  gcc -O2 -I "$tfl/include" "$root/tests/bench/tflite_int8_bench.c" -o tflite_int8_bench \
    -L "$tfl/linux_amd64" -ltensorflowlite_c -Wl,-rpath,"$(cd "$tfl/linux_amd64" && pwd)"
fi
conv="$build/bin/floe-convert -q --target host"
$conv --graph models/mlp.pb --outputs prob --input-shape x=1,784 -o models/mlp_b1.floe
$conv --graph models/mlp.pb --outputs prob --input-shape x=64,784 -o models/mlp_b64.floe
$conv --graph models/cnn.pb --outputs prob -o models/cnn.floe
mnet=$shared/corpus/ARM_ML-examples/yeah-world/mnet.pb
if [ -f "$mnet" ]; then $conv --graph "$mnet" --outputs output_0 -o models/mnet.floe; fi
kws=$shared/corpus/int8/mlperf_tiny/kws
if [ -f "$kws/kws_ref_model.tflite" ]; then
  $conv --graph "$kws/kws_ref_model.tflite" -o models/kws_int8.floe
  cp "$kws/kws_ref_model.tflite" models/kws_int8.tflite
  cp "$kws/kws_input0_int8.npy" models/kws_int8_x.npy
fi
exec /usr/bin/python3 "$root/tests/bench/compare.py" --bench "$build/bin/floe-bench" --peers "$peers" \
  --runs "$runs" --rounds "$rounds"
