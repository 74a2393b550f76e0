// SPDX-License-Identifier: Apache-2.0
// RandomUniform with a seed, converted and run: the first Invoke() gives the
// values TensorFlow drew for seed 1, seed2 14 in the shared corpus's dropout
// cases (dropout/float32_rate_02_seed_123_noise_shape_None and
// dropout/float64_rate_01_seed_123_noise_shape_None,
// *RandomUniform.0.prediction_inbw.csv); the next Invoke() draws new values
// from the counter TF's kernel would use on its next run (256 counters per
// element further); Init() starts over; an unseeded op is refused with the
// other random ops.
#include <gtest/gtest.h>

#include <cstring>

#include "converter/pipeline/info.h"
#include "runtime/core/interpreter.h"
#include "tests/converter/ops/convert_graph.h"
#include "tests/converter/support/tf_graph_text.h"
#include "tests/support/loaded_model.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

using G = TfGraphText;

G uniform_graph(const char* dtype, int64_t seed, int64_t seed2) {
  G g;
  g.constant("shape", "DT_INT32", {2}, {2, 2});
  g.node("r", "RandomUniform", {"shape"},
         {G::type("dtype", dtype), G::type("T", "DT_INT32"), G::integer("seed", seed), G::integer("seed2", seed2)});
  return g;
}

std::vector<float> floats_of(const TensorView& view) {
  const float* p = static_cast<const float*>(view.data);
  return std::vector<float>(p, p + view.bytes / sizeof(float));
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 5e-8f) << i;
}

TEST(RandomOps, SeededRandomUniformDrawsTfsValuesAndNewOnesEachRun) {
  const std::unique_ptr<LoadedModel> loaded = load_model(convert_graph(uniform_graph("DT_FLOAT", 1, 14), "uniform", {"r"}).model);
  ASSERT_EQ(loaded->status, Status::kOk) << loaded->model.error().message;
  std::vector<uint8_t> arena(loaded->model.arena_size() + 16);
  uint8_t* base = arena.data() + (16 - reinterpret_cast<uintptr_t>(arena.data()) % 16) % 16;
  Interpreter interpreter(loaded->model, base, loaded->model.arena_size());
  ASSERT_EQ(interpreter.Init(), Status::kOk) << interpreter.error().message;
  const std::vector<float> tf_first_run = {0.86016917f, 0.44673419f, 0.21626997f, 0.43274188f};
  ASSERT_EQ(interpreter.Invoke(), Status::kOk) << interpreter.error().message;
  expect_near_all(floats_of(interpreter.output(0)), tf_first_run);
  // TF reserves 256 counters per element each run: the second run starts at
  // counter 4 * 256 (values from floe's generator, checked against Random123's
  // vectors in tests/kernels/random_uniform_test.cc).
  ASSERT_EQ(interpreter.Invoke(), Status::kOk);
  expect_near_all(floats_of(interpreter.output(0)), {0.51717460f, 0.62196648f, 0.35720837f, 0.45450485f});
  // A new Init() is a new session: the first run's values again.
  ASSERT_EQ(interpreter.Init(), Status::kOk);
  ASSERT_EQ(interpreter.Invoke(), Status::kOk);
  expect_near_all(floats_of(interpreter.output(0)), tf_first_run);
}

TEST(RandomOps, Float64DrawsUseTwoWordsPerValueAsTfDoes) {
  const auto out = run_model(convert_graph(uniform_graph("DT_DOUBLE", 1, 14), "uniform64", {"r"}).model, {});
  ASSERT_EQ(out.size(), 1u);
  expect_near_all(as_floats(out[0]), {0.88135408f, 0.73016063f, 0.67117096f, 0.99968579f});
}

TEST(RandomOps, ItStaysARunTimeOpNeverFoldedIntoAConstant) {
  const conv::ConvertResult r = convert_graph(uniform_graph("DT_FLOAT", 7, 0), "uniform_kept", {"r"});
  const std::unique_ptr<LoadedModel> loaded = load_model(r.model);
  ASSERT_EQ(loaded->status, Status::kOk);
  ASSERT_EQ(loaded->model.schema()->operators()->size(), 1u);  // not folded into a constant
  EXPECT_EQ(loaded->model.schema()->operators()->Get(0)->opcode(), schema::OpCode::RANDOM_UNIFORM);
}

TEST(RandomOps, AnUnseededRandomUniformIsRefusedNamingTheRemedy) {
  // Listed with every other op floe cannot run, the remedy in the group's title.
  const std::string m = conversion_error(uniform_graph("DT_FLOAT", 0, 0), "unseeded", {"r"});
  EXPECT_NE(m.find("random ops on the inference path"), std::string::npos) << m;
  EXPECT_NE(m.find("a seeded RandomUniform runs, drawing TF's values"), std::string::npos) << m;
  EXPECT_NE(m.find("RandomUniform x1: r"), std::string::npos) << m;
  EXPECT_NE(conversion_error(uniform_graph("DT_HALF", 1, 2), "half", {"r"}).find("dtype DT_HALF is not supported"),
            std::string::npos);
}

// floe-convert --list-ops says it runs only seeded, as the refusal above does.
TEST(RandomOps, ListOpsSaysOnlyASeededRandomUniformRuns) {
  const conv::OpTreatment t = conv::op_treatment("RandomUniform");
  EXPECT_EQ(t.kind, conv::OpTreatment::Kind::kLowered);
  EXPECT_NE(t.detail.find("seeded (seed or seed2 nonzero)"), std::string::npos) << t.detail;
  EXPECT_NE(t.detail.find("unseeded it is refused"), std::string::npos) << t.detail;
}

}  // namespace
}  // namespace floe::testing
