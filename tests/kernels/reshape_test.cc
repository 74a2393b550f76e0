// SPDX-License-Identifier: Apache-2.0
// Tests for ref::reshape: a plain copy between buffers, a no-op when input and
// output are the same buffer, correct results for partially overlapping buffers
// in both directions (memmove semantics), and zero bytes. Exact.
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

TEST(Reshape, OverlappingBuffers) {
  std::vector<uint8_t> fwd = {1, 2, 3, 4, 5, 6, 0, 0};
  reshape(fwd.data(), fwd.data() + 2, 6);  // output after input
  EXPECT_EQ(fwd, (std::vector<uint8_t>{1, 2, 1, 2, 3, 4, 5, 6}));
  std::vector<uint8_t> back = {0, 0, 1, 2, 3, 4, 5, 6};
  reshape(back.data() + 2, back.data(), 6);  // output before input
  EXPECT_EQ(back, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 5, 6}));
}

TEST(Reshape, ZeroBytesWithNullPointers) {
  reshape(nullptr, nullptr, 0);
  uint8_t dst = 42;
  reshape(nullptr, &dst, 0);
  EXPECT_EQ(dst, 42);
}

}  // namespace
}  // namespace floe::ref
