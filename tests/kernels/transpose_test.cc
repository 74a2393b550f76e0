// SPDX-License-Identifier: Apache-2.0
// Tests for ref::transpose: hand-computed 2-D and NCHW<->NHWC cases, a perm that
// keeps the last axis (row memcpy path), element sizes 1/2/4/8 and an odd size
// (3 bytes), rank 0 and empty tensors, and a seeded random comparison against
// per-element index arithmetic for ranks 1..6. Exact: the kernel moves bytes.
#include "runtime/kernels/reference/transpose.h"

#include <gtest/gtest.h>
#include <stdint.h>

#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace floe::ref {
namespace {

template <typename T>
std::vector<T> run(const std::vector<T>& in, std::vector<int32_t> in_dims, std::vector<int32_t> perm,
                   size_t element_size = sizeof(T)) {
  std::vector<int32_t> out_dims(in_dims.size());
  for (size_t i = 0; i < perm.size(); ++i) out_dims[i] = in_dims[static_cast<size_t>(perm[i])];
  std::vector<T> out(in.size(), static_cast<T>(99));
  TransposeParams params;
  params.perm = perm.data();
  params.element_size = element_size;
  transpose(params, In<void>{in.data(), Shape{in_dims.data(), static_cast<int32_t>(in_dims.size())}},
            Out<void>{out.data(), Shape{out_dims.data(), static_cast<int32_t>(out_dims.size())}});
  return out;
}

TEST(Transpose, Matrix) {
  // [[1,2,3],[4,5,6]]^T = [[1,4],[2,5],[3,6]]
  EXPECT_EQ(run<float>({1, 2, 3, 4, 5, 6}, {2, 3}, {1, 0}), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(Transpose, NchwToNhwcAndBack) {
  // N=1, C=2, H=2, W=2: channel planes [0..3] and [10..13].
  const std::vector<int32_t> nchw = {0, 1, 2, 3, 10, 11, 12, 13};
  const std::vector<int32_t> nhwc = run<int32_t>(nchw, {1, 2, 2, 2}, {0, 2, 3, 1});
  EXPECT_EQ(nhwc, (std::vector<int32_t>{0, 10, 1, 11, 2, 12, 3, 13}));
  EXPECT_EQ(run<int32_t>(nhwc, {1, 2, 2, 2}, {0, 3, 1, 2}), nchw);
}

TEST(Transpose, KeepsLastAxisUsesRows) {
  // [2,3,2] with perm (1,0,2): rows of 2 move as blocks.
  const std::vector<int16_t> in = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  EXPECT_EQ(run<int16_t>(in, {2, 3, 2}, {1, 0, 2}),
            (std::vector<int16_t>{1, 2, 7, 8, 3, 4, 9, 10, 5, 6, 11, 12}));
}

TEST(Transpose, ElementSizes) {
  EXPECT_EQ(run<uint8_t>({1, 2, 3, 4, 5, 6}, {3, 2}, {1, 0}), (std::vector<uint8_t>{1, 3, 5, 2, 4, 6}));
  EXPECT_EQ(run<int64_t>({int64_t{1} << 40, 2, 3, -4}, {2, 2}, {1, 0}),
            (std::vector<int64_t>{int64_t{1} << 40, 3, 2, -4}));
  // 3-byte elements go through the generic path.
  struct E3 {
    uint8_t b[3];
  };
  std::vector<uint8_t> bytes = {1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6};
  std::vector<int32_t> dims = {2, 3}, perm = {1, 0}, out_dims = {3, 2};
  std::vector<uint8_t> out(bytes.size(), 0);
  TransposeParams params;
  params.perm = perm.data();
  params.element_size = sizeof(E3);
  transpose(params, In<void>{bytes.data(), Shape{dims.data(), 2}}, Out<void>{out.data(), Shape{out_dims.data(), 2}});
  EXPECT_EQ(out, (std::vector<uint8_t>{1, 1, 1, 4, 4, 4, 2, 2, 2, 5, 5, 5, 3, 3, 3, 6, 6, 6}));
}

TEST(Transpose, ScalarAndEmpty) {
  float in = 7.0f, out = 0.0f;
  TransposeParams params;
  transpose(params, In<void>{&in, Shape{}}, Out<void>{&out, Shape{}});
  EXPECT_EQ(out, 7.0f);
  std::vector<int32_t> dims = {2, 0, 3}, perm = {2, 1, 0}, out_dims = {3, 0, 2};
  params.perm = perm.data();
  transpose(params, In<void>{nullptr, Shape{dims.data(), 3}}, Out<void>{nullptr, Shape{out_dims.data(), 3}});
}

TEST(Transpose, RandomMatchesIndexing) {
  const uint32_t seed = 2718u;
  std::mt19937 rng(seed);
  for (int iter = 0; iter < 300; ++iter) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " iteration " << iter);
    const int rank = 1 + static_cast<int>(rng() % 6);
    std::vector<int32_t> dims(static_cast<size_t>(rank));
    for (int32_t& d : dims) d = 1 + static_cast<int32_t>(rng() % 4);
    std::vector<int32_t> perm(static_cast<size_t>(rank));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    size_t n = 1;
    for (int32_t d : dims) n *= static_cast<size_t>(d);
    std::vector<float> in(n);
    for (float& v : in) v = static_cast<float>(rng() % 1000);
    const std::vector<float> got = run<float>(in, dims, perm);
    // Expected: out[o] = in[sum_i o_i * in_stride[perm[i]]].
    std::vector<size_t> in_stride(static_cast<size_t>(rank));
    size_t s = 1;
    for (int d = rank - 1; d >= 0; --d) {
      in_stride[static_cast<size_t>(d)] = s;
      s *= static_cast<size_t>(dims[static_cast<size_t>(d)]);
    }
    std::vector<int32_t> out_dims(static_cast<size_t>(rank));
    for (int i = 0; i < rank; ++i) out_dims[static_cast<size_t>(i)] = dims[static_cast<size_t>(perm[static_cast<size_t>(i)])];
    for (size_t o = 0; o < n; ++o) {
      size_t rem = o, src = 0;
      for (int i = rank - 1; i >= 0; --i) {
        const size_t c = rem % static_cast<size_t>(out_dims[static_cast<size_t>(i)]);
        rem /= static_cast<size_t>(out_dims[static_cast<size_t>(i)]);
        src += c * in_stride[static_cast<size_t>(perm[static_cast<size_t>(i)])];
      }
      ASSERT_EQ(got[o], in[src]) << "element " << o;
    }
  }
}

}  // namespace
}  // namespace floe::ref
