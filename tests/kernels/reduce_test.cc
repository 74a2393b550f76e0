// SPDX-License-Identifier: Apache-2.0
// Tests for ref::mean_f32: one axis (inner, outer), all axes, non-adjacent axes,
// NHWC spatial mean, size-1 dims, no axes (a copy), an empty reduction (NaN), a
// long reduction pinning the pairwise accuracy, and seeded random tensors up to
// rank 8 with random axis subsets against a double direct formula, to 1e-5
// relative to mean|x| over the reduced elements + 1e-7 absolute.
#include "runtime/kernels/reference/reduce.h"

#include <gtest/gtest.h>
#include <math.h>

#include <random>
#include <vector>

namespace floe::ref {
namespace {

std::vector<float> run(std::vector<int32_t> dims, const std::vector<float>& in, std::vector<int32_t> axes,
                       std::vector<int32_t> out_dims) {
  size_t n = 1;
  for (int32_t d : out_dims) n *= static_cast<size_t>(d);
  std::vector<float> out(n, -12345.0f);
  ReduceParams params;
  params.axes = axes.data();
  params.axis_count = static_cast<int32_t>(axes.size());
  mean_f32(params, ReduceOperands{{in.data(), {dims.data(), static_cast<int32_t>(dims.size())}},
                                  {out.data(), {out_dims.data(), static_cast<int32_t>(out_dims.size())}}});
  return out;
}

std::vector<float> iota(int count, float start = 0) {
  std::vector<float> v(count);
  for (int i = 0; i < count; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

TEST(Mean, SingleAxis2D) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};  // [[1,2,3],[4,5,6]]
  EXPECT_EQ(run({2, 3}, x, {1}, {2}), (std::vector<float>{2, 5}));
  EXPECT_EQ(run({2, 3}, x, {0}, {3}), (std::vector<float>{2.5f, 3.5f, 4.5f}));
  EXPECT_EQ(run({2, 3}, x, {1}, {2, 1}), (std::vector<float>{2, 5}));  // keep_dims: same values
}

TEST(Mean, AllAxes) {
  EXPECT_EQ(run({2, 3}, {1, 2, 3, 4, 5, 6}, {0, 1}, {}), (std::vector<float>{3.5f}));
  EXPECT_EQ(run({2, 3, 4}, iota(24), {0, 1, 2}, {1, 1, 1}), (std::vector<float>{11.5f}));
}

TEST(Mean, NonAdjacentAxes) {
  // [2,3,4] with x = 12i + 4j + k; mean over i and k = 6 + 4j + 1.5.
  EXPECT_EQ(run({2, 3, 4}, iota(24), {0, 2}, {3}), (std::vector<float>{7.5f, 11.5f, 15.5f}));
  // Middle axis only: 12i + 4 + k.
  EXPECT_EQ(run({2, 3, 4}, iota(24), {1}, {2, 4}), (std::vector<float>{4, 5, 6, 7, 16, 17, 18, 19}));
}

TEST(Mean, SpatialMeanNHWC) {
  // [2,2,2,3], x = 12n + 6h + 3w + c; mean over h,w = 12n + 4.5 + c.
  EXPECT_EQ(run({2, 2, 2, 3}, iota(24), {1, 2}, {2, 3}), (std::vector<float>{4.5f, 5.5f, 6.5f, 16.5f, 17.5f, 18.5f}));
  // Outer and inner axes {0,3}: mean over n,c = 6 + 6h + 3w + 1.
  EXPECT_EQ(run({2, 2, 2, 3}, iota(24), {0, 3}, {2, 2}), (std::vector<float>{7, 10, 13, 16}));
}

TEST(Mean, SizeOneDimsAndNoAxes) {
  EXPECT_EQ(run({1, 3, 1}, {1, 2, 4}, {0, 2}, {3}), (std::vector<float>{1, 2, 4}));
  EXPECT_EQ(run({1, 3, 1}, {1, 2, 4}, {1}, {1, 1}), (std::vector<float>{7.0f / 3.0f}));
  EXPECT_EQ(run({2, 2}, {1, 2, 3, 4}, {}, {2, 2}), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(run({1}, {5}, {0}, {}), (std::vector<float>{5}));
}

TEST(Mean, EmptyReductionIsNaN) {
  const std::vector<float> out = run({2, 0}, {}, {1}, {2});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(isnan(out[0]));
  EXPECT_TRUE(isnan(out[1]));
}

TEST(Mean, RandomAxesUpToRank8MatchDouble) {
  const uint32_t seed = 8675309u;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> val(-4.0f, 4.0f);
  for (int iter = 0; iter < 300; ++iter) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " iteration " << iter);
    const int rank = 1 + static_cast<int>(rng() % kMaxRank);
    std::vector<int32_t> dims(rank);
    for (auto& d : dims) d = 1 + static_cast<int32_t>(rng() % 3);
    std::vector<int32_t> axes, out_dims;
    std::vector<bool> reduced(rank);
    for (int i = 0; i < rank; ++i) {
      reduced[i] = rng() % 2 == 0;
      if (reduced[i]) {
        axes.push_back(i);
      } else {
        out_dims.push_back(dims[i]);
      }
    }
    size_t n = 1;
    for (int32_t d : dims) n *= static_cast<size_t>(d);
    std::vector<float> x(n);
    for (float& v : x) v = val(rng);
    const std::vector<float> got = run(dims, x, axes, out_dims);

    std::vector<double> sum(got.size(), 0.0), mag(got.size(), 0.0);
    double count = 1;
    for (int32_t a : axes) count *= dims[a];
    std::vector<int32_t> idx(rank);
    for (size_t flat = 0; flat < n; ++flat) {
      size_t rem = flat;
      for (int i = rank - 1; i >= 0; --i) {
        idx[i] = static_cast<int32_t>(rem % static_cast<size_t>(dims[i]));
        rem /= static_cast<size_t>(dims[i]);
      }
      size_t o = 0;
      for (int i = 0; i < rank; ++i)
        if (!reduced[i]) o = o * dims[i] + idx[i];
      sum[o] += x[flat];
      mag[o] += fabs(x[flat]);
    }
    for (size_t o = 0; o < got.size(); ++o) {
      ASSERT_NEAR(got[o], sum[o] / count, 1e-5 * mag[o] / count + 1e-7) << "out " << o << " count " << count;
    }
  }
}

TEST(Mean, LongReductionIsPairwiseAccurate) {
  // 65536 copies of 0.1f (inexact in binary). A sequential float sum drifts by
  // ~6e-4 relative here; the pairwise sum stays within a few ulp, along the
  // contiguous inner axis and along a strided outer axis alike.
  const int n = 1 << 16;
  const std::vector<float> x(n, 0.1f);
  const double tol = 5e-7 * 0.1;
  EXPECT_NEAR(run({n}, x, {0}, {})[0], 0.1, tol);
  const std::vector<float> col = run({n / 4, 4}, x, {0}, {4});
  for (float v : col) EXPECT_NEAR(v, 0.1, tol);
  const std::vector<float> mid = run({2, n / 8, 4}, x, {1}, {2, 4});
  for (float v : mid) EXPECT_NEAR(v, 0.1, tol);
}

}  // namespace
}  // namespace floe::ref
