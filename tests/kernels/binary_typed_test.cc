// SPDX-License-Identifier: Apache-2.0
// Tests for the typed binary kernels (binary.h): TF integer division
// semantics (Div/TruncateDiv truncate, FloorDiv floors, FloorMod takes the
// divisor's sign, INT_MIN / -1 wraps, zero divisor reported), float FloorMod /
// Pow / Atan2 / SquaredDifference, comparisons and logical ops with
// broadcasting, and a seeded comparison of the broadcast walk against a naive
// index computation for random shapes.
#include "runtime/kernels/reference/binary.h"

#include <gtest/gtest.h>
#include <math.h>

#include <cstdint>
#include <random>
#include <vector>

namespace floe::ref {
namespace {

template <typename T, typename O = T>
std::vector<O> run_arith(ArithOp op, DType t, std::vector<T> a, std::vector<int32_t> sa, std::vector<T> b,
                         std::vector<int32_t> sb, std::vector<int32_t> so, bool* ok = nullptr) {
  int64_t n = 1;
  for (int32_t d : so) n *= d;
  std::vector<O> out(static_cast<size_t>(n));
  const TypedBinaryOperands ops{{a.data(), {sa.data(), static_cast<int32_t>(sa.size())}},
                                {b.data(), {sb.data(), static_cast<int32_t>(sb.size())}},
                                {out.data(), {so.data(), static_cast<int32_t>(so.size())}}};
  const bool r = arith(op, t, ops);
  if (ok) *ok = r;
  return out;
}

TEST(BinaryOps, IntegerDivisionFamilies) {
  const std::vector<int32_t> a = {7, -7, 7, -7, 0}, b = {2, 2, -2, -2, 3};
  const std::vector<int32_t> s = {5};
  EXPECT_EQ((run_arith<int32_t>(ArithOp::kDiv, DType::kInt32, a, s, b, s, s)),
            (std::vector<int32_t>{3, -3, -3, 3, 0}));
  EXPECT_EQ((run_arith<int32_t>(ArithOp::kTruncateDiv, DType::kInt32, a, s, b, s, s)),
            (std::vector<int32_t>{3, -3, -3, 3, 0}));
  EXPECT_EQ((run_arith<int32_t>(ArithOp::kFloorDiv, DType::kInt32, a, s, b, s, s)),
            (std::vector<int32_t>{3, -4, -4, 3, 0}));
  EXPECT_EQ((run_arith<int32_t>(ArithOp::kFloorMod, DType::kInt32, a, s, b, s, s)),
            (std::vector<int32_t>{1, 1, -1, -1, 0}));
}

TEST(BinaryOps, IntMinByMinusOneWrapsAndZeroDivisorFails) {
  const std::vector<int32_t> s = {1};
  EXPECT_EQ((run_arith<int64_t>(ArithOp::kFloorDiv, DType::kInt64, {INT64_MIN}, s, {-1}, s, s)),
            (std::vector<int64_t>{INT64_MIN}));
  bool ok = true;
  run_arith<int32_t>(ArithOp::kFloorMod, DType::kInt32, {5}, s, {0}, s, s, &ok);
  EXPECT_FALSE(ok);
  run_arith<int32_t>(ArithOp::kDiv, DType::kInt32, {5}, s, {0}, s, s, &ok);
  EXPECT_FALSE(ok);
}

TEST(BinaryOps, BitwiseAndOnIntegersBroadcastsAndRefusesFloats) {
  EXPECT_EQ((run_arith<int32_t>(ArithOp::kBitwiseAnd, DType::kInt32, {12, -1, -8, 0x7fffffff}, {4}, {10}, {1}, {4})),
            (std::vector<int32_t>{8, 10, 8, 10}));
  EXPECT_EQ((run_arith<int64_t>(ArithOp::kBitwiseAnd, DType::kInt64, {int64_t{1} << 40 | 5, -2}, {2, 1},
                                {-1, 3}, {1, 2}, {2, 2})),
            (std::vector<int64_t>{int64_t{1} << 40 | 5, 1, -2, 2}));
  bool ok = true;
  run_arith<float>(ArithOp::kBitwiseAnd, DType::kFloat32, {1}, {1}, {1}, {1}, {1}, &ok);
  EXPECT_FALSE(ok);
  EXPECT_FALSE(arith_supports(ArithOp::kBitwiseAnd, DType::kFloat32));
  EXPECT_TRUE(arith_supports(ArithOp::kBitwiseAnd, DType::kInt64));
}

TEST(BinaryOps, FloatFloorModPowAtan2) {
  const std::vector<int32_t> s = {4};
  const auto m = run_arith<float>(ArithOp::kFloorMod, DType::kFloat32, {5.5f, -5.5f, 5.5f, -5.5f}, s,
                                  {2, 2, -2, -2}, s, s);
  EXPECT_EQ(m, (std::vector<float>{1.5f, 0.5f, -0.5f, -1.5f}));
  const auto p = run_arith<float>(ArithOp::kPow, DType::kFloat32, {2, 9, 4, -2}, s, {10, 0.5f, -1, 3}, s, s);
  EXPECT_EQ(p, (std::vector<float>{1024, 3, 0.25f, -8}));
  const auto t = run_arith<float>(ArithOp::kAtan2, DType::kFloat32, {1, 1, -1, 0}, s, {1, -1, -1, -1}, s, s);
  EXPECT_NEAR(t[0], M_PI / 4, 1e-6);
  EXPECT_NEAR(t[1], 3 * M_PI / 4, 1e-6);
  EXPECT_NEAR(t[2], -3 * M_PI / 4, 1e-6);
  EXPECT_NEAR(t[3], M_PI, 1e-6);
  const auto d = run_arith<int64_t>(ArithOp::kSquaredDifference, DType::kInt64, {3, -4}, {2}, {5}, {1}, {2});
  EXPECT_EQ(d, (std::vector<int64_t>{4, 81}));
  EXPECT_EQ((run_arith<int32_t>(ArithOp::kPow, DType::kInt32, {3, -2, 5}, {3}, {4, 3, 0}, {3}, {3})),
            (std::vector<int32_t>{81, -8, 1}));
  // An integer power past the type's range wraps (two's complement, as TF's
  // CPU kernel computes it), never undefined behaviour: 48400^2 = 2342560000.
  EXPECT_EQ((run_arith<int32_t>(ArithOp::kPow, DType::kInt32, {48400, 3}, {2}, {2, 41}, {2}, {2})),
            (std::vector<int32_t>{static_cast<int32_t>(2342560000u), 2069870691}));  // 3^41 mod 2^32
}

TEST(BinaryOps, ComparisonsBroadcastToBool) {
  std::vector<float> a = {1, 2, 3, 4, 5, 6};  // [2,3]
  std::vector<float> b = {2, 5};              // [2,1]
  std::vector<int32_t> sa = {2, 3}, sb = {2, 1}, so = {2, 3};
  std::vector<uint8_t> out(6);
  const TypedBinaryOperands ops{{a.data(), {sa.data(), 2}}, {b.data(), {sb.data(), 2}}, {out.data(), {so.data(), 2}}};
  compare(CompareOp::kGreaterEqual, DType::kFloat32, ops);
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 1, 1, 0, 1, 1}));
  compare(CompareOp::kNotEqual, DType::kFloat32, ops);
  EXPECT_EQ(out, (std::vector<uint8_t>{1, 0, 1, 1, 0, 1}));
  EXPECT_TRUE(compare_supports(CompareOp::kEqual, DType::kBool));
  EXPECT_FALSE(compare_supports(CompareOp::kLess, DType::kBool));
}

TEST(BinaryOps, Logical) {
  std::vector<uint8_t> a = {0, 1, 0, 1}, b = {0, 0, 1, 1}, out(4);
  std::vector<int32_t> s = {4};
  const TypedBinaryOperands ops{{a.data(), {s.data(), 1}}, {b.data(), {s.data(), 1}}, {out.data(), {s.data(), 1}}};
  logical(LogicalOp::kAnd, ops);
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 0, 0, 1}));
  logical(LogicalOp::kOr, ops);
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 1, 1, 1}));
}

// Seeded: random broadcast shapes (rank 1..4), int32 Sub against a naive walk.
TEST(BinaryOps, RandomBroadcastMatchesNaive) {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 200; ++trial) {
    const int rank = 1 + static_cast<int>(rng() % 4);
    std::vector<int32_t> so(static_cast<size_t>(rank)), sa, sb;
    for (auto& d : so) d = 1 + static_cast<int32_t>(rng() % 4);
    const int ra = 1 + static_cast<int>(rng() % rank), rb = 1 + static_cast<int>(rng() % rank);
    for (int i = rank - ra; i < rank; ++i) sa.push_back(rng() % 2 ? so[static_cast<size_t>(i)] : 1);
    for (int i = rank - rb; i < rank; ++i) sb.push_back(rng() % 2 ? so[static_cast<size_t>(i)] : 1);
    // The output is the broadcast of a and b: dims neither operand holds become 1.
    for (int i = 0; i < rank; ++i) {
      const int ia = i - (rank - ra), ib = i - (rank - rb);
      const int32_t da = ia >= 0 ? sa[static_cast<size_t>(ia)] : 1, db = ib >= 0 ? sb[static_cast<size_t>(ib)] : 1;
      so[static_cast<size_t>(i)] = da > db ? da : db;
    }
    auto count = [](const std::vector<int32_t>& s) { int64_t n = 1; for (int32_t d : s) n *= d; return n; };
    std::vector<int32_t> a(static_cast<size_t>(count(sa))), b(static_cast<size_t>(count(sb)));
    for (auto& v : a) v = static_cast<int32_t>(rng() % 1000);
    for (auto& v : b) v = static_cast<int32_t>(rng() % 1000);
    const auto got = run_arith<int32_t>(ArithOp::kSub, DType::kInt32, a, sa, b, sb, so);
    for (int64_t o = 0; o < count(so); ++o) {
      int64_t rem = o, ia = 0, ib = 0, ma = 1, mb = 1;
      for (int d = rank - 1; d >= 0; --d) {
        const int64_t i = rem % so[static_cast<size_t>(d)];
        rem /= so[static_cast<size_t>(d)];
        const int da = d - (rank - ra), db = d - (rank - rb);
        if (da >= 0) { ia += (sa[static_cast<size_t>(da)] == 1 ? 0 : i) * ma; ma *= sa[static_cast<size_t>(da)]; }
        if (db >= 0) { ib += (sb[static_cast<size_t>(db)] == 1 ? 0 : i) * mb; mb *= sb[static_cast<size_t>(db)]; }
      }
      ASSERT_EQ(got[static_cast<size_t>(o)], a[static_cast<size_t>(ia)] - b[static_cast<size_t>(ib)]) << "trial " << trial;
    }
  }
}

}  // namespace
}  // namespace floe::ref
