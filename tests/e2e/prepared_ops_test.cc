// SPDX-License-Identifier: Apache-2.0
// The runtime prepares once and runs lean (runtime/core/registry.h):
//  - after Init(), destroying every operator table of the model (options,
//    opcode, backend, operand indices, names) changes no output bit, on the
//    reference, Cortex-M (portable variant on the host) and XNNPACK backends;
//  - Model::arena_size() is exactly the bytes Init() uses (activations +
//    persistent region) without XNNPACK, and an upper bound with it.
#include <gtest/gtest.h>

#include <cstring>

#include "runtime/core/backend.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "tests/support/corpus.h"
#include "tests/support/model_runner.h"
#include "tests/support/operator_scramble.h"

namespace floe::testing {
namespace {

struct Graph {
  const char* name;
  std::string graph;       // path
  std::string checkpoint;  // "" = frozen
  std::string input;       // "" = the default inputs
  std::vector<int64_t> shape;
  std::vector<std::string> outputs;
  bool corpus;
};

std::vector<Graph> graphs() {
  const std::string examples = std::string(FLOE_SOURCE_DIR) + "/examples/";
  const std::string kws = "ML-KWS-for-MCU/Pretrained_models/";
  return {
      {"mnist_mlp", examples + "mnist_mlp/model/mnist_mlp.meta", examples + "mnist_mlp/model/", "images", {1, 784}, {"softmax_linear/add"}, false},
      {"conv_seed", examples + "conv_seed/model/conv_seed.meta", examples + "conv_seed/model/", "", {}, {"conv"}, false},
      {"mnet", "ARM_ML-examples/yeah-world/mnet.pb", "", "input_1", {1, 128, 128, 3}, {"output_0:0"}, true},
      {"ds_cnn_s", kws + "DS_CNN/DS_CNN_S.pb", "", "Mfcc", {1, 49, 10}, {"labels_softmax:0"}, true},
      {"lstm_s", kws + "LSTM/LSTM_S.pb", "", "Mfcc", {1, 25, 10}, {"labels_softmax:0"}, true},
      {"lenet", "dl4j_tf_graphs/lenet_frozen.pb", "", "input", {1, 784}, {"output:0"}, true},
  };
}

std::vector<uint8_t> convert(const Graph& g, const std::string& target) {
  conv::ConvertOptions options;
  options.target = target;
  options.graph_path = g.corpus ? corpus_path(g.graph) : g.graph;
  options.checkpoint_path = g.checkpoint;
  if (!g.input.empty()) {
    options.inputs = {g.input};
    options.input_shapes = {{g.input, g.shape}};
  }
  options.outputs = g.outputs;
  return conv::convert(options).model;
}

// One loaded model with its own buffer and arena, inputs filled from a seed.
struct LoadedRun {
  tools::AlignedBytes buffer;
  tools::AlignedBytes arena;
  Model model;
  std::unique_ptr<Interpreter> interpreter;

  explicit LoadedRun(const std::vector<uint8_t>& bytes) : buffer(tools::aligned_bytes(bytes.size())) {
    std::memcpy(buffer.get(), bytes.data(), bytes.size());
    EXPECT_EQ(model.Load(buffer.get(), bytes.size()), Status::kOk) << model.error().message;
    arena = tools::aligned_bytes(static_cast<size_t>(model.arena_size()));
    interpreter = std::make_unique<Interpreter>(model, arena.get(), static_cast<size_t>(model.arena_size()));
    EXPECT_EQ(interpreter->Init(), Status::kOk) << interpreter->error().message;
  }

  std::vector<std::vector<uint8_t>> invoke(uint32_t seed) {
    for (size_t i = 0; i < interpreter->input_count(); ++i) {
      const TensorView in = interpreter->input(i);
      auto* bytes = static_cast<uint8_t*>(in.data);
      if (in.dtype == DType::kFloat32) {
        const HostTensor values = random_f32({static_cast<int64_t>(in.bytes / 4)}, seed + static_cast<uint32_t>(i));
        std::memcpy(bytes, values.data.data(), in.bytes);
      } else {
        for (size_t b = 0; b < in.bytes; ++b) bytes[b] = static_cast<uint8_t>(seed + b);
      }
    }
    EXPECT_EQ(interpreter->Invoke(), Status::kOk) << interpreter->error().message;
    std::vector<std::vector<uint8_t>> outputs;
    for (size_t i = 0; i < interpreter->output_count(); ++i) {
      const TensorView out = interpreter->output(i);
      const auto* p = static_cast<const uint8_t*>(out.data);
      outputs.emplace_back(p, p + out.bytes);
    }
    return outputs;
  }
};

class PreparedOps : public ::testing::TestWithParam<const char*> {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(backend_initialize(), Status::kOk); }
};

TEST_P(PreparedOps, InvokeReadsNoOperatorTableAndArenaIsExact) {
  const std::string target = GetParam();
  for (const Graph& g : graphs()) {
    if (g.corpus && !path_exists(corpus_path(g.graph))) {
      std::printf("SKIPPED: %s (../shared/corpus not available)\n", g.name);
      continue;
    }
    SCOPED_TRACE(std::string(g.name) + " on " + target);
    const std::vector<uint8_t> bytes = convert(g, target);
    LoadedRun intact(bytes), scrambled(bytes);
    ASSERT_TRUE(scrambled.interpreter->arena_used() > 0);
    const uint16_t opcode_before = static_cast<uint16_t>(scrambled.model.schema()->operators()->Get(0)->opcode());
    const size_t ops = scramble_operator_tables(scrambled.buffer.get());
    ASSERT_EQ(ops, scrambled.model.operator_count());
    // The tables really are gone: the first operator's opcode reads as garbage.
    EXPECT_NE(static_cast<uint16_t>(scrambled.model.schema()->operators()->Get(0)->opcode()), opcode_before);
    for (uint32_t seed : {1u, 2u}) {
      EXPECT_EQ(intact.invoke(seed), scrambled.invoke(seed)) << "seed " << seed;
    }
    const Interpreter& in = *intact.interpreter;
    if (in.backend_op_count() == 0) {
      EXPECT_EQ(in.arena_used(), intact.model.arena_size());
    } else {
      EXPECT_LE(in.arena_used(), intact.model.arena_size());
    }
    std::printf("  %-10s %-9s ops %3zu  arena %8llu B stated, %8zu B used by Init() (persistent %zu B)\n", g.name,
                target.c_str(), intact.model.operator_count(),
                static_cast<unsigned long long>(intact.model.arena_size()), in.arena_used(),
                in.persistent_bytes_used());
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, PreparedOps, ::testing::Values("reference", "cortex-m4", "cortex-m55", "host"));

}  // namespace
}  // namespace floe::testing
