// SPDX-License-Identifier: Apache-2.0
// Tests for CROSS (cross.h): the right-handed basis identities, a worked
// product, int32 wrapping, and on seeded random int64 vectors (small enough
// not to overflow) the identities a cross product must satisfy exactly:
// a × b = −(b × a), (a × b) · a = 0 and (a × b) · b = 0, and Lagrange's
// |a × b|² = |a|²|b|² − (a · b)².
#include "runtime/kernels/reference/cross.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <random>
#include <vector>

namespace floe::ref {
namespace {

template <typename T>
std::vector<T> run_cross(DType dtype, const std::vector<T>& a, const std::vector<T>& b) {
  const int32_t dims[2] = {static_cast<int32_t>(a.size() / 3), 3};
  const Shape shape{dims, 2};
  std::vector<T> out(a.size());
  cross(dtype, {a.data(), shape}, {b.data(), shape}, {out.data(), shape});
  return out;
}

TEST(Cross, FloatBasisAndAWorkedProduct) {
  EXPECT_EQ(run_cross<float>(DType::kFloat32, {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 1, 2, 3},
                             {0, 1, 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 4, 5, 6}),
            (std::vector<float>{0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, -1, -3, 6, -3}));
}

TEST(Cross, Int32WrapsInItsDtype) {
  // (INT_MAX, 2, 0) × (0, 2, 1) = (2, −INT_MAX, 2·INT_MAX), the last wrapping to −2.
  EXPECT_EQ(run_cross<int32_t>(DType::kInt32, {INT_MAX, 2, 0}, {0, 2, 1}), (std::vector<int32_t>{2, -INT_MAX, -2}));
}

TEST(Cross, RandomInt64VectorsSatisfyTheIdentities) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int64_t> value(-1000, 1000);
  const size_t count = 1000;
  std::vector<int64_t> a(3 * count), b(3 * count);
  for (auto& v : a) v = value(rng);
  for (auto& v : b) v = value(rng);
  const std::vector<int64_t> ab = run_cross<int64_t>(DType::kInt64, a, b);
  const std::vector<int64_t> ba = run_cross<int64_t>(DType::kInt64, b, a);
  auto dot = [](const int64_t* x, const int64_t* y) { return x[0] * y[0] + x[1] * y[1] + x[2] * y[2]; };
  for (size_t i = 0; i < count; ++i) {
    const int64_t *x = &a[3 * i], *y = &b[3 * i], *c = &ab[3 * i];
    for (int k = 0; k < 3; ++k) ASSERT_EQ(c[k], -ba[3 * i + static_cast<size_t>(k)]) << "vector " << i;
    ASSERT_EQ(dot(c, x), 0) << "vector " << i;
    ASSERT_EQ(dot(c, y), 0) << "vector " << i;
    ASSERT_EQ(dot(c, c), dot(x, x) * dot(y, y) - dot(x, y) * dot(x, y)) << "vector " << i;
  }
}

TEST(Cross, SupportsTheDtypesItsPrepareAccepts) {
  EXPECT_TRUE(cross_supports(DType::kFloat32));
  EXPECT_TRUE(cross_supports(DType::kInt32));
  EXPECT_TRUE(cross_supports(DType::kInt64));
  EXPECT_FALSE(cross_supports(DType::kInt8));
  EXPECT_FALSE(cross_supports(DType::kBool));
}

}  // namespace
}  // namespace floe::ref
