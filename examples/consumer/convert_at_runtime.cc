// SPDX-License-Identifier: Apache-2.0
// Host only: the converter as a library (floe::converter). Converts the MNIST
// example in-process and runs the result, as a tool that converts on demand
// would. Exit status 0 when the model classifies the held-out "7" as 7.
#include <cstdio>
#include <algorithm>
#include <exception>

#include "converter/pipeline/convert.h"
#include "runtime/core/backend.h"
#include "runtime/core/interpreter.h"
#include "runtime/core/model.h"
#include "runtime/tools/model_file.h"
#include "runtime/tools/npy.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <examples/mnist_mlp/model>\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  floe::conv::ConvertOptions options;
  options.graph_path = dir + "/mnist_mlp.meta";
  options.checkpoint_path = dir;
  options.outputs = {"softmax_linear/add"};
  options.input_shapes["images"] = {1, 784};
  options.target = "host";
  try {
    const floe::conv::ConvertResult result = floe::conv::convert(options);
    floe::tools::AlignedBytes model_bytes = floe::tools::aligned_bytes(result.model.size());
    std::copy(result.model.begin(), result.model.end(), model_bytes.get());
    floe::Model model;
    if (floe::backend_initialize() != floe::Status::kOk ||
        model.Load(model_bytes.get(), result.model.size()) != floe::Status::kOk) {
      std::fprintf(stderr, "Model::Load: %s\n", model.error().message);
      return 2;
    }
    floe::tools::AlignedBytes arena = floe::tools::aligned_bytes(model.arena_size());
    floe::Interpreter interpreter(model, arena.get(), model.arena_size());
    if (interpreter.Init() != floe::Status::kOk) {
      std::fprintf(stderr, "Interpreter::Init: %s\n", interpreter.error().message);
      return 2;
    }
    const floe::tools::NpyArray image = floe::tools::read_npy(dir + "/digit_7.npy");
    std::copy(image.data.begin(), image.data.end(), static_cast<uint8_t*>(interpreter.input(0).data));
    if (interpreter.Invoke() != floe::Status::kOk) {
      std::fprintf(stderr, "Interpreter::Invoke: %s\n", interpreter.error().message);
      return 2;
    }
    const float* logits = interpreter.output(0).as<float>();
    int best = 0;
    for (int i = 1; i < 10; ++i) best = logits[i] > logits[best] ? i : best;
    std::printf("converted in-process: %zu B, %zu ops; predicted digit %d\n", result.model.size(),
                model.operator_count(), best);
    return best == 7 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "convert: %s\n", e.what());
    return 2;
  }
}
