// SPDX-License-Identifier: Apache-2.0
// TF ops whose output shape depends on index values (op coverage):
// Range, LinSpace, Where(cond), InvertPermutation, DynamicPartition,
// DynamicStitch / ParallelDynamicStitch, and ParallelConcat. A static floe model
// can hold them only when those values are known at conversion time: the values
// are then computed here (Range, ...) or turned into constant GATHER index lists
// over run-time data (DynamicPartition, stitching).
#include <algorithm>
#include <cmath>

#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"
#include "schemas/contract/limits.h"

namespace floe::conv {
namespace {

// ---- value-shaped ops: known only from constant inputs ------------------------------------

double scalar_of(const NodeContext& ctx, int i, const char* what) {
  const HostTensor& t = ctx.constant_input(i, what);
  if (t.num_elements() != 1) ctx.fail(std::string(what) + " must be a scalar");
  switch (t.dtype) {
    case DType::kFloat32: return t.as<float>()[0];
    case DType::kInt32: return t.as<int32_t>()[0];
    case DType::kInt64: return static_cast<double>(t.as<int64_t>()[0]);
    default: ctx.fail(std::string(what) + " has an unsupported dtype");
  }
}

// Range's length depends on its values: floe needs them at conversion time.
std::vector<TensorInfo> infer_range(const NodeContext& ctx) {
  ctx.expect_inputs(3, 3);
  const double start = scalar_of(ctx, 0, "Range start (its output size depends on it)");
  const double limit = scalar_of(ctx, 1, "Range limit (its output size depends on it)");
  const double delta = scalar_of(ctx, 2, "Range delta (its output size depends on it)");
  if (delta == 0) ctx.fail("Range delta is 0");
  const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((limit - start) / delta)));
  auto t = std::make_shared<HostTensor>();
  t->dtype = ctx.input(0).dtype;
  t->shape = {n};
  t->data.resize(static_cast<size_t>(n) * dtype_size(t->dtype));
  for (int64_t i = 0; i < n; ++i) {
    const double v = start + static_cast<double>(i) * delta;
    if (t->dtype == DType::kFloat32) t->as<float>()[i] = static_cast<float>(v);
    if (t->dtype == DType::kInt32) t->as<int32_t>()[i] = static_cast<int32_t>(v);
    if (t->dtype == DType::kInt64) t->as<int64_t>()[i] = static_cast<int64_t>(v);
  }
  return {TensorInfo::of(t)};
}

// LinSpace(start, stop, num): num sets the length, so all three must be known.
std::vector<TensorInfo> infer_lin_space(const NodeContext& ctx) {
  ctx.expect_inputs(3, 3);
  const double start = scalar_of(ctx, 0, "LinSpace start");
  const double stop = scalar_of(ctx, 1, "LinSpace stop");
  const int64_t num = static_cast<int64_t>(scalar_of(ctx, 2, "LinSpace num (its output size depends on it)"));
  if (num < 1) ctx.fail("LinSpace num must be >= 1");
  auto t = std::make_shared<HostTensor>();
  t->dtype = DType::kFloat32;
  t->shape = {num};
  t->data.resize(static_cast<size_t>(num) * sizeof(float));
  const double step = num > 1 ? (stop - start) / static_cast<double>(num - 1) : 0.0;
  for (int64_t i = 0; i < num; ++i) t->as<float>()[i] = static_cast<float>(start + static_cast<double>(i) * step);
  if (num > 1) t->as<float>()[num - 1] = static_cast<float>(stop);
  return {TensorInfo::of(t)};
}

// ---- DynamicPartition / DynamicStitch: shapes set by index values -------------------------
// Both are static once the index tensors are known at conversion time; the data
// may still be a run-time tensor, moved by GATHER with constant index lists.

int64_t count_of(const std::vector<int64_t>& shape, size_t begin = 0) {
  int64_t n = 1;
  for (size_t i = begin; i < shape.size(); ++i) n *= shape[i];
  return n;
}

HostTensor int_list(const std::vector<int64_t>& values) {
  HostTensor t;
  t.dtype = DType::kInt32;
  t.shape = {static_cast<int64_t>(values.size())};
  t.data.resize(values.size() * sizeof(int32_t));
  for (size_t i = 0; i < values.size(); ++i) t.as<int32_t>()[i] = static_cast<int32_t>(values[i]);
  return t;
}

// Rows of `data` (flattened to [rows, inner...]) picked by `rows`.
HostTensor gather_rows(const HostTensor& data, int64_t row_count, const std::vector<int64_t>& rows,
                       std::vector<int64_t> out_shape) {
  HostTensor out;
  out.dtype = data.dtype;
  out.shape = std::move(out_shape);
  const size_t row_bytes = row_count > 0 ? data.data.size() / static_cast<size_t>(row_count) : 0;
  out.data.resize(rows.size() * row_bytes);
  for (size_t i = 0; i < rows.size(); ++i) {
    std::copy_n(data.data.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(rows[i]) * row_bytes), row_bytes,
                out.data.begin() + static_cast<std::ptrdiff_t>(i * row_bytes));
  }
  return out;
}

struct Partition {
  std::vector<std::vector<int64_t>> rows;  // per partition: source rows of data
  std::vector<int64_t> inner;              // data dims after the partitions' dims
};

Partition partition_of(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const std::vector<int64_t> parts =
      ctx.constant_ints(1, "partitions of DynamicPartition (its output shapes depend on them)");
  const int64_t num = attr_int(ctx.node().def, "num_partitions", 1);
  const auto& ds = ctx.input(0).shape;
  const auto& ps = ctx.input(1).shape;
  if (ds.size() < ps.size() || !std::equal(ps.begin(), ps.end(), ds.begin())) {
    ctx.fail("data shape must start with the partitions' shape");
  }
  Partition p;
  p.rows.resize(static_cast<size_t>(num));
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] < 0 || parts[i] >= num) ctx.fail("partition index out of range");
    p.rows[static_cast<size_t>(parts[i])].push_back(static_cast<int64_t>(i));
  }
  p.inner.assign(ds.begin() + static_cast<std::ptrdiff_t>(ps.size()), ds.end());
  return p;
}

std::vector<TensorInfo> infer_dynamic_partition(const NodeContext& ctx) {
  const Partition p = partition_of(ctx);
  const TensorInfo& data = ctx.input(0);
  const int64_t rows = count_of(ctx.input(1).shape);
  std::vector<TensorInfo> out;
  for (const auto& r : p.rows) {
    std::vector<int64_t> shape = {static_cast<int64_t>(r.size())};
    shape.insert(shape.end(), p.inner.begin(), p.inner.end());
    if (data.value) {
      out.push_back(TensorInfo::of(std::make_shared<HostTensor>(gather_rows(*data.value, rows, r, shape))));
    } else {
      out.push_back(TensorInfo{data.dtype, shape, nullptr});
    }
  }
  return out;
}

void lower_dynamic_partition(LowerContext& ctx) {
  const Partition p = partition_of(ctx);
  std::vector<int64_t> flat = {count_of(ctx.input(1).shape)};
  flat.insert(flat.end(), p.inner.begin(), p.inner.end());
  const int data = ctx.reshaped_value(ctx.input_value(0), flat, "rows");
  for (size_t k = 0; k < p.rows.size(); ++k) {
    const int idx = ctx.constant_value("rows_" + std::to_string(k), int_list(p.rows[k]));
    ctx.add_op(schema::OpCode::GATHER, {data, idx}, {ctx.output_value(static_cast<int>(k))},
               LowerContext::options(schema::GatherOptionsT()));
  }
}

// DynamicStitch / ParallelDynamicStitch(indices[0..n), data[0..n)): output row
// indices[m][i] = data[m][i] (the last writer wins).
struct Stitch {
  int n = 0;
  std::vector<int64_t> source;  // output row -> row of the concatenated data
  std::vector<int64_t> inner;
  int64_t total_rows = 0;
};

Stitch stitch_of(const NodeContext& ctx) {
  if (ctx.input_count() % 2 != 0 || ctx.input_count() == 0) ctx.fail("expects n indices and n data tensors");
  Stitch s;
  s.n = ctx.input_count() / 2;
  std::vector<std::pair<int64_t, int64_t>> writes;  // (output row, concat row)
  for (int m = 0; m < s.n; ++m) {
    const std::vector<int64_t> idx = ctx.constant_ints(m, "stitch indices (the output shape depends on them)");
    const auto& is = ctx.input(m).shape;
    const auto& ds = ctx.input(s.n + m).shape;
    if (ds.size() < is.size() || !std::equal(is.begin(), is.end(), ds.begin())) {
      ctx.fail("data shape must start with its indices' shape");
    }
    std::vector<int64_t> inner(ds.begin() + static_cast<std::ptrdiff_t>(is.size()), ds.end());
    if (m == 0) {
      s.inner = inner;
    } else if (inner != s.inner || ctx.input(s.n + m).dtype != ctx.input(s.n).dtype) {
      ctx.fail("data tensors differ in dtype or inner shape");
    }
    for (int64_t v : idx) {
      if (v < 0) ctx.fail("negative stitch index");
      writes.push_back({v, s.total_rows++});
    }
  }
  int64_t rows = 0;
  for (const auto& w : writes) rows = std::max(rows, w.first + 1);
  s.source.assign(static_cast<size_t>(rows), -1);
  for (const auto& w : writes) s.source[static_cast<size_t>(w.first)] = w.second;
  for (int64_t src : s.source) {
    if (src < 0) ctx.fail("stitch indices leave output rows unwritten");
  }
  return s;
}

std::vector<TensorInfo> infer_stitch(const NodeContext& ctx) {
  const Stitch s = stitch_of(ctx);
  std::vector<int64_t> shape = {static_cast<int64_t>(s.source.size())};
  shape.insert(shape.end(), s.inner.begin(), s.inner.end());
  return {TensorInfo{ctx.input(s.n).dtype, shape, nullptr}};
}

void lower_stitch(LowerContext& ctx) {
  const Stitch s = stitch_of(ctx);
  if (s.n > kMaxConcatInputs) ctx.fail("more than " + std::to_string(kMaxConcatInputs) + " stitched tensors are not supported yet");
  std::vector<int> parts;
  for (int m = 0; m < s.n; ++m) {
    std::vector<int64_t> flat = {count_of(ctx.input(m).shape)};
    flat.insert(flat.end(), s.inner.begin(), s.inner.end());
    parts.push_back(ctx.reshaped_value(ctx.input_value(s.n + m), flat, "part_" + std::to_string(m)));
  }
  std::vector<int64_t> all_shape = {s.total_rows};
  all_shape.insert(all_shape.end(), s.inner.begin(), s.inner.end());
  const int all = ctx.new_value(ctx.input(s.n).dtype, all_shape, "all_rows");
  schema::ConcatOptionsT c;
  c.axis = 0;
  ctx.add_op(schema::OpCode::CONCAT, parts, {all}, LowerContext::options(c));
  const int idx = ctx.constant_value("source_rows", int_list(s.source));
  ctx.add_op(schema::OpCode::GATHER, {all, idx}, {ctx.output_value(0)}, LowerContext::options(schema::GatherOptionsT()));
}

// Where(cond) without x/y: [true count, rank] int64 coordinates.
std::vector<TensorInfo> infer_where(const NodeContext& ctx) {
  if (ctx.input_count() == 3) {
    ctx.fail("internal: Where with x and y is Select");
  }
  ctx.expect_inputs(1, 1);
  const HostTensor& c = ctx.constant_input(0, "the condition of Where (its output shape depends on its values)");
  const auto& shape = c.shape;
  std::vector<int64_t> coords;
  int64_t count = 0;
  const int64_t n = c.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    bool truthy = false;
    switch (c.dtype) {
      case DType::kBool: case DType::kUInt8: truthy = c.data[static_cast<size_t>(i)] != 0; break;
      case DType::kFloat32: truthy = c.as<float>()[i] != 0.0f; break;
      case DType::kInt32: truthy = c.as<int32_t>()[i] != 0; break;
      case DType::kInt64: truthy = c.as<int64_t>()[i] != 0; break;
      default: ctx.fail("unsupported condition dtype");
    }
    if (!truthy) continue;
    ++count;
    int64_t rem = i;
    std::vector<int64_t> idx(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
      idx[d] = rem % shape[d];
      rem /= shape[d];
    }
    coords.insert(coords.end(), idx.begin(), idx.end());
  }
  auto t = std::make_shared<HostTensor>();
  t->dtype = DType::kInt64;
  t->shape = {count, static_cast<int64_t>(shape.size())};
  t->data.resize(coords.size() * sizeof(int64_t));
  for (size_t i = 0; i < coords.size(); ++i) t->as<int64_t>()[i] = coords[i];
  return {TensorInfo::of(t)};
}

// InvertPermutation(x): folded from a constant (checked to be a permutation);
// from a run-time x it is the scatter y[x[i]] = i (SCATTER_ND_UPDATE into zeros),
// whose kernel fails Invoke() on an out-of-range value as TF does. A repeated
// value, which TF also refuses, is not detected there: the last i wins.
std::vector<TensorInfo> infer_invert_permutation(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  if (!ctx.input(0).value) {
    if (ctx.input(0).shape.size() != 1) ctx.fail("input must be a vector, has shape " + shape_to_string(ctx.input(0).shape));
    return {TensorInfo{ctx.input(0).dtype, ctx.input(0).shape, nullptr}};
  }
  const std::vector<int64_t> perm = ctx.constant_ints(0, "the permutation");
  std::vector<int64_t> inverse(perm.size(), -1);
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(perm.size()) || inverse[static_cast<size_t>(perm[i])] >= 0) {
      ctx.fail("input is not a permutation");
    }
    inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  }
  auto t = std::make_shared<HostTensor>();
  t->dtype = ctx.input(0).dtype;
  t->shape = {static_cast<int64_t>(perm.size())};
  t->data.resize(perm.size() * dtype_size(t->dtype));
  for (size_t i = 0; i < perm.size(); ++i) {
    if (t->dtype == DType::kInt64) {
      t->as<int64_t>()[i] = inverse[i];
    } else {
      t->as<int32_t>()[i] = static_cast<int32_t>(inverse[i]);
    }
  }
  return {TensorInfo::of(t)};
}

void lower_invert_permutation(LowerContext& ctx) {
  const int64_t n = ctx.input(0).shape[0];
  HostTensor positions;
  positions.dtype = ctx.input(0).dtype;
  positions.shape = {n};
  positions.data.resize(static_cast<size_t>(n) * dtype_size(positions.dtype));
  for (int64_t i = 0; i < n; ++i) {
    if (positions.dtype == DType::kInt64) {
      positions.as<int64_t>()[i] = i;
    } else {
      positions.as<int32_t>()[i] = static_cast<int32_t>(i);
    }
  }
  const int indices = ctx.reshaped_value(ctx.input_value(0), {n, 1}, "indices");
  ctx.add_op(schema::OpCode::SCATTER_ND_UPDATE, {indices, ctx.constant_value("positions", std::move(positions))},
             {ctx.output_value(0)});
}

// ParallelConcat(values...): concatenation along dim 0 (attr shape = the result).
std::vector<TensorInfo> infer_parallel_concat(const NodeContext& ctx) {
  if (ctx.input_count() < 1) ctx.fail("needs inputs");
  std::vector<int64_t> shape = ctx.input(0).shape;
  if (shape.empty()) ctx.fail("inputs must have rank >= 1");
  shape[0] = 0;
  for (int i = 0; i < ctx.input_count(); ++i) {
    const auto& s = ctx.input(i).shape;
    if (s.size() != shape.size() || !std::equal(s.begin() + 1, s.end(), shape.begin() + 1)) {
      ctx.fail("inputs differ off dim 0");
    }
    shape[0] += s[0];
  }
  return {TensorInfo{ctx.input(0).dtype, shape, nullptr}};
}

void lower_parallel_concat(LowerContext& ctx) {
  if (ctx.input_count() > kMaxConcatInputs) ctx.fail("more than " + std::to_string(kMaxConcatInputs) + " inputs are not supported yet");
  std::vector<int> inputs;
  for (int i = 0; i < ctx.input_count(); ++i) inputs.push_back(ctx.input_value(i));
  schema::ConcatOptionsT o;
  o.axis = 0;
  ctx.add_op(schema::OpCode::CONCAT, inputs, {ctx.output_value(0)}, LowerContext::options(o));
}

}  // namespace

const std::vector<OpHandler>& index_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"Range", infer_range, nullptr},
      {"Where", infer_where, nullptr},
      {"InvertPermutation", infer_invert_permutation, lower_invert_permutation},
      {"LinSpace", infer_lin_space, nullptr},
      {"DynamicPartition", infer_dynamic_partition, lower_dynamic_partition},
      {"DynamicStitch", infer_stitch, lower_stitch},
      {"ParallelDynamicStitch", infer_stitch, lower_stitch},
      {"ParallelConcat", infer_parallel_concat, lower_parallel_concat},
  };
  return handlers;
}

}  // namespace floe::conv
