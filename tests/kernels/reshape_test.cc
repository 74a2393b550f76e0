// SPDX-License-Identifier: Apache-2.0
// Tests for ref::reshape: a plain copy between buffers, a no-op when input and
// output are the same buffer, and zero bytes. Exact. (Partly overlapping
// buffers never reach it: Model::Load refuses such a plan,
// Model.ReshapeOutputMayAliasItsInputExactlyButNotInPart.)
#include "runtime/kernels/reference/reshape.h"

#include <gtest/gtest.h>
#include <stdint.h>

#include <vector>

namespace floe::ref {
namespace {

TEST(Reshape, CopiesBytes) {
  const std::vector<float> in = {1, 2, 3, 4, 5, 6};
  std::vector<float> out(6, 0);
  reshape(in.data(), out.data(), in.size() * sizeof(float));
  EXPECT_EQ(out, in);
}

TEST(Reshape, SameBufferIsUntouched) {
  std::vector<int32_t> buf = {7, 8, 9};
  reshape(buf.data(), buf.data(), buf.size() * sizeof(int32_t));
  EXPECT_EQ(buf, (std::vector<int32_t>{7, 8, 9}));
}

TEST(Reshape, ZeroBytesWithNullPointers) {
  reshape(nullptr, nullptr, 0);
  uint8_t dst = 42;
  reshape(nullptr, &dst, 0);
  EXPECT_EQ(dst, 42);
}

}  // namespace
}  // namespace floe::ref
