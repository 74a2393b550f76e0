// SPDX-License-Identifier: Apache-2.0
// Mean over any sorted, unique set of axes of a rank <= 8 tensor. Each output is
// the pairwise (cascade) float sum of its reduced elements, visited in row-major
// order by a stride walk, divided by their count. The output must not overlap
// the input.
// Typed reductions (declared in reduce.h). One row-major pass over the input: an
// odometer keeps the output offset (reduced dims have output stride 0), so each
// input element costs one combine; the kind/dtype switch runs once per call.
#include "runtime/kernels/reference/reduce.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/kernels/common/wrapping.h"
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {
namespace {

// Why float, and why pairwise: double would be software-emulated on
// single-precision FPUs (Cortex-M4F) and cost far more than the kernel. Plain
// sequential float summation errs by up to ~n * 2^-24 relative (4096 equal terms
// already drift by ~4e-5), which would make this reference a poor yardstick.
// Summing blocks of kBlock terms sequentially and combining block sums pairwise
// (as TensorFlow's vectorised tree reductions effectively do) bounds the error by
// about (kBlock + log2(n / kBlock)) * 2^-24 relative to sum|x| (~2e-6 even at
// 2^24 terms; observed errors are far smaller). Against a tolerance like 1e-5
// relative (of mean|x|) + 1e-6 absolute, the reference's own error is then
// negligible and the comparison measures only the kernel under test.
constexpr ptrdiff_t kBlock = 16;

// Streaming pairwise summation without a buffer of the inputs: a binary counter
// of completed blocks, level l holding the sum of 2^l blocks. Adding block k
// merges equal-sized partial sums exactly as incrementing k carries, so for
// n = kBlock * 2^j the result is the textbook recursive pairwise sum.
class PairwiseSum {
 public:
  // Adds n values x[0], x[stride], ... x[(n-1)*stride].
  void add_run(const float* x, ptrdiff_t n, ptrdiff_t stride) {
    while (n > 0) {
      ptrdiff_t take = kBlock - in_block_;
      if (take > n) take = n;
      float s = block_;
      for (ptrdiff_t i = 0; i < take; ++i, x += stride) s += x[0];
      n -= take;
      in_block_ += take;
      if (in_block_ == kBlock) {
        push(s);
        s = 0.0f;
        in_block_ = 0;
      }
      block_ = s;
    }
  }

  float total() const {
    // Smallest partial sums first: the open block, then the levels upwards.
    float s = block_;
    for (int l = 0; l < kLevels; ++l) {
      if ((blocks_ >> l) & 1u) s = level_[l] + s;
    }
    return s;
  }

 private:
  static constexpr int kLevels = 8 * sizeof(size_t);

  void push(float s) {
    int l = 0;
    for (size_t b = blocks_; b & 1u; b >>= 1, ++l) s = level_[l] + s;
    level_[l] = s;
    ++blocks_;
  }

  float level_[kLevels];
  size_t blocks_ = 0;  // bit l set <=> level_[l] holds a partial sum
  float block_ = 0.0f;
  ptrdiff_t in_block_ = 0;
};

// A run of merged dims: `size` positions, `stride` input elements apart.
struct Run {
  ptrdiff_t size;
  ptrdiff_t stride;
};

}  // namespace

void mean_f32(const ReduceParams& params, const ReduceOperands& ops) {
  const Shape& shape = ops.input.shape;
  const ptrdiff_t out_count = static_cast<ptrdiff_t>(ops.output.shape.num_elements());
  float* out = ops.output.data;
  if (out_count == 0) return;

  ptrdiff_t reduced_count = 1;
  for (int32_t k = 0; k < params.axis_count; ++k) reduced_count *= shape.dims[params.axes[k]];
  if (reduced_count == 0) {
    // The mean of nothing is 0/0 (TensorFlow gives NaN); the sum is 0.
    for (ptrdiff_t i = 0; i < out_count; ++i) out[i] = params.average ? NAN : 0.0f;
    return;
  }

  // Canonical form: drop size-1 dims (reduced or not, they move no index) and
  // merge neighbouring dims of the same kind, leaving alternating kept and
  // reduced runs. Input strides are the products of the sizes inside each run.
  ptrdiff_t size[kMaxRank];
  bool reduced[kMaxRank];
  int groups = 0;
  int32_t next_axis = 0;
  for (int32_t d = 0; d < shape.rank; ++d) {
    const bool is_reduced = next_axis < params.axis_count && params.axes[next_axis] == d;
    if (is_reduced) ++next_axis;
    const ptrdiff_t extent = shape.dims[d];
    if (extent == 1) continue;
    if (groups > 0 && reduced[groups - 1] == is_reduced) {
      size[groups - 1] *= extent;
    } else {
      size[groups] = extent;
      reduced[groups] = is_reduced;
      ++groups;
    }
  }
  Run kept[kMaxRank];
  Run red[kMaxRank];
  int kept_n = 0;
  int red_n = 0;
  ptrdiff_t stride = 1;
  for (int g = groups - 1; g >= 0; --g) {
    const Run r{size[g], stride};
    stride *= size[g];
    if (reduced[g]) {
      red[red_n++] = r;
    } else {
      kept[kept_n++] = r;
    }
  }
  // red[] and kept[] are innermost-first. With nothing left to reduce (only
  // size-1 axes), the mean is a copy.
  const float* in = ops.input.data;
  if (red_n == 0) {
    for (ptrdiff_t i = 0; i < out_count; ++i) out[i] = in[i];
    return;
  }

  const float divisor = static_cast<float>(reduced_count);  // exact up to 2^24
  const Run inner = red[0];
  ptrdiff_t kept_index[kMaxRank] = {};
  ptrdiff_t base = 0;
  for (ptrdiff_t o = 0; o < out_count; ++o) {
    // Visit this output's reduced elements in row-major order: the innermost
    // reduced run is a strided loop inside PairwiseSum, an odometer over the
    // outer reduced runs moves the offset (rewinding a run when it wraps).
    PairwiseSum acc;
    ptrdiff_t red_index[kMaxRank] = {};
    ptrdiff_t off = base;
    for (ptrdiff_t done = 0; done < reduced_count; done += inner.size) {
      acc.add_run(in + off, inner.size, inner.stride);
      for (int r = 1; r < red_n; ++r) {
        off += red[r].stride;
        if (++red_index[r] < red[r].size) break;
        off -= red[r].stride * red[r].size;
        red_index[r] = 0;
      }
    }
    // sum / count, as TensorFlow's mean reducer finalises.
    out[o] = params.average ? acc.total() / divisor : acc.total();

    for (int k = 0; k < kept_n; ++k) {
      base += kept[k].stride;
      if (++kept_index[k] < kept[k].size) break;
      base -= kept[k].stride * kept[k].size;
      kept_index[k] = 0;
    }
  }
}

}  // namespace floe::ref

namespace floe::ref {
namespace {

template <typename T> struct SumOp {
  static T init() { return 0; }
  static T combine(T a, T b) { return wrapping_add(a, b); }
};
template <typename T> struct ProdOp {
  static T init() { return 1; }
  static T combine(T a, T b) { return wrapping_mul(a, b); }
};
template <typename T> struct MaxOp {
  static T init();
  static T combine(T a, T b) { return (b > a || b != b) ? b : a; }
};
template <typename T> struct MinOp {
  static T init();
  static T combine(T a, T b) { return (b < a || b != b) ? b : a; }
};
template <> float MaxOp<float>::init() { return -INFINITY; }
template <> int32_t MaxOp<int32_t>::init() { return INT32_MIN; }
template <> int64_t MaxOp<int64_t>::init() { return INT64_MIN; }
template <> float MinOp<float>::init() { return INFINITY; }
template <> int32_t MinOp<int32_t>::init() { return INT32_MAX; }
template <> int64_t MinOp<int64_t>::init() { return INT64_MAX; }
struct AllOp {
  static uint8_t init() { return 1; }
  static uint8_t combine(uint8_t a, uint8_t b) { return (a != 0 && b != 0) ? 1 : 0; }
};
struct AnyOp {
  static uint8_t init() { return 0; }
  static uint8_t combine(uint8_t a, uint8_t b) { return (a != 0 || b != 0) ? 1 : 0; }
};

template <typename T, typename Op>
void reduce_walk(const ReduceParams& params, In<void> input, Out<void> output) {
  const Shape& shape = input.shape;
  const T* in = static_cast<const T*>(input.data);
  T* out = static_cast<T*>(output.data);
  const int64_t out_count = output.shape.num_elements();
  for (int64_t i = 0; i < out_count; ++i) out[i] = Op::init();
  const int64_t n = shape.num_elements();
  if (n == 0) return;
  // Output strides of the input dims (0 for reduced dims).
  ptrdiff_t out_stride[kMaxRank] = {};
  ptrdiff_t step = 1;
  for (int d = shape.rank - 1; d >= 0; --d) {
    bool reduced = false;
    for (int k = 0; k < params.axis_count; ++k) reduced = reduced || params.axes[k] == d;
    out_stride[d] = reduced ? 0 : step;
    if (!reduced) step *= shape.dims[d];
  }
  if (shape.rank == 0) {
    out[0] = Op::combine(out[0], in[0]);
    return;
  }
  const int last = shape.rank - 1;
  const ptrdiff_t inner = shape.dims[last];
  const ptrdiff_t inner_stride = out_stride[last];
  ptrdiff_t index[kMaxRank] = {};
  ptrdiff_t off = 0;
  for (int64_t done = 0; done < n; done += inner) {
    const T* row = in + done;
    T* o = out + off;
    for (ptrdiff_t i = 0; i < inner; ++i) o[i * inner_stride] = Op::combine(o[i * inner_stride], row[i]);
    for (int d = last - 1; d >= 0; --d) {
      off += out_stride[d];
      if (++index[d] < shape.dims[d]) break;
      off -= out_stride[d] * shape.dims[d];
      index[d] = 0;
    }
  }
}

template <typename T>
void reduce_int(ReduceKind kind, const ReduceParams& params, In<void> input, Out<void> output) {
  switch (kind) {
    case ReduceKind::kSum: return reduce_walk<T, SumOp<T>>(params, input, output);
    case ReduceKind::kProd: return reduce_walk<T, ProdOp<T>>(params, input, output);
    case ReduceKind::kMax: return reduce_walk<T, MaxOp<T>>(params, input, output);
    case ReduceKind::kMin: return reduce_walk<T, MinOp<T>>(params, input, output);
    case ReduceKind::kMean: {
      reduce_walk<T, SumOp<T>>(params, input, output);
      int64_t count = 1;
      for (int k = 0; k < params.axis_count; ++k) count *= input.shape.dims[params.axes[k]];
      T* out = static_cast<T*>(output.data);
      const int64_t n = output.shape.num_elements();
      // Integer mean truncates, like TF's; the mean of nothing is 0 here.
      for (int64_t i = 0; i < n && count > 0; ++i) out[i] = static_cast<T>(out[i] / static_cast<T>(count));
      return;
    }
    default: return;
  }
}

template <typename TI, typename TO, bool kMax>
void arg_walk(int32_t axis, In<void> input, Out<void> output) {
  const Shape& s = input.shape;
  const ptrdiff_t outer = static_cast<ptrdiff_t>(s.span(0, axis));
  const ptrdiff_t count = s.dims[axis];
  const ptrdiff_t inner = static_cast<ptrdiff_t>(s.span(axis + 1, s.rank));
  const TI* in = static_cast<const TI*>(input.data);
  TO* out = static_cast<TO*>(output.data);
  for (ptrdiff_t o = 0; o < outer; ++o) {
    for (ptrdiff_t i = 0; i < inner; ++i) {
      const TI* p = in + o * count * inner + i;
      ptrdiff_t best = 0;
      TI best_value = p[0];
      for (ptrdiff_t k = 1; k < count; ++k) {
        const TI v = p[k * inner];
        if (kMax ? (v > best_value) : (v < best_value)) {
          best = k;
          best_value = v;
        }
      }
      out[o * inner + i] = static_cast<TO>(best);
    }
  }
}

template <typename TI>
void arg_typed(bool is_max, DType out_dtype, int32_t axis, In<void> input, Out<void> output) {
  if (out_dtype == DType::kInt32) {
    return is_max ? arg_walk<TI, int32_t, true>(axis, input, output)
                  : arg_walk<TI, int32_t, false>(axis, input, output);
  }
  return is_max ? arg_walk<TI, int64_t, true>(axis, input, output)
                : arg_walk<TI, int64_t, false>(axis, input, output);
}

}  // namespace

bool reduce_supports(ReduceKind kind, DType dtype) {
  switch (kind) {
    case ReduceKind::kAll:
    case ReduceKind::kAny:
      return dtype == DType::kBool;
    default:
      return dtype == DType::kFloat32 || dtype == DType::kInt32 || dtype == DType::kInt64;
  }
}

void reduce(ReduceKind kind, DType dtype, const ReduceParams& params, In<void> input, Out<void> output) {
  if (kind == ReduceKind::kAll) return reduce_walk<uint8_t, AllOp>(params, input, output);
  if (kind == ReduceKind::kAny) return reduce_walk<uint8_t, AnyOp>(params, input, output);
  switch (dtype) {
    case DType::kFloat32: {
      const In<float> in{static_cast<const float*>(input.data), input.shape};
      const Out<float> out{static_cast<float*>(output.data), output.shape};
      switch (kind) {
        case ReduceKind::kSum: return sum_f32(params, {in, out});
        case ReduceKind::kMean: return mean_f32(params, {in, out});
        case ReduceKind::kProd: return reduce_walk<float, ProdOp<float>>(params, input, output);
        case ReduceKind::kMax: return reduce_walk<float, MaxOp<float>>(params, input, output);
        case ReduceKind::kMin: return reduce_walk<float, MinOp<float>>(params, input, output);
        default: return;
      }
    }
    case DType::kInt32: return reduce_int<int32_t>(kind, params, input, output);
    case DType::kInt64: return reduce_int<int64_t>(kind, params, input, output);
    default: return;
  }
}

bool arg_reduce_supports(DType input, DType output) {
  return (input == DType::kFloat32 || input == DType::kInt32 || input == DType::kInt64) &&
         (output == DType::kInt32 || output == DType::kInt64);
}

void arg_reduce(bool is_max, DType input_dtype, DType output_dtype, int32_t axis, In<void> input,
                Out<void> output) {
  switch (input_dtype) {
    case DType::kFloat32: return arg_typed<float>(is_max, output_dtype, axis, input, output);
    case DType::kInt32: return arg_typed<int32_t>(is_max, output_dtype, axis, input, output);
    case DType::kInt64: return arg_typed<int64_t>(is_max, output_dtype, axis, input, output);
    default: return;
  }
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {
namespace {

using ref::ReduceKind;

template <ref::MeanRounding kRounding>
Status eval_mean_s8(const PreparedOp& ctx) {
  ref::mean_s8(ctx.params_as<MeanPrepared>().s8, in_as<int8_t>(ctx.input(0)), out_as<int8_t>(ctx.output(0)),
               kRounding);
  return Status::kOk;
}

template <ref::MeanRounding kRounding>
Status eval_mean_s16(const PreparedOp& ctx) {
  ref::mean_s16(ctx.params_as<MeanPrepared>().s8, in_as<int16_t>(ctx.input(0)), out_as<int16_t>(ctx.output(0)),
                kRounding);
  return Status::kOk;
}

// Quantized int8 or int16 MEAN (an Operator.requantization is present): the
// sum is rescaled by the converter's input/output multiplier, as TFLM does.
const char* prepare_mean_s8(const OpContext& ctx) {
  const char* why = nullptr;
  const bool wide = ctx.input(0).dtype == DType::kInt16;
  const schema::Requantization* r = requantization_of(ctx, &why, wide ? DType::kInt16 : DType::kInt8);
  if (r == nullptr) return why;
  const ReducePrepared axes = ctx.params<MeanPrepared>().plain;  // filled by prepare_reduce
  ref::MeanS8Params& p = ctx.params<MeanPrepared>().s8;
  for (int32_t i = 0; i < axes.axis_count; ++i) p.axes[i] = axes.axes[i];
  p.axis_count = axes.axis_count;
  p.input_zero_point = -entry(r->input_offsets(), 0);
  p.output_zero_point = r->output_offset();
  p.multiplier = r->output_multiplier();
  p.shift = r->output_shift();
  const int32_t lowest = wide ? INT16_MIN : INT8_MIN, highest = wide ? INT16_MAX : INT8_MAX;
  if (p.input_zero_point < lowest || p.input_zero_point > highest || !valid_multiplier(p.multiplier, p.shift)) {
    return FLOE_MSG("quantized mean zero point, multiplier or shift out of range");
  }
  using ref::MeanRounding;
  if (ref::mean_keeps_grid(p)) {
    ctx.set_eval(wide ? eval_mean_s16<MeanRounding::kTruncateSum> : eval_mean_s8<MeanRounding::kTruncateSum>);
  } else {
    ctx.set_eval(wide ? eval_mean_s16<MeanRounding::kRequantize> : eval_mean_s8<MeanRounding::kRequantize>);
  }
  return nullptr;
}

const char* prepare_reduce(const OpContext& ctx, ReduceKind kind) {
  if (!has_io(ctx, 1, 1)) return FLOE_MSG("expects 1 input and 1 output");
  const bool quantized = ctx.op->requantization() != nullptr;
  if (quantized && (kind != ReduceKind::kMean || (!is_s8(ctx.input(0)) && ctx.input(0).dtype != DType::kInt16))) {
    return FLOE_MSG("only MEAN has a quantized int8 / int16 kernel");
  }
  const TensorView in = ctx.input(0), out = ctx.output(0);
  if (in.dtype != out.dtype) return FLOE_MSG("output dtype differs from the input's");
  if (!quantized && !ref::reduce_supports(kind, in.dtype)) return FLOE_MSG("dtype not supported by this reduction");
  const auto* options = ctx.op->options_as_ReduceOptions();
  const auto* axes = options->axes();
  const int count = axes ? static_cast<int>(axes->size()) : 0;
  int64_t kept = 1;
  int next = 0;
  for (int d = 0; d < in.shape.rank; ++d) {
    if (next < count && axes->Get(next) == d) {
      ++next;
    } else {
      kept *= in.shape.dims[d];
    }
  }
  if (next != count) return FLOE_MSG("reduce axes must be sorted, unique and < rank");
  if (out.shape.num_elements() != kept) return FLOE_MSG("reduce output has wrong size");
  ReducePrepared& prepared = ctx.params<ReducePrepared>();
  prepared.axis_count = count;  // <= rank <= kMaxRank: the axes are unique and < rank
  for (int i = 0; i < count; ++i) prepared.axes[i] = axes->Get(static_cast<uint32_t>(i));
  return quantized ? prepare_mean_s8(ctx) : nullptr;
}

Status eval_reduce(const PreparedOp& ctx, ReduceKind kind) {
  const ReducePrepared& prepared = ctx.params_as<ReducePrepared>();
  ref::ReduceParams params;
  params.axes = prepared.axes;
  params.axis_count = prepared.axis_count;
  ref::reduce(kind, ctx.input(0).dtype, params, in_void(ctx.input(0)), out_void(ctx.output(0)));
  return Status::kOk;
}

const char* prepare_arg(const OpContext& ctx) {
  if (!has_io(ctx, 1, 1)) return FLOE_MSG("expects 1 input and 1 output");
  const TensorView in = ctx.input(0), out = ctx.output(0);
  if (!ref::arg_reduce_supports(in.dtype, out.dtype)) return FLOE_MSG("unsupported dtypes");
  const int32_t axis = ctx.op->options_as_ArgOptions()->axis();
  if (axis < 0 || axis >= in.shape.rank) return FLOE_MSG("axis out of range");
  if (in.shape.dims[axis] < 1) return FLOE_MSG("cannot reduce an empty axis");
  if (out.shape.rank != in.shape.rank - 1) return FLOE_MSG("output must drop the axis");
  for (int d = 0, o = 0; d < in.shape.rank; ++d) {
    if (d == axis) continue;
    if (out.shape.dims[o++] != in.shape.dims[d]) return FLOE_MSG("output shape mismatch");
  }
  ctx.params<AxisPrepared>().axis = axis;
  return nullptr;
}

Status eval_arg(const PreparedOp& ctx, bool is_max) {
  const TensorView &in = ctx.input(0), &out = ctx.output(0);
  ref::arg_reduce(is_max, in.dtype, out.dtype, ctx.params_as<AxisPrepared>().axis, in_void(in),
                  out_void(out));
  return Status::kOk;
}

}  // namespace

#define FLOE_REDUCE(name, kind)                                                           \
  const char* prepare_##name(const OpContext& ctx) { return prepare_reduce(ctx, kind); } \
  Status eval_##name(const PreparedOp& ctx) { return eval_reduce(ctx, kind); }

FLOE_REDUCE(sum, ReduceKind::kSum)

FLOE_REDUCE(mean, ReduceKind::kMean)

FLOE_REDUCE(prod, ReduceKind::kProd)

FLOE_REDUCE(reduce_max, ReduceKind::kMax)

FLOE_REDUCE(reduce_min, ReduceKind::kMin)

FLOE_REDUCE(reduce_all, ReduceKind::kAll)

FLOE_REDUCE(reduce_any, ReduceKind::kAny)

#undef FLOE_REDUCE

const char* prepare_arg_max(const OpContext& ctx) { return prepare_arg(ctx); }

Status eval_arg_max(const PreparedOp& ctx) { return eval_arg(ctx, true); }

const char* prepare_arg_min(const OpContext& ctx) { return prepare_arg(ctx); }

Status eval_arg_min(const PreparedOp& ctx) { return eval_arg(ctx, false); }

}  // namespace floe::ops

namespace floe::ref {

namespace {

// int8 and int16 alike (TFLM's QuantizedMeanOrSum<T>): an int32 sum, clamped to T.
template <typename T>
void mean_integer(const MeanS8Params& params, const In<T>& input, const Out<T>& output, MeanRounding rounding) {
  const Shape& shape = input.shape;
  const int rank = shape.rank;
  bool reduced[kMaxRank] = {};
  for (int32_t i = 0; i < params.axis_count; ++i) reduced[params.axes[i]] = true;

  // Split the input's dims into kept dims (the output, in order) and reduced
  // dims; walk every output element and, inside, every reduced coordinate.
  ptrdiff_t stride[kMaxRank];
  ptrdiff_t step = 1;
  for (int d = rank - 1; d >= 0; --d) {
    stride[d] = step;
    step *= shape.dims[d];
  }
  int kept_dims[kMaxRank], reduced_dims[kMaxRank];
  int kept_count = 0, reduced_count = 0;
  int64_t count = 1;
  for (int d = 0; d < rank; ++d) {
    if (reduced[d]) {
      reduced_dims[reduced_count++] = d;
      count *= shape.dims[d];
    } else {
      kept_dims[kept_count++] = d;
    }
  }
  constexpr int32_t kLowest = sizeof(T) == 1 ? INT8_MIN : INT16_MIN, kHighest = sizeof(T) == 1 ? INT8_MAX : INT16_MAX;
  const ptrdiff_t outputs = static_cast<ptrdiff_t>(output.shape.num_elements());
  if (count == 0) {  // an empty reduction: TFLM leaves its zero-initialized output
    for (ptrdiff_t o = 0; o < outputs; ++o) output.data[o] = 0;
    return;
  }

  // TFLite folds 1/count into the multiplier: multiplier * 2^s / count with
  // s = floor(log2(count)), capped so the shift stays representable.
  int s = 63 - __builtin_clzll(static_cast<uint64_t>(count));
  if (s > 32) s = 32;
  if (s > 31 + params.shift) s = 31 + params.shift;
  const int32_t multiplier =
      static_cast<int32_t>((static_cast<int64_t>(params.multiplier) << s) / count);
  const int shift = params.shift - s;

  ptrdiff_t out_index[kMaxRank] = {};
  for (ptrdiff_t o = 0; o < outputs; ++o) {
    ptrdiff_t base = 0;
    for (int k = 0; k < kept_count; ++k) base += out_index[k] * stride[kept_dims[k]];
    uint32_t sum = 0;
    ptrdiff_t red_index[kMaxRank] = {};
    for (int64_t r = 0; r < count; ++r) {
      ptrdiff_t offset = base;
      for (int k = 0; k < reduced_count; ++k) offset += red_index[k] * stride[reduced_dims[k]];
      sum += static_cast<uint32_t>(int32_t{input.data[offset]});
      for (int k = reduced_count - 1; k >= 0; --k) {
        if (++red_index[k] < shape.dims[reduced_dims[k]]) break;
        red_index[k] = 0;
      }
    }
    if (rounding == MeanRounding::kTruncateSum) {
      // TFLM's reference_ops::Mean<T, int32_t>: the raw sum (zero points
      // included) divided by the count in C++, i.e. rounded toward zero.
      output.data[o] = static_cast<T>(static_cast<int32_t>(sum) / static_cast<int32_t>(count));
    } else {
      // int32 arithmetic as TFLM's, wrapping where a long int16 sum passes 2^31.
      const int32_t centered = static_cast<int32_t>(
          sum - static_cast<uint32_t>(params.input_zero_point) * static_cast<uint32_t>(count));
      const int32_t value =
          multiply_by_quantized_multiplier(centered, multiplier, shift) + params.output_zero_point;
      output.data[o] = static_cast<T>(clamp_to(value, kLowest, kHighest));
    }
    for (int k = kept_count - 1; k >= 0; --k) {
      if (++out_index[k] < shape.dims[kept_dims[k]]) break;
      out_index[k] = 0;
    }
  }
}

}  // namespace

void mean_s8(const MeanS8Params& params, const In<int8_t>& input, const Out<int8_t>& output,
             MeanRounding rounding) {
  mean_integer(params, input, output, rounding);
}

void mean_s16(const MeanS8Params& params, const In<int16_t>& input, const Out<int16_t>& output,
              MeanRounding rounding) {
  mean_integer(params, input, output, rounding);
}

}  // namespace floe::ref

FLOE_KERNEL(REFERENCE, ARG_MAX, ANY, ops::AxisPrepared, ops::prepare_arg_max, ops::eval_arg_max)
FLOE_KERNEL(REFERENCE, ARG_MIN, ANY, ops::AxisPrepared, ops::prepare_arg_min, ops::eval_arg_min)

FLOE_KERNEL(REFERENCE, MEAN, ANY, ops::MeanPrepared, ops::prepare_mean, ops::eval_mean)
FLOE_KERNEL(REFERENCE, SUM, ANY, ops::ReducePrepared, ops::prepare_sum, ops::eval_sum)
FLOE_KERNEL(REFERENCE, PROD, ANY, ops::ReducePrepared, ops::prepare_prod, ops::eval_prod)
FLOE_KERNEL(REFERENCE, REDUCE_MAX, ANY, ops::ReducePrepared, ops::prepare_reduce_max, ops::eval_reduce_max)
FLOE_KERNEL(REFERENCE, REDUCE_MIN, ANY, ops::ReducePrepared, ops::prepare_reduce_min, ops::eval_reduce_min)
FLOE_KERNEL(REFERENCE, REDUCE_ALL, ANY, ops::ReducePrepared, ops::prepare_reduce_all, ops::eval_reduce_all)
FLOE_KERNEL(REFERENCE, REDUCE_ANY, ANY, ops::ReducePrepared, ops::prepare_reduce_any, ops::eval_reduce_any)
