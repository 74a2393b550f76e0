// SPDX-License-Identifier: Apache-2.0
// Tests for ref::pad: CONSTANT with zero and non-zero values (float, int64,
// uint8), REFLECT and SYMMETRIC against TF's documented MirrorPad examples,
// asymmetric paddings, empty input with a constant border, rank 0, and a
// seeded random comparison against per-element coordinate mapping.
#include "runtime/kernels/reference/pad.h"

#include <gtest/gtest.h>
#include <stdint.h>

#include <random>
#include <vector>

namespace floe::ref {
namespace {

template <typename T>
std::vector<T> run(const std::vector<T>& in, std::vector<int32_t> dims, std::vector<int32_t> paddings,
                   PadMode mode, T value = T(0)) {
  std::vector<int32_t> out_dims(dims.size());
  size_t n = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    out_dims[d] = dims[d] + paddings[2 * d] + paddings[2 * d + 1];
    n *= static_cast<size_t>(out_dims[d]);
  }
  std::vector<T> out(n, static_cast<T>(99));
  PadParams params;
  params.paddings = paddings.data();
  params.mode = mode;
  params.element_size = sizeof(T);
  params.constant_value = &value;
  pad(params, In<void>{in.data(), Shape{dims.data(), static_cast<int32_t>(dims.size())}},
      Out<void>{out.data(), Shape{out_dims.data(), static_cast<int32_t>(out_dims.size())}});
  return out;
}

TEST(Pad, ConstantZeroFloat) {
  // [[1,2],[3,4]] padded (1,0) rows and (0,2) cols with 0.
  EXPECT_EQ(run<float>({1, 2, 3, 4}, {2, 2}, {1, 0, 0, 2}, PadMode::kConstant),
            (std::vector<float>{0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0}));
}

TEST(Pad, ConstantValueOtherDtypes) {
  EXPECT_EQ(run<int64_t>({5, 6}, {2}, {2, 1}, PadMode::kConstant, int64_t{1} << 40),
            (std::vector<int64_t>{int64_t{1} << 40, int64_t{1} << 40, 5, 6, int64_t{1} << 40}));
  EXPECT_EQ(run<uint8_t>({1}, {1, 1}, {1, 1, 1, 1}, PadMode::kConstant, uint8_t{7}),
            (std::vector<uint8_t>{7, 7, 7, 7, 1, 7, 7, 7, 7}));
}

TEST(Pad, MirrorModesMatchTfDocs) {
  // tf.pad docs: t = [[1,2,3],[4,5,6]], paddings [[1,1],[2,2]].
  const std::vector<int32_t> t = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(run<int32_t>(t, {2, 3}, {1, 1, 2, 2}, PadMode::kReflect),
            (std::vector<int32_t>{6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4,
                                  3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(run<int32_t>(t, {2, 3}, {1, 1, 2, 2}, PadMode::kSymmetric),
            (std::vector<int32_t>{2, 1, 1, 2, 3, 3, 2, 2, 1, 1, 2, 3, 3, 2, 5, 4, 4, 5, 6, 6, 5,
                                  5, 4, 4, 5, 6, 6, 5}));
}

TEST(Pad, EmptyInputAndScalar) {
  EXPECT_EQ(run<float>({}, {0, 2}, {1, 1, 0, 0}, PadMode::kConstant, 3.0f),
            (std::vector<float>{3, 3, 3, 3}));
  EXPECT_EQ(run<float>({4.0f}, {}, {}, PadMode::kConstant), (std::vector<float>{4.0f}));
}

int32_t mirror(PadMode mode, int32_t i, int32_t n) {
  if (i >= 0 && i < n) return i;
  if (mode == PadMode::kConstant) return -1;
  if (mode == PadMode::kReflect) return i < 0 ? -i : 2 * (n - 1) - i;
  return i < 0 ? -i - 1 : 2 * n - 1 - i;
}

TEST(Pad, RandomMatchesCoordinateMapping) {
  const uint32_t seed = 1414u;
  std::mt19937 rng(seed);
  for (int iter = 0; iter < 300; ++iter) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " iteration " << iter);
    const PadMode mode = static_cast<PadMode>(rng() % 3);
    const int rank = 1 + static_cast<int>(rng() % 4);
    std::vector<int32_t> dims(static_cast<size_t>(rank)), paddings(static_cast<size_t>(2 * rank));
    for (int d = 0; d < rank; ++d) {
      dims[static_cast<size_t>(d)] = 1 + static_cast<int32_t>(rng() % 4);
      const int32_t limit = mode == PadMode::kReflect ? dims[static_cast<size_t>(d)] - 1
                            : mode == PadMode::kSymmetric ? dims[static_cast<size_t>(d)] : 3;
      paddings[static_cast<size_t>(2 * d)] = static_cast<int32_t>(rng() % static_cast<uint32_t>(limit + 1));
      paddings[static_cast<size_t>(2 * d + 1)] = static_cast<int32_t>(rng() % static_cast<uint32_t>(limit + 1));
    }
    size_t n = 1;
    for (int32_t d : dims) n *= static_cast<size_t>(d);
    std::vector<float> in(n);
    for (float& v : in) v = static_cast<float>(rng() % 1000);
    const std::vector<float> got = run<float>(in, dims, paddings, mode, -1.0f);
    std::vector<int32_t> out_dims(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d) {
      out_dims[static_cast<size_t>(d)] = dims[static_cast<size_t>(d)] + paddings[static_cast<size_t>(2 * d)] +
                                         paddings[static_cast<size_t>(2 * d + 1)];
    }
    for (size_t o = 0; o < got.size(); ++o) {
      size_t rem = o, src = 0, stride = 1;
      bool border = false;
      for (int d = rank - 1; d >= 0; --d) {
        const size_t ud = static_cast<size_t>(d);
        const int32_t c = static_cast<int32_t>(rem % static_cast<size_t>(out_dims[ud]));
        rem /= static_cast<size_t>(out_dims[ud]);
        const int32_t s = mirror(mode, c - paddings[2 * ud], dims[ud]);
        if (s < 0) border = true;
        src += static_cast<size_t>(s < 0 ? 0 : s) * stride;
        stride *= static_cast<size_t>(dims[ud]);
      }
      ASSERT_EQ(got[o], border ? -1.0f : in[src]) << "element " << o;
    }
  }
}

}  // namespace
}  // namespace floe::ref
