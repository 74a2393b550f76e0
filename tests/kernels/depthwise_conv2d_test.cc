// SPDX-License-Identifier: Apache-2.0
// Tests for ref::depthwise_conv2d_f32. Hand cases (computed independently with a
// direct-formula script, first value checked by hand): multiplier 2 VALID (output
// channel c*2 + m), asymmetric SAME stride 2, multiplier 1 with bias and
// activations. Then seeded random shapes, multipliers, strides, dilations and
// paddings against a naive formula in double. Tolerance (random):
// |got - want| <= 1e-5 * sum|terms| + 1e-6, as in conv2d_test.
#include "runtime/kernels/reference/depthwise_conv2d.h"

#include <gtest/gtest.h>
#include <math.h>

#include <algorithm>
#include <random>
#include <vector>

namespace floe::ref {
namespace {

struct Geometry {
  int n = 1, h, w, c = 1;
  int kh, kw, mult = 1;
  int oh, ow;
  DepthwiseConv2DParams p;
};

std::vector<float> run(Geometry g, const std::vector<float>& in, const std::vector<float>& filter,
                       const float* bias) {
  g.p.depth_multiplier = g.mult;
  const int32_t in_dims[4] = {g.n, g.h, g.w, g.c};
  const int32_t f_dims[4] = {g.kh, g.kw, g.c, g.mult};
  const int32_t b_dims[1] = {g.c * g.mult};
  const int32_t out_dims[4] = {g.n, g.oh, g.ow, g.c * g.mult};
  std::vector<float> out(static_cast<size_t>(g.n) * g.oh * g.ow * g.c * g.mult, -12345.0f);
  depthwise_conv2d_f32(g.p, DepthwiseConv2DOperands{{in.data(), {in_dims, 4}},
                                                    {filter.data(), {f_dims, 4}},
                                                    {bias, {b_dims, 1}},
                                                    {out.data(), {out_dims, 4}}});
  return out;
}

std::vector<float> iota(int count) {
  std::vector<float> v(count);
  for (int i = 0; i < count; ++i) v[i] = static_cast<float>(i + 1);
  return v;
}

// Filter [2,2,2,2]: tap (ky,kx), channel c, multiplier m at ((ky*2+kx)*2+c)*2+m.
const std::vector<float> kFilter = {1, -1, 2, 0.5f, 0, 1, -2, 1, 3, 0, 1, -1, -1, 2, 0, 0.25f};

TEST(DepthwiseConv2D, Multiplier2Valid) {
  // Input 3x3x2 = 1..18. Output (0,0), channel 0 (c=0,m=0): inputs 1,3,7,9
  // (channel 0 of pixels (0,0),(0,1),(1,0),(1,1)) x weights 1,0,3,-1 = 13.
  Geometry g;
  g.h = g.w = 3;
  g.c = 2;
  g.kh = g.kw = 2;
  g.mult = 2;
  g.oh = g.ow = 2;
  EXPECT_EQ(run(g, iota(18), kFilter, nullptr),
            (std::vector<float>{13, 20, 4, -0.5f, 19, 24, 6, 1, 31, 32, 10, 4, 37, 36, 12, 5.5f}));
}

TEST(DepthwiseConv2D, AsymmetricSameStride2) {
  // 3x3, 2x2 filter, stride 2: out 2, total pad 1 -> bottom/right only.
  Geometry g;
  g.h = g.w = 3;
  g.c = 2;
  g.kh = g.kw = 2;
  g.mult = 2;
  g.oh = g.ow = 2;
  g.p.stride_h = g.p.stride_w = 2;
  EXPECT_EQ(run(g, iota(18), kFilter, nullptr),
            (std::vector<float>{13, 20, 4, -0.5f, 38, -5, 24, -9, 13, 2, -4, 23, 17, -17, 36, 9}));
}

TEST(DepthwiseConv2D, Multiplier1BiasActivation) {
  // Each channel is its own 1-channel convolution: channel 0 uses weights
  // {1,2,3,4}, channel 1 uses {-1,0,0,1} on a 2x2 input, VALID -> 1x1.
  Geometry g;
  g.h = g.w = 2;
  g.c = 2;
  g.kh = g.kw = 2;
  g.oh = g.ow = 1;
  const std::vector<float> in = {1, 10, 2, 20, 3, 30, 4, 40};
  const std::vector<float> f = {1, -1, 2, 0, 3, 0, 4, 1};
  // channel 0: 1+4+9+16 = 30; channel 1: -10 + 40 = 30.
  EXPECT_EQ(run(g, in, f, nullptr), (std::vector<float>{30, 30}));
  const float bias[2] = {-31, -25};
  g.p.activation = Activation::kRelu;
  EXPECT_EQ(run(g, in, f, bias), (std::vector<float>{0, 5}));
  g.p.activation = Activation::kRelu6;
  const float bias2[2] = {-24.5f, 0};
  EXPECT_EQ(run(g, in, f, bias2), (std::vector<float>{5.5f, 6}));
}

void naive(const Geometry& g, const std::vector<float>& in, const std::vector<float>& f, const float* bias,
           std::vector<double>* out, std::vector<double>* mag) {
  const DepthwiseConv2DParams& p = g.p;
  for (int n = 0; n < g.n; ++n)
    for (int oy = 0; oy < g.oh; ++oy)
      for (int ox = 0; ox < g.ow; ++ox)
        for (int oc = 0; oc < g.c * g.mult; ++oc) {
          const int c = oc / g.mult;
          const int m = oc % g.mult;
          double s = 0, a = 0;
          for (int ky = 0; ky < g.kh; ++ky)
            for (int kx = 0; kx < g.kw; ++kx) {
              const int iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
              const int ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
              if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
              const double t = static_cast<double>(in[((n * g.h + iy) * g.w + ix) * g.c + c]) *
                               f[((ky * g.kw + kx) * g.c + c) * g.mult + m];
              s += t;
              a += fabs(t);
            }
          if (bias != nullptr) {
            s += bias[oc];
            a += fabs(bias[oc]);
          }
          if (p.activation != Activation::kNone) s = fmax(s, 0.0);
          if (p.activation == Activation::kRelu6) s = fmin(s, 6.0);
          out->push_back(s);
          mag->push_back(a);
        }
}

// SAME, VALID or explicit padding in one direction (see conv2d_test).
void pick_padding(std::mt19937& rng, int eff, int stride, int* in, int* out, int32_t* pad_lead) {
  switch (rng() % 3) {
    case 0:
      *out = (*in + stride - 1) / stride;
      *pad_lead = std::max(0, (*out - 1) * stride + eff - *in) / 2;
      break;
    case 1:
      if (eff > *in) *in = eff;
      *out = (*in - eff) / stride + 1;
      *pad_lead = 0;
      break;
    default: {
      const int lead = static_cast<int>(rng() % static_cast<uint32_t>(eff));
      const int trail = static_cast<int>(rng() % static_cast<uint32_t>(eff));
      if (*in + lead + trail < eff) *in = eff;
      *out = (*in + lead + trail - eff) / stride + 1;
      *pad_lead = lead;
      break;
    }
  }
}

TEST(DepthwiseConv2D, RandomMatchesNaive) {
  const uint32_t seed = 99991u;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> val(-1.0f, 1.0f);
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)); };
  for (int iter = 0; iter < 300; ++iter) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " iteration " << iter);
    Geometry g;
    g.n = pick(1, 2);
    g.h = pick(1, 9);
    g.w = pick(1, 9);
    g.c = pick(1, 6);
    g.kh = pick(1, 3);
    g.kw = pick(1, 3);
    g.mult = pick(1, 3);
    g.p.stride_h = pick(1, 3);
    g.p.stride_w = pick(1, 3);
    g.p.dilation_h = pick(1, 3);
    g.p.dilation_w = pick(1, 3);
    pick_padding(rng, (g.kh - 1) * g.p.dilation_h + 1, g.p.stride_h, &g.h, &g.oh, &g.p.pad_top);
    pick_padding(rng, (g.kw - 1) * g.p.dilation_w + 1, g.p.stride_w, &g.w, &g.ow, &g.p.pad_left);
    g.p.activation = static_cast<Activation>(rng() % 3);
    std::vector<float> in(static_cast<size_t>(g.n) * g.h * g.w * g.c);
    std::vector<float> f(static_cast<size_t>(g.kh) * g.kw * g.c * g.mult);
    std::vector<float> bias(static_cast<size_t>(g.c) * g.mult);
    for (float& v : in) v = val(rng);
    for (float& v : f) v = val(rng);
    for (float& v : bias) v = val(rng);
    const float* b = rng() % 2 == 0 ? bias.data() : nullptr;
    const std::vector<float> got = run(g, in, f, b);
    std::vector<double> want, mag;
    naive(g, in, f, b, &want, &mag);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-5 * mag[i] + 1e-6)
          << "flat " << i << " in " << g.n << "x" << g.h << "x" << g.w << "x" << g.c << " k " << g.kh << "x"
          << g.kw << " mult " << g.mult << " stride " << g.p.stride_h << "," << g.p.stride_w << " dil "
          << g.p.dilation_h << "," << g.p.dilation_w << " pad " << g.p.pad_top << "," << g.p.pad_left;
    }
  }
}

}  // namespace
}  // namespace floe::ref
