// SPDX-License-Identifier: Apache-2.0
// Tests for ref::softmax_f32: exact small rows, huge positive/negative logits
// (no overflow / NaN thanks to the max shift), beta (positive and negative), rows
// of higher-rank tensors, and in-place use. Tolerance: 1e-6 relative + 1e-7
// absolute against softmax evaluated in double (a few float roundings per value).
#include "runtime/kernels/reference/softmax.h"

#include <gtest/gtest.h>
#include <math.h>

#include <vector>

namespace floe::ref {
namespace {

std::vector<float> run(std::vector<int32_t> dims, const std::vector<float>& in, float beta = 1.0f) {
  std::vector<float> out(in.size(), -12345.0f);
  const Shape shape{dims.data(), static_cast<int32_t>(dims.size())};
  SoftmaxParams params;
  params.beta = beta;
  softmax_f32(params, SoftmaxOperands{{in.data(), shape}, {out.data(), shape}});
  return out;
}

// Softmax of one row in double, shifted by the max (the unshifted sum would
// overflow even a double at 1000).
std::vector<double> reference_row(const std::vector<float>& row, double beta) {
  double m = -INFINITY;
  for (float v : row) m = fmax(m, beta * v);
  double sum = 0;
  std::vector<double> e;
  for (float v : row) {
    e.push_back(exp(beta * v - m));
    sum += e.back();
  }
  for (double& v : e) v /= sum;
  return e;
}

void expect_row(const float* got, const std::vector<float>& row, double beta) {
  const std::vector<double> want = reference_row(row, beta);
  for (size_t i = 0; i < row.size(); ++i) {
    ASSERT_FALSE(isnan(got[i])) << i;
    EXPECT_NEAR(got[i], want[i], 1e-7 + 1e-6 * want[i]) << i;
  }
}

TEST(Softmax, HandComputedRow) {
  // softmax(0,1,2) = e^i / (1 + e + e^2) = 0.0900306, 0.2447285, 0.6652410.
  const std::vector<float> out = run({3}, {0, 1, 2});
  EXPECT_NEAR(out[0], 0.09003057f, 1e-7f);
  EXPECT_NEAR(out[1], 0.24472847f, 1e-7f);
  EXPECT_NEAR(out[2], 0.66524096f, 1e-7f);
  // Equal logits: exactly uniform.
  EXPECT_EQ(run({4}, {3, 3, 3, 3}), (std::vector<float>{0.25f, 0.25f, 0.25f, 0.25f}));
}

TEST(Softmax, LargeLogitsDoNotOverflow) {
  // Shift invariance: +-1000 gives the same as (0,1,2); exp(1000) would be inf.
  const std::vector<float> base = run({3}, {0, 1, 2});
  const std::vector<float> big = run({3}, {1000, 1001, 1002});
  const std::vector<float> small = run({3}, {-1000, -999, -998});
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(big[i], base[i], 1e-7f) << i;
    EXPECT_NEAR(small[i], base[i], 1e-7f) << i;
  }
  // The max is found wherever it sits: a pivot taken from the first element
  // would overflow exp(+2000) here.
  const std::vector<float> mixed = run({3}, {-1000, 1002, 1001});
  EXPECT_NEAR(mixed[0], 0.0f, 1e-30f);
  EXPECT_NEAR(mixed[1], 0.7310586f, 1e-7f);  // e / (e + 1)
  EXPECT_NEAR(mixed[2], 0.2689414f, 1e-7f);
  // A dominant logit takes (almost) all the mass; the rest underflow to 0, not NaN.
  const std::vector<float> dom = run({3}, {3e38f, 0, -3e38f});
  EXPECT_EQ(dom, (std::vector<float>{1, 0, 0}));
}

TEST(Softmax, Beta) {
  const std::vector<float> row = {0.5f, -1, 2, 0};
  expect_row(run({4}, row, 2.0f).data(), row, 2.0);
  expect_row(run({4}, row, 0.25f).data(), row, 0.25);
  // Negative beta favours the smallest logit and must stay finite for large ones.
  const std::vector<float> wide = {500, -500, 0};
  const std::vector<float> out = run({3}, wide, -1.0f);
  expect_row(out.data(), wide, -1.0);
  EXPECT_EQ(out[1], 1.0f);
  // beta = 0: uniform.
  EXPECT_EQ(run({2}, {7, -7}, 0.0f), (std::vector<float>{0.5f, 0.5f}));
}

TEST(Softmax, RowsOfRank3TensorAreIndependent) {
  // [2,2,3]: four rows of three, each normalised on its own.
  const std::vector<float> in = {1, 2, 3, -1, 0, 1, 100, 100, 90, 0, 0, 0};
  const std::vector<float> out = run({2, 2, 3}, in);
  for (int r = 0; r < 4; ++r) {
    const std::vector<float> row(in.begin() + 3 * r, in.begin() + 3 * r + 3);
    expect_row(out.data() + 3 * r, row, 1.0);
    EXPECT_NEAR(out[3 * r] + out[3 * r + 1] + out[3 * r + 2], 1.0f, 2e-7f) << r;
  }
}

TEST(Softmax, SingleElementRowsAreOne) {
  EXPECT_EQ(run({3, 1}, {-50, 0, 1e30f}), (std::vector<float>{1, 1, 1}));
}

TEST(Softmax, InPlace) {
  std::vector<float> buf = {1, 2, 3, 4, -4, 0.5f};
  const std::vector<float> want = run({2, 3}, buf);
  const int32_t dims[2] = {2, 3};
  softmax_f32(SoftmaxParams{}, SoftmaxOperands{{buf.data(), {dims, 2}}, {buf.data(), {dims, 2}}});
  EXPECT_EQ(buf, want);
}

}  // namespace
}  // namespace floe::ref
