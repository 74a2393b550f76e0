// SPDX-License-Identifier: Apache-2.0
// Tests for the data-movement and reduction kernels: reduce.h (Sum/Prod/Max/
// Min over arbitrary axis sets vs a naive loop, int Mean truncation, All/Any,
// ArgMax ties -> first index), slice (strided slice with negative strides =
// ReverseV2, tile), select (three-way broadcast), gather (axis, batch_dims,
// out-of-range index reported), gather_nd and one_hot, scatter_nd (every mode
// against a per-row loop, integer division by zero and the most negative
// value divided by -1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "runtime/kernels/reference/gather.h"
#include "runtime/kernels/reference/reduce.h"
#include "runtime/kernels/reference/scatter.h"
#include "runtime/kernels/reference/select.h"
#include "runtime/kernels/reference/slice.h"

namespace floe::ref {
namespace {

Shape shape_of(const std::vector<int32_t>& d) { return Shape{d.data(), static_cast<int32_t>(d.size())}; }

TEST(ReduceOps, RandomAxisSetsMatchNaive) {
  std::mt19937 rng(7);
  const std::vector<int32_t> dims = {3, 4, 2, 5};
  std::vector<int32_t> in(120);
  for (auto& v : in) v = static_cast<int32_t>(rng() % 21) - 10;
  for (int mask = 1; mask < 16; ++mask) {
    std::vector<int32_t> axes, out_dims;
    for (int d = 0; d < 4; ++d) {
      if (mask >> d & 1) axes.push_back(d); else out_dims.push_back(dims[static_cast<size_t>(d)]);
    }
    int64_t n_out = 1;
    for (int32_t d : out_dims) n_out *= d;
    ReduceParams p;
    p.axes = axes.data();
    p.axis_count = static_cast<int32_t>(axes.size());
    for (ReduceKind kind : {ReduceKind::kSum, ReduceKind::kMax, ReduceKind::kMin, ReduceKind::kProd}) {
      std::vector<int32_t> out(static_cast<size_t>(n_out));
      reduce(kind, DType::kInt32, p, {in.data(), shape_of(dims)}, {out.data(), shape_of(out_dims)});
      std::vector<int32_t> want(static_cast<size_t>(n_out), kind == ReduceKind::kSum ? 0 : kind == ReduceKind::kProd ? 1
                                                                     : kind == ReduceKind::kMax ? INT32_MIN : INT32_MAX);
      for (int i = 0; i < 120; ++i) {
        int idx[4] = {i / 40, i / 10 % 4, i / 5 % 2, i % 5};
        int64_t o = 0;
        for (int d = 0; d < 4; ++d) {
          if (!(mask >> d & 1)) o = o * dims[static_cast<size_t>(d)] + idx[d];
        }
        int32_t& w = want[static_cast<size_t>(o)];
        const int32_t v = in[static_cast<size_t>(i)];
        // int32 sums/products wrap (as in TF): compute them in uint32, where that is defined.
        const uint32_t uw = static_cast<uint32_t>(w), uv = static_cast<uint32_t>(v);
        w = kind == ReduceKind::kSum ? static_cast<int32_t>(uw + uv) : kind == ReduceKind::kProd ? static_cast<int32_t>(uw * uv) : kind == ReduceKind::kMax ? (v > w ? v : w) : (v < w ? v : w);
      }
      ASSERT_EQ(out, want) << "mask " << mask << " kind " << static_cast<int>(kind);
    }
  }
}

TEST(ReduceOps, IntMeanAllAnyArgMax) {
  const std::vector<int32_t> d = {2, 3}, od = {2};
  std::vector<int32_t> in = {1, 2, 4, -1, -2, -4}, out(2);
  const int32_t axis[1] = {1};
  ReduceParams p;
  p.axes = axis;
  p.axis_count = 1;
  reduce(ReduceKind::kMean, DType::kInt32, p, {in.data(), shape_of(d)}, {out.data(), shape_of(od)});
  EXPECT_EQ(out, (std::vector<int32_t>{2, -2}));  // 7/3 and -7/3 truncate
  std::vector<uint8_t> b = {1, 1, 0, 0, 0, 0}, bo(2);
  reduce(ReduceKind::kAll, DType::kBool, p, {b.data(), shape_of(d)}, {bo.data(), shape_of(od)});
  EXPECT_EQ(bo, (std::vector<uint8_t>{0, 0}));
  reduce(ReduceKind::kAny, DType::kBool, p, {b.data(), shape_of(d)}, {bo.data(), shape_of(od)});
  EXPECT_EQ(bo, (std::vector<uint8_t>{1, 0}));
  std::vector<float> f = {3, 7, 7, 1, 1, 0};
  std::vector<int64_t> am(2);
  arg_reduce(true, DType::kFloat32, DType::kInt64, 1, {f.data(), shape_of(d)}, {am.data(), shape_of(od)});
  EXPECT_EQ(am, (std::vector<int64_t>{1, 0}));
  arg_reduce(false, DType::kFloat32, DType::kInt64, 1, {f.data(), shape_of(d)}, {am.data(), shape_of(od)});
  EXPECT_EQ(am, (std::vector<int64_t>{0, 2}));
}

TEST(Slice, StridedReverseAndTile) {
  const std::vector<int32_t> d = {2, 3}, od = {2, 2};
  std::vector<int16_t> in = {1, 2, 3, 4, 5, 6}, out(4);
  const int32_t begin[2] = {1, 2}, stride[2] = {-1, -2};
  StridedSliceParams p;
  p.begin = begin;
  p.stride = stride;
  p.element_size = 2;
  strided_slice(p, {in.data(), shape_of(d)}, {out.data(), shape_of(od)});
  EXPECT_EQ(out, (std::vector<int16_t>{6, 4, 3, 1}));
  const std::vector<int32_t> td = {4, 6};
  std::vector<int16_t> tiled(24);
  tile(2, {in.data(), shape_of(d)}, {tiled.data(), shape_of(td)});
  EXPECT_EQ(tiled, (std::vector<int16_t>{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}));
}

TEST(Select, ThreeWayBroadcast) {
  const std::vector<int32_t> cd = {2, 1}, xd = {3}, yd = {2, 3}, od = {2, 3};
  std::vector<uint8_t> c = {1, 0};
  std::vector<int64_t> x = {1, 2, 3}, y = {10, 20, 30, 40, 50, 60}, out(6);
  select(8, {{c.data(), shape_of(cd)}, {x.data(), shape_of(xd)}, {y.data(), shape_of(yd)}, {out.data(), shape_of(od)}});
  EXPECT_EQ(out, (std::vector<int64_t>{1, 2, 3, 40, 50, 60}));
}

TEST(Gather, AxisBatchDimsAndRangeCheck) {
  IndexFault fault;
  const std::vector<int32_t> pd = {2, 3}, id = {2}, od = {2, 2};
  std::vector<float> params = {1, 2, 3, 4, 5, 6}, out(4);
  std::vector<int32_t> idx = {2, 0};
  GatherParams g;
  g.axis = 1;
  EXPECT_TRUE(gather(g, {params.data(), shape_of(pd)}, {idx.data(), shape_of(id)}, {out.data(), shape_of(od)}, &fault));
  EXPECT_EQ(out, (std::vector<float>{3, 1, 6, 4}));
  // batch_dims = 1: row b picks params[b, idx[b]].
  const std::vector<int32_t> bid = {2, 1}, bod = {2, 1};
  std::vector<int32_t> bidx = {2, 0};
  std::vector<float> bout(2);
  g.batch_dims = 1;
  EXPECT_TRUE(gather(g, {params.data(), shape_of(pd)}, {bidx.data(), shape_of(bid)}, {bout.data(), shape_of(bod)}, &fault));
  EXPECT_EQ(bout, (std::vector<float>{3, 4}));
  idx = {3, 0};
  g.batch_dims = 0;
  EXPECT_FALSE(gather(g, {params.data(), shape_of(pd)}, {idx.data(), shape_of(id)}, {out.data(), shape_of(od)}, &fault));
  EXPECT_EQ(fault.position, 0);
  EXPECT_EQ(fault.value, 3);
  EXPECT_EQ(fault.bound, 3);
  idx = {0, -1};
  EXPECT_FALSE(gather(g, {params.data(), shape_of(pd)}, {idx.data(), shape_of(id)}, {out.data(), shape_of(od)}, &fault));
  EXPECT_EQ(fault.position, 1);
  EXPECT_EQ(fault.value, -1);
}

TEST(Gather, GatherNdAndOneHot) {
  IndexFault fault;
  const std::vector<int32_t> pd = {2, 3}, id = {2, 2}, od = {2};
  std::vector<int32_t> params = {1, 2, 3, 4, 5, 6}, out(2);
  std::vector<int64_t> idx = {1, 2, 0, 1};
  EXPECT_TRUE(gather_nd(4, true, {params.data(), shape_of(pd)}, {idx.data(), shape_of(id)}, {out.data(), shape_of(od)}, &fault));
  EXPECT_EQ(out, (std::vector<int32_t>{6, 2}));
  idx = {0, 0, 0, 3};  // indices[1] = [0, 3]: element 3 is outside dim 1
  EXPECT_FALSE(gather_nd(4, true, {params.data(), shape_of(pd)}, {idx.data(), shape_of(id)}, {out.data(), shape_of(od)}, &fault));
  EXPECT_EQ(fault.position, 3);
  EXPECT_EQ(fault.value, 3);
  EXPECT_EQ(fault.bound, 3);
  const std::vector<int32_t> hd = {3}, hod = {3, 2};
  std::vector<int32_t> hot_idx = {1, 5, 0};
  std::vector<float> hot(6);
  const float on = 1.5f, off = -1.0f;
  one_hot(4, false, 1, {hot_idx.data(), shape_of(hd)}, &on, &off, {hot.data(), shape_of(hod)});
  EXPECT_EQ(hot, (std::vector<float>{-1, 1.5f, -1, -1, 1.5f, -1}));
}

// Every mode on int64 data [6, 2], rows [5, 1] with duplicates, against the
// rows applied one by one with the mode's scalar operation.
TEST(Scatter, ModesMatchRowByRowApplication) {
  IndexFault fault;
  const std::vector<int32_t> dd = {6, 2}, id = {5, 1}, ud = {5, 2};
  std::mt19937 rng(11);
  std::vector<int64_t> data(12), updates(10);
  for (auto& v : data) v = static_cast<int64_t>(rng() % 41) - 20;
  for (auto& v : updates) v = static_cast<int64_t>(rng() % 9) + 1;  // nonzero divisors
  const std::vector<int32_t> rows = {4, 0, 4, 5, 4};
  const ScatterMode modes[] = {ScatterMode::kUpdate, ScatterMode::kAdd, ScatterMode::kSub, ScatterMode::kMul,
                               ScatterMode::kDiv, ScatterMode::kMin, ScatterMode::kMax};
  for (ScatterMode mode : modes) {
    std::vector<int64_t> want = data, got(12);
    for (size_t r = 0; r < rows.size(); ++r) {
      for (size_t j = 0; j < 2; ++j) {
        int64_t& x = want[static_cast<size_t>(rows[r]) * 2 + j];
        const int64_t u = updates[r * 2 + j];
        switch (mode) {
          case ScatterMode::kUpdate: x = u; break;
          case ScatterMode::kAdd: x += u; break;
          case ScatterMode::kSub: x -= u; break;
          case ScatterMode::kMul: x *= u; break;
          case ScatterMode::kDiv: x /= u; break;
          case ScatterMode::kMin: x = std::min(x, u); break;
          case ScatterMode::kMax: x = std::max(x, u); break;
        }
      }
    }
    EXPECT_TRUE(scatter_nd(mode, DType::kInt64, false, {data.data(), shape_of(dd)}, {rows.data(), shape_of(id)},
                           {updates.data(), shape_of(ud)}, {got.data(), shape_of(dd)}, &fault));
    EXPECT_EQ(got, want) << static_cast<int>(mode);
  }
}

TEST(Scatter, IntegerDivisionByZeroFailsAndMostNegativeOverMinusOneWraps) {
  IndexFault fault;
  const std::vector<int32_t> dd = {2}, id = {1, 1}, ud = {1};
  std::vector<int32_t> data = {INT32_MIN, 7}, out(2), row = {0}, divisor = {-1};
  EXPECT_TRUE(scatter_nd(ScatterMode::kDiv, DType::kInt32, false, {data.data(), shape_of(dd)},
                         {row.data(), shape_of(id)}, {divisor.data(), shape_of(ud)}, {out.data(), shape_of(dd)}, &fault));
  EXPECT_EQ(out, (std::vector<int32_t>{INT32_MIN, 7}));
  divisor = {0};
  EXPECT_FALSE(scatter_nd(ScatterMode::kDiv, DType::kInt32, false, {data.data(), shape_of(dd)},
                          {row.data(), shape_of(id)}, {divisor.data(), shape_of(ud)}, {out.data(), shape_of(dd)}, &fault));
  EXPECT_EQ(fault.position, -1);  // not an index
  // Without data (ScatterNd) the output starts at zero.
  std::vector<int32_t> out_of_range = {2};
  out = {9, 9};
  EXPECT_FALSE(scatter_nd(ScatterMode::kAdd, DType::kInt32, false, {nullptr, shape_of(dd)},
                          {out_of_range.data(), shape_of(id)}, {divisor.data(), shape_of(ud)}, {out.data(), shape_of(dd)}, &fault));
  EXPECT_EQ(fault.position, 0);
  EXPECT_EQ(fault.value, 2);
  EXPECT_EQ(fault.bound, 2);
  EXPECT_EQ(out, (std::vector<int32_t>{9, 9}));  // every index is checked before the output is written
  divisor = {5};
  EXPECT_TRUE(scatter_nd(ScatterMode::kAdd, DType::kInt32, false, {nullptr, shape_of(dd)}, {row.data(), shape_of(id)},
                         {divisor.data(), shape_of(ud)}, {out.data(), shape_of(dd)}, &fault));
  EXPECT_EQ(out, (std::vector<int32_t>{5, 0}));
}

}  // namespace
}  // namespace floe::ref
