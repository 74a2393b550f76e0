// SPDX-License-Identifier: Apache-2.0
// Tests for the NN coverage kernels (batch_matmul.h, transpose_conv2d.h, resize.h, cumulative.h,
// fake_quant.h, topk.h, softmax.h, lrn.h, extract_patches.h, conv3d.h): batched matmul with broadcast batch and adjoints vs a
// naive product; transposed conv equals the adjoint of a direct conv
// (<conv(x), y> == <x, tconv(y)> on seeded data); resize (bilinear
// align_corners / half-pixel hand values, nearest); cumsum exclusive/reverse;
// fake quant nudging; top-k sorted and TF's unsorted heap layout; log-softmax;
// LRN; extract_patches with zero padding; 3-D pooling and max pooling with
// argmax against a per-tap walk of their windows.
#include "runtime/kernels/reference/batch_matmul.h"
#include "runtime/kernels/reference/conv3d.h"
#include "runtime/kernels/reference/cumulative.h"
#include "runtime/kernels/reference/extract_patches.h"
#include "runtime/kernels/reference/fake_quant.h"
#include "runtime/kernels/reference/lrn.h"
#include "runtime/kernels/reference/max_pool_with_argmax.h"
#include "runtime/kernels/reference/pool3d.h"
#include "runtime/kernels/reference/resize.h"
#include "runtime/kernels/reference/softmax.h"
#include "runtime/kernels/reference/topk.h"
#include "runtime/kernels/reference/transpose_conv2d.h"
#include "runtime/kernels/reference/conv2d.h"

#include <gtest/gtest.h>
#include <float.h>
#include <math.h>

#include <algorithm>
#include <random>
#include <vector>

namespace floe::ref {
namespace {

Shape shape_of(const std::vector<int32_t>& d) { return Shape{d.data(), static_cast<int32_t>(d.size())}; }

TEST(NnExtra, BatchMatMulBroadcastAndAdjoint) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  const std::vector<int32_t> xd = {2, 1, 3, 4}, yd = {3, 3, 4}, od = {2, 3, 4, 4};  // adj_x: x is [.., K=3, M=4]
  std::vector<float> x(24), y(36), out(96);
  for (auto& v : x) v = u(rng);
  for (auto& v : y) v = u(rng);
  BatchMatMulParams p;
  p.adj_x = true;  // x [2,1 | K=3, M=4], y [3 | K=3, N=4]: batch [2,1] x [3] -> [2,3]
  batch_matmul_f32(p, {x.data(), shape_of(xd)}, {y.data(), shape_of(yd)}, {out.data(), shape_of(od)});
  for (int b0 = 0; b0 < 2; ++b0)
    for (int b1 = 0; b1 < 3; ++b1)
      for (int m = 0; m < 4; ++m)
        for (int n = 0; n < 4; ++n) {
          float acc = 0;
          for (int k = 0; k < 3; ++k) acc += x[static_cast<size_t>(b0 * 12 + k * 4 + m)] * y[static_cast<size_t>(b1 * 12 + k * 4 + n)];
          EXPECT_NEAR(out[static_cast<size_t>(((b0 * 3 + b1) * 4 + m) * 4 + n)], acc, 1e-5);
        }
}

TEST(NnExtra, TransposeConvIsAdjointOfConv) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  // forward conv: x [1,5,6,2] (*) f [3,2,2,3] stride 2, dilation 1, pad top 1 left 0 -> y [1,3,3,3]
  const int H = 5, W = 6, C = 2, K = 3, KH = 3, KW = 2, OH = 3, OW = 3, S = 2, PT = 1, PL = 0;
  std::vector<float> x(H * W * C), f(KH * KW * C * K), y(OH * OW * K);
  for (auto& v : x) v = u(rng);
  for (auto& v : f) v = u(rng);
  for (auto& v : y) v = u(rng);
  // <conv(x), y>
  double lhs = 0;
  for (int oy = 0; oy < OH; ++oy)
    for (int ox = 0; ox < OW; ++ox)
      for (int k = 0; k < K; ++k) {
        double acc = 0;
        for (int ky = 0; ky < KH; ++ky)
          for (int kx = 0; kx < KW; ++kx) {
            const int iy = oy * S - PT + ky, ix = ox * S - PL + kx;
            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
            for (int c = 0; c < C; ++c) acc += x[static_cast<size_t>((iy * W + ix) * C + c)] * f[static_cast<size_t>(((ky * KW + kx) * C + c) * K + k)];
          }
        lhs += acc * y[static_cast<size_t>((oy * OW + ox) * K + k)];
      }
  std::vector<float> back(x.size());
  const std::vector<int32_t> yd = {1, OH, OW, K}, fd = {KH, KW, C, K}, xd = {1, H, W, C};
  TransposeConv2DParams p;
  p.stride_h = p.stride_w = S;
  p.pad_top = PT;
  p.pad_left = PL;
  transpose_conv2d_f32(p, {y.data(), shape_of(yd)}, {f.data(), shape_of(fd)}, {back.data(), shape_of(xd)});
  double rhs = 0;
  for (size_t i = 0; i < x.size(); ++i) rhs += x[i] * back[i];
  EXPECT_NEAR(lhs, rhs, 1e-4);
}

TEST(NnExtra, ResizeBilinearAndNearest) {
  const std::vector<int32_t> in_d = {1, 2, 2, 1}, out_d = {1, 3, 3, 1};
  std::vector<float> in = {0, 1, 2, 3}, out(9);
  ResizeParams p;
  p.align_corners = true;
  resize(p, 4, {in.data(), shape_of(in_d)}, {out.data(), shape_of(out_d)});
  EXPECT_EQ(out, (std::vector<float>{0, 0.5f, 1, 1, 1.5f, 2, 2, 2.5f, 3}));
  p.align_corners = false;
  p.half_pixel_centers = true;  // src = (dst + 0.5) * 2/3 - 0.5: -1/6, 1/2, 7/6
  resize(p, 4, {in.data(), shape_of(in_d)}, {out.data(), shape_of(out_d)});
  EXPECT_NEAR(out[1], 0.5f, 1e-6);
  EXPECT_NEAR(out[4], 1.5f, 1e-6);
  EXPECT_EQ(out[0], 0.0f);
  p.mode = ResizeMode::kNearest;
  p.half_pixel_centers = false;
  std::vector<int32_t> ii = {1, 2, 3, 4}, io(9);
  resize(p, 4, {ii.data(), shape_of(in_d)}, {io.data(), shape_of(out_d)});
  EXPECT_EQ(io, (std::vector<int32_t>{1, 1, 2, 1, 1, 2, 3, 3, 4}));
}

TEST(NnExtra, CumulativeFakeQuantTopKLogSoftmaxLrn) {
  const std::vector<int32_t> d = {4};
  std::vector<float> in = {1, 2, 3, 4}, out(4);
  CumulativeParams c;
  c.exclusive = true;
  c.reverse = true;
  cumulative(c, DType::kFloat32, {in.data(), shape_of(d)}, {out.data(), shape_of(d)});
  EXPECT_EQ(out, (std::vector<float>{9, 7, 4, 0}));
  c.product = true;
  c.exclusive = false;
  cumulative(c, DType::kFloat32, {in.data(), shape_of(d)}, {out.data(), shape_of(d)});
  EXPECT_EQ(out, (std::vector<float>{24, 24, 12, 4}));
  // Integer sums and products past the type's range wrap, never undefined behaviour.
  std::vector<int32_t> big = {65536, 65536, 3}, wrapped(3);
  cumulative(c, DType::kInt32, {big.data(), shape_of({3})}, {wrapped.data(), shape_of({3})});
  EXPECT_EQ(wrapped, (std::vector<int32_t>{0, 196608, 3}));  // reverse product: 3, 3 * 2^16, 3 * 2^32 wraps to 0
  c.product = false;
  std::vector<int32_t> large = {INT32_MAX, 1};
  c.reverse = false;
  cumulative(c, DType::kInt32, {large.data(), shape_of({2})}, {wrapped.data(), shape_of({2})});
  EXPECT_EQ(wrapped[1], INT32_MIN);

  // [0, 1], 8 bits: scale 1/255, zero point 0; -0.1 clamps to 0, 0.31 -> 79/255.
  // (Exact ties such as 0.5 * 255 = 127.5 follow TF's float formula
  // floor(x * (1/scale) + 0.5), where 1/scale rounds below 255: 127/255.)
  std::vector<float> q = {-0.1f, 0.31f, 1.2f, 0.5f}, qo(4);
  const float lo = 0.0f, hi = 1.0f;
  const int32_t one[1] = {1};
  fake_quant_f32(8, false, {q.data(), shape_of(d)}, {&lo, {one, 1}}, {&hi, {one, 1}}, {qo.data(), shape_of(d)});
  EXPECT_FLOAT_EQ(qo[0], 0.0f);
  EXPECT_NEAR(qo[1], 79.0f / 255.0f, 1e-6);
  EXPECT_NEAR(qo[2], 1.0f, 1e-6);
  EXPECT_NEAR(qo[3], 127.0f / 255.0f, 1e-6);

  const std::vector<int32_t> td = {10}, kd = {5};
  std::vector<float> t = {0.77878559f, 0.80119777f, 0.72437465f, 0.23089433f, 0.72714126f,
                          0.18039072f, 0.50563407f, 0.89252293f, 0.54612088f, 0.92336726f};
  std::vector<float> tv(5);
  std::vector<int32_t> ti(5);
  topk_f32(false, {t.data(), shape_of(td)}, {tv.data(), shape_of(kd)}, {ti.data(), shape_of(kd)});
  EXPECT_EQ(ti, (std::vector<int32_t>{4, 0, 7, 1, 9}));  // TF's unsorted (heap) order
  topk_f32(true, {t.data(), shape_of(td)}, {tv.data(), shape_of(kd)}, {ti.data(), shape_of(kd)});
  EXPECT_EQ(ti, (std::vector<int32_t>{9, 7, 1, 0, 4}));

  std::vector<float> ls(4);
  log_softmax_f32({in.data(), shape_of(d)}, {ls.data(), shape_of(d)});
  const double lse = log(exp(1.0) + exp(2.0) + exp(3.0) + exp(4.0));
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(ls[static_cast<size_t>(i)], in[static_cast<size_t>(i)] - lse, 1e-6);

  LrnParams l;
  l.depth_radius = 1;
  l.bias = 1;
  l.alpha = 0.5f;
  l.beta = 0.75f;
  std::vector<float> lo4(4);
  lrn_f32(l, {in.data(), shape_of(d)}, {lo4.data(), shape_of(d)});
  EXPECT_NEAR(lo4[1], 2.0 / pow(1 + 0.5 * (1 + 4 + 9), 0.75), 1e-6);
}

TEST(NnExtra, ExtractPatchesZeroPads) {
  const std::vector<int32_t> in_d = {1, 2, 2, 1}, out_d = {1, 2, 2, 4};
  std::vector<int32_t> in = {1, 2, 3, 4}, out(16);
  ExtractPatchesParams p;
  p.size_h = p.size_w = 2;  // SAME, stride 1: pad bottom/right by 1
  extract_patches(p, 4, {in.data(), shape_of(in_d)}, {out.data(), shape_of(out_d)});
  EXPECT_EQ(out, (std::vector<int32_t>{1, 2, 3, 4, 2, 0, 4, 0, 3, 4, 0, 0, 4, 0, 0, 0}));
}

// A depth-1 Conv3D is the 2-D convolution: compare with conv2d_f32 (seeded),
// with strides, dilation and padding on both spatial axes.
TEST(NnExtra, Conv3DOfDepthOneEqualsConv2D) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  const std::vector<int32_t> x3 = {2, 1, 7, 6, 3}, f3 = {1, 3, 2, 3, 4}, o3 = {2, 1, 4, 3, 4};
  const std::vector<int32_t> x2 = {2, 7, 6, 3}, f2 = {3, 2, 3, 4}, o2 = {2, 4, 3, 4};
  std::vector<float> x(2 * 7 * 6 * 3), f(3 * 2 * 3 * 4), a(2 * 4 * 3 * 4), b(a.size());
  for (auto& v : x) v = u(rng);
  for (auto& v : f) v = u(rng);
  Conv3DParams p3;
  p3.stride_h = 2;
  p3.stride_w = 2;
  p3.dilation_h = 2;
  p3.pad_top = 1;
  p3.pad_left = 0;
  conv3d_f32(p3, {x.data(), shape_of(x3)}, {f.data(), shape_of(f3)}, {a.data(), shape_of(o3)});
  Conv2DParams p2;
  p2.stride_h = 2;
  p2.stride_w = 2;
  p2.dilation_h = 2;
  p2.pad_top = 1;
  conv2d_f32(p2, {{x.data(), shape_of(x2)}, {f.data(), shape_of(f2)}, {nullptr, {}}, {b.data(), shape_of(o2)}});
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5) << i;
}

// Pooling by its definition: every tap of the window, those outside the
// input skipped (the kernels clip each window once instead).
float pooled_per_tap(const std::vector<float>& x, const std::vector<int32_t>& d, bool max, const int32_t (&k)[3],
                     const int32_t (&origin)[3], int32_t n, int32_t c, int64_t* argmax_flat) {
  float acc = max ? -FLT_MAX : 0.0f;
  int count = 0;
  for (int32_t kz = 0; kz < k[0]; ++kz) {
    for (int32_t ky = 0; ky < k[1]; ++ky) {
      for (int32_t kx = 0; kx < k[2]; ++kx) {
        const int32_t z = origin[0] + kz, y = origin[1] + ky, xx = origin[2] + kx;
        if (z < 0 || z >= d[1] || y < 0 || y >= d[2] || xx < 0 || xx >= d[3]) continue;
        const int64_t flat = ((static_cast<int64_t>(z) * d[2] + y) * d[3] + xx) * d[4] + c;
        const float v = x[static_cast<size_t>(n * d[1] * d[2] * d[3] * d[4] + flat)];
        if (max ? (count == 0 || v > acc) : true) {
          if (max && argmax_flat != nullptr) *argmax_flat = flat;
          acc = max ? v : acc + v;
        }
        ++count;
      }
    }
  }
  return max ? acc : (count > 0 ? acc / static_cast<float>(count) : 0.0f);
}

TEST(NnExtra, Pool3DAndMaxPoolWithArgmaxEqualTheirPerTapDefinition) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-1, 1);
  const std::vector<int32_t> xd = {2, 3, 5, 4, 3};
  std::vector<float> x(2 * 3 * 5 * 4 * 3);
  for (auto& v : x) v = u(rng);
  struct Geometry {
    int32_t k[3], s[3], pad[3];
  };
  // VALID, SAME-like padding, and pads as large as the window (windows wholly outside).
  const Geometry geometries[] = {{{2, 2, 2}, {1, 1, 1}, {0, 0, 0}},
                                 {{3, 3, 2}, {2, 2, 1}, {1, 1, 0}},
                                 {{1, 2, 3}, {1, 3, 2}, {0, 1, 1}},
                                 {{2, 2, 2}, {2, 2, 2}, {2, 2, 2}}};
  for (const Geometry& g : geometries) {
    std::vector<int32_t> od = {2, 0, 0, 0, 3};
    for (int a = 0; a < 3; ++a) od[a + 1] = (xd[a + 1] + 2 * g.pad[a] - g.k[a]) / g.s[a] + 1;
    const size_t outputs = static_cast<size_t>(2 * od[1] * od[2] * od[3] * 3);
    Pool3DParams p;
    p.filter_d = g.k[0], p.filter_h = g.k[1], p.filter_w = g.k[2];
    p.stride_d = g.s[0], p.stride_h = g.s[1], p.stride_w = g.s[2];
    p.pad_front = g.pad[0], p.pad_top = g.pad[1], p.pad_left = g.pad[2];
    std::vector<float> max_out(outputs), avg_out(outputs);
    max_pool3d_f32(p, {x.data(), shape_of(xd)}, {max_out.data(), shape_of(od)});
    avg_pool3d_f32(p, {x.data(), shape_of(xd)}, {avg_out.data(), shape_of(od)});
    // The same windows over depth 0 of each image (an NHWC view) with argmax.
    const std::vector<int32_t> xd2 = {2, xd[2], xd[3], xd[4]}, od2 = {2, od[2], od[3], 3};
    std::vector<float> image(static_cast<size_t>(2 * xd[2] * xd[3] * xd[4]));
    for (int32_t n = 0; n < 2; ++n) {
      std::copy_n(x.begin() + n * xd[1] * xd[2] * xd[3] * xd[4], xd[2] * xd[3] * xd[4],
                  image.begin() + n * xd[2] * xd[3] * xd[4]);
    }
    MaxPoolArgmaxParams q;
    q.filter_h = g.k[1], q.filter_w = g.k[2], q.stride_h = g.s[1], q.stride_w = g.s[2];
    q.pad_top = g.pad[1], q.pad_left = g.pad[2];
    q.include_batch_in_index = 1;
    std::vector<float> argmax_out(static_cast<size_t>(2 * od[2] * od[3] * 3));
    std::vector<int64_t> argmax(argmax_out.size());
    max_pool_with_argmax_f32(q, {image.data(), shape_of(xd2)}, {argmax_out.data(), shape_of(od2)},
                             {argmax.data(), shape_of(od2)});
    size_t i = 0, j = 0;
    for (int32_t n = 0; n < 2; ++n) {
      for (int32_t oz = 0; oz < od[1]; ++oz) {
        for (int32_t oy = 0; oy < od[2]; ++oy) {
          for (int32_t ox = 0; ox < od[3]; ++ox) {
            for (int32_t c = 0; c < 3; ++c, ++i) {
              const int32_t origin[3] = {oz * g.s[0] - g.pad[0], oy * g.s[1] - g.pad[1], ox * g.s[2] - g.pad[2]};
              EXPECT_EQ(max_out[i], pooled_per_tap(x, xd, true, g.k, origin, n, c, nullptr)) << i;
              EXPECT_EQ(avg_out[i], pooled_per_tap(x, xd, false, g.k, origin, n, c, nullptr)) << i;
              if (oz != 0) continue;
              const int32_t k2[3] = {1, g.k[1], g.k[2]}, origin2[3] = {0, origin[1], origin[2]};
              int64_t flat = -1;
              const std::vector<int32_t> image_d = {2, 1, xd[2], xd[3], xd[4]};
              EXPECT_EQ(argmax_out[j], pooled_per_tap(image, image_d, true, k2, origin2, n, c, &flat)) << j;
              EXPECT_EQ(argmax[j], flat < 0 ? -1 : n * xd[2] * xd[3] * xd[4] + flat) << j;
              ++j;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace floe::ref
