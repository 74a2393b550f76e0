// SPDX-License-Identifier: Apache-2.0
// The default int8 path of the host and Cortex-A targets is TFLM's arithmetic
// to the bit: every integer .tflite of ../shared/corpus/int8 and
// ../shared/corpus/tflm (MLPerf Tiny, person_detect, micro_speech, the LSTM
// and SVDF models, TFLM's int16x8 SEANet layers), converted with floe-convert's
// defaults for this architecture, gives the same output bytes as the same file
// converted for --target reference (whose kernels match TFLM's and TFLite's
// reference kernels on the golden int8 cases) on 20 seeded inputs each.
// No integer op may run on XNNPACK by default: its float requantization is
// what --int8-rounding fast buys (xnnpack_int8_test measures that path).
// The same with the caller's thread pool (2 and 3 threads), across which the
// converter lets the larger integer ops split. Built for aarch64 too, where it
// runs under qemu-aarch64.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "runtime/core/backend.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "schemas/floe_generated.h"

namespace floe {
namespace {

using Bytes = std::vector<uint8_t>;

std::string model_path(const std::string& name) { return std::string(FLOE_XNNPACK_MODELS) + "/" + name + ".floe"; }

std::vector<std::string> exact_models() {
  std::ifstream list(std::string(FLOE_XNNPACK_MODELS) + "/exact_models.txt");
  std::vector<std::string> names;
  for (std::string line; std::getline(list, line);) {
    if (!line.empty()) names.push_back(line);
  }
  return names;
}

struct Loaded {
  tools::ModelFile file;
  Model model;
  std::vector<uint8_t> storage;
  uint8_t* arena = nullptr;
};

void load(const std::string& name, Loaded* out) {
  out->file = tools::read_model_file(model_path(name));
  ASSERT_EQ(out->model.Load(out->file.data.get(), out->file.size), Status::kOk)
      << name << ": " << out->model.error().message;
  out->storage.resize(out->model.arena_size() + 64);
  const uintptr_t p = reinterpret_cast<uintptr_t>(out->storage.data());
  out->arena = reinterpret_cast<uint8_t*>((p + 63) & ~uintptr_t{63});
}

// Seeded values of the input's dtype over its whole range (float inputs in
// [-1, 1], integer index-like inputs small).
Bytes random_input(const TensorView& v, std::mt19937* rng) {
  Bytes bytes(v.bytes);
  switch (v.dtype) {
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt16:
      for (uint8_t& b : bytes) b = static_cast<uint8_t>((*rng)() & 0xFF);
      break;
    case DType::kFloat32: {
      std::uniform_real_distribution<float> d(-1.0f, 1.0f);
      for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
        const float f = d(*rng);
        std::memcpy(&bytes[i], &f, 4);
      }
      break;
    }
    default:
      for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i % 2 == 0 ? (*rng)() % 2 : 0);
      break;
  }
  return bytes;
}

bool is_integer(DType t) { return t == DType::kInt8 || t == DType::kInt16; }

// Thread pools of 2 and 3 threads (the caller's included), made once.
struct Pools {
  pthreadpool_t two = pthreadpool_create(2), three = pthreadpool_create(3);
  ~Pools() {
    pthreadpool_destroy(two);
    pthreadpool_destroy(three);
  }
};

TEST(Int8Exact, DefaultTargetGivesTheReferenceBytesOnEveryCorpusModel) {
  ASSERT_EQ(backend_initialize(), Status::kOk);
  const std::vector<std::string> names = exact_models();
  if (names.empty()) {
    GTEST_SKIP() << "SKIPPED: no integer .tflite was found under " << FLOE_SHARED_DIR
                 << "/corpus/{int8,tflm} at configure time (../shared absent)";
  }
  const Pools pools;
  size_t models = 0, outputs_compared = 0, own_kernel_ops = 0, split_ops = 0;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    Loaded reference;
    ASSERT_NO_FATAL_FAILURE(load("exact_" + name + "_ref", &reference));
    Interpreter ri(reference.model, reference.arena, reference.model.arena_size());
    ASSERT_EQ(ri.Init(), Status::kOk) << ri.error().message;

    // 20 seeded inputs and the reference's outputs for them.
    std::vector<std::vector<Bytes>> inputs, expected;
    std::mt19937 rng(20261130u);
    for (int run = 0; run < 20; ++run) {
      inputs.emplace_back();
      for (size_t i = 0; i < ri.input_count(); ++i) {
        inputs.back().push_back(random_input(ri.input(i), &rng));
        std::memcpy(ri.input(i).data, inputs.back()[i].data(), inputs.back()[i].size());
      }
      ASSERT_EQ(ri.Invoke(), Status::kOk) << ri.error().message;
      expected.emplace_back();
      for (size_t o = 0; o < ri.output_count(); ++o) {
        const uint8_t* w = static_cast<const uint8_t*>(ri.output(o).data);
        expected.back().emplace_back(w, w + ri.output(o).bytes);
      }
    }

    // The default conversion, run on the caller's thread and split across
    // pools of 2 and 3 threads: the same bytes every time.
    size_t own = 0, split = 0, values = 0, equal = 0;
    uint32_t op_count = 0;
    for (pthreadpool_t pool : {pthreadpool_t{nullptr}, pools.two, pools.three}) {
      SCOPED_TRACE(pool == nullptr ? "1 thread" : pool == pools.two ? "2 threads" : "3 threads");
      Loaded target;
      ASSERT_NO_FATAL_FAILURE(load("exact_" + name, &target));
      Interpreter ti(target.model, target.arena, target.model.arena_size());
      ti.set_thread_pool(pool);
      ASSERT_EQ(ti.Init(), Status::kOk) << ti.error().message;
      ASSERT_EQ(ti.input_count(), ri.input_count());
      ASSERT_EQ(ti.output_count(), ri.output_count());

      // No integer op on XNNPACK; count those on floe's own integer kernels
      // and those of them the converter lets split across threads.
      const schema::Model* m = target.model.schema();
      op_count = m->operators()->size();
      own = split = 0;
      for (uint32_t i = 0; i < op_count; ++i) {
        const schema::Operator* op = m->operators()->Get(i);
        if (op->outputs()->size() == 0) continue;
        const DType out =
            static_cast<DType>(m->tensors()->Get(static_cast<uint32_t>(op->outputs()->Get(0)))->dtype());
        if (!is_integer(out)) continue;
        EXPECT_NE(op->backend(), schema::Backend::XNNPACK)
            << "op " << i << " (" << schema::EnumNameOpCode(op->opcode()) << ") is integer but runs on XNNPACK";
        own += op->backend() == schema::Backend::CORTEX_M;
        split += op->backend() == schema::Backend::CORTEX_M && !op->single_threaded();
      }

      for (int run = 0; run < 20; ++run) {
        for (size_t i = 0; i < ti.input_count(); ++i) {
          ASSERT_EQ(ti.input(i).bytes, inputs[static_cast<size_t>(run)][i].size());
          std::memcpy(ti.input(i).data, inputs[static_cast<size_t>(run)][i].data(), ti.input(i).bytes);
        }
        ASSERT_EQ(ti.Invoke(), Status::kOk) << ti.error().message;
        for (size_t o = 0; o < ti.output_count(); ++o) {
          const TensorView got = ti.output(o);
          const Bytes& want = expected[static_cast<size_t>(run)][o];
          ASSERT_EQ(got.bytes, want.size());
          const uint8_t* g = static_cast<const uint8_t*>(got.data);
          for (size_t k = 0; k < got.bytes; ++k) equal += g[k] == want[k];
          values += got.bytes;
          EXPECT_EQ(std::memcmp(g, want.data(), got.bytes), 0) << "output " << o << " differs on run " << run;
        }
      }
    }
    std::printf("  %-24s %2zu of %2u ops on floe's integer kernels (%zu split across threads); "
                "%zu/%zu output bytes equal over 20 runs x 1, 2, 3 threads\n",
                name.c_str(), own, op_count, split, equal, values);
    outputs_compared += values;
    own_kernel_ops += own;
    split_ops += split;
    ++models;
  }
  std::printf("%zu models, %zu output bytes compared, %zu ops on floe's integer kernels, %zu of them split\n",
              models, outputs_compared, own_kernel_ops, split_ops);
  EXPECT_GT(own_kernel_ops, 0u);
  EXPECT_GT(split_ops, 0u);
}

}  // namespace
}  // namespace floe
