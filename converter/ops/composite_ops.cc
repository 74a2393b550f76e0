// SPDX-License-Identifier: Apache-2.0
// Inference TF ops that floe computes with ops it already has: ClipByValue
// (MINIMUM then MAXIMUM, in the order TF's kernel applies them), DivNoNan (DIV,
// then SELECT of 0 where the divisor is 0), Prelu (max(x, 0) + alpha * min(x,
// 0)), BroadcastTo (RESHAPE to the target rank, then TILE), EnsureShape (the
// shape is checked at conversion time, the tensor passes through), ShapeN
// (one shape vector per input, folded like Shape) and MatrixBandPart (SELECT
// with a constant band mask; num_lower / num_upper must be constants) and Erf
// (Abramowitz and Stegun 7.1.26 on element-wise ops: absolute error below
// 1.5e-7, under float32's resolution of erf's range near 1). The diagonal ops
// pad, select or gather: Diag (PAD then a slice), MatrixDiag (SELECT of an
// identity mask), DiagPart / MatrixDiagPart (GATHER of the flat diagonal
// positions); ReverseSequence is a batched GATHER whose indices (reversed below
// each row's length) come from SELECT over the lengths.
#include <algorithm>

#include "converter/ir/attrs.h"
#include "converter/ir/limits.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

using schema::OpCode;

void require_float_or_int32(const NodeContext& ctx, DType t) {
  if (t != DType::kFloat32 && t != DType::kInt32) {
    ctx.fail(std::string("dtype ") + dtype_name(t) + " is not supported (float32 or int32)");
  }
}

// A one-element constant of `dtype` holding `v`.
HostTensor scalar(DType dtype, double v) {
  HostTensor t;
  t.dtype = dtype;
  t.data.resize(dtype_size(dtype));
  if (dtype == DType::kFloat32) {
    t.as<float>()[0] = static_cast<float>(v);
  } else {
    t.as<int32_t>()[0] = static_cast<int32_t>(v);
  }
  return t;
}

std::vector<TensorInfo> infer_clip_by_value(const NodeContext& ctx) {
  ctx.expect_inputs(3, 3);
  const TensorInfo& t = ctx.input(0);
  for (int i = 1; i < 3; ++i) {
    const TensorInfo& bound = ctx.input(i);
    if (bound.dtype != t.dtype) ctx.fail("clip bounds must have the input's dtype");
    // TF: each bound is a scalar or has the input's shape.
    if (!bound.shape.empty() && bound.shape != t.shape) {
      ctx.fail(std::string(i == 1 ? "clip_value_min" : "clip_value_max") + " has shape " +
               shape_to_string(bound.shape) + "; it must be a scalar or the input's shape " + shape_to_string(t.shape));
    }
  }
  return {TensorInfo{t.dtype, t.shape, nullptr}};
}

void lower_clip_by_value(LowerContext& ctx) {
  const TensorInfo& out = ctx.output_info(0);
  require_float_or_int32(ctx, out.dtype);
  const int below_max = ctx.new_value(out.dtype, out.shape, "min");
  ctx.add_op(OpCode::MINIMUM, {ctx.input_value(0), ctx.input_value(2)}, {below_max});
  ctx.add_op(OpCode::MAXIMUM, {below_max, ctx.input_value(1)}, {ctx.output_value(0)});
}

std::vector<TensorInfo> infer_same_dtype_binary(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  if (ctx.input(0).dtype != ctx.input(1).dtype) ctx.fail("input dtypes differ");
  return {TensorInfo{ctx.input(0).dtype, broadcast_shapes(ctx, ctx.input(0).shape, ctx.input(1).shape), nullptr}};
}

void lower_div_no_nan(LowerContext& ctx) {
  const TensorInfo& out = ctx.output_info(0);
  if (out.dtype != DType::kFloat32) ctx.fail(std::string("dtype ") + dtype_name(out.dtype) + " is not supported");
  const int zero = ctx.constant_value("zero", scalar(out.dtype, 0.0));
  const int divisor_is_zero = ctx.new_value(DType::kBool, ctx.input(1).shape, "divisor_is_zero");
  ctx.add_op(OpCode::EQUAL, {ctx.input_value(1), zero}, {divisor_is_zero});
  const int quotient = ctx.new_value(out.dtype, out.shape, "quotient");
  ctx.add_op(OpCode::DIV, {ctx.input_value(0), ctx.input_value(1)}, {quotient});
  ctx.add_op(OpCode::SELECT, {divisor_is_zero, zero, quotient}, {ctx.output_value(0)});
}

void lower_prelu(LowerContext& ctx) {
  const TensorInfo& out = ctx.output_info(0);
  if (out.dtype != DType::kFloat32) ctx.fail(std::string("dtype ") + dtype_name(out.dtype) + " is not supported");
  const TensorInfo& x = ctx.input(0);
  const int zero = ctx.constant_value("zero", scalar(out.dtype, 0.0));
  const int positive = ctx.new_value(out.dtype, x.shape, "positive");
  ctx.add_op(OpCode::MAXIMUM, {ctx.input_value(0), zero}, {positive});
  const int negative = ctx.new_value(out.dtype, x.shape, "negative");
  ctx.add_op(OpCode::MINIMUM, {ctx.input_value(0), zero}, {negative});
  const int scaled = ctx.new_value(out.dtype, out.shape, "scaled");
  ctx.add_op(OpCode::MUL, {negative, ctx.input_value(1)}, {scaled});
  ctx.add_op(OpCode::ADD, {positive, scaled}, {ctx.output_value(0)});
}

std::vector<TensorInfo> infer_broadcast_to(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const std::vector<int64_t> target = ctx.constant_ints(1, "the target shape");
  const std::vector<int64_t>& in = ctx.input(0).shape;
  if (in.size() > target.size()) {
    ctx.fail("input " + shape_to_string(in) + " has more dims than the target shape " + shape_to_string(target));
  }
  const size_t lead = target.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] != 1 && in[d] != target[lead + d]) {
      ctx.fail("input " + shape_to_string(in) + " cannot be broadcast to " + shape_to_string(target));
    }
  }
  return {TensorInfo{ctx.input(0).dtype, target, nullptr}};
}

void lower_broadcast_to(LowerContext& ctx) {
  const std::vector<int64_t>& target = ctx.output_info(0).shape;
  std::vector<int64_t> in = ctx.input(0).shape;
  if (in == target) {
    ctx.alias_output(0, ctx.input_value(0));
    return;
  }
  int value = ctx.input_value(0);
  if (in.size() < target.size()) {
    in.insert(in.begin(), target.size() - in.size(), 1);
    value = ctx.reshaped_value(value, in, "ranked");
  }
  ctx.add_op(OpCode::TILE, {value}, {ctx.output_value(0)});
}

// EnsureShape: floe's shapes are static, so the check happens here, once.
std::vector<TensorInfo> infer_ensure_shape(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  bool unknown_rank = false;
  const std::vector<int64_t> wanted = attr_shape(ctx.node().def, "shape", &unknown_rank);
  const std::vector<int64_t>& have = ctx.input(0).shape;
  bool ok = unknown_rank || wanted.size() == have.size();
  for (size_t d = 0; ok && !unknown_rank && d < wanted.size(); ++d) ok = wanted[d] < 0 || wanted[d] == have[d];
  if (!ok) {
    ctx.fail("the input's shape " + shape_to_string(have) + " is not the shape " + shape_to_string(wanted) +
             " the graph ensures (-1 = any)");
  }
  return {ctx.input(0)};
}

void lower_ensure_shape(LowerContext& ctx) { ctx.alias_output(0, ctx.input_value(0)); }

std::vector<TensorInfo> infer_shape_n(const NodeContext& ctx) {
  if (ctx.input_count() < 1) ctx.fail("ShapeN needs at least one input");
  const DType type = find_attr(ctx.node().def, "out_type") ? dtype_attr(ctx, "out_type") : DType::kInt32;
  if (type != DType::kInt32 && type != DType::kInt64) ctx.fail("out_type must be int32 or int64");
  std::vector<TensorInfo> out;
  for (int i = 0; i < ctx.input_count(); ++i) {
    const std::vector<int64_t>& shape = ctx.input(i).shape;
    auto t = std::make_shared<HostTensor>();
    t->dtype = type;
    t->shape = {static_cast<int64_t>(shape.size())};
    t->data.resize(shape.size() * dtype_size(type));
    for (size_t d = 0; d < shape.size(); ++d) {
      if (type == DType::kInt64) {
        t->as<int64_t>()[d] = shape[d];
      } else {
        t->as<int32_t>()[d] = static_cast<int32_t>(shape[d]);
      }
    }
    out.push_back(TensorInfo::of(std::move(t)));
  }
  return out;
}

std::vector<TensorInfo> infer_matrix_band_part(const NodeContext& ctx) {
  ctx.expect_inputs(3, 3);
  if (ctx.input(0).shape.size() < 2) ctx.fail("input must have rank >= 2");
  ctx.constant_ints(1, "num_lower");
  ctx.constant_ints(2, "num_upper");
  return {TensorInfo{ctx.input(0).dtype, ctx.input(0).shape, nullptr}};
}

// Keeps element (m, n) of each inner matrix where (num_lower < 0 || m - n <=
// num_lower) && (num_upper < 0 || n - m <= num_upper), as TF defines the band.
void lower_matrix_band_part(LowerContext& ctx) {
  const TensorInfo& out = ctx.output_info(0);
  require_float_or_int32(ctx, out.dtype);
  const std::vector<int64_t> lower = ctx.constant_ints(1, "num_lower"), upper = ctx.constant_ints(2, "num_upper");
  if (lower.size() != 1 || upper.size() != 1) ctx.fail("num_lower and num_upper must be scalars");
  const int64_t rows = out.shape[out.shape.size() - 2], cols = out.shape.back();
  if (lower[0] > rows || upper[0] > cols) ctx.fail("num_lower / num_upper exceed the matrix dims");
  HostTensor mask;
  mask.dtype = DType::kBool;
  mask.shape = {rows, cols};
  mask.data.resize(static_cast<size_t>(rows * cols));
  for (int64_t m = 0; m < rows; ++m) {
    for (int64_t n = 0; n < cols; ++n) {
      const bool in_band = (lower[0] < 0 || m - n <= lower[0]) && (upper[0] < 0 || n - m <= upper[0]);
      mask.data[static_cast<size_t>(m * cols + n)] = in_band ? 1 : 0;
    }
  }
  ctx.add_op(OpCode::SELECT,
             {ctx.constant_value("band", std::move(mask)), ctx.input_value(0),
              ctx.constant_value("zero", scalar(out.dtype, 0.0))},
             {ctx.output_value(0)});
}

std::vector<TensorInfo> infer_unary_same(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  return {TensorInfo{ctx.input(0).dtype, ctx.input(0).shape, nullptr}};
}

// erf(x) = sign(x) * (1 - (a1 t + a2 t^2 + a3 t^3 + a4 t^4 + a5 t^5) exp(-x^2)),
// t = 1 / (1 + p |x|); the polynomial in Horner form.
void lower_erf(LowerContext& ctx) {
  const TensorInfo& out = ctx.output_info(0);
  if (out.dtype != DType::kFloat32) ctx.fail(std::string("dtype ") + dtype_name(out.dtype) + " is not supported");
  const std::vector<int64_t>& shape = out.shape;
  int n = 0;
  auto value = [&]() { return ctx.new_value(out.dtype, shape, "erf_" + std::to_string(n++)); };
  auto constant = [&](double v) { return ctx.constant_value("erf_c" + std::to_string(n++), scalar(out.dtype, v)); };
  auto unary = [&](OpCode code, int a) {
    const int r = value();
    ctx.add_op(code, {a}, {r});
    return r;
  };
  auto binary = [&](OpCode code, int a, int b) {
    const int r = value();
    ctx.add_op(code, {a, b}, {r});
    return r;
  };
  const int x = ctx.input_value(0);
  const int t = unary(OpCode::RECIPROCAL,
                      binary(OpCode::ADD, binary(OpCode::MUL, unary(OpCode::ABS, x), constant(0.3275911)), constant(1.0)));
  const double a[5] = {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429};
  int poly = constant(a[4]);
  for (int i = 3; i >= 0; --i) poly = binary(OpCode::ADD, binary(OpCode::MUL, poly, t), constant(a[i]));
  poly = binary(OpCode::MUL, poly, t);
  const int gauss = unary(OpCode::EXP, unary(OpCode::NEG, unary(OpCode::SQUARE, x)));
  const int magnitude = binary(OpCode::SUB, constant(1.0), binary(OpCode::MUL, poly, gauss));
  ctx.add_op(OpCode::MUL, {unary(OpCode::SIGN, x), magnitude}, {ctx.output_value(0)});
}


// A constant of `dtype` whose bytes are all zero (0, 0.0f, false).
HostTensor zeros(DType dtype, std::vector<int64_t> shape) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data.assign(static_cast<size_t>(t.num_elements()) * dtype_size(dtype), 0);
  return t;
}

// A [n, n] bool mask, true on the main diagonal.
HostTensor identity_mask(int64_t n) {
  HostTensor mask = zeros(DType::kBool, {n, n});
  for (int64_t i = 0; i < n; ++i) mask.data[static_cast<size_t>(i * n + i)] = 1;
  return mask;
}

// Diag: a rank-k tensor D becomes the rank-2k tensor D + D with the input on
// its diagonal (out[i1..ik, i1..ik] = in[i1..ik]) and zeros elsewhere.
std::vector<TensorInfo> infer_diag(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  const std::vector<int64_t>& d = ctx.input(0).shape;
  if (d.empty()) ctx.fail("the input must have rank >= 1, got a scalar");
  if (2 * d.size() > static_cast<size_t>(kMaxTensorRank)) {
    ctx.fail("the output's rank " + std::to_string(2 * d.size()) + " exceeds " + std::to_string(kMaxTensorRank));
  }
  std::vector<int64_t> out = d;
  out.insert(out.end(), d.begin(), d.end());
  return {TensorInfo{ctx.input(0).dtype, out, nullptr}};
}

// Flattened, Diag's output is each input element followed by n zeros, cut
// to n * n: PAD [n, 1] to [n, n + 1], then the first n * n elements (no n x n
// constant, as n is the input's whole element count).
void lower_diag(LowerContext& ctx) {
  const TensorInfo& in = ctx.input(0);
  const int64_t n = element_count(in.shape);
  schema::PadOptionsT pad;
  pad.paddings = {0, 0, 0, static_cast<int32_t>(n)};
  const int padded = ctx.new_value(in.dtype, {n, n + 1}, "padded");
  ctx.add_op(OpCode::PAD, {ctx.reshaped_value(ctx.input_value(0), {n, 1}, "column")}, {padded},
             LowerContext::options(pad));
  schema::StridedSliceOptionsT cut;
  cut.begin = {0};
  cut.stride = {1};
  const int square = ctx.new_value(in.dtype, {n * n}, "square");
  ctx.add_op(OpCode::STRIDED_SLICE, {ctx.reshaped_value(padded, {n * (n + 1)}, "flat")}, {square},
             LowerContext::options(cut));
  ctx.add_op(OpCode::RESHAPE, {square}, {ctx.output_value(0)});
}

// DiagPart: the inverse of Diag; the input's shape must be D + D.
std::vector<TensorInfo> infer_diag_part(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  const std::vector<int64_t>& s = ctx.input(0).shape;
  const size_t k = s.size() / 2;
  bool ok = !s.empty() && s.size() % 2 == 0;
  for (size_t i = 0; ok && i < k; ++i) ok = s[i] == s[i + k];
  if (!ok) ctx.fail("the input's shape " + shape_to_string(s) + " is not D + D for some D (rank 2k, dims i and i+k equal)");
  return {TensorInfo{ctx.input(0).dtype, std::vector<int64_t>(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(k)),
                     nullptr}};
}

// The diagonal of an [n, n] matrix sits at flat positions i * (n + 1).
void lower_diag_part(LowerContext& ctx) {
  const TensorInfo& out = ctx.output_info(0);
  const int64_t n = element_count(out.shape);
  const int flat = ctx.reshaped_value(ctx.input_value(0), {n * n}, "flat");
  std::vector<int64_t> positions(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) positions[static_cast<size_t>(i)] = i * (n + 1);
  const int gathered = out.shape.size() == 1 ? ctx.output_value(0) : ctx.new_value(out.dtype, {n}, "diagonal");
  ctx.add_op(OpCode::GATHER, {flat, ctx.constant_value("positions", integer_tensor(DType::kInt32, {n}, positions))},
             {gathered}, LowerContext::options(schema::GatherOptionsT{}));
  if (gathered != ctx.output_value(0)) ctx.add_op(OpCode::RESHAPE, {gathered}, {ctx.output_value(0)});
}

// MatrixDiagV2/V3 take (diagonal, k, num_rows, num_cols, padding_value);
// floe lowers the main diagonal (k = 0) of the size the diagonal implies
// (num_rows / num_cols -1 or equal to it), which tf.linalg.diag writes by
// default; the alignment attr only matters off the main diagonal.
void check_main_diagonal(const NodeContext& ctx, int64_t n, bool with_sizes) {
  const std::vector<int64_t> k = ctx.constant_ints(1, "k");
  if (k.empty() || k[0] != 0 || (k.size() == 2 && k[1] != 0) || k.size() > 2) {
    ctx.fail("only the main diagonal (k = 0) is supported");
  }
  if (!with_sizes) return;
  for (int i : {2, 3}) {
    const std::vector<int64_t> size = ctx.constant_ints(i, i == 2 ? "num_rows" : "num_cols");
    if (size.size() != 1 || (size[0] != -1 && size[0] != n)) {
      ctx.fail(std::string(i == 2 ? "num_rows" : "num_cols") + " must be -1 or the diagonal's length " +
               std::to_string(n) + " (a padded matrix is not supported)");
    }
  }
}

// MatrixDiag: [..., n] -> [..., n, n], the last axis on each matrix's diagonal.
std::vector<TensorInfo> infer_matrix_diag(const NodeContext& ctx) {
  const bool v2 = ctx.node().op() != "MatrixDiag";
  ctx.expect_inputs(v2 ? 5 : 1, v2 ? 5 : 1);
  const std::vector<int64_t>& d = ctx.input(0).shape;
  if (d.empty()) ctx.fail("the diagonal must have rank >= 1, got a scalar");
  if (d.size() + 1 > static_cast<size_t>(kMaxTensorRank)) ctx.fail("the output's rank exceeds " + std::to_string(kMaxTensorRank));
  if (v2) {
    check_main_diagonal(ctx, d.back(), true);
    if (!ctx.input(4).shape.empty() || ctx.input(4).dtype != ctx.input(0).dtype) {
      ctx.fail("padding_value must be a scalar of the diagonal's dtype");
    }
  }
  std::vector<int64_t> out = d;
  out.push_back(d.back());
  return {TensorInfo{ctx.input(0).dtype, out, nullptr}};
}

// SELECT(eye, diagonal as [..., 1, n], padding): row i of each matrix keeps
// element i of its diagonal.
void lower_matrix_diag(LowerContext& ctx) {
  const TensorInfo& in = ctx.input(0);
  std::vector<int64_t> rows = in.shape;
  rows.insert(rows.end() - 1, 1);
  const int padding = ctx.node().op() == "MatrixDiag" ? ctx.constant_value("zero", zeros(in.dtype, {}))
                                                      : ctx.input_value(4);
  ctx.add_op(OpCode::SELECT,
             {ctx.constant_value("eye", identity_mask(in.shape.back())), ctx.reshaped_value(ctx.input_value(0), rows, "row"),
              padding},
             {ctx.output_value(0)});
}

// MatrixDiagPart: [..., m, n] -> [..., min(m, n)].
std::vector<TensorInfo> infer_matrix_diag_part(const NodeContext& ctx) {
  const bool v2 = ctx.node().op() != "MatrixDiagPart";
  ctx.expect_inputs(v2 ? 3 : 1, v2 ? 3 : 1);
  const std::vector<int64_t>& s = ctx.input(0).shape;
  if (s.size() < 2) ctx.fail("the input must have rank >= 2, got " + shape_to_string(s));
  if (v2) check_main_diagonal(ctx, 0, false);
  std::vector<int64_t> out(s.begin(), s.end() - 2);
  out.push_back(std::min(s[s.size() - 2], s.back()));
  return {TensorInfo{ctx.input(0).dtype, out, nullptr}};
}

// Each [m, n] matrix flattened to m * n; element (i, i) sits at i * (n + 1).
void lower_matrix_diag_part(LowerContext& ctx) {
  const TensorInfo& in = ctx.input(0);
  const int64_t cols = in.shape.back(), length = ctx.output_info(0).shape.back();
  std::vector<int64_t> flat(in.shape.begin(), in.shape.end() - 2);
  flat.push_back(in.shape[in.shape.size() - 2] * cols);
  std::vector<int64_t> positions(static_cast<size_t>(length));
  for (int64_t i = 0; i < length; ++i) positions[static_cast<size_t>(i)] = i * (cols + 1);
  schema::GatherOptionsT o;
  o.axis = static_cast<int32_t>(flat.size() - 1);
  ctx.add_op(OpCode::GATHER,
             {ctx.reshaped_value(ctx.input_value(0), flat, "flat"),
              ctx.constant_value("positions", integer_tensor(DType::kInt32, {length}, positions))},
             {ctx.output_value(0)}, LowerContext::options(o));
}

struct SequenceAxes {
  int64_t seq = 0, batch = 0;
};

SequenceAxes sequence_axes(const NodeContext& ctx) {
  const int64_t rank = static_cast<int64_t>(ctx.input(0).shape.size());
  SequenceAxes a;
  a.seq = attr_int(ctx.node().def, "seq_dim");
  a.batch = attr_int(ctx.node().def, "batch_dim", 0);
  // TF's kernel takes the attrs as given (no negative axes).
  if (a.seq < 0 || a.seq >= rank || a.batch < 0 || a.batch >= rank) {
    ctx.fail("seq_dim " + std::to_string(a.seq) + " or batch_dim " + std::to_string(a.batch) +
             " is out of range for rank " + std::to_string(rank));
  }
  if (a.seq == a.batch) ctx.fail("seq_dim and batch_dim are both " + std::to_string(a.seq));
  return a;
}

// ReverseSequence: along seq_dim, the first seq_lengths[b] elements of batch
// row b are reversed, the rest pass through.
std::vector<TensorInfo> infer_reverse_sequence(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const SequenceAxes a = sequence_axes(ctx);
  const TensorInfo& lengths = ctx.input(1);
  const int64_t batch = ctx.input(0).shape[static_cast<size_t>(a.batch)];
  if (lengths.shape != std::vector<int64_t>{batch}) {
    ctx.fail("seq_lengths has shape " + shape_to_string(lengths.shape) + ", not [" + std::to_string(batch) +
             "] (the input's batch_dim)");
  }
  return {TensorInfo{ctx.input(0).dtype, ctx.input(0).shape, nullptr}};
}

// index[b, t] = t < len[b] ? len[b] - 1 - t : t, then GATHER along the
// sequence axis with the batch axis as batch_dims = 1 (moved to the front
// by a TRANSPOSE when it is not there already). A length over the sequence
// gives an index out of range, which GATHER refuses at run time as TF does.
void lower_reverse_sequence(LowerContext& ctx) {
  const SequenceAxes a = sequence_axes(ctx);
  const TensorInfo& in = ctx.input(0);
  const DType index_type = ctx.input(1).dtype;
  const int64_t batch = in.shape[static_cast<size_t>(a.batch)], steps = in.shape[static_cast<size_t>(a.seq)];
  std::vector<int64_t> step(static_cast<size_t>(steps)), step_plus_one(static_cast<size_t>(steps));
  for (int64_t t = 0; t < steps; ++t) {
    step[static_cast<size_t>(t)] = t;
    step_plus_one[static_cast<size_t>(t)] = t + 1;
  }
  const int t = ctx.constant_value("step", integer_tensor(index_type, {1, steps}, step));
  const int length = ctx.reshaped_value(ctx.input_value(1), {batch, 1}, "length");
  const int reversing = ctx.new_value(DType::kBool, {batch, steps}, "reversing");
  ctx.add_op(OpCode::LESS, {t, length}, {reversing});
  const int reversed = ctx.new_value(index_type, {batch, steps}, "reversed");
  ctx.add_op(OpCode::SUB, {length, ctx.constant_value("step_plus_one", integer_tensor(index_type, {1, steps}, step_plus_one))},
             {reversed});
  const int index = ctx.new_value(index_type, {batch, steps}, "index");
  ctx.add_op(OpCode::SELECT, {reversing, reversed, t}, {index});

  // The batch axis first, the others in order.
  std::vector<int32_t> perm = {static_cast<int32_t>(a.batch)};
  for (int32_t d = 0; d < static_cast<int32_t>(in.shape.size()); ++d) {
    if (d != a.batch) perm.push_back(d);
  }
  bool moved = false;
  for (size_t d = 0; d < perm.size(); ++d) moved = moved || perm[d] != static_cast<int32_t>(d);
  schema::GatherOptionsT o;
  o.batch_dims = 1;
  o.axis = static_cast<int32_t>(std::find(perm.begin(), perm.end(), static_cast<int32_t>(a.seq)) - perm.begin());
  if (!moved) {
    ctx.add_op(OpCode::GATHER, {ctx.input_value(0), index}, {ctx.output_value(0)}, LowerContext::options(o));
    return;
  }
  const int front = ctx.transposed_value(ctx.input_value(0), perm, "batch_first");
  std::vector<int64_t> front_shape;
  for (int32_t d : perm) front_shape.push_back(in.shape[static_cast<size_t>(d)]);
  const int gathered = ctx.new_value(in.dtype, front_shape, "gathered");
  ctx.add_op(OpCode::GATHER, {front, index}, {gathered}, LowerContext::options(o));
  std::vector<int32_t> inverse(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) inverse[static_cast<size_t>(perm[d])] = static_cast<int32_t>(d);
  schema::TransposeOptionsT back;
  back.perm = inverse;
  ctx.add_op(OpCode::TRANSPOSE, {gathered}, {ctx.output_value(0)}, LowerContext::options(back));
}

}  // namespace

const std::vector<OpHandler>& composite_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"ClipByValue", infer_clip_by_value, lower_clip_by_value},
      {"DivNoNan", infer_same_dtype_binary, lower_div_no_nan},
      {"Prelu", infer_same_dtype_binary, lower_prelu},
      {"BroadcastTo", infer_broadcast_to, lower_broadcast_to},
      {"EnsureShape", infer_ensure_shape, lower_ensure_shape},
      {"ShapeN", infer_shape_n, nullptr},
      {"MatrixBandPart", infer_matrix_band_part, lower_matrix_band_part},
      {"Erf", infer_unary_same, lower_erf},
      {"Diag", infer_diag, lower_diag},
      {"DiagPart", infer_diag_part, lower_diag_part},
      {"MatrixDiag", infer_matrix_diag, lower_matrix_diag},
      {"MatrixDiagV2", infer_matrix_diag, lower_matrix_diag},
      {"MatrixDiagV3", infer_matrix_diag, lower_matrix_diag},
      {"MatrixDiagPart", infer_matrix_diag_part, lower_matrix_diag_part},
      {"MatrixDiagPartV2", infer_matrix_diag_part, lower_matrix_diag_part},
      {"MatrixDiagPartV3", infer_matrix_diag_part, lower_matrix_diag_part},
      {"ReverseSequence", infer_reverse_sequence, lower_reverse_sequence},
  };
  return handlers;
}

}  // namespace floe::conv
