// SPDX-License-Identifier: Apache-2.0
// With XNNPACK running the ops (float and int8), Load(), Init() and Invoke() still perform zero
// heap allocations: this binary interposes malloc/calloc/realloc/free and
// operator new and counts calls while `counting` is on. XNNPACK's operator
// objects, packed weights and indirection buffers therefore all come from the
// arena (floe's xnn_allocator); the one-time process set-up
// (backend_initialize(): cpuinfo) and pthreadpool_create() happen before.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "runtime/core/backend.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "tests/support/heap_counter.h"


namespace floe {
namespace {

void run_without_heap(const char* graph, pthreadpool_t pool) {
  ASSERT_EQ(backend_initialize(), Status::kOk);
  tools::ModelFile file = tools::read_model_file(std::string(FLOE_XNNPACK_MODELS) + "/" + graph + ".floe");
  std::vector<uint8_t> storage(64 << 20);  // any 16-byte aligned arena; sized by the model below
  uint8_t* arena = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(storage.data()) + 15) & ~uintptr_t{15});
  testing::reset_heap_calls();

  testing::count_heap_calls(true);
  Model model;
  const Status load = model.Load(file.data.get(), file.size);
  Interpreter interpreter(model, arena, static_cast<size_t>(model.arena_size()));
  interpreter.set_thread_pool(pool);
  const Status init = interpreter.Init();
  const size_t inputs = interpreter.input_count();
  for (size_t i = 0; i < inputs; ++i) {
    const TensorView in = interpreter.input(i);
    if (in.dtype == DType::kInt8) {
      for (size_t k = 0; k < in.bytes; ++k) in.as<int8_t>()[k] = static_cast<int8_t>(k % 251 - 125);
    } else {
      for (size_t k = 0; k < in.bytes / 4; ++k) in.as<float>()[k] = static_cast<float>(k % 7) - 3.0f;
    }
  }
  const Status invoke1 = interpreter.Invoke();
  const Status invoke2 = interpreter.Invoke();
  testing::count_heap_calls(false);

  ASSERT_EQ(load, Status::kOk) << model.error().message;
  ASSERT_LE(model.arena_size(), storage.size() - 16);
  ASSERT_EQ(init, Status::kOk) << interpreter.error().message;
  ASSERT_EQ(invoke1, Status::kOk);
  ASSERT_EQ(invoke2, Status::kOk);
  EXPECT_GT(interpreter.backend_op_count(), 0u) << "nothing ran on XNNPACK";
  EXPECT_GT(interpreter.backend_arena_used(), 0u);
  EXPECT_EQ(testing::heap_calls(), 0) << graph << ": heap allocations during Load/Init/Invoke";
}

TEST(XnnpackNoHeap, InitAndInvokeAllocateNothing) {
  for (const char* graph : {"conv", "dense", "eltwise"}) run_without_heap(graph, nullptr);
  // int8: QC8 convolution (with its Init-time scale and filter scratch),
  // depthwise, fully connected, QS8 add and global average.
  for (const char* graph : {"int8_conv_first_layer", "int8_dw_3x3", "int8_dense", "int8_add_broadcast",
                            "int8_avgpool_global"}) {
    run_without_heap(graph, nullptr);
  }
  // The counter itself works.
  testing::count_heap_calls(true);
  void* volatile p = std::malloc(8);  // volatile: the call must not be elided
  testing::count_heap_calls(false);
  std::free(p);
  EXPECT_EQ(testing::heap_calls(), 1);
}

TEST(XnnpackNoHeap, WithATwoThreadPoolToo) {
  pthreadpool_t pool = pthreadpool_create(2);  // the caller's, made before counting
  ASSERT_NE(pool, nullptr);
  run_without_heap("conv", pool);
  run_without_heap("int8_conv_same", pool);
  pthreadpool_destroy(pool);
}

}  // namespace
}  // namespace floe
