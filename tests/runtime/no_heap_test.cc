// SPDX-License-Identifier: Apache-2.0
// Proves Init() and Invoke() perform zero heap allocations: this binary
// interposes malloc/calloc/realloc/free and operator new, counting calls made
// while `counting` is on. The model is converted before counting starts.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "runtime/core/backend.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "tests/support/heap_counter.h"
#include "tests/support/corpus.h"
#include "tests/support/model_runner.h"


namespace floe {
namespace {

// A model with conv, pooling, matmul, softmax, concat, mean: most kernels run.
// target "host": conv, pooling, matmul and softmax run on XNNPACK when the build
// has it (runtime/core/backend.h); its process-global set-up happens first.
std::vector<uint8_t> convert_test_model() {
  const std::string dir = testing::make_temp_dir();
  const std::string pbtxt = dir + "/g.pbtxt";
  FILE* f = std::fopen(pbtxt.c_str(), "w");
  std::fputs(R"(
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: 1 } dim { size: 6 } dim { size: 6 } dim { size: 2 } } } } }
node { name: "k" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } dim { size: 3 } dim { size: 2 } dim { size: 4 } } float_val: 0.25 } } } }
node { name: "conv" op: "Conv2D" input: "x" input: "k" attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "strides" value { list { i: 1 i: 1 i: 1 i: 1 } } } attr { key: "padding" value { s: "SAME" } } }
node { name: "relu" op: "Relu" input: "conv" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "pool" op: "MaxPool" input: "relu" attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "ksize" value { list { i: 1 i: 2 i: 2 i: 1 } } } attr { key: "strides" value { list { i: 1 i: 2 i: 2 i: 1 } } }
       attr { key: "padding" value { s: "VALID" } } }
node { name: "axis" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 int_val: 3 } } } }
node { name: "cat" op: "ConcatV2" input: "pool" input: "pool" input: "axis"
       attr { key: "T" value { type: DT_FLOAT } } attr { key: "N" value { i: 2 } } }
node { name: "axes" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 1 int_val: 2 } } } }
node { name: "mean" op: "Mean" input: "cat" input: "axes" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "w" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 8 } dim { size: 3 } } float_val: 0.5 } } } }
node { name: "mm" op: "MatMul" input: "mean" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "prob" op: "Softmax" input: "mm" attr { key: "T" value { type: DT_FLOAT } } }
)", f);
  std::fclose(f);
  conv::ConvertOptions options;
  options.graph_path = pbtxt;
  options.outputs = {"prob"};
  options.target = "host";
  return conv::convert(options).model;
}

TEST(NoHeap, InitAndInvokeAllocateNothing) {
  const std::vector<uint8_t> bytes = convert_test_model();
  tools::AlignedBytes buffer = tools::aligned_bytes(bytes.size());
  std::memcpy(buffer.get(), bytes.data(), bytes.size());
  alignas(16) static uint8_t arena[256 * 1024];
  ASSERT_EQ(backend_initialize(), Status::kOk);

  testing::count_heap_calls(true);
  Model model;
  const Status load = model.Load(buffer.get(), bytes.size());
  Interpreter interpreter(model, arena, sizeof(arena));
  const Status init = interpreter.Init();
  float* x = interpreter.input(0).as<float>();
  for (int i = 0; i < 72; ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
  const Status invoke1 = interpreter.Invoke();
  const Status invoke2 = interpreter.Invoke();
  testing::count_heap_calls(false);

  ASSERT_EQ(load, Status::kOk) << model.error().message;
  ASSERT_EQ(init, Status::kOk) << interpreter.error().message;
  ASSERT_EQ(invoke1, Status::kOk);
  ASSERT_EQ(invoke2, Status::kOk);
  EXPECT_EQ(testing::heap_calls(), 0) << "heap allocations during Load/Init/Invoke";
  // Sanity: the counter itself works.
  testing::count_heap_calls(true);
  void* volatile p = std::malloc(8);  // volatile: the call must not be elided
  testing::count_heap_calls(false);
  std::free(p);
  EXPECT_EQ(testing::heap_calls(), 1);
  // The model really ran: softmax over 3 classes sums to 1.
  const float* prob = interpreter.output(0).as<float>();
  EXPECT_NEAR(prob[0] + prob[1] + prob[2], 1.0f, 1e-6f);
}

}  // namespace
}  // namespace floe
