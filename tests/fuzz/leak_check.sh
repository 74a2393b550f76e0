#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Leak check (ctest label "leaks"): runs floe-convert under valgrind memcheck
# on successful and failing conversions (the error paths unwind through
# exceptions, where leaks hide). Fails on any definite/indirect leak or memory
# error (valgrind exit 99), or on an unexpected floe-convert exit code.
#   leak_check.sh FLOE_CONVERT SOURCE_DIR SHARED_DIR
# "Still reachable" blocks are not leaks: protobuf's and libstdc++'s
# process-lifetime singletons stay allocated until exit by design.
set -u
convert=$1; src=$2; shared=$3
tmp=$(mktemp -d /tmp/floe-leaks-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0

check() {  # check NAME EXPECTED_EXIT ARGS...
  name=$1; expected=$2; shift 2
  valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect \
    --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
    "$convert" -q "$@" -o "$tmp/out.floe" > "$tmp/log" 2>&1
  rc=$?
  rm -f "$tmp/out.floe"
  if [ "$rc" -eq "$expected" ]; then
    passed=$((passed + 1)); echo "ok: $name (exit $rc)"
  else
    failed=$((failed + 1)); echo "FAIL: $name: exit $rc, expected $expected"; cat "$tmp/log"
  fi
}

ex=$src/examples
check conv_seed 0 --graph "$ex/conv_seed/model/conv_seed.meta" --checkpoint "$ex/conv_seed/model" --outputs conv
check zoo_conv 0 --graph "$src/tests/fuzz/graphs/zoo_conv.pbtxt" --outputs prob,amean
check mnist_mlp 0 --graph "$ex/mnist_mlp/model/mnist_mlp.pbtxt" --checkpoint "$ex/mnist_mlp/model" \
  --outputs softmax_linear/add
head -c 1500 "$ex/conv_seed/model/conv_seed.meta" > "$tmp/truncated.meta"
check truncated_meta 2 --graph "$tmp/truncated.meta" --outputs conv
cp "$ex/conv_seed/model/model.ckpt.index" "$tmp/model.ckpt.index"
printf 'corrupted' | cat - "$ex/conv_seed/model/model.ckpt.data-00000-of-00001" | head -c 108 \
  > "$tmp/model.ckpt.data-00000-of-00001"
check corrupt_checkpoint 2 --graph "$ex/conv_seed/model/conv_seed.meta" --checkpoint "$tmp/model.ckpt" --outputs conv
# A V1 checkpoint (the fuzz seed) with 8 bytes of its first block overwritten: table magic intact.
v1_seed=$src/tests/fuzz/corpus/fuzz_ckpt_v1/kernel_two_slices.ckpt
{ head -c 60 "$v1_seed"; printf 'XXXXXXXX'; tail -c +69 "$v1_seed"; } > "$tmp/v1.ckpt"
check corrupt_v1_checkpoint 2 --graph "$ex/conv_seed/model/conv_seed.meta" --checkpoint "$tmp/v1.ckpt" --outputs conv
check v1_checkpoint 0 --graph "$ex/conv_seed/model/conv_seed.meta" --checkpoint "$v1_seed" --outputs conv
check unknown_output 2 --graph "$src/tests/fuzz/graphs/zoo_conv.pbtxt" --outputs no_such_node
head -c 700 "$src/tests/fuzz/graphs/zoo_conv.pbtxt" > "$tmp/truncated.pbtxt"
check truncated_text_graph 2 --graph "$tmp/truncated.pbtxt" --outputs prob

corpus=$shared/corpus
if [ -f "$corpus/tf2onnx/models/regression/checkpoint/model.meta" ]; then
  d=$corpus/tf2onnx/models/regression/checkpoint
  check corpus_regression_ckpt 0 --graph "$d/model.meta" --checkpoint "$d" --outputs pred --input-shape X=4
  check corpus_simple_graph 0 --graph "$corpus/dl4j_tf_graphs/nd4j_convert/simple_graph/frozen_model.pb" --outputs output
  # SavedModel directory through its serving_default signature (variables/ frozen).
  serving=$corpus/tensorflow_serving/servables/tensorflow/testdata
  check corpus_saved_model 0 --graph "$serving/saved_model_half_plus_two_cpu/00000123"
  # Keras-in-TF1 .meta + checkpoint (resource variables, FusedBatchNormV3).
  kws=$corpus/mlperf_tiny_qualcomm/KWS/trained_models
  check corpus_kws_meta 0 --graph "$kws/kws.ckpt.meta" --checkpoint "$kws" --outputs dense/Softmax
  # dynamic_rnn while loop + TensorArrays unrolled.
  check corpus_lstm_unrolled 0 --graph "$corpus/ML-KWS-for-MCU/Pretrained_models/LSTM/LSTM_S.pb" \
    --inputs Mfcc --input-shape Mfcc=1,25,10 --outputs labels_softmax
  check corpus_info_saved_model 0 --info --graph "$serving/saved_model_half_plus_two_cpu/00000123"
  check corpus_info_two_shards 0 --info --checkpoint "$corpus/tensor2tensor/transformer_test_ckpt"
  # Refusals: each throws from a different stage.
  check corpus_signature_ambiguous 2 --graph "$serving/saved_model_counter/00000123"
  check corpus_tf2_saved_model 2 --graph "$serving/saved_model_half_plus_two_tf2_cpu/00000123"
  check corpus_v1_checkpoint 0 --graph "$serving/bad_half_plus_two/00000123/export.meta" --outputs Add
  check corpus_unsupported_ops 2 --graph "$corpus/TensorFlow.NET/graph/kmeans.meta" --outputs mul_2,cond/cond_3/Merge
  check corpus_loop_not_constant 2 --graph "$corpus/dl4j_tf_graphs/examples/simplewhile_0/frozen_model.pb" \
    --outputs output --input-shape input_0=2,2 --input-shape input_1=2,2
else
  echo "SKIPPED: ../shared/corpus not available (corpus cases)"
fi
echo "leak check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
