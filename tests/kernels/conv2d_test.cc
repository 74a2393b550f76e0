// SPDX-License-Identifier: Apache-2.0
// Tests for ref::conv2d_f32. Hand cases (expected values computed independently
// with a direct-formula script and spot-checked by hand): 3x3 SAME stride 2 on
// 5x5, asymmetric SAME (the extra padding pixel goes bottom/right), dilation
// (VALID and SAME), multi-channel with bias and fused activations. Then seeded
// random shapes/strides/dilations/paddings against a naive formula in double,
// to 1e-5 * sum|terms| + 1e-6 (<= 3*3*8 = 72 terms; see matmul_test for why).
#include "runtime/kernels/reference/conv2d.h"

#include <gtest/gtest.h>
#include <math.h>

#include <algorithm>
#include <random>
#include <vector>

namespace floe::ref {
namespace {

struct Geometry {
  int n = 1, h, w, ic = 1;
  int kh, kw, oc = 1;
  int oh, ow;
  Conv2DParams p;
};

std::vector<float> run(const Geometry& g, const std::vector<float>& in, const std::vector<float>& filter,
                       const float* bias) {
  const int32_t in_dims[4] = {g.n, g.h, g.w, g.ic};
  const int32_t f_dims[4] = {g.kh, g.kw, g.ic, g.oc};
  const int32_t b_dims[1] = {g.oc};
  const int32_t out_dims[4] = {g.n, g.oh, g.ow, g.oc};
  std::vector<float> out(static_cast<size_t>(g.n) * g.oh * g.ow * g.oc, -12345.0f);
  conv2d_f32(g.p, Conv2DOperands{{in.data(), {in_dims, 4}},
                                 {filter.data(), {f_dims, 4}},
                                 {bias, {b_dims, 1}},
                                 {out.data(), {out_dims, 4}}});
  return out;
}

std::vector<float> iota(int count, float start = 1) {
  std::vector<float> v(count);
  for (int i = 0; i < count; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

const std::vector<float> kFilter3x3 = {1, 2, 3, 4, 5, 6, 7, 8, 9};

TEST(Conv2D, Same3x3Stride2On5x5) {
  // TF SAME: out = ceil(5/2) = 3, total pad = (3-1)*2 + 3 - 5 = 2 -> top/left 1.
  // Corner (0,0): taps (0,0),(0,1),(1,0),(1,1) of input 1,2,6,7 with weights
  // 5,6,8,9 -> 5 + 12 + 48 + 63 = 128.
  Geometry g;
  g.h = g.w = 5;
  g.kh = g.kw = 3;
  g.oh = g.ow = 3;
  g.p.stride_h = g.p.stride_w = 2;
  g.p.pad_top = g.p.pad_left = 1;
  EXPECT_EQ(run(g, iota(25), kFilter3x3, nullptr),
            (std::vector<float>{128, 241, 184, 441, 681, 453, 320, 457, 280}));
}

TEST(Conv2D, AsymmetricSamePadsBottomRight) {
  // 4x4, 3x3, stride 2: out 2, total pad = (2-1)*2 + 3 - 4 = 1 -> top/left 0,
  // bottom/right 1. Output (0,0) is the full window over rows/cols 0..2:
  // 1*1+2*2+3*3+5*4+6*5+7*6+9*7+10*8+11*9 = 348.
  Geometry g;
  g.h = g.w = 4;
  g.kh = g.kw = 3;
  g.oh = g.ow = 2;
  g.p.stride_h = g.p.stride_w = 2;
  EXPECT_EQ(run(g, iota(16), kFilter3x3, nullptr), (std::vector<float>{348, 252, 274, 175}));
  // Putting the extra pixel top/left instead would give {111, 217, 363, 573}.
  g.p.pad_top = g.p.pad_left = 1;
  EXPECT_EQ(run(g, iota(16), kFilter3x3, nullptr), (std::vector<float>{111, 217, 363, 573}));
}

TEST(Conv2D, DilationValid) {
  // 2x2 filter, dilation 2 -> effective 3x3 taking corners; out (0,0) =
  // 1*1 + 3*2 + 11*3 + 13*4 = 92.
  Geometry g;
  g.h = g.w = 5;
  g.kh = g.kw = 2;
  g.oh = g.ow = 3;
  g.p.dilation_h = g.p.dilation_w = 2;
  EXPECT_EQ(run(g, iota(25), {1, 2, 3, 4}, nullptr),
            (std::vector<float>{92, 102, 112, 142, 152, 162, 192, 202, 212}));
}

TEST(Conv2D, DilationSame) {
  // 3x3 filter, dilation 2 -> effective 5x5; SAME stride 1 on 5x5 pads 2 each side.
  Geometry g;
  g.h = g.w = 5;
  g.kh = g.kw = 3;
  g.oh = g.ow = 5;
  g.p.dilation_h = g.p.dilation_w = 2;
  g.p.pad_top = g.p.pad_left = 2;
  EXPECT_EQ(run(g, iota(25), kFilter3x3, nullptr),
            (std::vector<float>{228, 256, 365, 224, 248, 368, 396, 560, 344, 368, 519, 552, 777,
                                474, 501, 224, 240, 326, 188, 200, 304, 320, 431, 248, 260}));
}

TEST(Conv2D, MultiChannelBiasActivation) {
  // Input 3x3x2 = +-0.5, -1, +1.5, ...; filter [2,2,2,3] = (i % 5) - 2; VALID.
  Geometry g;
  g.h = g.w = 3;
  g.ic = 2;
  g.kh = g.kw = 2;
  g.oc = 3;
  g.oh = g.ow = 2;
  std::vector<float> in(18), filter(24);
  for (int i = 0; i < 18; ++i) in[i] = (i % 2 ? -0.5f : 0.5f) * static_cast<float>(i + 1);
  for (int i = 0; i < 24; ++i) filter[i] = static_cast<float>(i % 5 - 2);
  EXPECT_EQ(run(g, in, filter, nullptr),
            (std::vector<float>{10, 18, -1.5f, 8, 21, 1.5f, 4, 27, 7.5f, 2, 30, 10.5f}));
  const float bias[3] = {0.5f, -25, 2};
  g.p.activation = Activation::kRelu;
  EXPECT_EQ(run(g, in, filter, bias),
            (std::vector<float>{10.5f, 0, 0.5f, 8.5f, 0, 3.5f, 4.5f, 2, 9.5f, 2.5f, 5, 12.5f}));
  g.p.activation = Activation::kRelu6;
  EXPECT_EQ(run(g, in, filter, bias), (std::vector<float>{6, 0, 0.5f, 6, 0, 3.5f, 4.5f, 2, 6, 2.5f, 5, 6}));
}

TEST(Conv2D, BatchesAreIndependent) {
  Geometry g;
  g.n = 2;
  g.h = g.w = 4;
  g.kh = g.kw = 3;
  g.oh = g.ow = 2;
  g.p.stride_h = g.p.stride_w = 2;
  std::vector<float> in = iota(16);
  const std::vector<float> neg = iota(16, -16);
  in.insert(in.end(), neg.begin(), neg.end());
  Geometry one = g;
  one.n = 1;
  std::vector<float> want = run(one, iota(16), kFilter3x3, nullptr);
  const std::vector<float> second = run(one, neg, kFilter3x3, nullptr);
  want.insert(want.end(), second.begin(), second.end());
  EXPECT_EQ(run(g, in, kFilter3x3, nullptr), want);
}

// The direct formula: every output, every tap, bounds checked per tap; OOB taps
// contribute zero. Accumulates in double.
void naive(const Geometry& g, const std::vector<float>& in, const std::vector<float>& f, const float* bias,
           std::vector<double>* out, std::vector<double>* mag) {
  const Conv2DParams& p = g.p;
  for (int n = 0; n < g.n; ++n)
    for (int oy = 0; oy < g.oh; ++oy)
      for (int ox = 0; ox < g.ow; ++ox)
        for (int oc = 0; oc < g.oc; ++oc) {
          double s = 0, m = 0;
          for (int ky = 0; ky < g.kh; ++ky)
            for (int kx = 0; kx < g.kw; ++kx)
              for (int ic = 0; ic < g.ic; ++ic) {
                const int iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
                const int ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
                if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                const double t = static_cast<double>(in[((n * g.h + iy) * g.w + ix) * g.ic + ic]) *
                                 f[((ky * g.kw + kx) * g.ic + ic) * g.oc + oc];
                s += t;
                m += fabs(t);
              }
          if (bias != nullptr) {
            s += bias[oc];
            m += fabs(bias[oc]);
          }
          if (p.activation != Activation::kNone) s = fmax(s, 0.0);
          if (p.activation == Activation::kRelu6) s = fmin(s, 6.0);
          out->push_back(s);
          mag->push_back(m);
        }
}

// One spatial direction of a random case: SAME, VALID (as the converter resolves
// them) or arbitrary explicit padding with each side in [0, effective_k - 1].
// Sets the output size and the leading pad; may grow `in` so VALID fits.
void pick_padding(std::mt19937& rng, int eff, int stride, int* in, int* out, int32_t* pad_lead) {
  switch (rng() % 3) {
    case 0: {  // SAME: the odd pixel goes to the trailing side
      *out = (*in + stride - 1) / stride;
      *pad_lead = std::max(0, (*out - 1) * stride + eff - *in) / 2;
      break;
    }
    case 1:  // VALID
      if (eff > *in) *in = eff;
      *out = (*in - eff) / stride + 1;
      *pad_lead = 0;
      break;
    default: {  // explicit
      const int lead = static_cast<int>(rng() % static_cast<uint32_t>(eff));
      const int trail = static_cast<int>(rng() % static_cast<uint32_t>(eff));
      if (*in + lead + trail < eff) *in = eff;
      *out = (*in + lead + trail - eff) / stride + 1;
      *pad_lead = lead;
      break;
    }
  }
}

TEST(Conv2D, RandomMatchesNaive) {
  const uint32_t seed = 1234567u;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> val(-1.0f, 1.0f);
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)); };
  for (int iter = 0; iter < 300; ++iter) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " iteration " << iter);
    Geometry g;
    g.n = pick(1, 2);
    g.h = pick(1, 9);
    g.w = pick(1, 9);
    g.ic = pick(1, 8);
    g.kh = pick(1, 3);
    g.kw = pick(1, 3);
    g.oc = pick(1, 7);
    g.p.stride_h = pick(1, 3);
    g.p.stride_w = pick(1, 3);
    g.p.dilation_h = pick(1, 3);
    g.p.dilation_w = pick(1, 3);
    // SAME or VALID in each direction, as the converter would resolve them.
    const int eff_h = (g.kh - 1) * g.p.dilation_h + 1;
    const int eff_w = (g.kw - 1) * g.p.dilation_w + 1;
    pick_padding(rng, eff_h, g.p.stride_h, &g.h, &g.oh, &g.p.pad_top);
    pick_padding(rng, eff_w, g.p.stride_w, &g.w, &g.ow, &g.p.pad_left);
    g.p.activation = static_cast<Activation>(rng() % 3);
    std::vector<float> in(static_cast<size_t>(g.n) * g.h * g.w * g.ic);
    std::vector<float> f(static_cast<size_t>(g.kh) * g.kw * g.ic * g.oc);
    std::vector<float> bias(g.oc);
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
          << "flat " << i << " in " << g.n << "x" << g.h << "x" << g.w << "x" << g.ic << " k " << g.kh << "x"
          << g.kw << "x" << g.oc << " stride " << g.p.stride_h << "," << g.p.stride_w << " dil "
          << g.p.dilation_h << "," << g.p.dilation_w << " pad " << g.p.pad_top << "," << g.p.pad_left;
    }
  }
}

}  // namespace
}  // namespace floe::ref
