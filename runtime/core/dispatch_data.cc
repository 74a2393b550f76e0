// SPDX-License-Identifier: Apache-2.0
// Adapters for reductions (Sum, Mean, Prod, Max, Min, All, Any, ArgMax/ArgMin)
// and index-driven data movement (StridedSlice, Tile, Gather, GatherNd, OneHot).
// Prepare checks every constant index: reduction axes sorted/unique/in range,
// slice windows inside the input for every output position, tile multiples
// integral, gather geometry consistent; gathered indices are data and are
// checked by the kernels during eval.
#include "runtime/core/dispatch_ops.h"
#include "runtime/kernels/reference/gather.h"
#include "runtime/kernels/reference/reduce.h"
#include "runtime/kernels/reference/slice.h"

namespace floe::ops {
namespace {

using ref::ReduceKind;

const char* prepare_reduce(const OpContext& ctx, ReduceKind kind) {
  if (!has_io(ctx, 1, 1)) return FLOE_MSG("expects 1 input and 1 output");
  const TensorView in = ctx.input(0), out = ctx.output(0);
  if (in.dtype != out.dtype) return FLOE_MSG("output dtype differs from the input's");
  if (!ref::reduce_supports(kind, in.dtype)) return FLOE_MSG("dtype not supported by this reduction");
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
  return nullptr;
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

const char* prepare_strided_slice(const OpContext& ctx) {
  if (!has_io(ctx, 1, 1)) return FLOE_MSG("expects 1 input and 1 output");
  const TensorView in = ctx.input(0), out = ctx.output(0);
  if (in.dtype != out.dtype || dtype_size(in.dtype) == 0) return FLOE_MSG("dtype mismatch");
  if (in.shape.rank != out.shape.rank) return FLOE_MSG("slice keeps the rank (reshape separately)");
  const auto* o = ctx.op->options_as_StridedSliceOptions();
  const auto *begin = o->begin(), *stride = o->stride();
  const int rank = in.shape.rank;
  if (!begin || !stride || static_cast<int>(begin->size()) != rank || static_cast<int>(stride->size()) != rank) {
    return FLOE_MSG("begin/stride need one value per dim");
  }
  for (int d = 0; d < rank; ++d) {
    const int64_t count = out.shape.dims[d];
    if (count == 0) continue;
    const int64_t b = begin->Get(d), s = stride->Get(d);
    const int64_t last = b + (count - 1) * s;
    if (s == 0 || b < 0 || b >= in.shape.dims[d] || last < 0 || last >= in.shape.dims[d]) {
      return FLOE_MSG("slice window leaves the input");
    }
  }
  StridedSlicePrepared& prepared = ctx.params<StridedSlicePrepared>();
  for (int d = 0; d < rank; ++d) {  // rank <= kMaxRank (Model::Load)
    prepared.begin[d] = begin->Get(static_cast<uint32_t>(d));
    prepared.stride[d] = stride->Get(static_cast<uint32_t>(d));
  }
  prepared.element_size = static_cast<int32_t>(dtype_size(in.dtype));
  return nullptr;
}

Status eval_strided_slice(const PreparedOp& ctx) {
  const StridedSlicePrepared& prepared = ctx.params_as<StridedSlicePrepared>();
  ref::StridedSliceParams params;
  params.begin = prepared.begin;
  params.stride = prepared.stride;
  params.element_size = static_cast<size_t>(prepared.element_size);
  ref::strided_slice(params, in_void(ctx.input(0)), out_void(ctx.output(0)));
  return Status::kOk;
}

const char* prepare_tile(const OpContext& ctx) {
  if (!has_io(ctx, 1, 1)) return FLOE_MSG("expects 1 input and 1 output");
  const TensorView in = ctx.input(0), out = ctx.output(0);
  if (in.dtype != out.dtype || dtype_size(in.dtype) == 0) return FLOE_MSG("dtype mismatch");
  if (in.shape.rank != out.shape.rank) return FLOE_MSG("tile keeps the rank");
  for (int d = 0; d < in.shape.rank; ++d) {
    const int32_t i = in.shape.dims[d], o = out.shape.dims[d];
    if (i == 0 ? o != 0 : (o % i) != 0) return FLOE_MSG("output dims must be multiples of input dims");
  }
  return nullptr;
}

Status eval_tile(const PreparedOp& ctx) {
  ref::tile(dtype_size(ctx.input(0).dtype), in_void(ctx.input(0)), out_void(ctx.output(0)));
  return Status::kOk;
}

const char* prepare_gather(const OpContext& ctx) {
  if (!has_io(ctx, 2, 1)) return FLOE_MSG("expects params, indices and 1 output");
  const TensorView p = ctx.input(0), idx = ctx.input(1), out = ctx.output(0);
  if (p.dtype != out.dtype || dtype_size(p.dtype) == 0) return FLOE_MSG("dtype mismatch");
  if (idx.dtype != DType::kInt32 && idx.dtype != DType::kInt64) return FLOE_MSG("indices must be int32/int64");
  const auto* o = ctx.op->options_as_GatherOptions();
  const int32_t axis = o->axis(), batch = o->batch_dims();
  if (batch < 0 || batch > axis || axis >= p.shape.rank || batch > idx.shape.rank) {
    return FLOE_MSG("axis/batch_dims out of range");
  }
  // Expected output: params[:axis] + indices[batch:] + params[axis+1:].
  const int rank = axis + (idx.shape.rank - batch) + (p.shape.rank - axis - 1);
  if (out.shape.rank != rank) return FLOE_MSG("output rank mismatch");
  int o_d = 0;
  for (int d = 0; d < batch; ++d) {
    if (idx.shape.dims[d] != p.shape.dims[d]) return FLOE_MSG("batch dims differ");
  }
  for (int d = 0; d < axis; ++d) {
    if (out.shape.dims[o_d++] != p.shape.dims[d]) return FLOE_MSG("output shape mismatch");
  }
  for (int d = batch; d < idx.shape.rank; ++d) {
    if (out.shape.dims[o_d++] != idx.shape.dims[d]) return FLOE_MSG("output shape mismatch");
  }
  for (int d = axis + 1; d < p.shape.rank; ++d) {
    if (out.shape.dims[o_d++] != p.shape.dims[d]) return FLOE_MSG("output shape mismatch");
  }
  GatherPrepared& prepared = ctx.params<GatherPrepared>();
  prepared.axis = axis;
  prepared.batch_dims = batch;
  prepared.element_size = static_cast<int32_t>(dtype_size(p.dtype));
  prepared.indices_int64 = idx.dtype == DType::kInt64;
  return nullptr;
}

Status eval_gather(const PreparedOp& ctx) {
  const GatherPrepared& prepared = ctx.params_as<GatherPrepared>();
  ref::GatherParams params;
  params.axis = prepared.axis;
  params.batch_dims = prepared.batch_dims;
  params.element_size = static_cast<size_t>(prepared.element_size);
  params.indices_int64 = prepared.indices_int64;
  return ref::gather(params, in_void(ctx.input(0)), in_void(ctx.input(1)), out_void(ctx.output(0)))
             ? Status::kOk
             : Status::kKernelError;
}

const char* prepare_gather_nd(const OpContext& ctx) {
  if (!has_io(ctx, 2, 1)) return FLOE_MSG("expects params, indices and 1 output");
  const TensorView p = ctx.input(0), idx = ctx.input(1), out = ctx.output(0);
  if (p.dtype != out.dtype || dtype_size(p.dtype) == 0) return FLOE_MSG("dtype mismatch");
  if (idx.dtype != DType::kInt32 && idx.dtype != DType::kInt64) return FLOE_MSG("indices must be int32/int64");
  if (idx.shape.rank < 1) return FLOE_MSG("indices need rank >= 1");
  const int32_t k = idx.shape.dims[idx.shape.rank - 1];
  if (k < 0 || k > p.shape.rank) return FLOE_MSG("index depth exceeds params rank");
  if (out.shape.rank != idx.shape.rank - 1 + p.shape.rank - k) return FLOE_MSG("output rank mismatch");
  int o_d = 0;
  for (int d = 0; d < idx.shape.rank - 1; ++d) {
    if (out.shape.dims[o_d++] != idx.shape.dims[d]) return FLOE_MSG("output shape mismatch");
  }
  for (int d = k; d < p.shape.rank; ++d) {
    if (out.shape.dims[o_d++] != p.shape.dims[d]) return FLOE_MSG("output shape mismatch");
  }
  return nullptr;
}

Status eval_gather_nd(const PreparedOp& ctx) {
  return ref::gather_nd(dtype_size(ctx.input(0).dtype), ctx.input(1).dtype == DType::kInt64,
                        in_void(ctx.input(0)), in_void(ctx.input(1)), out_void(ctx.output(0)))
             ? Status::kOk
             : Status::kKernelError;
}

const char* prepare_one_hot(const OpContext& ctx) {
  if (!has_io(ctx, 3, 1)) return FLOE_MSG("expects indices, on_value, off_value and 1 output");
  const TensorView idx = ctx.input(0), on = ctx.input(1), off = ctx.input(2), out = ctx.output(0);
  if (idx.dtype != DType::kInt32 && idx.dtype != DType::kInt64) return FLOE_MSG("indices must be int32/int64");
  if (on.dtype != out.dtype || off.dtype != out.dtype || dtype_size(out.dtype) == 0) {
    return FLOE_MSG("on/off values must have the output dtype");
  }
  if (on.shape.num_elements() != 1 || off.shape.num_elements() != 1) return FLOE_MSG("on/off must be scalars");
  const int32_t axis = ctx.op->options_as_OneHotOptions()->axis();
  if (axis < 0 || axis > idx.shape.rank || out.shape.rank != idx.shape.rank + 1) {
    return FLOE_MSG("axis out of range");
  }
  for (int d = 0, i = 0; d < out.shape.rank; ++d) {
    if (d == axis) continue;
    if (out.shape.dims[d] != idx.shape.dims[i++]) return FLOE_MSG("output shape mismatch");
  }
  ctx.params<AxisPrepared>().axis = axis;
  return nullptr;
}

Status eval_one_hot(const PreparedOp& ctx) {
  const TensorView& out = ctx.output(0);
  ref::one_hot(dtype_size(out.dtype), ctx.input(0).dtype == DType::kInt64,
               ctx.params_as<AxisPrepared>().axis, in_void(ctx.input(0)), ctx.input(1).data,
               ctx.input(2).data, out_void(out));
  return Status::kOk;
}

}  // namespace floe::ops
