// SPDX-License-Identifier: Apache-2.0
// Ops that count by comparison: LowerBound / UpperBound (searchsorted),
// Bincount / DenseBincount; and why Unique / UniqueV2 / ListDiff are refused.
//
// Each is lowered onto existing ops as an all-pairs comparison reduced over
// the compared axis (LowerBound: how many of a row's sorted values are below
// each value; Bincount: how many elements equal each bin, optionally
// weighted), so no new kernel is needed; the cost is one bool per pair.
#include <algorithm>

#include "converter/ir/attrs.h"
#include "converter/ir/error.h"
#include "converter/ir/limits.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

using schema::OpCode;

DType out_type(const NodeContext& ctx) {
  const DType t = dtype_attr(ctx, "out_type");
  if (t != DType::kInt32 && t != DType::kInt64) ctx.fail("out_type must be int32 or int64");
  return t;
}

int cast_to(LowerContext& ctx, int value, DType to, const std::string& suffix) {
  const int out = ctx.new_value(to, ctx.value_info(value).shape, suffix);
  ctx.add_op(OpCode::CAST, {value}, {out});
  return out;
}

// ---- LowerBound / UpperBound ---------------------------------------------------
// sorted_inputs [B, N], values [B, M] -> [B, M]: per value, the count of the
// row's entries < it (LowerBound) or <= it (UpperBound) — the index TF's binary
// search returns on a sorted row, its precondition.
std::vector<TensorInfo> infer_bound(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_rank(0, 2);
  ctx.expect_rank(1, 2);
  if (ctx.input(0).shape[0] != ctx.input(1).shape[0]) {
    ctx.fail("sorted_inputs " + shape_to_string(ctx.input(0).shape) + " and values " +
             shape_to_string(ctx.input(1).shape) + " must have the same number of rows");
  }
  if (ctx.input(0).dtype != ctx.input(1).dtype) ctx.fail("sorted_inputs and values differ in dtype");
  return {TensorInfo{out_type(ctx), ctx.input(1).shape, nullptr}};
}

template <OpCode kCompare>
void lower_bound(LowerContext& ctx) {
  const int64_t b = ctx.input(0).shape[0], n = ctx.input(0).shape[1], m = ctx.input(1).shape[1];
  const int sorted = ctx.reshaped_value(ctx.input_value(0), {b, 1, n}, "sorted_row");
  const int values = ctx.reshaped_value(ctx.input_value(1), {b, m, 1}, "values_column");
  const int below = ctx.new_value(DType::kBool, {b, m, n}, "below");
  ctx.add_op(kCompare, {sorted, values}, {below});
  const int counts = cast_to(ctx, below, ctx.output_info(0).dtype, "below_count");
  ctx.add_op(OpCode::SUM, {counts}, {ctx.output_value(0)}, [] {
    schema::ReduceOptionsT o;
    o.axes = {2};
    return LowerContext::options(o);
  }());
}

// ---- Bincount / DenseBincount --------------------------------------------------
// Bincount(arr int32 any shape, size, weights same shape or empty) -> [size];
// DenseBincount(input [K] or [B, K], size, weights, binary_output) -> [size] or
// [B, size]. Values outside [0, size) fall in no bin.
struct BincountShape {
  std::vector<int64_t> rows;  // leading dims kept ([] or [B])
  int64_t k = 0;              // elements counted per row
  int64_t size = 0;
  bool weighted = false;
  DType out = DType::kInvalid;
};

BincountShape bincount_shape(const NodeContext& ctx) {
  ctx.expect_inputs(3, 3);
  BincountShape s;
  const std::vector<int64_t> size = ctx.constant_ints(1, "size");
  if (size.size() != 1 || size[0] < 0) ctx.fail("size must be a non-negative scalar");
  s.size = size[0];
  if (static_cast<uint64_t>(s.size) * sizeof(int64_t) > kMaxTensorBytes) {
    ctx.fail("size " + std::to_string(s.size) + " is over the limit of one constant's bytes");
  }
  const TensorInfo& arr = ctx.input(0);
  if (arr.dtype != DType::kInt32 && arr.dtype != DType::kInt64) {
    ctx.fail("input 0 must be int32 or int64, got " + std::string(dtype_name(arr.dtype)));
  }
  int64_t elements = 1;
  for (int64_t d : arr.shape) elements *= d;
  if (ctx.node().op() == "DenseBincount") {
    if (arr.shape.empty() || arr.shape.size() > 2) ctx.fail("input 0 must be 1-D or 2-D, has shape " + shape_to_string(arr.shape));
    if (arr.shape.size() == 2) s.rows = {arr.shape[0]};
    s.k = arr.shape.back();
  } else {
    s.k = elements;
  }
  const TensorInfo& w = ctx.input(2);
  int64_t w_elements = 1;
  for (int64_t d : w.shape) w_elements *= d;
  s.weighted = w_elements != 0;
  if (s.weighted && w.shape != arr.shape) {
    ctx.fail("weights " + shape_to_string(w.shape) + " must be empty or have the shape of input 0 " +
             shape_to_string(arr.shape));
  }
  s.out = w.dtype;
  if (s.out != DType::kFloat32 && s.out != DType::kInt32 && s.out != DType::kInt64) {
    ctx.fail("weights must be float32, int32 or int64, got " + std::string(dtype_name(s.out)));
  }
  return s;
}

std::vector<TensorInfo> infer_bincount(const NodeContext& ctx) {
  const BincountShape s = bincount_shape(ctx);
  std::vector<int64_t> out = s.rows;
  out.push_back(s.size);
  return {TensorInfo{s.out, out, nullptr}};
}

void lower_bincount(LowerContext& ctx) {
  const BincountShape s = bincount_shape(ctx);
  const bool binary = ctx.node().op() == "DenseBincount" && attr_bool(ctx.node().def, "binary_output", false);
  const DType index_type = ctx.input(0).dtype;
  std::vector<int64_t> column = s.rows, pairs = s.rows, bins = s.rows;
  column.insert(column.end(), {s.k, 1});
  pairs.insert(pairs.end(), {s.k, s.size});
  const int32_t k_axis = static_cast<int32_t>(s.rows.size());
  const int arr = ctx.reshaped_value(ctx.input_value(0), column, "column");
  HostTensor range;
  range.dtype = index_type;
  range.shape = {s.size};
  range.data.resize(static_cast<size_t>(s.size) * dtype_size(index_type));
  for (int64_t i = 0; i < s.size; ++i) {
    if (index_type == DType::kInt32) range.as<int32_t>()[i] = static_cast<int32_t>(i);
    else range.as<int64_t>()[i] = i;
  }
  const int hit = ctx.new_value(DType::kBool, pairs, "in_bin");
  ctx.add_op(OpCode::EQUAL, {arr, ctx.constant_value("bins", std::move(range))}, {hit});
  if (binary) {  // TF gives 1 where the bin is hit at all, whatever the weights
    schema::ReduceOptionsT o;
    o.axes = {k_axis};
    const int any = ctx.new_value(DType::kBool, ctx.output_info(0).shape, "bin_hit");
    ctx.add_op(OpCode::REDUCE_ANY, {hit}, {any}, LowerContext::options(o));
    ctx.add_op(OpCode::CAST, {any}, {ctx.output_value(0)});
    return;
  }
  int counted = cast_to(ctx, hit, s.out, "hit_count");
  if (s.weighted) {
    const int w = ctx.reshaped_value(ctx.input_value(2), column, "weights_column");
    const int weighted = ctx.new_value(s.out, pairs, "weighted");
    ctx.add_op(OpCode::MUL, {counted, w}, {weighted});
    counted = weighted;
  }
  schema::ReduceOptionsT o;
  o.axes = {k_axis};
  ctx.add_op(OpCode::SUM, {counted}, {ctx.output_value(0)}, LowerContext::options(o));
}

}  // namespace

// Unique / UniqueV2 / ListDiff have no handler: the inference check refuses
// them, all at once with the other offenders, giving this reason.
const std::vector<const char*>& data_dependent_shape_ops() {
  static const std::vector<const char*> ops = {"Unique", "UniqueV2", "ListDiff"};
  return ops;
}

const char* refusal_reason(const std::string& tf_op) {
  const auto& ops = data_dependent_shape_ops();
  if (std::find(ops.begin(), ops.end(), tf_op) != ops.end()) {
    return "its output size depends on the values and floe models have static shapes: compute it outside the "
           "model and feed the result (--inputs)";
  }
  return nullptr;
}

const std::vector<OpHandler>& counting_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"LowerBound", infer_bound, lower_bound<OpCode::LESS>},
      {"UpperBound", infer_bound, lower_bound<OpCode::LESS_EQUAL>},
      {"Bincount", infer_bincount, lower_bincount},
      {"DenseBincount", infer_bincount, lower_bincount},
  };
  return handlers;
}

}  // namespace floe::conv
