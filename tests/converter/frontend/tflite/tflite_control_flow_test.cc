// SPDX-License-Identifier: Apache-2.0
// TFLite's WHILE and IF (ops that call other subgraphs) read by the .tflite
// importer as floe's run-time WHILE / IF: small models built with
// tflite_builder.h, run by TensorFlow Lite 2.9 (../shared/tools/peers/
// tflite_run.js) and by floe on the same inputs: an input-dependent trip
// count, both branches of an IF, a WHILE and an IF nested in a loop body,
// loop variables passed on to other positions, an int8 body; a WHILE with no
// bound running until its condition, a given bound exceeded failing Invoke();
// and the refusals (recursion, bad subgraph indices, shapes that differ,
// resource variables, nesting).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "converter/frontend/tflite/tflite_import.h"
#include "converter/ir/error.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/npy.h"
#include "tests/converter/support/tfjs_oracle.h"
#include "tests/converter/support/tflite_builder.h"
#include "tests/support/corpus.h"
#include "tests/support/loaded_model.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

using conv::ConvertError;

// BuiltinOperator codes the models use.
constexpr int32_t kAdd = 0, kMul = 18, kTanh = 28, kSub = 41, kLess = 58, kGreater = 61, kIf = 118, kWhile = 119;
constexpr uint32_t kBound = 100;

TflTensor f32(std::vector<int32_t> shape, const std::string& name, std::vector<float> data = {}) {
  return {std::move(shape), kTflFloat32, raw(data), name};
}
TflTensor i32(std::vector<int32_t> shape, const std::string& name, std::vector<int32_t> data = {}) {
  return {std::move(shape), kTflInt32, raw(data), name};
}
TflTensor boolean(std::vector<int32_t> shape, const std::string& name) { return {std::move(shape), kTflBool, {}, name}; }

// Subgraph `cond` of a counting loop whose variables start (i, n, ...):
// i < n. `extra` more float [1,4] variables follow.
int counter_cond(TfliteBuilder& b, int extra) {
  const int g = b.next_subgraph();
  const int i = b.tensor(i32({1}, "i")), n = b.tensor(i32({1}, "n"));
  b.inputs = {i, n};
  for (int k = 0; k < extra; ++k) b.inputs.push_back(b.tensor(f32({1, 4}, "v" + std::to_string(k))));
  const int c = b.tensor(boolean({1}, "i_less_n"));
  b.op({kLess, {i, n}, {c}});
  b.outputs = {c};
  return g;
}

// The body of a halving loop as the next subgraph: (i, n, x) ->
// (i + 1, n, 0.5 x + 1).
int halving_body(TfliteBuilder& b) {
  const int g = b.next_subgraph();
  const int i = b.tensor(i32({1}, "i")), bn = b.tensor(i32({1}, "n")), v = b.tensor(f32({1, 4}, "x"));
  const int one = b.tensor(i32({1}, "one", {1})), i2 = b.tensor(i32({1}, "i_next"));
  const int half = b.tensor(f32({1}, "half", {0.5f})), onef = b.tensor(f32({1}, "onef", {1.0f}));
  const int t = b.tensor(f32({1, 4}, "scaled")), v2 = b.tensor(f32({1, 4}, "x_next"));
  b.op({kAdd, {i, one}, {i2}});
  b.op({kMul, {v, half}, {t}});
  b.op({kAdd, {t, onef}, {v2}});
  b.inputs = {i, bn, v};
  b.outputs = {i2, bn, v2};
  return g;
}

// while i < n: x = 0.5 x + 1; i += 1. Inputs x [1,4], n [1] int32;
// outputs x and i after the loop.
std::string counting_loop_model() {
  TfliteBuilder b;
  const int x = b.tensor(f32({1, 4}, "x")), n = b.tensor(i32({1}, "n"));
  const int i0 = b.tensor(i32({1}, "i0", {0}));
  const int i_out = b.tensor(i32({1}, "i_out")), n_out = b.tensor(i32({1}, "n_out"));
  const int x_out = b.tensor(f32({1, 4}, "x_out"));
  b.op({kWhile, {i0, n, x}, {i_out, n_out, x_out}, tfl::BuiltinOptions::WhileOptions, while_options(1, 2)});
  b.inputs = {x, n};
  b.outputs = {x_out, i_out};
  counter_cond(b, 1);
  halving_body(b);
  return b.build();
}

// y = p > 0 ? 2 x + 1 : x - 3, an IF on p [1] with x [1,3] passed to the branches.
std::string if_model() {
  TfliteBuilder b;
  const int p = b.tensor(f32({1}, "p")), x = b.tensor(f32({1, 3}, "x"));
  const int zero = b.tensor(f32({1}, "zero", {0.0f}));
  const int c = b.tensor(boolean({1}, "p_positive")), y = b.tensor(f32({1, 3}, "y"));
  b.op({kGreater, {p, zero}, {c}});
  b.op({kIf, {c, x}, {y}, tfl::BuiltinOptions::IfOptions, if_options(1, 2)});
  b.inputs = {p, x};
  b.outputs = {y};
  b.next_subgraph();  // 1: then
  {
    const int a = b.tensor(f32({1, 3}, "a")), two = b.tensor(f32({1}, "two", {2.0f}));
    const int one = b.tensor(f32({1}, "one", {1.0f}));
    const int t = b.tensor(f32({1, 3}, "doubled")), r = b.tensor(f32({1, 3}, "then_result"));
    b.op({kMul, {a, two}, {t}});
    b.op({kAdd, {t, one}, {r}});
    b.inputs = {a};
    b.outputs = {r};
  }
  b.next_subgraph();  // 2: else
  const int a = b.tensor(f32({1, 3}, "a")), three = b.tensor(f32({1}, "three", {3.0f}));
  const int r = b.tensor(f32({1, 3}, "else_result"));
  b.op({kSub, {a, three}, {r}});
  b.inputs = {a};
  b.outputs = {r};
  return b.build();
}

// Outer loop j < m over (j, m, x, y): an inner WHILE k < 3 adds 1 to x three
// times; an IF on j < 2 gives y' = tanh(y + x) or y - x; the body returns
// (j + 1, m, x', y'). Outputs y and x after the loop.
std::string nested_model() {
  TfliteBuilder b;
  const int x = b.tensor(f32({1, 4}, "x")), m = b.tensor(i32({1}, "m")), y = b.tensor(f32({1, 4}, "y"));
  const int j0 = b.tensor(i32({1}, "j0", {0}));
  const int j_out = b.tensor(i32({1}, "j_out")), m_out = b.tensor(i32({1}, "m_out"));
  const int x_out = b.tensor(f32({1, 4}, "x_out")), y_out = b.tensor(f32({1, 4}, "y_out"));
  b.op({kWhile, {j0, m, x, y}, {j_out, m_out, x_out, y_out}, tfl::BuiltinOptions::WhileOptions, while_options(1, 2)});
  b.inputs = {x, m, y};
  b.outputs = {y_out, x_out};
  counter_cond(b, 2);  // 1
  b.next_subgraph();   // 2: outer body
  {
    const int j = b.tensor(i32({1}, "j")), bm = b.tensor(i32({1}, "m"));
    const int bx = b.tensor(f32({1, 4}, "x")), by = b.tensor(f32({1, 4}, "y"));
    const int k0 = b.tensor(i32({1}, "k0", {0})), three = b.tensor(i32({1}, "three", {3}));
    const int k_out = b.tensor(i32({1}, "k_out")), three_out = b.tensor(i32({1}, "three_out"));
    const int x2 = b.tensor(f32({1, 4}, "x_next"));
    b.op({kWhile, {k0, three, bx}, {k_out, three_out, x2}, tfl::BuiltinOptions::WhileOptions, while_options(6, 3)});
    const int two = b.tensor(i32({1}, "two", {2})), early = b.tensor(boolean({1}, "j_less_2"));
    const int y2 = b.tensor(f32({1, 4}, "y_next"));
    b.op({kLess, {j, two}, {early}});
    b.op({kIf, {early, x2, by}, {y2}, tfl::BuiltinOptions::IfOptions, if_options(4, 5)});
    const int one = b.tensor(i32({1}, "one", {1})), j2 = b.tensor(i32({1}, "j_next"));
    b.op({kAdd, {j, one}, {j2}});
    b.inputs = {j, bm, bx, by};
    b.outputs = {j2, bm, x2, y2};
  }
  b.next_subgraph();  // 3: inner body, x + 1
  {
    const int k = b.tensor(i32({1}, "k")), kn = b.tensor(i32({1}, "n")), v = b.tensor(f32({1, 4}, "v"));
    const int one = b.tensor(i32({1}, "one", {1})), k2 = b.tensor(i32({1}, "k_next"));
    const int onef = b.tensor(f32({1}, "onef", {1.0f})), v2 = b.tensor(f32({1, 4}, "v_next"));
    b.op({kAdd, {k, one}, {k2}});
    b.op({kAdd, {v, onef}, {v2}});
    b.inputs = {k, kn, v};
    b.outputs = {k2, kn, v2};
  }
  b.next_subgraph();  // 4: then, tanh(y + x)
  {
    const int a = b.tensor(f32({1, 4}, "x")), c = b.tensor(f32({1, 4}, "y"));
    const int s = b.tensor(f32({1, 4}, "sum")), r = b.tensor(f32({1, 4}, "tanh_sum"));
    b.op({kAdd, {c, a}, {s}});
    b.op({kTanh, {s}, {r}});
    b.inputs = {a, c};
    b.outputs = {r};
  }
  b.next_subgraph();  // 5: else, y - x
  const int a = b.tensor(f32({1, 4}, "x")), c = b.tensor(f32({1, 4}, "y"));
  const int r = b.tensor(f32({1, 4}, "difference"));
  b.op({kSub, {c, a}, {r}});
  b.inputs = {a, c};
  b.outputs = {r};
  counter_cond(b, 1);  // 6: inner cond
  return b.build();
}

// while i < n: (a, b) = (b, a + b), the body returning variable 3 as variable
// 2; `reversed`: (a, b) = (a + b, a), variable 2 as variable 3, which the
// runtime copies after variable 2 took its next value.
std::string fibonacci_model(bool reversed) {
  TfliteBuilder b;
  const int a = b.tensor(f32({1, 4}, "a")), n = b.tensor(i32({1}, "n")), c = b.tensor(f32({1, 4}, "b"));
  const int i0 = b.tensor(i32({1}, "i0", {0}));
  const int i_out = b.tensor(i32({1}, "i_out")), n_out = b.tensor(i32({1}, "n_out"));
  const int a_out = b.tensor(f32({1, 4}, "a_out")), b_out = b.tensor(f32({1, 4}, "b_out"));
  b.op({kWhile, {i0, n, a, c}, {i_out, n_out, a_out, b_out}, tfl::BuiltinOptions::WhileOptions, while_options(1, 2)});
  b.inputs = {a, n, c};
  b.outputs = {a_out, b_out};
  counter_cond(b, 2);
  b.next_subgraph();
  const int i = b.tensor(i32({1}, "i")), bn = b.tensor(i32({1}, "n"));
  const int va = b.tensor(f32({1, 4}, "a")), vb = b.tensor(f32({1, 4}, "b"));
  const int one = b.tensor(i32({1}, "one", {1})), i2 = b.tensor(i32({1}, "i_next"));
  const int sum = b.tensor(f32({1, 4}, "a_plus_b"));
  b.op({kAdd, {i, one}, {i2}});
  b.op({kAdd, {va, vb}, {sum}});
  b.inputs = {i, bn, va, vb};
  b.outputs = reversed ? std::vector<int32_t>{i2, bn, sum, va} : std::vector<int32_t>{i2, bn, vb, sum};
  return b.build();
}

// y = p > 0 ? (n times x = 0.5 x + 1) : (p < -1 ? 2 x : c) with c a constant
// [1,4]: a WHILE in the then branch, an IF in the else branch.
std::string branches_nesting_model() {
  TfliteBuilder b;
  const int p = b.tensor(f32({1}, "p")), x = b.tensor(f32({1, 4}, "x")), n = b.tensor(i32({1}, "n"));
  const int zero = b.tensor(f32({1}, "zero", {0.0f}));
  const int c = b.tensor(boolean({1}, "p_positive")), y = b.tensor(f32({1, 4}, "y"));
  b.op({kGreater, {p, zero}, {c}});
  b.op({kIf, {c, x, n, p}, {y}, tfl::BuiltinOptions::IfOptions, if_options(1, 2)});
  b.inputs = {p, x, n};
  b.outputs = {y};
  b.next_subgraph();  // 1: then, a counting WHILE
  {
    const int bx = b.tensor(f32({1, 4}, "x")), bn = b.tensor(i32({1}, "n")), bp = b.tensor(f32({1}, "p"));
    const int i0 = b.tensor(i32({1}, "i0", {0}));
    const int i_out = b.tensor(i32({1}, "i_out")), n_out = b.tensor(i32({1}, "n_out"));
    const int x_out = b.tensor(f32({1, 4}, "x_out"));
    b.op({kWhile, {i0, bn, bx}, {i_out, n_out, x_out}, tfl::BuiltinOptions::WhileOptions, while_options(3, 4)});
    b.inputs = {bx, bn, bp};
    b.outputs = {x_out};
  }
  b.next_subgraph();  // 2: else, IF p < -1
  {
    const int bx = b.tensor(f32({1, 4}, "x")), bn = b.tensor(i32({1}, "n")), bp = b.tensor(f32({1}, "p"));
    const int minus_one = b.tensor(f32({1}, "minus_one", {-1.0f}));
    const int c2 = b.tensor(boolean({1}, "p_below_minus_one")), r = b.tensor(f32({1, 4}, "inner_result"));
    b.op({kLess, {bp, minus_one}, {c2}});
    b.op({kIf, {c2, bx}, {r}, tfl::BuiltinOptions::IfOptions, if_options(5, 6)});
    b.inputs = {bx, bn, bp};
    b.outputs = {r};
  }
  counter_cond(b, 1);  // 3
  halving_body(b);     // 4
  b.next_subgraph();   // 5: 2 x
  {
    const int a = b.tensor(f32({1, 4}, "a")), two = b.tensor(f32({1}, "two", {2.0f}));
    const int r = b.tensor(f32({1, 4}, "doubled"));
    b.op({kMul, {a, two}, {r}});
    b.inputs = {a};
    b.outputs = {r};
  }
  b.next_subgraph();  // 6: a constant
  const int a = b.tensor(f32({1, 4}, "a"));
  const int k = b.tensor(f32({1, 4}, "constant", {0.25f, -1.0f, 8.0f, 3.5f}));
  b.inputs = {a};
  b.outputs = {k};
  return b.build();
}

// int8: while i < n: x = x + d (int8 ADD, x and d sharing scale 0.05, zero
// point -10): the body's ADD requantizes each iteration (saturating at 127).
std::string int8_loop_model() {
  TfliteBuilder b;
  auto q8 = [](std::vector<int32_t> shape, const std::string& name, std::vector<uint8_t> data = {}) {
    return TflTensor{std::move(shape), kTflInt8, std::move(data), name, {0.05f}, {-10}};
  };
  const int x = b.tensor(q8({1, 8}, "x")), n = b.tensor(i32({1}, "n"));
  const int i0 = b.tensor(i32({1}, "i0", {0}));
  const int i_out = b.tensor(i32({1}, "i_out")), n_out = b.tensor(i32({1}, "n_out"));
  const int x_out = b.tensor(q8({1, 8}, "x_out"));
  b.op({kWhile, {i0, n, x}, {i_out, n_out, x_out}, tfl::BuiltinOptions::WhileOptions, while_options(1, 2)});
  b.inputs = {x, n};
  b.outputs = {x_out};
  {
    b.next_subgraph();
    const int i = b.tensor(i32({1}, "i")), cn = b.tensor(i32({1}, "n")), v = b.tensor(q8({1, 8}, "x"));
    const int c = b.tensor(boolean({1}, "i_less_n"));
    b.op({kLess, {i, cn}, {c}});
    b.inputs = {i, cn, v};
    b.outputs = {c};
  }
  b.next_subgraph();
  const int i = b.tensor(i32({1}, "i")), bn = b.tensor(i32({1}, "n")), v = b.tensor(q8({1, 8}, "x"));
  const int one = b.tensor(i32({1}, "one", {1})), i2 = b.tensor(i32({1}, "i_next"));
  const std::vector<uint8_t> step = {7, 250, 33, 0, 128, 200, 17, 90};  // int8 bytes
  const int d = b.tensor(q8({1, 8}, "step", step)), v2 = b.tensor(q8({1, 8}, "x_next"));
  b.op({kAdd, {i, one}, {i2}});
  b.op({kAdd, {v, d}, {v2}});
  b.inputs = {i, bn, v};
  b.outputs = {i2, bn, v2};
  return b.build();
}

// ---- running both ------------------------------------------------------------

// No bound by default: a .tflite WHILE runs until its condition is false, as
// in TFLite, with no option passed.
conv::ConvertResult convert_tflite(const std::string& bytes, uint32_t bound = 0) {
  const std::string path = make_temp_dir() + "/m.tflite";
  std::ofstream(path, std::ios::binary) << bytes;
  conv::ConvertOptions options;
  options.graph_path = path;
  options.max_loop_iterations = bound;
  return conv::convert(options);
}

// floe (converted for the host) against TFLite 2.9 on `inputs` (by the
// model's input names, in its input order): every output within `tolerance`.
void expect_matches_tflite(const std::string& bytes, const std::vector<std::pair<std::string, HostTensor>>& inputs,
                           size_t outputs, float tolerance) {
  std::vector<HostTensor> ordered;
  std::map<std::string, HostTensor> named;
  for (const auto& [name, t] : inputs) {
    ordered.push_back(t);
    named[name] = t;
  }
  const std::vector<std::vector<float>> want = run_tflite(bytes, ordered, outputs);
  const std::vector<HostTensor> got = run_model(convert_tflite(bytes).model, named);
  ASSERT_EQ(want.size(), outputs);
  ASSERT_EQ(got.size(), outputs);
  for (size_t k = 0; k < outputs; ++k) {
    SCOPED_TRACE("output " + std::to_string(k));
    const std::vector<double> g = values_of(got[k]);
    ASSERT_EQ(g.size(), want[k].size());
    for (size_t e = 0; e < g.size(); ++e) {
      EXPECT_NEAR(g[e], want[k][e], tolerance * std::max(1.0f, std::abs(want[k][e]))) << "element " << e;
    }
  }
}

HostTensor make_i8(std::vector<int64_t> shape, const std::vector<int8_t>& values) {
  HostTensor t;
  t.dtype = DType::kInt8;
  t.shape = std::move(shape);
  t.data.assign(reinterpret_cast<const uint8_t*>(values.data()),
                reinterpret_cast<const uint8_t*>(values.data()) + values.size());
  return t;
}

// ---- against TFLite 2.9 -------------------------------------------------------

TEST(TfliteControlFlow, WhileWithAnInputDependentTripCountMatchesTflite) {
  REQUIRE_TFLITE_ORACLE();
  const std::string model = counting_loop_model();
  for (int32_t n : {0, 1, 5, 37, 1000}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    expect_matches_tflite(model,
                          {{"x", random_f32({1, 4}, static_cast<uint32_t>(n) + 1, -4.0f, 4.0f)},
                           {"n", make_i32({1}, {n})}},
                          2, 1e-6f);
  }
}

TEST(TfliteControlFlow, IfRunsEachBranchLikeTflite) {
  REQUIRE_TFLITE_ORACLE();
  const std::string model = if_model();
  for (float p : {1.5f, -0.5f, 0.0f, 3.0f}) {
    SCOPED_TRACE("p = " + std::to_string(p));
    expect_matches_tflite(model, {{"p", make_f32({1}, {p})}, {"x", random_f32({1, 3}, 7, -2.0f, 2.0f)}}, 1, 1e-6f);
  }
}

TEST(TfliteControlFlow, WhileAndIfNestedInALoopBodyMatchTflite) {
  REQUIRE_TFLITE_ORACLE();
  const std::string model = nested_model();
  for (int32_t m : {0, 1, 2, 4}) {
    SCOPED_TRACE("m = " + std::to_string(m));
    expect_matches_tflite(model,
                          {{"x", random_f32({1, 4}, 3, -1.0f, 1.0f)},
                           {"m", make_i32({1}, {m})},
                           {"y", random_f32({1, 4}, 4, -1.0f, 1.0f)}},
                          2, 1e-5f);
  }
}

// The else-else branch returns a constant: its copy into the IF's result is no
// constant fold (the then branches write that result too).
TEST(TfliteControlFlow, WhileAndIfNestedInBranchesMatchTflite) {
  REQUIRE_TFLITE_ORACLE();
  const std::string model = branches_nesting_model();
  for (float p : {1.0f, -0.5f, -2.0f}) {
    for (int32_t n : {0, 3}) {
      SCOPED_TRACE("p = " + std::to_string(p) + ", n = " + std::to_string(n));
      expect_matches_tflite(model,
                            {{"p", make_f32({1}, {p})},
                             {"x", random_f32({1, 4}, 9, -3.0f, 3.0f)},
                             {"n", make_i32({1}, {n})}},
                            1, 1e-6f);
    }
  }
}

TEST(TfliteControlFlow, LoopVariablesPassedToOtherPositionsMatchTflite) {
  REQUIRE_TFLITE_ORACLE();
  const std::string model = fibonacci_model(false);
  for (int32_t n : {0, 1, 2, 9}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    expect_matches_tflite(model,
                          {{"a", make_f32({1, 4}, {0.0f, 1.0f, -2.0f, 0.5f})},
                           {"n", make_i32({1}, {n})},
                           {"b", make_f32({1, 4}, {1.0f, 1.0f, 3.0f, -0.25f})}},
                          2, 1e-6f);
  }
}

// TFLite 2.9 copies a body's results into its inputs one by one, so with the
// variables reversed its second variable takes the first's new value (it
// gives 2^(n-1), 256 for n = 9, where the loop computes Fibonacci numbers):
// the expected values are computed here.
TEST(TfliteControlFlow, AVariablePassedToALaterPositionKeepsItsValue) {
  const std::vector<uint8_t> model = convert_tflite(fibonacci_model(true)).model;
  for (int32_t n : {0, 1, 2, 9}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    std::vector<float> a = {0.0f, 1.0f, -2.0f, 0.5f}, b = {1.0f, 1.0f, 3.0f, -0.25f};
    const std::vector<HostTensor> got =
        run_model(model, {{"a", make_f32({1, 4}, a)}, {"n", make_i32({1}, {n})}, {"b", make_f32({1, 4}, b)}});
    for (int32_t step = 0; step < n; ++step) {
      for (size_t e = 0; e < 4; ++e) {
        const float next = a[e] + b[e];
        b[e] = a[e];
        a[e] = next;
      }
    }
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(as_floats(got[0]), a);
    EXPECT_EQ(as_floats(got[1]), b);
  }
}

TEST(TfliteControlFlow, Int8LoopBodyMatchesTflite) {
  REQUIRE_TFLITE_ORACLE();
  const std::string model = int8_loop_model();
  for (int32_t n : {0, 1, 3, 12}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    expect_matches_tflite(model, {{"x", make_i8({1, 8}, {-128, -50, -10, 0, 5, 40, 100, 127})}, {"n", make_i32({1}, {n})}},
                          1, 0.0f);
  }
}

// ---- floe alone --------------------------------------------------------------

TEST(TfliteControlFlow, ImportTagsTheInlinedOpsAndSaysWhatItRan) {
  conv::TfliteOptions options;
  options.max_loop_iterations = 7;
  const conv::TfliteImport imported = conv::import_tflite(nested_model(), "nested.tflite", options);
  const conv::LoweredModel& m = imported.model;
  ASSERT_EQ(m.loops.size(), 2u);
  ASSERT_EQ(m.ifs.size(), 1u);
  EXPECT_EQ(m.loops[0].max_iterations, 7u);
  int whiles = 0, ifs = 0;
  for (const conv::LoweredOp& op : m.ops) {
    if (op.opcode == conv::schema::OpCode::WHILE) {
      // The inner WHILE is an op of the outer body.
      EXPECT_EQ(op.loop, whiles == 0 ? -1 : 0);
      ++whiles;
    }
    if (op.opcode == conv::schema::OpCode::IF) {
      EXPECT_EQ(op.loop, 0);
      EXPECT_FALSE(op.loop_cond);
      ++ifs;
    }
    if (op.if_id == 0) EXPECT_EQ(op.loop, 0) << op.node_name;  // a branch op is in the outer body too
  }
  EXPECT_EQ(whiles, 2);
  EXPECT_EQ(ifs, 1);
  ASSERT_EQ(imported.control_flow.size(), 3u);
  EXPECT_NE(imported.control_flow[0].find("run-time WHILE, bound 7 (--max-loop-iterations)"), std::string::npos)
      << imported.control_flow[0];
  const std::string summary = convert_tflite(nested_model()).summary;
  EXPECT_NE(summary.find("run-time IF, only the taken branch runs"), std::string::npos) << summary;
}

TEST(TfliteControlFlow, ExceedingTheBoundFailsInvoke) {
  const conv::ConvertResult r = convert_tflite(counting_loop_model(), 8);
  const std::unique_ptr<LoadedModel> loaded = load_model(r.model);
  ASSERT_EQ(loaded->status, Status::kOk) << loaded->model.error().message;
  std::vector<uint8_t> arena(loaded->model.arena_size() + 16);
  uint8_t* base = arena.data() + (16 - reinterpret_cast<uintptr_t>(arena.data()) % 16) % 16;
  Interpreter interpreter(loaded->model, base, loaded->model.arena_size());
  ASSERT_EQ(interpreter.Init(), Status::kOk) << interpreter.error().message;
  std::memset(interpreter.input(interpreter.input_index("x")).data, 0, 16);
  for (int32_t n : {8, 9, 1000}) {
    *interpreter.input(interpreter.input_index("n")).as<int32_t>() = n;
    const Status status = interpreter.Invoke();
    if (n == 8) {
      ASSERT_EQ(status, Status::kOk) << interpreter.error().message;
      EXPECT_EQ(*interpreter.output(1).as<int32_t>(), 8);
      continue;
    }
    EXPECT_EQ(status, Status::kLoopBoundExceeded) << n;
    EXPECT_EQ(loaded->model.schema()->operators()->Get(static_cast<uint32_t>(interpreter.error().op))->opcode(),
              schema::OpCode::WHILE);
  }
}

// ---- refusals ----------------------------------------------------------------

std::string refusal(const std::string& bytes, uint32_t bound = kBound) {
  conv::TfliteOptions options;
  options.max_loop_iterations = bound;
  try {
    conv::import_tflite(bytes, "cf.tflite", options);
  } catch (const ConvertError& e) {
    return e.what();
  }
  return "(accepted)";
}

#define EXPECT_REFUSED(bytes, text)                                               \
  do {                                                                            \
    const std::string message = refusal(bytes);                                   \
    EXPECT_NE(message.find(text), std::string::npos) << message;                  \
  } while (0)

// TFLite runs a WHILE until its condition is false: without an option floe
// does too (2^32 - 1 bodies, its counter's range); --max-loop-iterations adds
// a watchdog bound.
TEST(TfliteControlFlow, AWhileRunsWithoutABoundUnlessOneIsGiven) {
  conv::TfliteOptions options;
  const conv::TfliteImport imported = conv::import_tflite(counting_loop_model(), "loop.tflite", options);
  ASSERT_EQ(imported.control_flow.size(), 1u);
  EXPECT_NE(imported.control_flow[0].find("loop 'i_out': run-time WHILE, no bound;"), std::string::npos)
      << imported.control_flow[0];
  ASSERT_EQ(imported.model.loops.size(), 1u);
  EXPECT_EQ(imported.model.loops[0].max_iterations, conv::kUnboundedLoopIterations);
  // 5,000 iterations, past any bound the tests pass: x = 0.5 x + 1 reaches its fixed point 2.
  const std::vector<HostTensor> out =
      run_model(convert_tflite(counting_loop_model()).model,
                {{"x", make_f32({1, 4}, {-3, 0, 1, 9})}, {"n", make_i32({1}, {5000})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(as_floats(out[0]), (std::vector<float>{2, 2, 2, 2}));
  EXPECT_EQ(*out[1].as<int32_t>(), 5000);

  const std::string dir = make_temp_dir();
  std::ofstream(dir + "/loop.tflite", std::ios::binary) << counting_loop_model();
  const CommandResult r = run_command(tool_path("floe-convert") + " --graph " + dir + "/loop.tflite -o " + dir + "/m.floe");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("loop 'i_out': run-time WHILE, no bound"), std::string::npos) << r.output;
  const CommandResult ok = run_command(tool_path("floe-convert") + " --graph " + dir + "/loop.tflite -o " + dir +
                                       "/m.floe --max-loop-iterations 50");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("loop 'i_out': run-time WHILE, bound 50 (--max-loop-iterations)"), std::string::npos)
      << ok.output;
  // Its trip count is not known at conversion: asking to unroll it is refused, not ignored.
  const CommandResult unroll = run_command(tool_path("floe-convert") + " --graph " + dir + "/loop.tflite -o " + dir +
                                           "/u.floe --max-loop-iterations 50 --loops unroll");
  EXPECT_EQ(unroll.exit_code, 2) << unroll.output;
  EXPECT_NE(unroll.output.find("--loops=unroll (a .tflite's WHILE always runs at run time) does not apply to a "
                               ".tflite model"),
            std::string::npos)
      << unroll.output;
  EXPECT_FALSE(file_exists(dir + "/u.floe"));
}

// counting_loop_model with its WHILE's subgraph indices replaced.
std::string loop_calling(int cond, int body) {
  std::string bytes = counting_loop_model();
  auto* model = tfl::GetMutableModel(bytes.data());
  auto* op = model->mutable_subgraphs()->GetMutableObject(0)->mutable_operators()->GetMutableObject(0);
  auto* o = static_cast<tfl::WhileOptions*>(op->mutable_builtin_options());
  EXPECT_TRUE(o->mutate_cond_subgraph_index(cond));
  EXPECT_TRUE(o->mutate_body_subgraph_index(body));
  return bytes;
}

TEST(TfliteControlFlow, BadSubgraphIndicesAreRefusedNamingTheOp) {
  EXPECT_REFUSED(loop_calling(1, 7), "operator #0 WHILE ('i_out'): names subgraph 7 as its body; the model has 3");
  EXPECT_REFUSED(loop_calling(-1, 2), "names subgraph -1 as its condition");
  EXPECT_REFUSED(loop_calling(1, 0), "calls subgraph 0, the main graph, as its body (recursion)");
  EXPECT_REFUSED(loop_calling(2, 2), "condition subgraph 2 must return one bool, returns 3 values");
  EXPECT_REFUSED(loop_calling(1, 1), "body subgraph 1 returns 1 values for 3 loop variables");
  EXPECT_EQ(refusal(loop_calling(1, 2)), "(accepted)");
}

// A body whose WHILE calls the body itself again.
std::string recursive_model() {
  TfliteBuilder b;
  const int x = b.tensor(f32({1}, "x")), y = b.tensor(f32({1}, "y"));
  b.op({kWhile, {x}, {y}, tfl::BuiltinOptions::WhileOptions, while_options(1, 2)});
  b.inputs = {x};
  b.outputs = {y};
  b.next_subgraph();  // 1: cond
  {
    const int v = b.tensor(f32({1}, "v")), zero = b.tensor(f32({1}, "zero", {0.0f}));
    const int c = b.tensor(boolean({1}, "c"));
    b.op({kGreater, {v, zero}, {c}});
    b.inputs = {v};
    b.outputs = {c};
  }
  b.next_subgraph();  // 2: body, WHILE(cond 1, body 2)
  const int v = b.tensor(f32({1}, "v")), w = b.tensor(f32({1}, "w"));
  b.op({kWhile, {v}, {w}, tfl::BuiltinOptions::WhileOptions, while_options(1, 2)});
  b.inputs = {v};
  b.outputs = {w};
  return b.build();
}

TEST(TfliteControlFlow, RecursionIsRefused) {
  EXPECT_REFUSED(recursive_model(),
                 "operator #0 WHILE of subgraph 2 ('w'): calls subgraph 2 as its body, which is already "
                 "running: recursion");
}

// IF whose then branch declares x as [1,4] where the IF passes [1,3].
std::string if_with_other_shapes() {
  std::string bytes = if_model();
  auto* model = tfl::GetMutableModel(bytes.data());
  auto* tensor = model->mutable_subgraphs()->GetMutableObject(1)->mutable_tensors()->GetMutableObject(0);
  tensor->mutable_shape()->Mutate(1, 4);
  return bytes;
}

TEST(TfliteControlFlow, ASubgraphCalledWithOtherShapesIsRefused) {
  EXPECT_REFUSED(if_with_other_shapes(),
                 "operator #1 IF ('y'): then subgraph 1 input 0 ('a') is float32 [1,4], called with float32 [1,3] "
                 "('x'): floe inlines a called subgraph only with the dtypes and shapes it declares");
}

TEST(TfliteControlFlow, ABodyChangingAShapeIsRefused) {
  std::string bytes = counting_loop_model();
  auto* body = tfl::GetMutableModel(bytes.data())->mutable_subgraphs()->GetMutableObject(2);
  // The body returns its constant `half` [1] as x [1,4].
  body->mutable_outputs()->Mutate(2, 5);
  EXPECT_REFUSED(bytes, "operator #0 WHILE ('i_out'): body subgraph 2 returns loop variable 2 as float32 [1], it "
                        "enters as float32 [1,4]: floe runs loops with fixed dtypes and shapes");
  // A tensor declared with another shape than its op computes is refused at that op.
  bytes = counting_loop_model();
  body = tfl::GetMutableModel(bytes.data())->mutable_subgraphs()->GetMutableObject(2);
  body->mutable_tensors()->GetMutableObject(8)->mutable_shape()->Mutate(1, 2);
  EXPECT_REFUSED(bytes, "operator #2 ADD of subgraph 2 ('i_out/body/x_next'): tensor 'i_out/body/x_next' has shape "
                        "[1,2], the operator computes [1,4]");
}

TEST(TfliteControlFlow, UnsupportedOpsInCalledSubgraphsAreListedWithTheirSubgraph) {
  TfliteBuilder b;
  const int x = b.tensor(f32({1}, "x")), y = b.tensor(f32({1}, "y"));
  const int p = b.tensor(boolean({1}, "p")), z = b.tensor(f32({1}, "z"));
  b.op({26 /* SPACE_TO_DEPTH */, {x}, {z}});
  b.op({kGreater, {x, x}, {p}});
  b.op({kIf, {p, x}, {y}, tfl::BuiltinOptions::IfOptions, if_options(1, 1)});
  b.inputs = {x};
  b.outputs = {y};
  b.next_subgraph();
  const int a = b.tensor(f32({1}, "a")), r = b.tensor(f32({1}, "r"));
  b.op({5 /* DEPTH_TO_SPACE */, {a}, {r}});
  b.inputs = {a};
  b.outputs = {r};
  const std::string message = refusal(b.build());
  EXPECT_NE(message.find("SPACE_TO_DEPTH"), std::string::npos) << message;
  EXPECT_NE(message.find("DEPTH_TO_SPACE"), std::string::npos) << message;
  EXPECT_NE(message.find("subgraph 1 #0 'r'"), std::string::npos) << message;
}

// `levels` levels of loop bodies below a WHILE in the main graph, each running
// the next level's body in `per_level` WHILE ops in a row (the last level
// adds instead): WHILE ops nested `levels` deep, per_level^levels operators
// inlined. Subgraph 1 is every loop's condition, x < 0.
std::string nested_loops(int levels, int per_level) {
  TfliteBuilder b;
  const int x = b.tensor(f32({1}, "x")), y = b.tensor(f32({1}, "y"));
  b.op({kWhile, {x}, {y}, tfl::BuiltinOptions::WhileOptions, while_options(1, 2)});
  b.inputs = {x};
  b.outputs = {y};
  b.next_subgraph();
  {
    const int v = b.tensor(f32({1}, "v")), zero = b.tensor(f32({1}, "zero", {0.0f}));
    const int c = b.tensor(boolean({1}, "c"));
    b.op({kLess, {v, zero}, {c}});
    b.inputs = {v};
    b.outputs = {c};
  }
  for (int level = 1; level <= levels; ++level) {
    const int g = b.next_subgraph();
    int v = b.tensor(f32({1}, "v"));
    b.inputs = {v};
    for (int k = 0; k < per_level; ++k) {
      const int w = b.tensor(f32({1}, "w" + std::to_string(k)));
      if (level < levels) {
        b.op({kWhile, {v}, {w}, tfl::BuiltinOptions::WhileOptions, while_options(1, g + 1)});
      } else {
        b.op({kAdd, {v, v}, {w}});
      }
      v = w;
    }
    b.outputs = {v};
  }
  return b.build();
}

TEST(TfliteControlFlow, NestingBeyondTheRuntimesFramesIsRefused) {
  EXPECT_EQ(refusal(nested_loops(8, 1)), "(accepted)");
  EXPECT_NO_THROW(convert_tflite(nested_loops(8, 1)));  // the runtime loads 8 nested WHILE ops
  EXPECT_REFUSED(nested_loops(9, 1), "nests WHILE / IF ops more than 8 deep, the most the runtime runs");
}

// 7 levels of 8 WHILE ops: 8^7 (2 million) inlined operators from a 3 KB file.
TEST(TfliteControlFlow, InliningOverAMillionOperatorsIsRefusedBeforeLowering) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_REFUSED(nested_loops(7, 8), "with the subgraphs it calls inlined holds over 1000000 operators");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
}

TEST(TfliteControlFlow, AnIfConditionMustBeOneBool) {
  std::string bytes = if_model();
  auto* model = tfl::GetMutableModel(bytes.data());
  // The IF reads p (float) instead of p > 0.
  auto* op = model->mutable_subgraphs()->GetMutableObject(0)->mutable_operators()->GetMutableObject(1);
  op->mutable_inputs()->Mutate(0, 0);
  EXPECT_REFUSED(bytes, "operator #1 IF ('y'): the condition 'p' must be one bool, is float32 [1]");
}

// The fuzz seeds and regression inputs with WHILE / IF (tests/fuzz) are these
// models; FLOE_WRITE_TFLITE_SEEDS=1 rewrites them.
TEST(TfliteControlFlow, FuzzSeedsAreTheseModels) {
  const std::string fuzz = std::string(FLOE_SOURCE_DIR) + "/tests/fuzz/";
  const std::map<std::string, std::string> seeds = {
      {"corpus/fuzz_tflite/while_counting_loop.tflite", counting_loop_model()},
      {"corpus/fuzz_tflite/if_branches.tflite", if_model()},
      {"corpus/fuzz_tflite/while_if_nested.tflite", nested_model()},
      {"regress/fuzz_tflite/while_body_subgraph_out_of_range.tflite", loop_calling(1, 7)},
      {"regress/fuzz_tflite/while_body_recursion.tflite", recursive_model()},
      {"regress/fuzz_tflite/while_calls_main_graph.tflite", loop_calling(1, 0)}};
  for (const auto& [relative, bytes] : seeds) {
    const std::string name = fuzz + relative;
    if (std::getenv("FLOE_WRITE_TFLITE_SEEDS") != nullptr) {
      std::filesystem::create_directories(name.substr(0, name.rfind('/')));
      std::ofstream(name, std::ios::binary) << bytes;
    }
    std::ifstream in(name, std::ios::binary);
    conv::TfliteOptions options;
    options.max_loop_iterations = kBound;
    EXPECT_EQ(imported_content(std::string(std::istreambuf_iterator<char>(in), {}), options),
              imported_content(bytes, options))
        << relative;
  }
}

}  // namespace
}  // namespace floe::testing
