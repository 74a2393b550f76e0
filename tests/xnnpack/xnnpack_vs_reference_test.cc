// SPDX-License-Identifier: Apache-2.0
// The XNNPACK backend against the reference kernels (the definition of each
// op): the same graph converted for this target (XNNPACK ops) and for
// "reference" must agree within |xnnpack - ref| <= 1e-5 + 1e-4 * |ref| on every
// output (XNNPACK uses FMA, its own summation order and polynomial exp/sigmoid;
// the reference kernels are built with -ffp-contract=off). Also: the arena
// budget holds and is independent of the arena's address, a short arena fails
// cleanly, models for another target fall back to the reference kernels, and
// a 2-thread pool gives the same answer. Models come from tests/xnnpack/graphs.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/core/backend.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "schemas/floe_generated.h"
#include "tests/xnnpack/cpu_class.h"

namespace floe {
namespace {

constexpr float kAbsTolerance = 1e-5f;
constexpr float kRelTolerance = 1e-4f;

struct Loaded {
  tools::ModelFile file;
  Model model;
};

void load(const std::string& name, Loaded* out) {
  out->file = tools::read_model_file(std::string(FLOE_XNNPACK_MODELS) + "/" + name + ".floe");
  ASSERT_EQ(out->model.Load(out->file.data.get(), out->file.size), Status::kOk)
      << name << ": " << out->model.error().message;
}

size_t xnnpack_ops_in(const Model& model) {
  size_t n = 0;
  for (const schema::Operator* op : *model.schema()->operators()) {
    n += op->backend() == schema::Backend::XNNPACK;
  }
  return n;
}

std::vector<std::vector<float>> make_inputs(const Interpreter& interpreter, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<std::vector<float>> inputs;
  for (size_t i = 0; i < interpreter.input_count(); ++i) {
    std::vector<float> v(interpreter.input(i).bytes / sizeof(float));
    for (float& f : v) f = dist(rng);
    inputs.push_back(std::move(v));
  }
  return inputs;
}

// Runs `interpreter` (already Init()ed) on `inputs`; returns every output.
std::vector<std::vector<float>> run(Interpreter& interpreter,
                                    const std::vector<std::vector<float>>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::memcpy(interpreter.input(i).data, inputs[i].data(), inputs[i].size() * sizeof(float));
  }
  EXPECT_EQ(interpreter.Invoke(), Status::kOk) << interpreter.error().message;
  std::vector<std::vector<float>> outputs;
  for (size_t i = 0; i < interpreter.output_count(); ++i) {
    const TensorView v = interpreter.output(i);
    outputs.emplace_back(v.as<float>(), v.as<float>() + v.bytes / sizeof(float));
  }
  return outputs;
}

struct Arena {
  explicit Arena(size_t bytes, size_t offset = 0) : storage(bytes + 64 + offset) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(storage.data());
    data = reinterpret_cast<uint8_t*>(((p + 63) & ~uintptr_t{63}) + offset);
  }
  std::vector<uint8_t> storage;
  uint8_t* data;
};

void expect_close(const std::vector<std::vector<float>>& got,
                  const std::vector<std::vector<float>>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].size(), want[o].size());
    float worst = 0;
    for (size_t k = 0; k < got[o].size(); ++k) {
      const float a = got[o][k], b = want[o][k];
      if (std::isnan(b)) {
        EXPECT_TRUE(std::isnan(a)) << what << " output " << o << "[" << k << "]";
        continue;
      }
      const float err = std::fabs(a - b);
      worst = std::max(worst, err);
      ASSERT_LE(err, kAbsTolerance + kRelTolerance * std::fabs(b))
          << what << " output " << o << "[" << k << "]: xnnpack " << a << " reference " << b;
    }
    std::printf("  %s output %zu: %zu values, max |xnnpack - reference| = %.3g\n", what.c_str(), o,
                got[o].size(), static_cast<double>(worst));
  }
}

// The model of `graph` converted for this CPU's class, and whether its budget
// is exact for every CPU of the class (XNNPACK picks the same kernels on all).
// x86-64 with AVX-512F: the x86_64-avx512 model; aarch64 without the dot
// product: the aarch64-no-dotprod model. Other CPUs: the target-wide model,
// whose budget bounds every CPU of the architecture (AMD Zen 1's FMA3 kernels
// pad input channels to 4, so on other CPUs it may be well above).
std::string class_model(const std::string& graph, bool* exact) {
  *exact = testing::in_exact_budget_class();
  return *exact ? graph + "_class" : graph;
}

// "12345 bytes stated, 12300 used by Init() (0.37% above)"
void print_arena(const std::string& what, uint64_t stated, size_t used) {
  std::printf("  %s: arena %llu bytes stated, %zu used by Init() (%.2f%% above)\n", what.c_str(),
              static_cast<unsigned long long>(stated), used,
              100.0 * (static_cast<double>(stated) / static_cast<double>(used) - 1.0));
}

class XnnpackVsReference : public ::testing::TestWithParam<const char*> {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(backend_initialize(), Status::kOk); }
};

TEST_P(XnnpackVsReference, OutputsAgreeAndBudgetHolds) {
  const std::string graph = GetParam();
  bool exact = false;
  Loaded xnn, ref;
  ASSERT_NO_FATAL_FAILURE(load(class_model(graph, &exact), &xnn));
  ASSERT_NO_FATAL_FAILURE(load(graph + "_ref", &ref));
  const size_t expected_ops = xnnpack_ops_in(xnn.model);
  ASSERT_GT(expected_ops, 0u) << "the converter assigned no op to XNNPACK";
  EXPECT_EQ(xnnpack_ops_in(ref.model), 0u);
  ASSERT_GT(xnn.model.persistent_offset(), xnn.model.activation_arena_size());
  EXPECT_EQ(ref.model.persistent_offset(), ref.model.activation_arena_size());

  Arena xa(xnn.model.arena_size()), ra(ref.model.arena_size());
  Interpreter xi(xnn.model, xa.data, xnn.model.arena_size());
  Interpreter ri(ref.model, ra.data, ref.model.arena_size());
  ASSERT_EQ(xi.Init(), Status::kOk) << xi.error().message << " (op " << xi.error().op << ")";
  ASSERT_EQ(ri.Init(), Status::kOk) << ri.error().message;
  EXPECT_EQ(xi.backend_op_count(), expected_ops);
  EXPECT_EQ(ri.backend_op_count(), 0u);
  const uint64_t budget = xnn.model.persistent_offset() - xnn.model.activation_arena_size();
  EXPECT_LE(xi.backend_arena_used(), budget);
  std::printf("  %s: %zu ops on XNNPACK, XNNPACK region used %zu of %llu budgeted bytes (%.1f%%)\n",
              graph.c_str(), xi.backend_op_count(), xi.backend_arena_used(),
              static_cast<unsigned long long>(budget), 100.0 * xi.backend_arena_used() / budget);
  // The reference build uses exactly the size the model states; with XNNPACK
  // the stated size is an upper bound of what Init() used, and for the CPU
  // class the model was converted for a tight one: the converter replays
  // XNNPACK's allocations for the kernels that class picks.
  EXPECT_EQ(ri.arena_used(), ref.model.arena_size());
  EXPECT_LE(xi.arena_used(), xnn.model.arena_size());
  const size_t used = xi.arena_used();
  print_arena(graph, xnn.model.arena_size(), used);
  if (exact) {
    EXPECT_LE(static_cast<double>(xnn.model.arena_size()), 1.01 * static_cast<double>(used))
        << graph << ": the stated arena is more than 1 % above what Init() used";
  } else {
    std::printf("  (no AVX-512F: only the x86-64-wide bound is checked)\n");
  }

  for (uint32_t seed : {1u, 2u}) {
    const auto inputs = make_inputs(xi, seed);
    const auto want = run(ri, inputs);
    expect_close(run(xi, inputs), want, graph);
    expect_close(run(xi, inputs), want, graph + " (again)");  // Invoke() is repeatable
  }
}

INSTANTIATE_TEST_SUITE_P(Graphs, XnnpackVsReference,
                         ::testing::Values("dense", "conv", "eltwise", "bigfilter", "windows"));

// The target-wide model (x86_64: every x86-64 CPU) holds on this CPU too.
TEST(XnnpackArena, TargetWideBudgetBoundsThisCpu) {
  ASSERT_EQ(backend_initialize(), Status::kOk);
  for (const char* graph : {"dense", "conv", "eltwise", "bigfilter", "windows"}) {
    Loaded m;
    ASSERT_NO_FATAL_FAILURE(load(graph, &m));
    Arena arena(m.model.arena_size());
    Interpreter interpreter(m.model, arena.data, m.model.arena_size());
    ASSERT_EQ(interpreter.Init(), Status::kOk) << graph << ": " << interpreter.error().message;
    EXPECT_GT(interpreter.backend_op_count(), 0u) << graph;
    EXPECT_LE(interpreter.arena_used(), m.model.arena_size()) << graph;
    print_arena(std::string(graph) + " (target-wide)", m.model.arena_size(), interpreter.arena_used());
  }
}

TEST(XnnpackArena, BudgetIsIndependentOfArenaAddressAndShortArenasFail) {
  ASSERT_EQ(backend_initialize(), Status::kOk);
  Loaded m;
  ASSERT_NO_FATAL_FAILURE(load("conv", &m));
  const size_t bytes = static_cast<size_t>(m.model.arena_size());
  size_t used = 0;
  for (size_t offset : {0, 16, 32, 48}) {  // every 16-byte alignment modulo 64
    Arena arena(bytes, offset);
    Interpreter interpreter(m.model, arena.data, bytes);
    ASSERT_EQ(interpreter.Init(), Status::kOk) << "offset " << offset << ": " << interpreter.error().message;
    if (offset == 0) used = interpreter.backend_arena_used();
    EXPECT_EQ(interpreter.backend_arena_used(), used) << "offset " << offset;
  }
  Arena arena(bytes);
  Interpreter short_arena(m.model, arena.data, bytes - 16);
  EXPECT_EQ(short_arena.Init(), Status::kArenaTooSmall);
}

TEST(XnnpackArena, ModelForAnotherTargetRunsTheReferenceKernels) {
  ASSERT_EQ(backend_initialize(), Status::kOk);
  for (const char* graph : {"dense", "conv", "eltwise"}) {
    Loaded other, ref;
    ASSERT_NO_FATAL_FAILURE(load(std::string(graph) + "_other", &other));
    ASSERT_NO_FATAL_FAILURE(load(std::string(graph) + "_ref", &ref));
    EXPECT_GT(xnnpack_ops_in(other.model), 0u);
    EXPECT_EQ(other.model.persistent_offset(), other.model.activation_arena_size()) << graph;
    Arena oa(other.model.arena_size()), ra(ref.model.arena_size());
    Interpreter oi(other.model, oa.data, other.model.arena_size());
    Interpreter ri(ref.model, ra.data, ref.model.arena_size());
    ASSERT_EQ(oi.Init(), Status::kOk) << oi.error().message;
    ASSERT_EQ(ri.Init(), Status::kOk);
    EXPECT_EQ(oi.backend_op_count(), 0u);
    const auto inputs = make_inputs(oi, 7);
    const auto got = run(oi, inputs), want = run(ri, inputs);
    // Fused bias/activation on the reference kernels: same values as the
    // unfused reference graph (bias added after the sum, then the clamp).
    expect_close(got, want, std::string(graph) + " (other target, reference kernels)");
  }
  // Outside the class the _class models name (x86-64 without AVX-512F,
  // aarch64 with the dot product) those models need no XNNPACK region and
  // run the reference kernels.
  if (!testing::in_exact_budget_class()) {
    for (const char* graph : {"dense", "conv", "eltwise"}) {
      Loaded m;
      ASSERT_NO_FATAL_FAILURE(load(std::string(graph) + "_class", &m));
      EXPECT_EQ(m.model.persistent_offset(), m.model.activation_arena_size()) << graph;
      Arena arena(m.model.arena_size());
      Interpreter interpreter(m.model, arena.data, m.model.arena_size());
      ASSERT_EQ(interpreter.Init(), Status::kOk) << interpreter.error().message;
      EXPECT_EQ(interpreter.backend_op_count(), 0u) << graph;
    }
  }
}

// The converter marks XNNPACK ops below kParallelMinWork single_threaded: those
// run on the caller's thread, the rest on the pool; both must match.
TEST(XnnpackThreads, TwoThreadPoolMatchesReference) {
  ASSERT_EQ(backend_initialize(), Status::kOk);
  pthreadpool_t pool = pthreadpool_create(2);
  ASSERT_NE(pool, nullptr);
  size_t pooled = 0, single = 0;
  for (const char* graph : {"dense", "conv", "eltwise", "bigfilter", "windows"}) {
    Loaded xnn, ref;
    ASSERT_NO_FATAL_FAILURE(load(graph, &xnn));
    ASSERT_NO_FATAL_FAILURE(load(std::string(graph) + "_ref", &ref));
    for (const schema::Operator* op : *xnn.model.schema()->operators()) {
      if (op->backend() != schema::Backend::XNNPACK) continue;
      (op->single_threaded() ? single : pooled) += 1;
    }
    Arena xa(xnn.model.arena_size()), ra(ref.model.arena_size());
    Interpreter xi(xnn.model, xa.data, xnn.model.arena_size());
    xi.set_thread_pool(pool);
    Interpreter ri(ref.model, ra.data, ref.model.arena_size());
    ASSERT_EQ(xi.Init(), Status::kOk) << xi.error().message;
    ASSERT_EQ(ri.Init(), Status::kOk);
    const auto inputs = make_inputs(xi, 11);
    expect_close(run(xi, inputs), run(ri, inputs), std::string(graph) + " (2 threads)");
  }
  pthreadpool_destroy(pool);
  EXPECT_GT(pooled, 0u) << "no op ran on the pool";
  EXPECT_GT(single, 0u) << "no op was marked single_threaded";
}

}  // namespace
}  // namespace floe
