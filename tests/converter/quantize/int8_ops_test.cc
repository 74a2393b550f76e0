// SPDX-License-Identifier: Apache-2.0
// Quantized int8 ops through the whole path: a lowered model whose tensors
// carry scales and zero points goes through converter/quantize (the integers),
// emit, Model::Load and the reference adapters, and must produce exactly what
// the int8 kernel gives when fed TFLM's own Prepare() values (the kernels'
// host-side prepare helpers, which int8_prepare_agreement_test holds equal to
// converter/quantize on 100,000 scales). What this pins is the wiring: which
// field the converter writes, which one the adapter reads, and with which sign.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <random>

#include "converter/ir/error.h"
#include "converter/quantize/int8_arithmetic.h"
#include "runtime/kernels/reference/binary.h"
#include "runtime/kernels/reference/pad.h"
#include "runtime/kernels/reference/quantize.h"
#include "runtime/kernels/reference/reduce.h"
#include "runtime/kernels/reference/unary.h"
#include "tests/converter/support/optimize_test_util.h"

namespace floe::testing {
namespace {

struct Q {
  float scale;
  int32_t zero_point;
};

class Int8Builder : public ModelBuilder {
 public:
  int q_input(const std::string& name, std::vector<int64_t> shape, Q q) {
    const int v = input(name, std::move(shape));
    quantize(v, q);
    return v;
  }
  int q_op(schema::OpCode code, std::vector<int> inputs, std::vector<int64_t> shape, Q q,
           schema::OpOptionsUnion options = {}) {
    const int v = op(code, std::move(inputs), std::move(shape), std::move(options));
    quantize(v, q);
    return v;
  }
  void quantize(int v, Q q) {
    conv::Value& value = model.values[static_cast<size_t>(v)];
    value.dtype = DType::kInt8;
    value.quantization.scale = {q.scale};
    value.quantization.zero_point = {q.zero_point};
  }
};

std::vector<int8_t> random_s8(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<int8_t> v(n);
  for (int8_t& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}

HostTensor s8_tensor(std::vector<int64_t> shape, const std::vector<int8_t>& v) {
  HostTensor t;
  t.dtype = DType::kInt8;
  t.shape = std::move(shape);
  t.data.assign(reinterpret_cast<const uint8_t*>(v.data()), reinterpret_cast<const uint8_t*>(v.data()) + v.size());
  return t;
}

std::vector<int8_t> s8_values(const HostTensor& t) {
  EXPECT_EQ(t.dtype, DType::kInt8);
  return std::vector<int8_t>(reinterpret_cast<const int8_t*>(t.data.data()),
                             reinterpret_cast<const int8_t*>(t.data.data()) + t.data.size());
}

// A Shape points at its dims: they live as long as the test binary.
Shape shape_of(std::initializer_list<int32_t> dims) {
  static std::deque<std::vector<int32_t>> kept;
  kept.emplace_back(dims);
  return Shape{kept.back().data(), static_cast<int32_t>(kept.back().size())};
}

// Runs the model on `inputs` after the converter's int8 stage.
std::vector<HostTensor> convert_and_run(Int8Builder& b, const std::map<std::string, HostTensor>& inputs,
                                        conv::Int8ArithmeticStats* stats = nullptr) {
  const conv::Int8ArithmeticStats s = conv::derive_int8_arithmetic(&b.model);
  if (stats) *stats = s;
  return run_model(conv::plan_and_emit(b.model, "int8_ops_test"), inputs);
}

TEST(Int8Ops, SubAndMulRescaleEachInputLikeTflm) {
  const Q a{0.05f, 3}, c{0.02f, -7}, out{0.04f, -2};
  for (const schema::OpCode code : {schema::OpCode::SUB, schema::OpCode::MUL}) {
    Int8Builder b;
    const int x = b.q_input("x", {2, 3, 4}, a);
    const int y = b.q_input("y", {1, 4}, c);  // broadcast
    b.output(b.q_op(code, {x, y}, {2, 3, 4}, out));
    const std::vector<int8_t> xs = random_s8(24, 1), ys = random_s8(4, 2);
    const std::vector<HostTensor> got = convert_and_run(b, {{"x", s8_tensor({2, 3, 4}, xs)}, {"y", s8_tensor({1, 4}, ys)}});
    ASSERT_EQ(got.size(), 1u);
    std::vector<int8_t> expected(24);
    const ref::BinaryS8Operands ops{{xs.data(), shape_of({2, 3, 4})}, {ys.data(), shape_of({1, 4})},
                                    {expected.data(), shape_of({2, 3, 4})}};
    if (code == schema::OpCode::SUB) {
      ref::sub_s8(ref::prepare_add_s8(a.scale, a.zero_point, c.scale, c.zero_point, out.scale, out.zero_point,
                                      Activation::kNone),
                  ops);
    } else {
      ref::mul_s8(ref::prepare_mul_s8(a.scale, a.zero_point, c.scale, c.zero_point, out.scale, out.zero_point,
                                      Activation::kNone),
                  ops);
    }
    EXPECT_EQ(s8_values(got[0]), expected) << schema::EnumNameOpCode(code);
  }
}

TEST(Int8Ops, MaximumAndMinimumCompareTheStoredIntegers) {
  const Q q{0.25f, 9};
  for (const schema::OpCode code : {schema::OpCode::MAXIMUM, schema::OpCode::MINIMUM}) {
    Int8Builder b;
    const int x = b.q_input("x", {3, 5}, q);
    const int y = b.q_input("y", {5}, q);  // broadcast
    b.output(b.q_op(code, {x, y}, {3, 5}, q));
    const std::vector<int8_t> xs = random_s8(15, 8), ys = random_s8(5, 9);
    const std::vector<HostTensor> got = convert_and_run(b, {{"x", s8_tensor({3, 5}, xs)}, {"y", s8_tensor({5}, ys)}});
    ASSERT_EQ(got.size(), 1u);
    std::vector<int8_t> expected(15);
    for (size_t i = 0; i < 15; ++i) {
      expected[i] = code == schema::OpCode::MAXIMUM ? std::max(xs[i], ys[i % 5]) : std::min(xs[i], ys[i % 5]);
    }
    EXPECT_EQ(s8_values(got[0]), expected) << schema::EnumNameOpCode(code);
  }
}

TEST(Int8Ops, AddFollowedByReluFoldsIntoTheClampRange) {
  const Q q{0.1f, -20};
  Int8Builder b;
  const int x = b.q_input("x", {16}, q);
  const int y = b.q_input("y", {16}, q);
  const int sum = b.q_op(schema::OpCode::ADD, {x, y}, {16}, q);
  b.output(b.q_op(schema::OpCode::RELU, {sum}, {16}, q));
  const std::vector<int8_t> xs = random_s8(16, 3), ys = random_s8(16, 4);
  conv::Int8ArithmeticStats stats;
  const std::vector<HostTensor> got =
      convert_and_run(b, {{"x", s8_tensor({16}, xs)}, {"y", s8_tensor({16}, ys)}}, &stats);
  EXPECT_EQ(stats.folded_activations, 1);
  EXPECT_EQ(b.model.ops.size(), 1u);
  std::vector<int8_t> expected(16);
  ref::add_s8(ref::prepare_add_s8(q.scale, q.zero_point, q.scale, q.zero_point, q.scale, q.zero_point,
                                  Activation::kRelu),
              {{xs.data(), shape_of({16})}, {ys.data(), shape_of({16})}, {expected.data(), shape_of({16})}});
  EXPECT_EQ(s8_values(got[0]), expected);
  for (int8_t v : s8_values(got[0])) EXPECT_GE(v, q.zero_point);  // real values >= 0
}

TEST(Int8Ops, LogisticAndTanhUseTflmFixedPoint) {
  const Q in{0.07f, 5};
  std::vector<int8_t> all(256);
  for (int i = 0; i < 256; ++i) all[static_cast<size_t>(i)] = static_cast<int8_t>(i - 128);
  for (const bool logistic : {true, false}) {
    Int8Builder b;
    const int x = b.q_input("x", {256}, in);
    const Q out = logistic ? Q{1.0f / 256, -128} : Q{1.0f / 128, 0};
    b.output(b.q_op(logistic ? schema::OpCode::SIGMOID : schema::OpCode::TANH, {x}, {256}, out));
    const std::vector<HostTensor> got = convert_and_run(b, {{"x", s8_tensor({256}, all)}});
    std::vector<int8_t> expected(256);
    const ref::UnaryS8Operands ops{{all.data(), shape_of({256})}, {expected.data(), shape_of({256})}};
    if (logistic) {
      ref::logistic_s8(ref::prepare_logistic_s8(in.scale, in.zero_point), ops);
    } else {
      ref::tanh_s8(ref::prepare_tanh_s8(in.scale, in.zero_point), ops);
    }
    EXPECT_EQ(s8_values(got[0]), expected) << (logistic ? "logistic" : "tanh");
  }
}

TEST(Int8Ops, MeanRescalesTheSum) {
  const Q in{0.03f, 10}, out{0.02f, -5};
  Int8Builder b;
  const int x = b.q_input("x", {2, 5, 3}, in);
  schema::ReduceOptionsT o;
  o.axes = {1};
  o.keep_dims = false;
  b.output(b.q_op(schema::OpCode::MEAN, {x}, {2, 3}, out, Int8Builder::options(o)));
  const std::vector<int8_t> xs = random_s8(30, 5);
  const std::vector<HostTensor> got = convert_and_run(b, {{"x", s8_tensor({2, 5, 3}, xs)}});
  const int32_t axes[1] = {1};
  std::vector<int8_t> expected(6);
  ref::mean_s8(ref::prepare_mean_s8(axes, 1, in.scale, in.zero_point, out.scale, out.zero_point),
               {xs.data(), shape_of({2, 5, 3})}, {expected.data(), shape_of({2, 3})},
               ref::MeanRounding::kRequantize);
  EXPECT_EQ(s8_values(got[0]), expected);
}

// On the input's grid TFLM's MEAN divides the raw sum toward zero (its
// reference_ops::Mean): 5 / 2 is 2 there, where requantizing the centered sum
// (5 - 2 * 3 = -1, half a step, rounded up) gives 3.
TEST(Int8Ops, MeanOnTheInputsGridTruncatesAsTflm) {
  const Q q{0.05f, 3};
  Int8Builder b;
  const int x = b.q_input("x", {1, 2}, q);
  schema::ReduceOptionsT o;
  o.axes = {1};
  b.output(b.q_op(schema::OpCode::MEAN, {x}, {1}, q, Int8Builder::options(o)));
  const std::vector<int8_t> xs = {2, 3};
  const std::vector<HostTensor> got = convert_and_run(b, {{"x", s8_tensor({1, 2}, xs)}});
  EXPECT_EQ(s8_values(got[0]), std::vector<int8_t>{2});
}

TEST(Int8Ops, PadFillsWithTheZeroPoint) {
  const Q q{0.1f, -37};
  Int8Builder b;
  const int x = b.q_input("x", {1, 2, 2, 1}, q);
  schema::PadOptionsT o;
  o.paddings = {0, 0, 1, 1, 1, 1, 0, 0};
  o.constant_value = 0.0f;
  b.output(b.q_op(schema::OpCode::PAD, {x}, {1, 4, 4, 1}, q, Int8Builder::options(o)));
  const std::vector<HostTensor> got = convert_and_run(b, {{"x", s8_tensor({1, 2, 2, 1}, {1, 2, 3, 4})}});
  const std::vector<int8_t> expected = {-37, -37, -37, -37, -37, 1, 2, -37, -37, 3, 4, -37, -37, -37, -37, -37};
  EXPECT_EQ(s8_values(got[0]), expected);
}

TEST(Int8Ops, QuantizeRequantizeDequantize) {
  const Q a{0.05f, 4}, c{0.11f, -9};
  Int8Builder b;
  const int x = b.input("x", {64});  // float
  const int q1 = b.q_op(schema::OpCode::QUANTIZE, {x}, {64}, a);
  const int q2 = b.q_op(schema::OpCode::QUANTIZE, {q1}, {64}, c);  // int8 -> int8
  b.output(q2);
  b.output(b.op(schema::OpCode::DEQUANTIZE, {q2}, {64}));
  const HostTensor xs = random_f32({64}, 6, -8.0f, 8.0f);
  const std::vector<HostTensor> got = convert_and_run(b, {{"x", xs}});
  ASSERT_EQ(got.size(), 2u);
  std::vector<int8_t> step1(64), step2(64);
  std::vector<float> real(64);
  ref::quantize_s8({a.scale, a.zero_point}, {reinterpret_cast<const float*>(xs.data.data()), shape_of({64})},
                   {step1.data(), shape_of({64})});
  ref::requantize_s8(ref::prepare_requantize_s8(a.scale, a.zero_point, c.scale, c.zero_point),
                     {step1.data(), shape_of({64})}, {step2.data(), shape_of({64})});
  ref::dequantize_s8({c.scale, c.zero_point}, {step2.data(), shape_of({64})}, {real.data(), shape_of({64})});
  EXPECT_EQ(s8_values(got[0]), step2);
  EXPECT_EQ(as_floats(got[1]), real);
}

TEST(Int8Ops, OpsWithoutAnInt8KernelAreRefusedAllAtOnce) {
  const Q q{0.1f, 0};
  Int8Builder b;
  const int x = b.q_input("x", {8}, q);
  const int e = b.q_op(schema::OpCode::EXP, {x}, {8}, q);
  b.output(b.q_op(schema::OpCode::SQRT, {e}, {8}, q));
  try {
    conv::derive_int8_arithmetic(&b.model);
    FAIL() << "expected a refusal";
  } catch (const conv::ConvertError& error) {
    const std::string what = error.what();
    EXPECT_EQ(error.category(), conv::ErrorCategory::kUnsupported);
    EXPECT_NE(what.find("EXP (int8)"), std::string::npos) << what;
    EXPECT_NE(what.find("SQRT (int8)"), std::string::npos) << what;
  }
}

TEST(Int8Ops, SoftmaxOutputMustBeTflitesFixedFormat) {
  Int8Builder b;
  const int x = b.q_input("x", {1, 10}, {0.1f, 0});
  b.output(b.q_op(schema::OpCode::SOFTMAX, {x}, {1, 10}, {1.0f / 255, -128}, Int8Builder::options(schema::SoftmaxOptionsT{})));
  EXPECT_THROW(conv::derive_int8_arithmetic(&b.model), conv::ConvertError);
}

}  // namespace
}  // namespace floe::testing
