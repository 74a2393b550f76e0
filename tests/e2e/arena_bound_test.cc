// SPDX-License-Identifier: Apache-2.0
// The arena against its floor on the corpus' real models, converted for
// Cortex-M4: the floor is the largest sum of live activation bytes at one op
// of the emitted order, computed here from the .floe alone (lifetimes from the
// operator list, as ../shared/tools/floe-model/arena_bound.py does), not from
// the converter's own numbers. Networks without branches must plan exactly at
// it; every other model within 2 %. The memory-aware op order must lower the
// floor of an unrolled LSTM against the file's order and compute the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "converter/pipeline/convert.h"
#include "schemas/floe_generated.h"
#include "tests/support/corpus.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

// Largest sum of the sizes of the arena tensors live at one op: written by
// their first writer (graph inputs: op 0), read until their last reader
// (graph outputs: the op count).
uint64_t live_bytes_floor(const std::vector<uint8_t>& bytes) {
  const schema::Model* model = schema::GetModel(bytes.data());
  const int32_t ops = static_cast<int32_t>(model->operators()->size());
  std::map<int32_t, int32_t> first, last;
  for (int32_t t : *model->inputs()) first[t] = 0;
  for (int32_t k = 0; k < ops; ++k) {
    const schema::Operator* op = model->operators()->Get(static_cast<uint32_t>(k));
    for (int32_t t : *op->outputs()) {
      first.emplace(t, k);
      last[t] = std::max(last.count(t) ? last[t] : k, k);
    }
    for (int32_t t : *op->inputs()) {
      if (t >= 0) last[t] = std::max(last.count(t) ? last[t] : k, k);
    }
  }
  for (int32_t t : *model->outputs()) last[t] = ops;
  std::vector<int64_t> delta(static_cast<size_t>(ops) + 2, 0);
  for (const auto& [t, begin] : first) {
    const schema::Tensor* tensor = model->tensors()->Get(static_cast<uint32_t>(t));
    if (tensor->is_constant()) continue;
    const int32_t end = last.count(t) ? last[t] : begin;
    delta[static_cast<size_t>(begin)] += static_cast<int64_t>(tensor->size());
    delta[static_cast<size_t>(end) + 1] -= static_cast<int64_t>(tensor->size());
  }
  int64_t live = 0, peak = 0;
  for (int64_t d : delta) peak = std::max(peak, live += d);
  return static_cast<uint64_t>(peak);
}

struct BoundCase {
  const char* name;
  std::string graph;  // relative to the corpus, or absolute
  const char* checkpoint;
  std::vector<std::string> outputs;
  const char* input;  // fed tensor ("" = the graph's placeholders)
  std::vector<int64_t> shape;
  double max_ratio;   // 1.0: a network without branches
};

std::string resolve(const std::string& path) { return path.rfind('/', 0) == 0 ? path : corpus_path(path); }

conv::ConvertOptions options_of(const BoundCase& c) {
  conv::ConvertOptions options;
  options.target = "cortex-m4";
  options.graph_path = resolve(c.graph);
  if (c.checkpoint[0] != '\0') options.checkpoint_path = resolve(c.checkpoint);
  options.outputs = c.outputs;
  if (c.input[0] != '\0') {
    const std::string name = c.input;
    const std::string node = name.substr(0, name.find(':'));
    if (name.find(':') != std::string::npos) options.inputs = {name};
    options.input_shapes = {{node, c.shape}};
  }
  return options;
}

class ArenaBound : public ::testing::TestWithParam<BoundCase> {};

TEST_P(ArenaBound, PlanIsAtItsFloor) {
  const BoundCase& c = GetParam();
  if (c.graph.rfind('/', 0) != 0) FLOE_REQUIRE_CORPUS(c.graph);
  const conv::ConvertResult r = conv::convert(options_of(c));
  const uint64_t floor = live_bytes_floor(r.model);
  const uint64_t arena = schema::GetModel(r.model.data())->arena_size();
  EXPECT_EQ(r.stats.arena_bytes, arena);
  EXPECT_EQ(r.stats.arena_lower_bound, floor);  // the summary's bound is this floor
  const double ratio = static_cast<double>(arena) / static_cast<double>(floor);
  std::printf("%-16s arena %8llu B, floor %8llu B, ratio %.4f, planned in %.1f ms\n", c.name,
              static_cast<unsigned long long>(arena), static_cast<unsigned long long>(floor), ratio,
              r.stats.plan_milliseconds);
  EXPECT_LE(ratio, c.max_ratio) << r.summary;
  EXPECT_NE(r.summary.find("  arena: " + std::to_string(arena) + " bytes (lower bound " + std::to_string(floor)),
            std::string::npos)
      << r.summary;
}

const std::string kMnistExample = std::string(FLOE_SOURCE_DIR) + "/examples/mnist_mlp/model/";
const char* kMfcc = "Mfcc:0";
const std::vector<int64_t> kMfcc49 = {1, 49, 10}, kMfcc25 = {1, 25, 10};
const std::string kKws = "ML-KWS-for-MCU/Pretrained_models/";

INSTANTIATE_TEST_SUITE_P(
    Corpus, ArenaBound,
    ::testing::Values(
        // Networks without branches: exactly at the floor.
        BoundCase{"mnist_example", kMnistExample + "mnist_mlp.meta", "", {"softmax_linear/add"}, "images", {1, 784}, 1.0},
        BoundCase{"kws_checkpoint", "mlperf_tiny_qualcomm/KWS/trained_models/kws.ckpt.meta",
                  "mlperf_tiny_qualcomm/KWS/trained_models", {"dense/Softmax"}, "input_1", {1, 49, 10, 1}, 1.0},
        BoundCase{"ds_cnn_s", kKws + "DS_CNN/DS_CNN_S.pb", "", {"labels_softmax"}, kMfcc, kMfcc49, 1.0},
        BoundCase{"ds_cnn_m", kKws + "DS_CNN/DS_CNN_M.pb", "", {"labels_softmax"}, kMfcc, kMfcc49, 1.0},
        BoundCase{"ds_cnn_l", kKws + "DS_CNN/DS_CNN_L.pb", "", {"labels_softmax"}, kMfcc, kMfcc49, 1.0},
        BoundCase{"cnn_s", kKws + "CNN/CNN_S.pb", "", {"labels_softmax"}, kMfcc, kMfcc49, 1.0},
        BoundCase{"cnn_l", kKws + "CNN/CNN_L.pb", "", {"labels_softmax"}, kMfcc, kMfcc49, 1.0},
        BoundCase{"mnet", "ARM_ML-examples/yeah-world/mnet.pb", "", {"output_0"}, "input_1", {1, 128, 128, 3}, 1.0},
        BoundCase{"kws_int8", "int8/mlperf_tiny/kws/kws_ref_model.tflite", "", {}, "", {}, 1.0},
        BoundCase{"kws_float", "int8/mlperf_tiny/kws/kws_ref_model_float32.tflite", "", {}, "", {}, 1.0},
        BoundCase{"person_detect", "int8/tflite_micro/person_detection/person_detect.tflite", "", {}, "", {}, 1.0},
        BoundCase{"vww_int8", "int8/mlperf_tiny/vww/vww_96_int8.tflite", "", {}, "", {}, 1.0},
        BoundCase{"vww_float", "int8/mlperf_tiny/vww/vww_96_float.tflite", "", {}, "", {}, 1.0},
        BoundCase{"ad_int8", "int8/mlperf_tiny/ad/ad01_int8.tflite", "", {}, "", {}, 1.0},
        // Graphs of a few scalars or small vectors, planned in 4-byte slots
        // where 16-byte ones would be over 2 % above the floor: at it.
        BoundCase{"half_plus_two", "tensorflow_serving/servables/tensorflow/testdata/"
                  "saved_model_half_plus_two_2_versions/00000123", "", {}, "", {}, 1.0},
        BoundCase{"rust_addition", "tensorflow_rust/examples/addition/model.pb", "", {"z"}, "", {}, 1.0},
        BoundCase{"tensor_array", "dl4j_tf_graphs/tensor_array.pb.txt", "",
                  {"TensorArrayStack/TensorArrayGatherV3"}, "", {}, 1.0},
        BoundCase{"tensor_array_loop", "dl4j_tf_graphs/tensor_array_loop.pb.txt", "",
                  {"while/Exit", "TensorArrayStack/TensorArrayGatherV3"}, "", {}, 1.0},
        BoundCase{"axpy_8bit", "ngraph_bridge/test/test_axpy_8bit.pbtxt", "", {"mul", "add"}, "", {}, 1.0},
        BoundCase{"sample_graph", "ngraph_bridge/test/python/sample_graph.pbtxt", "", {"out_node"}, "", {}, 1.0},
        // Residual blocks, unrolled RNNs: within 2 %.
        BoundCase{"ic_int8", "int8/mlperf_tiny/ic/pretrainedResnet_quant.tflite", "", {}, "", {}, 1.02},
        BoundCase{"ic_float", "int8/mlperf_tiny/ic/pretrainedResnet.tflite", "", {}, "", {}, 1.02},
        BoundCase{"lenet", "dl4j_tf_graphs/lenet_frozen.pb", "", {"output"}, "input", {1, 784}, 1.02},
        BoundCase{"mnist_00", "dl4j_tf_graphs/examples/mnist_00/frozen_model.pb", "", {"output"}, "", {}, 1.02},
        BoundCase{"crnn_s", kKws + "CRNN/CRNN_S.pb", "", {"labels_softmax"}, kMfcc, kMfcc49, 1.02},
        BoundCase{"basic_lstm_s", kKws + "Basic_LSTM/Basic_LSTM_S.pb", "", {"labels_softmax"}, kMfcc, kMfcc49, 1.02},
        BoundCase{"lstm_s", kKws + "LSTM/LSTM_S.pb", "", {"labels_softmax"}, kMfcc, kMfcc25, 1.02},
        BoundCase{"lstm_l", kKws + "LSTM/LSTM_L.pb", "", {"labels_softmax"}, kMfcc, kMfcc49, 1.02},
        BoundCase{"gru_s", kKws + "GRU/GRU_S.pb", "", {"labels_softmax"}, kMfcc, kMfcc25, 1.02},
        BoundCase{"gru_l", kKws + "GRU/GRU_L.pb", "", {"labels_softmax"}, kMfcc, kMfcc49, 1.02}),
    [](const ::testing::TestParamInfo<BoundCase>& info) { return std::string(info.param.name); });

// An unrolled LSTM computes every time step's input slice up front in the
// file's order; the chosen order takes each just before its step.
TEST(ArenaBound, OpOrderLowersTheFloorOfAnUnrolledLstm) {
  const std::string graph = kKws + "LSTM/LSTM_S.pb";
  FLOE_REQUIRE_CORPUS(graph);
  const BoundCase c{"lstm_s", graph, "", {"labels_softmax"}, kMfcc, kMfcc25, 1.02};
  conv::ConvertOptions keep = options_of(c);
  keep.keep_op_order = true;
  const conv::ConvertResult file_order = conv::convert(keep);
  const conv::ConvertResult chosen = conv::convert(options_of(c));
  const uint64_t file_floor = live_bytes_floor(file_order.model), chosen_floor = live_bytes_floor(chosen.model);
  std::printf("lstm_s: floor %llu B in the file's order, %llu B chosen; arena %llu -> %llu B\n",
              static_cast<unsigned long long>(file_floor), static_cast<unsigned long long>(chosen_floor),
              static_cast<unsigned long long>(file_order.stats.arena_bytes),
              static_cast<unsigned long long>(chosen.stats.arena_bytes));
  EXPECT_LT(chosen_floor * 100, file_floor * 90);  // at least 10 % lower
  EXPECT_LT(chosen.stats.arena_bytes, file_order.stats.arena_bytes);
  EXPECT_NE(file_order.summary.find("op order: the file's (--keep-op-order)"), std::string::npos) << file_order.summary;
  EXPECT_NE(chosen.summary.find("(the file's order: " + std::to_string(file_floor)), std::string::npos)
      << chosen.summary;
  const std::map<std::string, HostTensor> inputs = {{"Mfcc", random_f32(kMfcc25, 41)}};
  const std::vector<HostTensor> a = run_model(file_order.model, inputs), b = run_model(chosen.model, inputs);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(as_floats(a[0]), as_floats(b[0]));
}

TEST(ArenaBound, CliKeepsTheFileOrderOnRequest) {
  const std::string graph = kKws + "LSTM/LSTM_S.pb";
  FLOE_REQUIRE_CORPUS(graph);
  const std::string dir = make_temp_dir();
  const std::string args = " --graph " + corpus_path(graph) +
                           " --inputs Mfcc:0 --input-shape Mfcc=1,25,10 --outputs labels_softmax --target cortex-m4";
  const CommandResult keep = run_command(tool_path("floe-convert") + args + " --keep-op-order -o " + dir + "/keep.floe 2>&1");
  ASSERT_EQ(keep.exit_code, 0) << keep.output;
  EXPECT_NE(keep.output.find("op order: the file's (--keep-op-order), peak 7256 bytes"), std::string::npos)
      << keep.output;
  const CommandResult chosen = run_command(tool_path("floe-convert") + args + " -o " + dir + "/chosen.floe 2>&1");
  ASSERT_EQ(chosen.exit_code, 0) << chosen.output;
  EXPECT_NE(chosen.output.find("op order: peak 5608 bytes"), std::string::npos) << chosen.output;
  EXPECT_NE(chosen.output.find("(the file's order: 7256"), std::string::npos) << chosen.output;
}

}  // namespace
}  // namespace floe::testing
