// SPDX-License-Identifier: Apache-2.0
// int8 models through XNNPACK (QC8 convolution / depthwise / fully connected,
// QS8 add and global average) against floe's int8 reference kernels, which
// are TFLM-exact. XNNPACK requantizes in fp32 (round to nearest even of
// acc * scale), the reference in Q31 fixed point with double rounding, so the
// two may differ by one step, never more, op by op.
//
// Op by op: both models (converted for this CPU class and for "reference")
// run in lock step. The reference run records every op's output; the XNNPACK
// run compares each op's output with it and then overwrites it with the
// reference's, so every op sees the reference's inputs and its difference is
// its own, not accumulated. The end-to-end difference (XNNPACK all the way) is
// reported too. Also: the arena budget holds (used <= stated, and stated <=
// 1.01 x used on the CPU class the model names exactly).
//
// Models: one-op graphs quantized by floe-convert (graphs/int8, seeded), and
// the int8 corpus (../shared/corpus/int8: KWS, IC, VWW, AD, person_detect)
// when present.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "runtime/core/backend.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "schemas/floe_generated.h"
#include "tests/support/corpus.h"
#include "tests/xnnpack/cpu_class.h"

namespace floe {
namespace {

struct Loaded {
  tools::ModelFile file;
  Model model;
};

std::string model_path(const std::string& name) {
  return std::string(FLOE_XNNPACK_MODELS) + "/" + name + ".floe";
}

void load(const std::string& name, Loaded* out) {
  out->file = tools::read_model_file(model_path(name));
  ASSERT_EQ(out->model.Load(out->file.data.get(), out->file.size), Status::kOk)
      << name << ": " << out->model.error().message;
}

struct Arena {
  explicit Arena(size_t bytes) : storage(bytes + 64) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(storage.data());
    data = reinterpret_cast<uint8_t*>((p + 63) & ~uintptr_t{63});
  }
  std::vector<uint8_t> storage;
  uint8_t* data;
};

// Agreement of int8 values.
struct Agreement {
  size_t values = 0, equal = 0;
  int max_diff = 0;
  void add(const int8_t* got, const int8_t* want, size_t n) {
    for (size_t k = 0; k < n; ++k) {
      const int d = std::abs(static_cast<int>(got[k]) - static_cast<int>(want[k]));
      equal += d == 0;
      if (d > max_diff) max_diff = d;
    }
    values += n;
  }
};

using Bytes = std::vector<uint8_t>;

// Records (reference run) or checks-and-replaces (XNNPACK run) every op's
// outputs, by tensor name: the XNNPACK model may hold ops the reference model
// does not (the converter's im2col before a narrow int8 convolution), whose
// outputs have no reference counterpart and are left alone.
struct LockStep {
  Interpreter* interpreter = nullptr;
  const Model* model = nullptr;
  std::map<std::string, Bytes>* recorded = nullptr;
  bool replace = false;
  std::vector<Agreement>* per_op = nullptr;  // XNNPACK run: [op]
};

void observe(void* user, size_t op_index, const char*) {
  LockStep& s = *static_cast<LockStep*>(user);
  const auto* outputs = s.model->schema()->operators()->Get(static_cast<uint32_t>(op_index))->outputs();
  for (uint32_t o = 0; o < outputs->size(); ++o) {
    const TensorView v = s.interpreter->tensor(static_cast<size_t>(outputs->Get(o)));
    uint8_t* data = static_cast<uint8_t*>(v.data);
    if (!s.replace) {
      (*s.recorded)[v.name] = Bytes(data, data + v.bytes);
      continue;
    }
    const auto it = s.recorded->find(v.name);
    if (it == s.recorded->end()) continue;
    if (it->second.size() != v.bytes) {
      ADD_FAILURE() << "op " << op_index << " output " << v.name << " differs in size between the models";
      continue;
    }
    if (v.dtype == DType::kInt8) {
      (*s.per_op)[op_index].add(reinterpret_cast<const int8_t*>(data),
                                reinterpret_cast<const int8_t*>(it->second.data()), v.bytes);
    }
    std::memcpy(data, it->second.data(), v.bytes);  // the next ops see the reference's values
  }
}

std::vector<Bytes> random_inputs(const Interpreter& interpreter, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<Bytes> inputs;
  for (size_t i = 0; i < interpreter.input_count(); ++i) {
    Bytes v(interpreter.input(i).bytes);
    for (uint8_t& b : v) b = static_cast<uint8_t>(dist(rng));
    inputs.push_back(std::move(v));
  }
  return inputs;
}

// The data of an int8 .npy of `bytes` elements: its last `bytes` bytes.
Bytes npy_payload(const std::string& path, size_t bytes) {
  std::ifstream f(path, std::ios::binary);
  Bytes all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (all.size() < bytes) return {};
  return Bytes(all.end() - static_cast<std::ptrdiff_t>(bytes), all.end());
}

void set_inputs(Interpreter& interpreter, const std::vector<Bytes>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::memcpy(interpreter.input(i).data, inputs[i].data(), inputs[i].size());
  }
}

std::vector<Bytes> outputs_of(const Interpreter& interpreter) {
  std::vector<Bytes> out;
  for (size_t i = 0; i < interpreter.output_count(); ++i) {
    const TensorView v = interpreter.output(i);
    out.emplace_back(static_cast<uint8_t*>(v.data), static_cast<uint8_t*>(v.data) + v.bytes);
  }
  return out;
}

const char* op_name(const Model& m, size_t i) {
  return schema::EnumNameOpCode(m.schema()->operators()->Get(static_cast<uint32_t>(i))->opcode());
}

struct Result {
  std::vector<Agreement> per_op;  // summed over the input sets
  Agreement end_to_end;
};

// Runs both models on every input set; returns per-op and end-to-end agreement.
void compare(const std::string& what, const std::vector<std::vector<Bytes>>& input_sets, bool exact_budget,
             const std::string& xnn_name, const std::string& ref_name, Result* result) {
  Loaded xnn, ref;
  ASSERT_NO_FATAL_FAILURE(load(xnn_name, &xnn));
  ASSERT_NO_FATAL_FAILURE(load(ref_name, &ref));
  Arena xa(xnn.model.arena_size()), ra(ref.model.arena_size());
  Interpreter xi(xnn.model, xa.data, xnn.model.arena_size());
  Interpreter ri(ref.model, ra.data, ref.model.arena_size());
  ASSERT_EQ(xi.Init(), Status::kOk) << what << ": " << xi.error().message << " (op " << xi.error().op << ")";
  ASSERT_EQ(ri.Init(), Status::kOk) << what << ": " << ri.error().message;
  ASSERT_GT(xi.backend_op_count(), 0u) << what << ": no op ran on XNNPACK";
  EXPECT_EQ(ri.backend_op_count(), 0u);
  const size_t op_count = xnn.model.schema()->operators()->size();

  // The budget: an upper bound of what Init() used, and a tight one on the
  // CPU class the model was converted for.
  const size_t used = xi.arena_used();
  EXPECT_LE(used, xnn.model.arena_size()) << what;
  std::printf("  %s: %zu of %zu ops on XNNPACK; arena %llu bytes stated, %zu used by Init() (%.2f%% above)\n",
              what.c_str(), xi.backend_op_count(), op_count,
              static_cast<unsigned long long>(xnn.model.arena_size()), used,
              100.0 * (static_cast<double>(xnn.model.arena_size()) / static_cast<double>(used) - 1.0));
  if (exact_budget) {
    EXPECT_LE(static_cast<double>(xnn.model.arena_size()), 1.01 * static_cast<double>(used))
        << what << ": the stated arena is more than 1 % above what Init() used";
  }

  result->per_op.assign(op_count, Agreement());
  for (const std::vector<Bytes>& inputs : input_sets) {
    ASSERT_EQ(inputs.size(), xi.input_count());
    // End to end, XNNPACK all the way.
    set_inputs(ri, inputs);
    ASSERT_EQ(ri.Invoke(), Status::kOk) << ri.error().message;
    const std::vector<Bytes> want = outputs_of(ri);
    set_inputs(xi, inputs);
    ASSERT_EQ(xi.Invoke(), Status::kOk) << xi.error().message;
    const std::vector<Bytes> got = outputs_of(xi);
    for (size_t o = 0; o < got.size(); ++o) {
      ASSERT_EQ(got[o].size(), want[o].size());
      result->end_to_end.add(reinterpret_cast<const int8_t*>(got[o].data()),
                             reinterpret_cast<const int8_t*>(want[o].data()), got[o].size());
    }
    // Op by op, in lock step.
    std::map<std::string, Bytes> recorded;
    LockStep record{&ri, &ref.model, &recorded, false, nullptr};
    ri.set_observer(observe, &record);
    set_inputs(ri, inputs);
    ASSERT_EQ(ri.Invoke(), Status::kOk);
    ri.set_observer(nullptr, nullptr);
    LockStep check{&xi, &xnn.model, &recorded, true, &result->per_op};
    xi.set_observer(observe, &check);
    set_inputs(xi, inputs);
    ASSERT_EQ(xi.Invoke(), Status::kOk);
    xi.set_observer(nullptr, nullptr);
  }
  for (size_t i = 0; i < op_count; ++i) {
    const Agreement& a = result->per_op[i];
    if (a.values == 0) continue;
    std::printf("    op %2zu %-16s %-9s %6zu/%6zu equal, max |diff| %d\n", i, op_name(xnn.model, i),
                xi.runs_on_backend(i) ? "xnnpack" : "reference", a.equal, a.values, a.max_diff);
    if (!xi.runs_on_backend(i)) {
      EXPECT_EQ(a.max_diff, 0) << what << " op " << i << ": the same reference kernel on the same input";
    }
  }
  std::printf("    end to end: %zu/%zu output values equal, max |diff| %d\n", result->end_to_end.equal,
              result->end_to_end.values, result->end_to_end.max_diff);
}

// The _class model where this CPU is in its class (exact budget), else the
// target-wide model (a bound).
bool exact_budget_here() { return testing::in_exact_budget_class(/*int8=*/true); }
std::string class_suffix() { return exact_budget_here() ? "_class" : ""; }

class XnnpackInt8Op : public ::testing::TestWithParam<const char*> {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(backend_initialize(), Status::kOk); }
};

TEST_P(XnnpackInt8Op, WithinOneStepOfTheReferenceAndBudgetHolds) {
  const std::string graph = std::string("int8_") + GetParam();
  Loaded probe;
  ASSERT_NO_FATAL_FAILURE(load(graph + "_ref", &probe));
  Arena arena(probe.model.arena_size());
  Interpreter shape(probe.model, arena.data, probe.model.arena_size());
  ASSERT_EQ(shape.Init(), Status::kOk);
  std::vector<std::vector<Bytes>> sets;
  for (uint32_t seed = 1; seed <= 4; ++seed) sets.push_back(random_inputs(shape, seed));
  Result r;
  ASSERT_NO_FATAL_FAILURE(compare(graph, sets, exact_budget_here(), graph + class_suffix(), graph + "_ref", &r));
  size_t compared = 0;
  for (size_t i = 0; i < r.per_op.size(); ++i) {
    EXPECT_LE(r.per_op[i].max_diff, 1) << graph << " op " << i;
    compared += r.per_op[i].values;
  }
  EXPECT_GT(compared, 0u);
}

// The target-wide model (x86_64 / aarch64: every CPU of the architecture)
// holds on this CPU too.
TEST_P(XnnpackInt8Op, TargetWideBudgetBoundsThisCpu) {
  const std::string graph = std::string("int8_") + GetParam();
  Loaded m;
  ASSERT_NO_FATAL_FAILURE(load(graph, &m));
  Arena arena(m.model.arena_size());
  Interpreter interpreter(m.model, arena.data, m.model.arena_size());
  ASSERT_EQ(interpreter.Init(), Status::kOk) << graph << ": " << interpreter.error().message;
  EXPECT_GT(interpreter.backend_op_count(), 0u) << graph;
  EXPECT_LE(interpreter.arena_used(), m.model.arena_size()) << graph;
  std::printf("  %s (target-wide): arena %llu bytes stated, %zu used by Init()\n", graph.c_str(),
              static_cast<unsigned long long>(m.model.arena_size()), interpreter.arena_used());
}

INSTANTIATE_TEST_SUITE_P(Graphs, XnnpackInt8Op,
                         ::testing::Values("conv_same", "conv_stride2_valid", "conv_dilated",
                                           "conv_first_layer", "conv_narrow_dilated", "conv_narrow_stride2",
                                           "conv_pointwise", "conv_no_bias",
                                           "dw_3x3", "dw_5x5_stride2", "dw_multiplier8", "dw_dilated",
                                           "dw_2x2_valid", "dense", "add", "add_broadcast",
                                           "avgpool_global", "mean_hw"));

struct CorpusModel {
  const char* name;
  const char* tflite;  // relative to corpus/
  const char* input;   // int8 .npy relative to corpus/, or null: seeded random inputs
};

void PrintTo(const CorpusModel& m, std::ostream* os) { *os << m.name; }

class XnnpackInt8Corpus : public ::testing::TestWithParam<CorpusModel> {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(backend_initialize(), Status::kOk); }
};

TEST_P(XnnpackInt8Corpus, EveryXnnpackOpWithinOneStepOfTheReference) {
  const CorpusModel& c = GetParam();
  FLOE_REQUIRE_CORPUS(c.tflite);
  const std::string name = std::string("corpus_") + c.name;
  if (!testing::path_exists(model_path(name + "_ref"))) {
    GTEST_SKIP() << "SKIPPED: " << model_path(name + "_ref")
                 << " was not converted (the corpus was absent at configure time)";
  }
  Loaded probe;
  ASSERT_NO_FATAL_FAILURE(load(name + "_ref", &probe));
  Arena arena(probe.model.arena_size());
  Interpreter shape(probe.model, arena.data, probe.model.arena_size());
  ASSERT_EQ(shape.Init(), Status::kOk);
  std::vector<std::vector<Bytes>> sets;
  if (c.input != nullptr) {
    std::vector<Bytes> given{npy_payload(testing::corpus_path(c.input), shape.input(0).bytes)};
    ASSERT_EQ(given[0].size(), shape.input(0).bytes) << c.input;
    sets.push_back(std::move(given));
  }
  for (uint32_t seed = 1; seed <= 2; ++seed) sets.push_back(random_inputs(shape, seed));
  Result r;
  ASSERT_NO_FATAL_FAILURE(compare(name, sets, exact_budget_here(), name + class_suffix(), name + "_ref", &r));
  for (size_t i = 0; i < r.per_op.size(); ++i) {
    EXPECT_LE(r.per_op[i].max_diff, 1) << name << " op " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Corpus, XnnpackInt8Corpus,
    ::testing::Values(
        CorpusModel{"kws", "int8/mlperf_tiny/kws/kws_ref_model.tflite", "int8/mlperf_tiny/kws/kws_input0_int8.npy"},
        CorpusModel{"ic", "int8/mlperf_tiny/ic/pretrainedResnet_quant.tflite", nullptr},
        CorpusModel{"vww", "int8/mlperf_tiny/vww/vww_96_int8.tflite", nullptr},
        CorpusModel{"ad", "int8/mlperf_tiny/ad/ad01_int8.tflite", nullptr},
        CorpusModel{"person_detect", "int8/tflite_micro/person_detection/person_detect.tflite",
                    "int8/tflite_micro/person_detection/person_tflm_int8.npy"}),
    [](const ::testing::TestParamInfo<CorpusModel>& info) { return std::string(info.param.name); });

// With a 2-thread pool XNNPACK splits the int8 work differently; the result
// is the same integers as on the caller's thread.
TEST(XnnpackInt8Threads, TwoThreadPoolGivesTheSameIntegers) {
  ASSERT_EQ(backend_initialize(), Status::kOk);
  pthreadpool_t pool = pthreadpool_create(2);
  ASSERT_NE(pool, nullptr);
  size_t pooled = 0;
  for (const char* graph : {"int8_conv_first_layer", "int8_conv_same", "int8_dw_3x3", "int8_dense", "int8_add"}) {
    Loaded m;
    ASSERT_NO_FATAL_FAILURE(load(graph, &m));
    for (const schema::Operator* op : *m.model.schema()->operators()) {
      pooled += op->backend() == schema::Backend::XNNPACK && !op->single_threaded();
    }
    Arena a1(m.model.arena_size()), a2(m.model.arena_size());
    Interpreter single(m.model, a1.data, m.model.arena_size());
    Interpreter threaded(m.model, a2.data, m.model.arena_size());
    threaded.set_thread_pool(pool);
    ASSERT_EQ(single.Init(), Status::kOk) << single.error().message;
    ASSERT_EQ(threaded.Init(), Status::kOk) << threaded.error().message;
    const std::vector<Bytes> inputs = random_inputs(single, 5);
    set_inputs(single, inputs);
    set_inputs(threaded, inputs);
    ASSERT_EQ(single.Invoke(), Status::kOk);
    ASSERT_EQ(threaded.Invoke(), Status::kOk);
    EXPECT_EQ(outputs_of(threaded), outputs_of(single)) << graph;
  }
  pthreadpool_destroy(pool);
  EXPECT_GT(pooled, 0u) << "no int8 op ran on the pool";
}

}  // namespace
}  // namespace floe
