#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job, end to end: install what is missing, build the host tools,
# convert the MNIST example (a TF1 .meta + checkpoint V2, as TensorFlow saved it)
# into a .floe model, and run it on three held-out digits; then quantize it to
# int8 on its training digits and compare both on all 297 held-out digits.
set -euo pipefail
cd "$(dirname "$0")"
bash .ci/install-deps.sh
cmake --preset host >/dev/null
cmake --build --preset host --target floe-convert floe-run

bin=build/host/bin
model=examples/mnist_mlp/model
out=build/host/mnist_mlp.floe

echo
echo "== Converting $model/mnist_mlp.meta + checkpoint"
"$bin/floe-convert" --graph "$model/mnist_mlp.meta" --checkpoint "$model" \
  --outputs softmax_linear/add --input-shape images=1,784 -o "$out"

for digit in 3 7 9; do
  echo
  echo "== Running $out on $model/digit_$digit.npy (true label: $digit)"
  "$bin/floe-run" "$out" --input "images=$model/digit_$digit.npy" --print
done

echo
echo "== Post-training int8: calibrate on the training digits, compare with float on the 297 held-out ones"
/usr/bin/python3 examples/mnist_mlp/evaluate_int8.py --bin "$bin" --work build/host/mnist_int8
echo
echo "== Running the int8 model on $model/digit_3.npy (float input, quantized by floe-run --quantize)"
"$bin/floe-run" build/host/mnist_int8/mnist_int8.floe --input "images=$model/digit_3.npy" --quantize --print
