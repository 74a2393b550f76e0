// SPDX-License-Identifier: Apache-2.0
// Tests for ref::concat: axis 0, a middle axis and the last axis, element sizes
// 1, 2, 4 and 8 bytes, inputs of different lengths along the axis, an empty
// input, rank 1, and a seeded random comparison with per-element indexing.
// Exact: the kernel only moves bytes.
#include "runtime/kernels/reference/concat.h"

#include <gtest/gtest.h>
#include <stdint.h>

#include <random>
#include <vector>

namespace floe::ref {
namespace {

template <typename T>
struct Tensor {
  std::vector<int32_t> dims;
  std::vector<T> data;
};

template <typename T>
std::vector<T> run(int32_t axis, const std::vector<Tensor<T>>& inputs, std::vector<int32_t> out_dims) {
  std::vector<In<void>> views;
  for (const Tensor<T>& t : inputs) {
    views.push_back(In<void>{t.data.empty() ? nullptr : t.data.data(),
                             Shape{t.dims.data(), static_cast<int32_t>(t.dims.size())}});
  }
  size_t n = 1;
  for (int32_t d : out_dims) n *= static_cast<size_t>(d);
  std::vector<T> out(n, static_cast<T>(99));
  ConcatParams params;
  params.axis = axis;
  params.element_size = sizeof(T);
  concat(params, views.data(), static_cast<int32_t>(views.size()),
         Out<void>{out.data(), Shape{out_dims.data(), static_cast<int32_t>(out_dims.size())}});
  return out;
}

TEST(Concat, Axis0Float) {
  // [1,3] ++ [2,3] -> [3,3]: rows stacked.
  const std::vector<Tensor<float>> in = {{{1, 3}, {1, 2, 3}}, {{2, 3}, {4, 5, 6, 7, 8, 9}}};
  EXPECT_EQ(run<float>(0, in, {3, 3}), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(Concat, MiddleAxisInt16) {
  // [2,1,2] ++ [2,2,2] -> [2,3,2]: per outer index, a's block then b's block.
  const std::vector<Tensor<int16_t>> in = {{{2, 1, 2}, {1, 2, 3, 4}},
                                           {{2, 2, 2}, {10, 11, 12, 13, 20, 21, 22, 23}}};
  EXPECT_EQ(run<int16_t>(1, in, {2, 3, 2}), (std::vector<int16_t>{1, 2, 10, 11, 12, 13, 3, 4, 20, 21, 22, 23}));
}

TEST(Concat, LastAxisUint8ThreeInputs) {
  // [2,1] ++ [2,3] ++ [2,2] -> [2,6]: interleaved row pieces.
  const std::vector<Tensor<uint8_t>> in = {
      {{2, 1}, {1, 2}}, {{2, 3}, {10, 11, 12, 20, 21, 22}}, {{2, 2}, {100, 101, 200, 201}}};
  EXPECT_EQ(run<uint8_t>(1, in, {2, 6}), (std::vector<uint8_t>{1, 10, 11, 12, 100, 101, 2, 20, 21, 22, 200, 201}));
}

TEST(Concat, LastAxisInt64) {
  const std::vector<Tensor<int64_t>> in = {{{2, 2}, {1, 2, 3, 4}}, {{2, 1}, {int64_t{1} << 40, -5}}};
  EXPECT_EQ(run<int64_t>(1, in, {2, 3}), (std::vector<int64_t>{1, 2, int64_t{1} << 40, 3, 4, -5}));
}

TEST(Concat, EmptyInputAndRank1) {
  const std::vector<Tensor<float>> in = {{{2}, {1, 2}}, {{0}, {}}, {{3}, {3, 4, 5}}};
  EXPECT_EQ(run<float>(0, in, {5}), (std::vector<float>{1, 2, 3, 4, 5}));
  const std::vector<Tensor<float>> mid = {{{2, 0, 2}, {}}, {{2, 1, 2}, {1, 2, 3, 4}}};
  EXPECT_EQ(run<float>(1, mid, {2, 1, 2}), (std::vector<float>{1, 2, 3, 4}));
}

TEST(Concat, RandomMatchesIndexing) {
  const uint32_t seed = 5150u;
  std::mt19937 rng(seed);
  for (int iter = 0; iter < 200; ++iter) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " iteration " << iter);
    const int rank = 1 + static_cast<int>(rng() % 5);
    const int axis = static_cast<int>(rng() % rank);
    std::vector<int32_t> base(rank);
    for (auto& d : base) d = 1 + static_cast<int32_t>(rng() % 4);
    const int count = 1 + static_cast<int>(rng() % 4);
    std::vector<Tensor<uint16_t>> in(count);
    std::vector<int32_t> out_dims = base;
    out_dims[axis] = 0;
    uint16_t next = 0;
    for (auto& t : in) {
      t.dims = base;
      t.dims[axis] = static_cast<int32_t>(rng() % 4);
      out_dims[axis] += t.dims[axis];
      size_t n = 1;
      for (int32_t d : t.dims) n *= static_cast<size_t>(d);
      for (size_t i = 0; i < n; ++i) t.data.push_back(next++);
    }
    const std::vector<uint16_t> got = run<uint16_t>(axis, in, out_dims);
    // out[..., j, ...] along axis comes from input k at j - (sum of earlier lengths).
    size_t flat = 0;
    std::vector<int32_t> idx(rank, 0);
    for (; flat < got.size(); ++flat) {
      size_t rem = flat;
      for (int i = rank - 1; i >= 0; --i) {
        idx[i] = static_cast<int32_t>(rem % static_cast<size_t>(out_dims[i]));
        rem /= static_cast<size_t>(out_dims[i]);
      }
      int32_t j = idx[axis];
      int k = 0;
      while (j >= in[k].dims[axis]) j -= in[k++].dims[axis];
      size_t off = 0;
      for (int i = 0; i < rank; ++i) off = off * in[k].dims[i] + (i == axis ? j : idx[i]);
      ASSERT_EQ(got[flat], in[k].data[off]) << "flat " << flat;
    }
  }
}

}  // namespace
}  // namespace floe::ref
