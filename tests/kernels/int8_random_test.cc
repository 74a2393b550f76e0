// SPDX-License-Identifier: Apache-2.0
// floe's int8 reference kernels on seeded random cases, against an
// independent model written here: the same TFLite integer arithmetic in int64
// from its definition (round half up of a*b/2^31, round half away from zero of
// x/2^e, loops with explicit bounds checks, index arithmetic for
// broadcasting), plus float references for the fixed-point transcendental ops
// (within one output step) and the host-side preparation helpers. Also the
// size checks of the params blocks the prepare-once runtime stores.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "runtime/kernels/reference/binary.h"
#include "runtime/kernels/reference/concat.h"
#include "runtime/kernels/reference/conv2d.h"
#include "runtime/kernels/reference/depthwise_conv2d.h"
#include "runtime/kernels/reference/matmul.h"
#include "runtime/kernels/reference/pad.h"
#include "runtime/kernels/reference/pool2d.h"
#include "runtime/kernels/reference/quantization.h"
#include "runtime/kernels/reference/quantize.h"
#include "runtime/kernels/reference/reduce.h"
#include "runtime/kernels/reference/softmax.h"
#include "runtime/kernels/reference/unary.h"

namespace floe::ref {
namespace {

constexpr int kCasesPerOp = 1000;
constexpr int kHelperDraws = 200000;

// ---- params blocks: pointer-free, fixed-width, same size on every ABI ----
// Sizes are spelled out (4-byte fields only), so a field of pointer or
// size_t width, or a padding change, fails here on the 64-bit host too.
template <typename T, size_t kBytes>
constexpr bool is_params_block() {
  return sizeof(T) == kBytes && alignof(T) == 4 && std::is_trivially_copyable<T>::value &&
         std::is_standard_layout<T>::value;
}
static_assert(is_params_block<Conv2DS8Params, 12 * 4>());
static_assert(is_params_block<DepthwiseConv2DS8Params, 13 * 4>());
static_assert(is_params_block<FullyConnectedS8Params, 7 * 4>());
static_assert(is_params_block<Pool2DS8Params, 8 * 4>());
static_assert(is_params_block<SoftmaxS8Params, 3 * 4>());
static_assert(is_params_block<AddS8Params, 12 * 4>());
static_assert(is_params_block<MulS8Params, 7 * 4>());
static_assert(is_params_block<FixedPointActivationS8Params, 4 * 4>());
static_assert(is_params_block<MeanS8Params, (kMaxRank + 5) * 4>());
static_assert(is_params_block<PadS8Params, (2 * kMaxRank + 1) * 4>());
static_assert(is_params_block<ConcatS8Params, 2 * 4>());
static_assert(is_params_block<ConcatS8InputQuant, 4 * 4>());
static_assert(is_params_block<QuantizeS8Params, 2 * 4>());
static_assert(is_params_block<RequantizeS8Params, 4 * 4>());
static_assert(is_params_block<QuantizedMultiplier, 2 * 4>());

// ---- the model ----
namespace model {

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

// round(a * b / 2^31), ties toward +infinity, saturated to int32.
int64_t high_mul(int64_t a, int64_t b) {
  const int64_t q = floor_div(a * b + (int64_t{1} << 30), int64_t{1} << 31);
  return q > INT32_MAX ? INT32_MAX : q;
}

// x / 2^e rounded to nearest, ties away from zero.
int64_t divide_pot(int64_t x, int e) {
  const int64_t m = x < 0 ? -x : x;
  int64_t q = m >> e;
  const int64_t r = m - (q << e);
  if (e > 0 && 2 * r >= (int64_t{1} << e)) ++q;
  return x < 0 ? -q : q;
}

// TFLite's double-rounding requantization; the left-shifted value must fit int32.
int64_t requantize(int64_t x, int32_t multiplier, int shift) {
  const int64_t shifted = shift > 0 ? x * (int64_t{1} << shift) : x;
  EXPECT_TRUE(shifted >= INT32_MIN && shifted <= INT32_MAX) << "model precondition: " << shifted;
  return divide_pot(high_mul(shifted, multiplier), shift > 0 ? 0 : -shift);
}

int8_t clamp8(int64_t v, int64_t lo = -128, int64_t hi = 127) {
  return static_cast<int8_t>(v < lo ? lo : (v > hi ? hi : v));
}

}  // namespace model

// ---- random draws ----
class Rng {
 public:
  explicit Rng(uint32_t seed) : gen_(seed) {}
  int32_t range(int32_t lo, int32_t hi) {  // inclusive
    return std::uniform_int_distribution<int32_t>(lo, hi)(gen_);
  }
  int64_t range64(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(gen_);
  }
  bool coin(double p = 0.5) { return std::uniform_real_distribution<double>(0, 1)(gen_) < p; }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(gen_); }
  // A zero point: often one of the extremes.
  int32_t zero_point() {
    const int32_t k = range(0, 3);
    return k == 0 ? -128 : (k == 1 ? 127 : range(-128, 127));
  }
  int8_t s8() { return static_cast<int8_t>(range(-128, 127)); }
  std::vector<int8_t> s8s(int64_t n) {
    std::vector<int8_t> v(static_cast<size_t>(n));
    for (auto& x : v) x = s8();
    return v;
  }
  // A Q31 multiplier in [2^30, 2^31).
  int32_t multiplier() { return range(1 << 30, INT32_MAX); }
  // An activation range: mostly the full int8 range, sometimes narrower.
  void act_range(int32_t* lo, int32_t* hi) {
    if (coin(0.5)) {
      *lo = -128;
      *hi = 127;
      return;
    }
    int32_t a = range(-128, 127), b = range(-128, 127);
    *lo = std::min(a, b);
    *hi = std::max(a, b);
  }
  std::mt19937& gen() { return gen_; }

 private:
  std::mt19937 gen_;
};

Shape shape_of(const std::vector<int32_t>& dims) {
  return Shape{dims.data(), static_cast<int32_t>(dims.size())};
}

int64_t count_of(const std::vector<int32_t>& dims) {
  int64_t n = 1;
  for (int32_t d : dims) n *= d;
  return n;
}

// Output extent of a window walk with top/left and bottom/right padding.
int32_t out_extent(int32_t in, int32_t pad_before, int32_t pad_after, int32_t k, int32_t dilation,
                   int32_t stride) {
  const int32_t effective = (k - 1) * dilation + 1;
  const int32_t span = in + pad_before + pad_after - effective;
  return span < 0 ? 0 : span / stride + 1;
}

// ---- multiply helpers ----

TEST(Int8Arithmetic, MultiplyHelpersMatchTheModel) {
  Rng rng(1);
  const int32_t edges[] = {INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX, 1 << 30, -(1 << 30)};
  int64_t draws = 0;
  for (int i = 0; i < kHelperDraws; ++i) {
    const int32_t a = rng.coin(0.05) ? edges[rng.range(0, 7)] : rng.range(INT32_MIN, INT32_MAX);
    const int32_t b = rng.coin(0.05) ? edges[rng.range(0, 7)] : rng.range(INT32_MIN, INT32_MAX);
    ASSERT_EQ(saturating_rounding_doubling_high_mul(a, b), model::high_mul(a, b)) << a << " " << b;
    const int e = rng.range(0, 31);
    ASSERT_EQ(rounding_divide_by_pot(a, e), model::divide_pot(a, e)) << a << " " << e;
    // Requantization: shift in [-31, 7], x small enough for its left shift.
    const int shift = rng.range(-31, 7);
    const int32_t limit = shift > 0 ? (INT32_MAX >> shift) : INT32_MAX;
    const int32_t x = rng.range(-limit, limit);
    const int32_t m = rng.multiplier();
    const int32_t got = multiply_by_quantized_multiplier(x, m, shift);
    ASSERT_EQ(got, model::requantize(x, m, shift)) << x << " " << m << " " << shift;
    // And within one step of the real product (two roundings of at most 1/2).
    const double real = std::ldexp(static_cast<double>(x) * m, shift - 31);
    ASSERT_LE(std::fabs(got - real), 1.0) << x << " " << m << " " << shift;
    draws += 3;
  }
  EXPECT_EQ(saturating_rounding_doubling_high_mul(INT32_MIN, INT32_MIN), INT32_MAX);
  printf("multiply helpers: %lld draws\n", static_cast<long long>(draws));
}

TEST(Int8Arithmetic, SixtyFourBitRequantizationIsCloseToTheRealProduct) {
  Rng rng(2);
  for (int i = 0; i < kHelperDraws; ++i) {
    const int shift = rng.range(-31, 7);
    const int32_t m = rng.multiplier();
    // |x * m * 2^shift / 2^31| must fit int32; x itself below 2^47.
    const int64_t limit = std::min<int64_t>((int64_t{1} << 47) - 1,
                                            static_cast<int64_t>(std::ldexp(1.0, 30 - shift)));
    const int64_t x = rng.range64(-limit, limit);
    const int32_t got = multiply_by_quantized_multiplier_64(x, m, shift);
    // The Q15-reduced multiplier, then one round-half-up shift: the model.
    const int64_t reduced = m < 0x7FFF0000 ? (m + (1 << 15)) >> 16 : 0x7FFF;
    const int total = 15 - shift;
    const int64_t expected = model::floor_div(x * reduced + (int64_t{1} << (total - 1)),
                                              int64_t{1} << total);
    ASSERT_EQ(got, expected) << x << " " << m << " " << shift;
    // Within one step plus the error of the reduced multiplier.
    const double real = std::ldexp(static_cast<double>(x) * m, shift - 31);
    const double multiplier_error = std::fabs(static_cast<double>(m) - reduced * 65536.0);
    const double tolerance = 1.0 + std::ldexp(std::fabs(static_cast<double>(x)) * multiplier_error, shift - 31);
    ASSERT_LE(std::fabs(got - real), tolerance) << x << " " << m << " " << shift;
  }
}

TEST(Int8Arithmetic, QuantizeMultiplierIsFrexpRoundedToQ31) {
  Rng rng(3);
  for (int i = 0; i < kHelperDraws; ++i) {
    const double real = std::ldexp(rng.real(0.5, 1.0), rng.range(-40, 20));
    const QuantizedMultiplier q = quantize_multiplier(real);
    if (std::ilogb(real) + 1 < -31) {
      ASSERT_EQ(q.multiplier, 0);
      continue;
    }
    ASSERT_GE(q.multiplier, 1 << 30);
    const double represented = std::ldexp(static_cast<double>(q.multiplier), q.shift - 31);
    ASSERT_LE(std::fabs(represented - real), std::ldexp(1.0, q.shift - 32)) << real;
  }
  // Rounding up to 2^31 halves the multiplier and bumps the shift.
  const QuantizedMultiplier q = quantize_multiplier(std::nextafter(1.0, 0.0));
  EXPECT_EQ(q.multiplier, 1 << 30);
  EXPECT_EQ(q.shift, 1);
  EXPECT_EQ(quantize_multiplier(0.0).multiplier, 0);
  EXPECT_EQ(quantize_multiplier(1.0).multiplier, 1 << 30);
  EXPECT_EQ(quantize_multiplier(1.0).shift, 1);
}

TEST(Int8Arithmetic, FixedPointPiecesAgreeWithFloat) {
  // Worst errors seen, against libm in double.
  double exp_error = 0, reciprocal_error = 0, logistic_error = 0, tanh_error = 0;
  Rng rng(4);
  for (int i = 0; i < 100000; ++i) {
    // exp on [-32, 0] in Q5.26.
    const int32_t a = rng.range(INT32_MIN, 0);  // [-32, 0]
    const double x = std::ldexp(a, -26);
    const double e = std::ldexp(fixed_point::exp_on_negative_values(a, 5), -31);
    exp_error = std::max(exp_error, std::fabs(e - std::exp(x)));
    // 1/(1+x) and (1-x)/(1+x) on [0, 1].
    const int32_t f = rng.range(0, INT32_MAX);
    const double fx = std::ldexp(f, -31);
    reciprocal_error = std::max(
        {reciprocal_error,
         std::fabs(std::ldexp(fixed_point::one_over_one_plus_x_for_x_in_0_1(f), -31) - 1.0 / (1.0 + fx)),
         std::fabs(std::ldexp(fixed_point::one_minus_x_over_one_plus_x_for_x_in_0_1(f), -31) -
                   (1.0 - fx) / (1.0 + fx))});
    // logistic and tanh on [-16, 16) in Q4.27.
    const int32_t t = rng.range(INT32_MIN, INT32_MAX);
    const double tx = std::ldexp(t, -27);
    logistic_error = std::max(logistic_error, std::fabs(std::ldexp(fixed_point::logistic(t, 4), -31) -
                                                        1.0 / (1.0 + std::exp(-tx))));
    tanh_error = std::max(tanh_error, std::fabs(std::ldexp(fixed_point::tanh(t, 4), -31) - std::tanh(tx)));
  }
  printf("fixed point, worst absolute error vs double: exp %.2e, 1/(1+x) %.2e, logistic %.2e, "
         "tanh %.2e\n", exp_error, reciprocal_error, logistic_error, tanh_error);
  // A few Q0.31 steps from the polynomial and Newton-Raphson: far below the
  // 2^-8 of an int8 output step.
  EXPECT_LT(exp_error, 1e-6);
  EXPECT_LT(reciprocal_error, 1e-8);
  EXPECT_LT(logistic_error, 1e-6);
  EXPECT_LT(tanh_error, 2e-6);
}

// ---- convolutions ----

struct ConvCase {
  int32_t batches, in_h, in_w, in_c, out_c, k_h, k_w, f_in_c, out_h, out_w;
  Conv2DS8Params p;
  std::vector<int8_t> input, filter, out;
  std::vector<int32_t> bias, mult, shift;
  bool has_bias, per_channel;
};

// Geometry shared by conv and depthwise: strides, dilations, padding, sizes.
void draw_window(Rng& rng, ConvCase* c) {
  Conv2DS8Params& p = c->p;
  p.stride_h = rng.range(1, 3);
  p.stride_w = rng.range(1, 3);
  p.dilation_h = rng.range(1, 3);
  p.dilation_w = rng.range(1, 3);
  c->k_h = rng.range(1, 4);
  c->k_w = rng.range(1, 4);
  const int32_t eff_h = (c->k_h - 1) * p.dilation_h + 1, eff_w = (c->k_w - 1) * p.dilation_w + 1;
  do {
    c->in_h = rng.range(1, 10);
    c->in_w = rng.range(1, 10);
    p.pad_top = rng.range(0, eff_h - 1);
    p.pad_left = rng.range(0, eff_w - 1);
    const int32_t pad_bottom = rng.range(0, eff_h - 1), pad_right = rng.range(0, eff_w - 1);
    c->out_h = out_extent(c->in_h, p.pad_top, pad_bottom, c->k_h, p.dilation_h, p.stride_h);
    c->out_w = out_extent(c->in_w, p.pad_left, pad_right, c->k_w, p.dilation_w, p.stride_w);
  } while (c->out_h < 1 || c->out_w < 1);
  c->batches = rng.range(1, 2);
}

// Quantization shared by conv, depthwise and FC: offsets, requantization
// (shift up to +3, i.e. multipliers above 1), activation, bias.
void draw_quantization(Rng& rng, int32_t out_c, ConvCase* c) {
  Conv2DS8Params& p = c->p;
  p.input_offset = -rng.zero_point();
  p.output_offset = rng.zero_point();
  rng.act_range(&p.act_min, &p.act_max);
  c->per_channel = rng.coin();
  c->mult.resize(static_cast<size_t>(out_c));
  c->shift.resize(static_cast<size_t>(out_c));
  for (int32_t i = 0; i < out_c; ++i) {
    c->mult[i] = rng.multiplier();
    c->shift[i] = rng.range(-14, 3);
  }
  p.output_multiplier = rng.multiplier();
  p.output_shift = rng.range(-14, 3);
  c->has_bias = rng.coin(0.8);
  c->bias.resize(static_cast<size_t>(out_c));
  for (auto& b : c->bias) b = rng.range(-70000, 70000);
}

int8_t model_output(const ConvCase& c, int64_t acc, int32_t oc) {
  if (c.has_bias) acc += c.bias[oc];
  const int32_t m = c.per_channel ? c.mult[oc] : c.p.output_multiplier;
  const int s = c.per_channel ? c.shift[oc] : c.p.output_shift;
  return model::clamp8(model::requantize(acc, m, s) + c.p.output_offset, c.p.act_min, c.p.act_max);
}

TEST(Int8Random, Conv2D) {
  Rng rng(10);
  int64_t outputs = 0;
  for (int t = 0; t < kCasesPerOp; ++t) {
    ConvCase c{};
    draw_window(rng, &c);
    const int32_t groups = rng.range(1, 3);
    c.f_in_c = rng.range(1, 4);
    c.in_c = groups * c.f_in_c;
    c.out_c = groups * rng.range(1, 3);
    draw_quantization(rng, c.out_c, &c);
    c.input = rng.s8s(int64_t{c.batches} * c.in_h * c.in_w * c.in_c);
    c.filter = rng.s8s(int64_t{c.out_c} * c.k_h * c.k_w * c.f_in_c);
    c.out.assign(static_cast<size_t>(int64_t{c.batches} * c.out_h * c.out_w * c.out_c), 0);
    const std::vector<int32_t> in_dims{c.batches, c.in_h, c.in_w, c.in_c};
    const std::vector<int32_t> f_dims{c.k_h, c.k_w, c.f_in_c, c.out_c};
    const std::vector<int32_t> b_dims{c.out_c};
    const std::vector<int32_t> out_dims{c.batches, c.out_h, c.out_w, c.out_c};
    conv2d_s8(c.p, {{c.input.data(), shape_of(in_dims)},
                    {c.filter.data(), shape_of(f_dims)},
                    {c.has_bias ? c.bias.data() : nullptr, shape_of(b_dims)},
                    c.per_channel ? c.mult.data() : nullptr,
                    c.per_channel ? c.shift.data() : nullptr,
                    {c.out.data(), shape_of(out_dims)}});
    const int32_t per_group = c.out_c / groups;
    size_t i = 0;
    for (int32_t n = 0; n < c.batches; ++n)
      for (int32_t oy = 0; oy < c.out_h; ++oy)
        for (int32_t ox = 0; ox < c.out_w; ++ox)
          for (int32_t oc = 0; oc < c.out_c; ++oc, ++i) {
            int64_t acc = 0;
            for (int32_t ky = 0; ky < c.k_h; ++ky)
              for (int32_t kx = 0; kx < c.k_w; ++kx) {
                const int32_t iy = oy * c.p.stride_h - c.p.pad_top + ky * c.p.dilation_h;
                const int32_t ix = ox * c.p.stride_w - c.p.pad_left + kx * c.p.dilation_w;
                if (iy < 0 || iy >= c.in_h || ix < 0 || ix >= c.in_w) continue;
                for (int32_t ic = 0; ic < c.f_in_c; ++ic) {
                  const int32_t channel = (oc / per_group) * c.f_in_c + ic;
                  const int64_t x = c.input[((int64_t{n} * c.in_h + iy) * c.in_w + ix) * c.in_c + channel];
                  const int64_t w = c.filter[((int64_t{ky} * c.k_w + kx) * c.f_in_c + ic) * c.out_c + oc];
                  acc += w * (x + c.p.input_offset);
                }
              }
            ASSERT_EQ(c.out[i], model_output(c, acc, oc)) << "case " << t << " output " << i;
          }
    outputs += static_cast<int64_t>(c.out.size());
  }
  printf("conv2d_s8: %d cases, %lld outputs\n", kCasesPerOp, static_cast<long long>(outputs));
}

TEST(Int8Random, DepthwiseConv2D) {
  Rng rng(11);
  int64_t outputs = 0;
  for (int t = 0; t < kCasesPerOp; ++t) {
    ConvCase c{};
    draw_window(rng, &c);
    c.in_c = rng.range(1, 5);
    const int32_t depth_multiplier = rng.range(1, 3);
    c.out_c = c.in_c * depth_multiplier;
    draw_quantization(rng, c.out_c, &c);
    const Conv2DS8Params& g = c.p;
    DepthwiseConv2DS8Params p{g.stride_h,     g.stride_w,      g.dilation_h,        g.dilation_w,
                              g.pad_top,      g.pad_left,      depth_multiplier,    g.input_offset,
                              g.output_offset, g.output_multiplier, g.output_shift, g.act_min,
                              g.act_max};
    c.input = rng.s8s(int64_t{c.batches} * c.in_h * c.in_w * c.in_c);
    c.filter = rng.s8s(int64_t{c.k_h} * c.k_w * c.out_c);
    c.out.assign(static_cast<size_t>(int64_t{c.batches} * c.out_h * c.out_w * c.out_c), 0);
    const std::vector<int32_t> in_dims{c.batches, c.in_h, c.in_w, c.in_c};
    const std::vector<int32_t> f_dims{c.k_h, c.k_w, c.in_c, depth_multiplier};
    const std::vector<int32_t> b_dims{c.out_c};
    const std::vector<int32_t> out_dims{c.batches, c.out_h, c.out_w, c.out_c};
    depthwise_conv2d_s8(p, {{c.input.data(), shape_of(in_dims)},
                            {c.filter.data(), shape_of(f_dims)},
                            {c.has_bias ? c.bias.data() : nullptr, shape_of(b_dims)},
                            c.per_channel ? c.mult.data() : nullptr,
                            c.per_channel ? c.shift.data() : nullptr,
                            {c.out.data(), shape_of(out_dims)}});
    size_t i = 0;
    for (int32_t n = 0; n < c.batches; ++n)
      for (int32_t oy = 0; oy < c.out_h; ++oy)
        for (int32_t ox = 0; ox < c.out_w; ++ox)
          for (int32_t oc = 0; oc < c.out_c; ++oc, ++i) {
            int64_t acc = 0;
            for (int32_t ky = 0; ky < c.k_h; ++ky)
              for (int32_t kx = 0; kx < c.k_w; ++kx) {
                const int32_t iy = oy * g.stride_h - g.pad_top + ky * g.dilation_h;
                const int32_t ix = ox * g.stride_w - g.pad_left + kx * g.dilation_w;
                if (iy < 0 || iy >= c.in_h || ix < 0 || ix >= c.in_w) continue;
                const int64_t x =
                    c.input[((int64_t{n} * c.in_h + iy) * c.in_w + ix) * c.in_c + oc / depth_multiplier];
                const int64_t w = c.filter[(int64_t{ky} * c.k_w + kx) * c.out_c + oc];
                acc += w * (x + g.input_offset);
              }
            ASSERT_EQ(c.out[i], model_output(c, acc, oc)) << "case " << t << " output " << i;
          }
    outputs += static_cast<int64_t>(c.out.size());
  }
  printf("depthwise_conv2d_s8: %d cases, %lld outputs\n", kCasesPerOp,
         static_cast<long long>(outputs));
}

TEST(Int8Random, FullyConnected) {
  Rng rng(12);
  int64_t outputs = 0;
  for (int t = 0; t < kCasesPerOp; ++t) {
    ConvCase c{};
    const int32_t depth = rng.range(1, 48), out_n = rng.range(1, 12);
    // Leading dims: one or two batch dims.
    std::vector<int32_t> in_dims, out_dims;
    if (rng.coin()) {
      in_dims = {rng.range(1, 4), depth};
    } else {
      in_dims = {rng.range(1, 3), rng.range(1, 3), depth};
    }
    out_dims = in_dims;
    out_dims.back() = out_n;
    draw_quantization(rng, out_n, &c);
    const int32_t filter_offset = rng.coin(0.3) ? -rng.range(-20, 20) : 0;
    FullyConnectedS8Params p{c.p.input_offset, filter_offset, c.p.output_offset,
                             c.p.output_multiplier, c.p.output_shift, c.p.act_min, c.p.act_max};
    const int64_t batches = count_of(in_dims) / depth;
    c.input = rng.s8s(count_of(in_dims));
    // Asymmetric weights keep w + filter_offset within int8's span.
    c.filter = rng.s8s(int64_t{out_n} * depth);
    c.out.assign(static_cast<size_t>(count_of(out_dims)), 0);
    const std::vector<int32_t> f_dims{out_n, depth};
    const std::vector<int32_t> b_dims{out_n};
    fully_connected_s8(p, {{c.input.data(), shape_of(in_dims)},
                           {c.filter.data(), shape_of(f_dims)},
                           {c.has_bias ? c.bias.data() : nullptr, shape_of(b_dims)},
                           c.per_channel ? c.mult.data() : nullptr,
                           c.per_channel ? c.shift.data() : nullptr,
                           {c.out.data(), shape_of(out_dims)}});
    for (int64_t b = 0; b < batches; ++b)
      for (int32_t n = 0; n < out_n; ++n) {
        int64_t acc = 0;
        for (int32_t k = 0; k < depth; ++k) {
          acc += (int64_t{c.filter[n * depth + k]} + filter_offset) *
                 (int64_t{c.input[b * depth + k]} + p.input_offset);
        }
        ASSERT_EQ(c.out[b * out_n + n], model_output(c, acc, n)) << "case " << t;
      }
    outputs += static_cast<int64_t>(c.out.size());
  }
  printf("fully_connected_s8: %d cases, %lld outputs\n", kCasesPerOp,
         static_cast<long long>(outputs));
}

// ---- pooling ----

TEST(Int8Random, Pooling) {
  Rng rng(13);
  int64_t outputs = 0;
  for (int t = 0; t < 2 * kCasesPerOp; ++t) {
    const bool is_max = t % 2 == 0;
    Pool2DS8Params p{};
    p.filter_h = rng.range(1, 5);
    p.filter_w = rng.range(1, 5);
    p.stride_h = rng.range(1, 3);
    p.stride_w = rng.range(1, 3);
    int32_t in_h, in_w, out_h, out_w;
    do {
      in_h = rng.range(1, 12);
      in_w = rng.range(1, 12);
      p.pad_top = rng.range(0, p.filter_h - 1);
      p.pad_left = rng.range(0, p.filter_w - 1);
      out_h = out_extent(in_h, p.pad_top, rng.range(0, p.filter_h - 1), p.filter_h, 1, p.stride_h);
      out_w = out_extent(in_w, p.pad_left, rng.range(0, p.filter_w - 1), p.filter_w, 1, p.stride_w);
    } while (out_h < 1 || out_w < 1);
    rng.act_range(&p.act_min, &p.act_max);
    const int32_t batches = rng.range(1, 3), ch = rng.range(1, 5);
    const std::vector<int32_t> in_dims{batches, in_h, in_w, ch};
    const std::vector<int32_t> out_dims{batches, out_h, out_w, ch};
    const std::vector<int8_t> input = rng.s8s(count_of(in_dims));
    std::vector<int8_t> out(static_cast<size_t>(count_of(out_dims)));
    (is_max ? max_pool2d_s8 : avg_pool2d_s8)(
        p, {{input.data(), shape_of(in_dims)}, {out.data(), shape_of(out_dims)}});
    size_t i = 0;
    for (int32_t n = 0; n < batches; ++n)
      for (int32_t oy = 0; oy < out_h; ++oy)
        for (int32_t ox = 0; ox < out_w; ++ox)
          for (int32_t c = 0; c < ch; ++c, ++i) {
            int64_t sum = 0, count = 0, best = -1000;
            for (int32_t ky = 0; ky < p.filter_h; ++ky)
              for (int32_t kx = 0; kx < p.filter_w; ++kx) {
                const int32_t iy = oy * p.stride_h - p.pad_top + ky;
                const int32_t ix = ox * p.stride_w - p.pad_left + kx;
                if (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w) continue;
                const int64_t v = input[((int64_t{n} * in_h + iy) * in_w + ix) * ch + c];
                sum += v;
                ++count;
                best = std::max(best, v);
              }
            ASSERT_GT(count, 0);
            const int64_t value = is_max ? best : [&] {
              // sum / count rounded half away from zero.
              const int64_t m = sum < 0 ? -sum : sum;
              int64_t q = m / count;
              if (2 * (m % count) >= count) ++q;
              return sum < 0 ? -q : q;
            }();
            ASSERT_EQ(out[i], model::clamp8(value, p.act_min, p.act_max))
                << (is_max ? "max" : "avg") << " case " << t << " output " << i;
          }
    outputs += static_cast<int64_t>(out.size());
  }
  printf("max/avg pool2d_s8: %d + %d cases, %lld outputs\n", kCasesPerOp, kCasesPerOp,
         static_cast<long long>(outputs));
}

// ---- element-wise with broadcasting ----

struct BroadcastCase {
  std::vector<int32_t> a_dims, b_dims, out_dims;
};

// Output rank 1-5, dims 1-4; each operand right-aligned, maybe shorter, with
// some dims 1.
BroadcastCase draw_broadcast(Rng& rng) {
  BroadcastCase c;
  const int rank = rng.range(1, 5);
  for (int i = 0; i < rank; ++i) c.out_dims.push_back(rng.range(1, 4));
  for (std::vector<int32_t>* operand : {&c.a_dims, &c.b_dims}) {
    const int r = rng.coin(0.7) ? rank : rng.range(0, rank);
    for (int i = rank - r; i < rank; ++i) operand->push_back(rng.coin(0.3) ? 1 : c.out_dims[i]);
  }
  // The output is the broadcast of the two: a dim neither operand has is 1.
  for (int i = 0; i < rank; ++i) {
    const int ia = i - (rank - static_cast<int>(c.a_dims.size()));
    const int ib = i - (rank - static_cast<int>(c.b_dims.size()));
    const int32_t da = ia >= 0 ? c.a_dims[ia] : 1, db = ib >= 0 ? c.b_dims[ib] : 1;
    c.out_dims[i] = std::max(da, db);
  }
  return c;
}

// The operand's flat index of output element `flat` (right-aligned, size-1 dims broadcast).
int64_t broadcast_index(const std::vector<int32_t>& operand, const std::vector<int32_t>& out,
                        int64_t flat) {
  int64_t index = 0, step = 1;
  const int offset = static_cast<int>(out.size() - operand.size());
  for (int d = static_cast<int>(out.size()) - 1; d >= 0; --d) {
    const int64_t coord = flat % out[d];
    flat /= out[d];
    const int od = d - offset;
    if (od < 0) continue;
    if (operand[od] != 1) index += coord * step;
    step *= operand[od];
  }
  return index;
}

template <typename Kernel, typename Model>
int64_t run_broadcast_cases(uint32_t seed, Kernel kernel, Model model_fn) {
  Rng rng(seed);
  int64_t outputs = 0;
  for (int t = 0; t < kCasesPerOp; ++t) {
    const BroadcastCase bc = draw_broadcast(rng);
    const std::vector<int8_t> a = rng.s8s(count_of(bc.a_dims)), b = rng.s8s(count_of(bc.b_dims));
    std::vector<int8_t> out(static_cast<size_t>(count_of(bc.out_dims)));
    const auto params = kernel.draw(rng);
    kernel.run(params, BinaryS8Operands{{a.data(), shape_of(bc.a_dims)},
                                        {b.data(), shape_of(bc.b_dims)},
                                        {out.data(), shape_of(bc.out_dims)}});
    for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) {
      const int8_t x = a[broadcast_index(bc.a_dims, bc.out_dims, i)];
      const int8_t y = b[broadcast_index(bc.b_dims, bc.out_dims, i)];
      EXPECT_EQ(out[i], model_fn(params, x, y)) << "case " << t << " element " << i << " shapes "
          << ::testing::PrintToString(bc.a_dims) << " " << ::testing::PrintToString(bc.b_dims)
          << " -> " << ::testing::PrintToString(bc.out_dims);
      if (out[i] != model_fn(params, x, y)) return outputs;
    }
    outputs += static_cast<int64_t>(out.size());
  }
  return outputs;
}

struct ScaledOperands {
  float s1, s2, so;
  int32_t z1, z2, zo;
  Activation act;
};

ScaledOperands draw_scales(Rng& rng) {
  ScaledOperands s;
  s.s1 = static_cast<float>(std::ldexp(rng.real(0.5, 1.0), rng.range(-10, 0)));
  s.s2 = static_cast<float>(std::ldexp(rng.real(0.5, 1.0), rng.range(-10, 0)));
  s.so = static_cast<float>(std::ldexp(rng.real(0.5, 1.0), rng.range(-10, 1)));
  s.z1 = rng.zero_point();
  s.z2 = rng.zero_point();
  s.zo = rng.zero_point();
  s.act = static_cast<Activation>(rng.range(0, 2));
  return s;
}

int8_t model_add(const AddS8Params& p, int8_t x, int8_t y, bool subtract) {
  const int64_t a = model::requantize((x + p.input1_offset) * (int64_t{1} << p.left_shift),
                                      p.input1_multiplier, p.input1_shift);
  const int64_t b = model::requantize((y + p.input2_offset) * (int64_t{1} << p.left_shift),
                                      p.input2_multiplier, p.input2_shift);
  return model::clamp8(
      model::requantize(subtract ? a - b : a + b, p.output_multiplier, p.output_shift) +
          p.output_offset,
      p.act_min, p.act_max);
}

struct AddKernel {
  bool subtract;
  AddS8Params draw(Rng& rng) const {
    const ScaledOperands s = draw_scales(rng);
    return prepare_add_s8(s.s1, s.z1, s.s2, s.z2, s.so, s.zo, s.act);
  }
  void run(const AddS8Params& p, const BinaryS8Operands& ops) const {
    (subtract ? sub_s8 : add_s8)(p, ops);
  }
};

TEST(Int8Random, AddSub) {
  const int64_t adds = run_broadcast_cases(20, AddKernel{false}, [](const AddS8Params& p, int8_t x, int8_t y) {
    return model_add(p, x, y, false);
  });
  const int64_t subs = run_broadcast_cases(21, AddKernel{true}, [](const AddS8Params& p, int8_t x, int8_t y) {
    return model_add(p, x, y, true);
  });
  printf("add_s8 / sub_s8: %d + %d cases, %lld + %lld outputs\n", kCasesPerOp, kCasesPerOp,
         static_cast<long long>(adds), static_cast<long long>(subs));
}

TEST(Int8Random, AddIsWithinOneStepOfRealArithmetic) {
  Rng rng(22);
  for (int t = 0; t < kCasesPerOp; ++t) {
    const ScaledOperands s = draw_scales(rng);
    const AddS8Params p = prepare_add_s8(s.s1, s.z1, s.s2, s.z2, s.so, s.zo, Activation::kNone);
    const int8_t x = rng.s8(), y = rng.s8();
    int8_t out = 0;
    const int32_t one = 1;
    add_s8(p, {{&x, {&one, 1}}, {&y, {&one, 1}}, {&out, {&one, 1}}});
    const double real = s.s1 * (x - s.z1) + s.s2 * (y - s.z2);
    const double q = std::max(-128.0, std::min(127.0, std::round(real / s.so) + s.zo));
    ASSERT_LE(std::fabs(out - q), 1.0) << "case " << t;
  }
}

struct MulKernel {
  MulS8Params draw(Rng& rng) const {
    const ScaledOperands s = draw_scales(rng);
    return prepare_mul_s8(s.s1, s.z1, s.s2, s.z2, s.so, s.zo, s.act);
  }
  void run(const MulS8Params& p, const BinaryS8Operands& ops) const { mul_s8(p, ops); }
};

TEST(Int8Random, Mul) {
  const int64_t n = run_broadcast_cases(23, MulKernel{}, [](const MulS8Params& p, int8_t x, int8_t y) {
    const int64_t product = (int64_t{x} + p.input1_offset) * (int64_t{y} + p.input2_offset);
    return model::clamp8(model::requantize(product, p.output_multiplier, p.output_shift) +
                             p.output_offset,
                         p.act_min, p.act_max);
  });
  printf("mul_s8: %d cases, %lld outputs\n", kCasesPerOp, static_cast<long long>(n));
}

struct MinMaxKernel {
  bool is_max;
  int draw(Rng&) const { return 0; }
  void run(int, const BinaryS8Operands& ops) const {
    (is_max ? quantized_extremum<true, BinaryS8Operands> : quantized_extremum<false, BinaryS8Operands>)(ops);
  }
};

TEST(Int8Random, MaximumMinimum) {
  const int64_t a = run_broadcast_cases(24, MinMaxKernel{true},
                                        [](int, int8_t x, int8_t y) { return std::max(x, y); });
  const int64_t b = run_broadcast_cases(25, MinMaxKernel{false},
                                        [](int, int8_t x, int8_t y) { return std::min(x, y); });
  printf("quantized_extremum (int8 MAXIMUM / MINIMUM): %d + %d cases, %lld + %lld outputs\n", kCasesPerOp, kCasesPerOp,
         static_cast<long long>(a), static_cast<long long>(b));
}

// ---- softmax, logistic, tanh: within one output step of float ----

TEST(Int8Random, SoftmaxWithinOneStepOfFloat) {
  Rng rng(30);
  int64_t outputs = 0;
  int off_by_one = 0;
  for (int t = 0; t < kCasesPerOp; ++t) {
    const float scale = static_cast<float>(std::ldexp(rng.real(0.5, 1.0), rng.range(-8, -1)));
    const double beta = rng.coin(0.7) ? 1.0 : rng.real(0.25, 2.0);
    const SoftmaxS8Params p = prepare_softmax_s8(beta, scale);
    const int32_t rows = rng.range(1, 3), depth = rng.range(1, 40);
    const std::vector<int32_t> dims{rows, depth};
    const std::vector<int8_t> input = rng.s8s(count_of(dims));
    std::vector<int8_t> out(input.size());
    softmax_s8(p, {{input.data(), shape_of(dims)}, {out.data(), shape_of(dims)}});
    for (int32_t r = 0; r < rows; ++r) {
      const int8_t* x = input.data() + r * depth;
      int32_t max_value = -128;
      for (int32_t c = 0; c < depth; ++c) max_value = std::max<int32_t>(max_value, x[c]);
      double sum = 0;
      for (int32_t c = 0; c < depth; ++c) sum += std::exp(beta * scale * (x[c] - max_value));
      for (int32_t c = 0; c < depth; ++c) {
        const double prob = std::exp(beta * scale * (x[c] - max_value)) / sum;
        const double q = std::min(127.0, std::round(prob * 256.0) - 128.0);
        const int8_t got = out[r * depth + c];
        ASSERT_LE(std::fabs(got - q), 1.0) << "case " << t << " p=" << prob;
        off_by_one += got != q;
      }
    }
    outputs += static_cast<int64_t>(out.size());
  }
  printf("softmax_s8: %d cases, %lld outputs, %d one step off float\n", kCasesPerOp,
         static_cast<long long>(outputs), off_by_one);
}

TEST(Int8Random, LogisticAndTanhWithinOneStepOfFloat) {
  Rng rng(31);
  int64_t outputs = 0;
  int off_logistic = 0, off_tanh = 0;
  for (int t = 0; t < kCasesPerOp; ++t) {
    const float scale = static_cast<float>(std::ldexp(rng.real(0.5, 1.0), rng.range(-9, -1)));
    const int32_t zero_point = rng.zero_point();
    const std::vector<int32_t> dims{rng.range(1, 64)};
    const std::vector<int8_t> input = rng.s8s(dims[0]);
    std::vector<int8_t> logistic(input.size()), tanh_out(input.size());
    logistic_s8(prepare_logistic_s8(scale, zero_point),
                {{input.data(), shape_of(dims)}, {logistic.data(), shape_of(dims)}});
    tanh_s8(prepare_tanh_s8(scale, zero_point),
            {{input.data(), shape_of(dims)}, {tanh_out.data(), shape_of(dims)}});
    for (size_t i = 0; i < input.size(); ++i) {
      const double x = static_cast<double>(scale) * (input[i] - zero_point);
      const double ql = std::min(127.0, std::round(256.0 / (1.0 + std::exp(-x))) - 128.0);
      const double qt = std::max(-128.0, std::min(127.0, std::round(128.0 * std::tanh(x))));
      ASSERT_LE(std::fabs(logistic[i] - ql), 1.0) << "case " << t << " x=" << x;
      ASSERT_LE(std::fabs(tanh_out[i] - qt), 1.0) << "case " << t << " x=" << x;
      off_logistic += logistic[i] != ql;
      off_tanh += tanh_out[i] != qt;
    }
    outputs += static_cast<int64_t>(input.size());
  }
  printf("logistic_s8 / tanh_s8: %d cases, %lld outputs each, one step off float: %d / %d\n",
         kCasesPerOp, static_cast<long long>(outputs), off_logistic, off_tanh);
}

// ---- MEAN, PAD, CONCAT ----

TEST(Int8Random, Mean) {
  Rng rng(40);
  int64_t outputs = 0;
  for (int t = 0; t < kCasesPerOp; ++t) {
    const int rank = rng.range(1, 4);
    std::vector<int32_t> dims;
    for (int i = 0; i < rank; ++i) dims.push_back(rng.range(1, 6));
    std::vector<int32_t> axes;
    for (int i = 0; i < rank; ++i) {
      if (rng.coin()) axes.push_back(i);
    }
    if (axes.empty()) axes.push_back(rng.range(0, rank - 1));
    const bool same = rng.coin(0.4);
    const float in_scale = static_cast<float>(rng.real(0.01, 1.0));
    const float out_scale = same ? in_scale : static_cast<float>(rng.real(0.01, 1.0));
    const int32_t in_zp = rng.zero_point();
    const int32_t out_zp = same ? in_zp : rng.zero_point();
    const MeanS8Params p = prepare_mean_s8(axes.data(), static_cast<int32_t>(axes.size()), in_scale,
                                           in_zp, out_scale, out_zp);
    std::vector<int32_t> out_dims;  // keep_dims
    for (int i = 0; i < rank; ++i) {
      out_dims.push_back(std::find(axes.begin(), axes.end(), i) != axes.end() ? 1 : dims[i]);
    }
    const std::vector<int8_t> input = rng.s8s(count_of(dims));
    std::vector<int8_t> out(static_cast<size_t>(count_of(out_dims)));
    ASSERT_EQ(mean_keeps_grid(p), same);
    mean_s8(p, {input.data(), shape_of(dims)}, {out.data(), shape_of(out_dims)},
            same ? MeanRounding::kTruncateSum : MeanRounding::kRequantize);
    // Model: bucket every input element into its output by coordinates.
    std::vector<int64_t> sums(out.size(), 0);
    const int64_t count = count_of(dims) / count_of(out_dims);
    for (int64_t i = 0; i < count_of(dims); ++i) {
      int64_t rest = i, o = 0, step = 1;
      for (int d = rank - 1; d >= 0; --d) {
        const int64_t coord = rest % dims[d];
        rest /= dims[d];
        o += (out_dims[d] == 1 ? 0 : coord) * step;
        step *= out_dims[d];
      }
      sums[o] += input[i];
    }
    for (size_t o = 0; o < out.size(); ++o) {
      int s = 0;
      while ((int64_t{1} << (s + 1)) <= count) ++s;
      s = std::min({s, 32, 31 + p.shift});
      const int32_t m = static_cast<int32_t>((int64_t{p.multiplier} << s) / count);
      // On the input's grid TFLM divides the raw sum in C++ (toward zero);
      // otherwise it requantizes the centered sum.
      const int64_t expected = same ? sums[o] / count
                                    : model::requantize(sums[o] - int64_t{in_zp} * count, m, p.shift - s) + out_zp;
      ASSERT_EQ(out[o], model::clamp8(expected)) << "case " << t << " output " << o;
      // And within one step of the real mean (the folded 1/count costs a
      // little precision for large counts).
      const double real = std::round(static_cast<double>(in_scale) / out_scale *
                                     (static_cast<double>(sums[o]) / count - in_zp)) + out_zp;
      ASSERT_LE(std::fabs(out[o] - std::max(-128.0, std::min(127.0, real))), 1.0)
          << "case " << t << " output " << o;
    }
    outputs += static_cast<int64_t>(out.size());
  }
  // An empty reduced axis: outputs are 0, as TFLM's zero-initialized buffer.
  const std::vector<int32_t> empty_dims{3, 0}, empty_out{3, 1};
  const int32_t axis = 1;
  const MeanS8Params p = prepare_mean_s8(&axis, 1, 0.5f, 7, 0.25f, -3);
  int8_t empty_result[3] = {55, 55, 55};
  mean_s8(p, {nullptr, shape_of(empty_dims)}, {empty_result, shape_of(empty_out)}, MeanRounding::kRequantize);
  for (int8_t v : empty_result) EXPECT_EQ(v, 0);
  printf("mean_s8: %d cases, %lld outputs\n", kCasesPerOp, static_cast<long long>(outputs));
}

TEST(Int8Random, Pad) {
  Rng rng(41);
  int64_t outputs = 0;
  for (int t = 0; t < kCasesPerOp; ++t) {
    const int rank = rng.range(1, 5);
    std::vector<int32_t> dims, out_dims;
    PadS8Params p{};
    for (int d = 0; d < rank; ++d) {
      dims.push_back(rng.range(1, 4));
      p.paddings[2 * d] = rng.range(0, 2);
      p.paddings[2 * d + 1] = rng.range(0, 2);
      out_dims.push_back(dims[d] + p.paddings[2 * d] + p.paddings[2 * d + 1]);
    }
    p.pad_value = rng.zero_point();
    const std::vector<int8_t> input = rng.s8s(count_of(dims));
    std::vector<int8_t> out(static_cast<size_t>(count_of(out_dims)));
    pad_s8(p, {input.data(), shape_of(dims)}, {out.data(), shape_of(out_dims)});
    for (int64_t o = 0; o < static_cast<int64_t>(out.size()); ++o) {
      int64_t rest = o, i = 0, step = 1;
      bool border = false;
      for (int d = rank - 1; d >= 0; --d) {
        const int64_t coord = rest % out_dims[d] - p.paddings[2 * d];
        rest /= out_dims[d];
        border = border || coord < 0 || coord >= dims[d];
        i += coord * step;
        step *= dims[d];
      }
      ASSERT_EQ(out[o], border ? p.pad_value : input[i]) << "case " << t;
    }
    outputs += static_cast<int64_t>(out.size());
  }
  printf("pad_s8: %d cases, %lld outputs\n", kCasesPerOp, static_cast<long long>(outputs));
}

TEST(Int8Random, Concat) {
  Rng rng(42);
  int64_t outputs = 0, requantized = 0;
  for (int t = 0; t < kCasesPerOp; ++t) {
    const int rank = rng.range(1, 4);
    const int32_t axis = rng.range(0, rank - 1);
    std::vector<int32_t> base;
    for (int d = 0; d < rank; ++d) base.push_back(rng.range(1, 4));
    const int count = rng.range(1, 4);
    const float out_scale = static_cast<float>(rng.real(0.01, 1.0));
    const int32_t out_zp = rng.zero_point();
    std::vector<std::vector<int32_t>> dims(count, base);
    std::vector<std::vector<int8_t>> data(count);
    std::vector<In<int8_t>> inputs;
    std::vector<ConcatS8InputQuant> quant;
    std::vector<float> scales;
    std::vector<int32_t> zps;
    std::vector<int32_t> out_dims = base;
    out_dims[axis] = 0;
    for (int i = 0; i < count; ++i) {
      dims[i][axis] = rng.range(0, 3);
      out_dims[axis] += dims[i][axis];
      data[i] = rng.s8s(count_of(dims[i]));
      const bool identity = rng.coin(0.3);
      scales.push_back(identity ? out_scale : static_cast<float>(rng.real(0.01, 1.0)));
      zps.push_back(identity ? out_zp : rng.zero_point());
      quant.push_back(prepare_concat_input_s8(scales[i], zps[i], out_scale, out_zp));
      EXPECT_EQ(quant[i].identity, identity ? 1 : 0);
    }
    for (int i = 0; i < count; ++i) inputs.push_back({data[i].data(), shape_of(dims[i])});
    std::vector<int8_t> out(static_cast<size_t>(count_of(out_dims)));
    concat_s8({axis, out_zp}, inputs.data(), quant.data(), count, {out.data(), shape_of(out_dims)});
    // Model: walk the output by coordinates and find the input along the axis.
    for (int64_t o = 0; o < static_cast<int64_t>(out.size()); ++o) {
      std::vector<int64_t> coord(rank);
      int64_t rest = o;
      for (int d = rank - 1; d >= 0; --d) {
        coord[d] = rest % out_dims[d];
        rest /= out_dims[d];
      }
      int which = 0;
      while (coord[axis] >= dims[which][axis]) coord[axis] -= dims[which++][axis];
      int64_t flat = 0;
      for (int d = 0; d < rank; ++d) flat = flat * dims[which][d] + coord[d];
      const int8_t v = data[which][flat];
      int8_t expected = v;
      if (!quant[which].identity) {
        expected = model::clamp8(
            model::requantize(v - zps[which], quant[which].multiplier, quant[which].shift) + out_zp);
        // And within one step of the real rescale.
        const double real = std::round(static_cast<double>(scales[which]) / out_scale * (v - zps[which])) + out_zp;
        EXPECT_LE(std::fabs(expected - std::max(-128.0, std::min(127.0, real))), 1.0);
        ++requantized;
      }
      ASSERT_EQ(out[o], expected) << "case " << t << " output " << o;
    }
    outputs += static_cast<int64_t>(out.size());
  }
  printf("concat_s8: %d cases, %lld outputs (%lld requantized)\n", kCasesPerOp,
         static_cast<long long>(outputs), static_cast<long long>(requantized));
}

// ---- QUANTIZE / DEQUANTIZE / requantize ----

TEST(Int8Random, QuantizeDequantizeRequantize) {
  Rng rng(50);
  int64_t values = 0;
  for (int t = 0; t < kCasesPerOp; ++t) {
    const float scale = static_cast<float>(std::ldexp(rng.real(0.5, 1.0), rng.range(-12, 2)));
    const int32_t zp = rng.zero_point();
    const std::vector<int32_t> dims{rng.range(1, 64)};
    std::vector<float> x(static_cast<size_t>(dims[0]));
    for (auto& v : x) {
      const int k = rng.range(0, 19);
      v = k == 0 ? std::numeric_limits<float>::infinity()
        : k == 1 ? -std::numeric_limits<float>::infinity()
        : k == 2 ? std::numeric_limits<float>::quiet_NaN()
        // Exact half steps, to pin the tie rounding.
        : k == 3 ? scale * (static_cast<float>(rng.range(-300, 300)) + 0.5f)
        : static_cast<float>(scale * rng.real(-300, 300));
    }
    std::vector<int8_t> q(x.size());
    quantize_s8({scale, zp}, {x.data(), shape_of(dims)}, {q.data(), shape_of(dims)});
    for (size_t i = 0; i < x.size(); ++i) {
      int8_t expected;
      if (std::isnan(x[i])) {
        expected = model::clamp8(zp);
      } else {
        const float steps = std::round(x[i] / scale);  // float division, ties away from zero
        expected = std::isinf(steps) ? (steps > 0 ? 127 : -128)
                                     : model::clamp8(static_cast<int64_t>(steps) + zp);
      }
      ASSERT_EQ(q[i], expected) << "x=" << x[i] << " scale=" << scale << " zp=" << zp;
    }
    // DEQUANTIZE: TFLite computes the product in double and rounds to float once.
    const std::vector<int8_t> qi = rng.s8s(dims[0]);
    std::vector<float> back(qi.size());
    dequantize_s8({scale, zp}, {qi.data(), shape_of(dims)}, {back.data(), shape_of(dims)});
    for (size_t i = 0; i < qi.size(); ++i) {
      const float expected = static_cast<float>(static_cast<double>(scale) * (qi[i] - zp));
      ASSERT_EQ(std::memcmp(&back[i], &expected, sizeof(float)), 0) << back[i] << " " << expected;
    }
    // Requantize int8 -> int8 with other parameters (model + within one step).
    const float out_scale = static_cast<float>(std::ldexp(rng.real(0.5, 1.0), rng.range(-12, 2)));
    const int32_t out_zp = rng.zero_point();
    const RequantizeS8Params rp = prepare_requantize_s8(scale, zp, out_scale, out_zp);
    std::vector<int8_t> rq(qi.size());
    requantize_s8(rp, {qi.data(), shape_of(dims)}, {rq.data(), shape_of(dims)});
    for (size_t i = 0; i < qi.size(); ++i) {
      const int8_t expected =
          model::clamp8(model::requantize(qi[i] - zp, rp.multiplier, rp.shift) + out_zp);
      ASSERT_EQ(rq[i], expected);
      const double real = std::round(static_cast<double>(scale) / out_scale * (qi[i] - zp)) + out_zp;
      ASSERT_LE(std::fabs(rq[i] - std::max(-128.0, std::min(127.0, real))), 1.0);
    }
    values += 3 * dims[0];
  }
  printf("quantize/dequantize/requantize: %d cases each, %lld values\n", kCasesPerOp,
         static_cast<long long>(values));
}

// ---- the host-side preparation matches TFLite's on the golden cases' numbers ----

TEST(Int8Prepare, DerivedParamsMatchTfliteConventions) {
  // Softmax: diff_min is minus the input radius of Q5.26 at the left shift
  // (the golden `softmax` case: left shift 19 -> -3968; DS-CNN's: 24 -> -124).
  EXPECT_EQ(-calculate_input_radius(5, 19), -3968);
  EXPECT_EQ(-calculate_input_radius(5, 24), -124);
  // ADD with equal input scales: each input multiplier is 1/2 (2^30, shift 0),
  // the output one 2 * s / (2^20 * s_out) = 2^-20 when s_out = 2 s: the
  // golden `add` case's numbers.
  const AddS8Params add = prepare_add_s8(0.5f, -128, 0.5f, -128, 1.0f, -128, Activation::kNone);
  EXPECT_EQ(add.input1_multiplier, 1 << 30);
  EXPECT_EQ(add.input1_shift, 0);
  EXPECT_EQ(add.output_multiplier, 1 << 30);
  EXPECT_EQ(add.output_shift, -19);
  EXPECT_EQ(add.left_shift, 20);
  EXPECT_EQ(add.input1_offset, 128);
  // Fused ReLU6 on an output of scale 0.05, zero point -100: [-100, 20].
  const QuantizedRange r = quantized_activation_range_s8(Activation::kRelu6, 0.05f, -100);
  EXPECT_EQ(r.min, -100);
  EXPECT_EQ(r.max, 20);
  // Logistic prepare: the input radius bounds what Q4.27 can hold.
  const FixedPointActivationS8Params lp = prepare_logistic_s8(0.1f, 3);
  EXPECT_GE(lp.input_multiplier, 1 << 30);
  EXPECT_NEAR(std::ldexp(static_cast<double>(lp.input_multiplier), lp.input_left_shift - 31),
              static_cast<double>(0.1f) * (1 << 27), 1e-6);
  EXPECT_EQ(lp.input_range_radius, calculate_input_radius(4, lp.input_left_shift));
}

}  // namespace
}  // namespace floe::ref
