// SPDX-License-Identifier: Apache-2.0
// Tests for ref::max_pool2d_f32 / avg_pool2d_f32: VALID 2x2/2, SAME 3x3/1 where
// the average divides by the in-bounds tap count (4 at corners, 6 at edges, 9
// inside), asymmetric SAME (extra padding bottom/right), padding never acting as
// a zero for max over negatives, channels and batches kept apart, activations,
// and seeded random cases against a naive formula. Tolerance: max is exact; avg
// (random) 1e-6 relative to sum|taps|/count + 1e-7, float summation of <= 9 taps.
#include "runtime/kernels/reference/pool2d.h"

#include <gtest/gtest.h>
#include <math.h>

#include <algorithm>
#include <random>
#include <vector>

namespace floe::ref {
namespace {

struct Geometry {
  int n = 1, h, w, c = 1;
  int oh, ow;
  Pool2DParams p;
};

std::vector<float> run(bool max, const Geometry& g, const std::vector<float>& in) {
  const int32_t in_dims[4] = {g.n, g.h, g.w, g.c};
  const int32_t out_dims[4] = {g.n, g.oh, g.ow, g.c};
  std::vector<float> out(static_cast<size_t>(g.n) * g.oh * g.ow * g.c, -12345.0f);
  const Pool2DOperands ops{{in.data(), {in_dims, 4}}, {out.data(), {out_dims, 4}}};
  if (max) {
    max_pool2d_f32(g.p, ops);
  } else {
    avg_pool2d_f32(g.p, ops);
  }
  return out;
}

std::vector<float> iota(int count, float start = 1, float step = 1) {
  std::vector<float> v(count);
  for (int i = 0; i < count; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

Geometry square(int in, int filter, int stride, int out, int pad) {
  Geometry g;
  g.h = g.w = in;
  g.oh = g.ow = out;
  g.p.filter_h = g.p.filter_w = filter;
  g.p.stride_h = g.p.stride_w = stride;
  g.p.pad_top = g.p.pad_left = pad;
  return g;
}

TEST(Pool2D, Valid2x2Stride2) {
  // 4x4 = 1..16: windows {1,2,5,6} {3,4,7,8} {9,10,13,14} {11,12,15,16}.
  const Geometry g = square(4, 2, 2, 2, 0);
  EXPECT_EQ(run(true, g, iota(16)), (std::vector<float>{6, 8, 14, 16}));
  EXPECT_EQ(run(false, g, iota(16)), (std::vector<float>{3.5f, 5.5f, 11.5f, 13.5f}));
}

TEST(Pool2D, AvgSameDividesByInBoundsTaps) {
  // 3x3 = 1..9, 3x3 window, stride 1, pad 1: corner (0,0) = (1+2+4+5)/4 = 3,
  // edge (0,1) = (1+2+3+4+5+6)/6 = 3.5, centre 45/9 = 5. Counting padded taps
  // would give 12/9 at the corner instead.
  const Geometry g = square(3, 3, 1, 3, 1);
  EXPECT_EQ(run(false, g, iota(9)), (std::vector<float>{3, 3.5f, 4, 4.5f, 5, 5.5f, 6, 6.5f, 7}));
  EXPECT_EQ(run(true, g, iota(9)), (std::vector<float>{5, 6, 6, 8, 9, 9, 8, 9, 9}));
}

TEST(Pool2D, AsymmetricSamePadsBottomRight) {
  // 3x3, 2x2 window, stride 2: out 2, total pad 1 -> bottom/right. Windows
  // {1,2,4,5}/4, {3,6}/2, {7,8}/2, {9}/1.
  const Geometry g = square(3, 2, 2, 2, 0);
  EXPECT_EQ(run(false, g, iota(9)), (std::vector<float>{3, 4.5f, 7.5f, 9}));
  EXPECT_EQ(run(true, g, iota(9)), (std::vector<float>{5, 6, 8, 9}));
}

TEST(Pool2D, MaxIgnoresPaddingForNegativeInputs) {
  // All inputs negative: a padded tap treated as 0 would win everywhere at the
  // border.
  const Geometry g = square(3, 3, 1, 3, 1);
  EXPECT_EQ(run(true, g, iota(9, -1, -1)), (std::vector<float>{-1, -1, -2, -1, -1, -2, -4, -4, -5}));
}

TEST(Pool2D, ChannelsAndBatchesStayApart) {
  // [2,2,2,2]: batch b, pixel p, channel c = 100*b + 10*c + p; 2x2 VALID -> one
  // pixel per batch, per channel max of p in {0..3} and mean 1.5.
  Geometry g;
  g.n = 2;
  g.h = g.w = 2;
  g.c = 2;
  g.oh = g.ow = 1;
  g.p.filter_h = g.p.filter_w = 2;
  g.p.stride_h = g.p.stride_w = 2;
  std::vector<float> in;
  for (int b = 0; b < 2; ++b)
    for (int p = 0; p < 4; ++p)
      for (int c = 0; c < 2; ++c) in.push_back(static_cast<float>(100 * b + 10 * c + p));
  EXPECT_EQ(run(true, g, in), (std::vector<float>{3, 13, 103, 113}));
  EXPECT_EQ(run(false, g, in), (std::vector<float>{1.5f, 11.5f, 101.5f, 111.5f}));
}

TEST(Pool2D, RectangularWindowAndStride) {
  // 3x4 = 1..12, window 2 high x 3 wide, stride (1, 1), VALID -> 2x2.
  Geometry g;
  g.h = 3;
  g.w = 4;
  g.oh = 2;
  g.ow = 2;
  g.p.filter_h = 2;
  g.p.filter_w = 3;
  EXPECT_EQ(run(true, g, iota(12)), (std::vector<float>{7, 8, 11, 12}));
  EXPECT_EQ(run(false, g, iota(12)), (std::vector<float>{4, 5, 8, 9}));
}

TEST(Pool2D, FusedActivation) {
  const Geometry base = square(2, 1, 1, 2, 0);  // 1x1 window: identity + activation
  Geometry g = base;
  g.p.activation = Activation::kRelu;
  EXPECT_EQ(run(true, g, {-3, 2, 7, -0.5f}), (std::vector<float>{0, 2, 7, 0}));
  g.p.activation = Activation::kRelu6;
  EXPECT_EQ(run(false, g, {-3, 2, 7, -0.5f}), (std::vector<float>{0, 2, 6, 0}));
}

TEST(Pool2D, MaxPropagatesNaN) {
  const Geometry g = square(2, 2, 2, 1, 0);
  EXPECT_TRUE(isnan(run(true, g, {1, NAN, 3, 2})[0]));
  EXPECT_TRUE(isnan(run(true, g, {NAN, 1, 3, 2})[0]));
}

TEST(Pool2D, RandomMatchesNaive) {
  const uint32_t seed = 4242u;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> val(-3.0f, 3.0f);
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)); };
  for (int iter = 0; iter < 300; ++iter) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " iteration " << iter);
    Geometry g;
    g.n = pick(1, 2);
    g.h = pick(1, 8);
    g.w = pick(1, 8);
    g.c = pick(1, 5);
    Pool2DParams& p = g.p;
    p.filter_h = pick(1, 3);
    p.filter_w = pick(1, 3);
    p.stride_h = pick(1, 3);
    p.stride_w = pick(1, 3);
    p.activation = static_cast<Activation>(rng() % 3);
    // SAME (odd pixel bottom/right) or VALID per direction.
    if (rng() % 2 == 0) {
      g.oh = (g.h + p.stride_h - 1) / p.stride_h;
      p.pad_top = std::max(0, (g.oh - 1) * p.stride_h + p.filter_h - g.h) / 2;
    } else {
      g.h = std::max(g.h, static_cast<int>(p.filter_h));
      g.oh = (g.h - p.filter_h) / p.stride_h + 1;
      p.pad_top = 0;
    }
    if (rng() % 2 == 0) {
      g.ow = (g.w + p.stride_w - 1) / p.stride_w;
      p.pad_left = std::max(0, (g.ow - 1) * p.stride_w + p.filter_w - g.w) / 2;
    } else {
      g.w = std::max(g.w, static_cast<int>(p.filter_w));
      g.ow = (g.w - p.filter_w) / p.stride_w + 1;
      p.pad_left = 0;
    }
    std::vector<float> in(static_cast<size_t>(g.n) * g.h * g.w * g.c);
    for (float& v : in) v = val(rng);
    const std::vector<float> got_max = run(true, g, in);
    const std::vector<float> got_avg = run(false, g, in);
    size_t i = 0;
    for (int n = 0; n < g.n; ++n)
      for (int oy = 0; oy < g.oh; ++oy)
        for (int ox = 0; ox < g.ow; ++ox)
          for (int c = 0; c < g.c; ++c, ++i) {
            float mx = -INFINITY;
            double sum = 0, mag = 0;
            int count = 0;
            for (int ky = 0; ky < p.filter_h; ++ky)
              for (int kx = 0; kx < p.filter_w; ++kx) {
                const int iy = oy * p.stride_h - p.pad_top + ky;
                const int ix = ox * p.stride_w - p.pad_left + kx;
                if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                const float v = in[((n * g.h + iy) * g.w + ix) * g.c + c];
                mx = std::max(mx, v);
                sum += v;
                mag += fabs(v);
                ++count;
              }
            ASSERT_GT(count, 0);
            double avg = sum / count;
            if (p.activation != Activation::kNone) {
              mx = std::max(mx, 0.0f);
              avg = std::max(avg, 0.0);
            }
            if (p.activation == Activation::kRelu6) {
              mx = std::min(mx, 6.0f);
              avg = std::min(avg, 6.0);
            }
            ASSERT_EQ(got_max[i], mx) << "flat " << i;
            ASSERT_NEAR(got_avg[i], avg, 1e-6 * mag / count + 1e-7) << "flat " << i;
          }
  }
}

}  // namespace
}  // namespace floe::ref
