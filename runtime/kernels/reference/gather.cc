// SPDX-License-Identifier: Apache-2.0
// Gather, GatherNd and OneHot (see gather.h). Each copies contiguous runs of
// `inner` elements; the index check is one compare per gathered run.
#include "runtime/kernels/reference/gather.h"

#include <string.h>

#include "runtime/kernels/reference/element_copy.h"
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {
namespace {

inline int64_t index_at(const void* indices, bool is64, int64_t i) {
  return is64 ? static_cast<const int64_t*>(indices)[i] : static_cast<const int32_t*>(indices)[i];
}

}  // namespace

bool gather(const GatherParams& p, In<void> params, In<void> indices, Out<void> output, IndexFault* fault) {
  const Shape& ps = params.shape;
  const int64_t batch = ps.span(0, p.batch_dims);
  const int64_t outer = ps.span(p.batch_dims, p.axis);
  const int64_t axis_size = ps.dims[p.axis];
  const int64_t inner = ps.span(p.axis + 1, ps.rank);
  const int64_t index_count = indices.shape.span(p.batch_dims, indices.shape.rank);
  const size_t run = static_cast<size_t>(inner) * p.element_size;
  const uint8_t* src = static_cast<const uint8_t*>(params.data);
  uint8_t* dst = static_cast<uint8_t*>(output.data);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < index_count; ++i) {
        const int64_t k = index_at(indices.data, p.indices_int64, b * index_count + i);
        if (k < 0 || k >= axis_size) {
          *fault = {k, static_cast<int32_t>(b * index_count + i), static_cast<int32_t>(axis_size)};
          return false;
        }
        const int64_t from = ((b * outer + o) * axis_size + k) * inner;
        if (run) memcpy(dst, src + static_cast<size_t>(from) * p.element_size, run);
        dst += run;
      }
    }
  }
  return true;
}

bool gather_nd(size_t element_size, bool indices_int64, In<void> params, In<void> indices, Out<void> output,
               IndexFault* fault) {
  const Shape& ps = params.shape;
  const int32_t k = indices.shape.dims[indices.shape.rank - 1];
  const int64_t count = indices.shape.span(0, indices.shape.rank - 1);
  const int64_t inner = ps.span(k, ps.rank);
  const size_t run = static_cast<size_t>(inner) * element_size;
  const uint8_t* src = static_cast<const uint8_t*>(params.data);
  uint8_t* dst = static_cast<uint8_t*>(output.data);
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset = 0;
    for (int32_t d = 0; d < k; ++d) {
      const int64_t v = index_at(indices.data, indices_int64, i * k + d);
      if (v < 0 || v >= ps.dims[d]) {
        *fault = {v, static_cast<int32_t>(i * k + d), ps.dims[d]};
        return false;
      }
      offset = offset * ps.dims[d] + v;
    }
    if (run) memcpy(dst, src + static_cast<size_t>(offset * inner) * element_size, run);
    dst += run;
  }
  return true;
}

void one_hot(size_t element_size, bool indices_int64, int32_t axis, In<void> indices, const void* on_value,
             const void* off_value, Out<void> output) {
  const Shape& out = output.shape;
  const int64_t outer = out.span(0, axis);
  const int64_t depth = out.dims[axis];
  const int64_t inner = out.span(axis + 1, out.rank);
  with_element_type(element_size, [&](auto tag) {
    using U = decltype(tag);
    U on, off;
    memcpy(&on, on_value, sizeof(U));
    memcpy(&off, off_value, sizeof(U));
    U* dst = static_cast<U*>(output.data);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t d = 0; d < depth; ++d) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t k = index_at(indices.data, indices_int64, o * inner + i);
          *dst++ = k == d ? on : off;
        }
      }
    }
  });
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

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
  return ref::gather(params, in_void(ctx.input(0)), in_void(ctx.input(1)), out_void(ctx.output(0)),
                     &static_cast<GatherPrepared*>(ctx.params)->fault)
             ? Status::kOk
             : Status::kIndexOutOfRange;
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
                        in_void(ctx.input(0)), in_void(ctx.input(1)), out_void(ctx.output(0)),
                        &static_cast<GatherNdPrepared*>(ctx.params)->fault)
             ? Status::kOk
             : Status::kIndexOutOfRange;
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

FLOE_KERNEL(REFERENCE, GATHER, ANY, ops::GatherPrepared, ops::prepare_gather, ops::eval_gather)
FLOE_KERNEL(REFERENCE, GATHER_ND, ANY, ops::GatherNdPrepared, ops::prepare_gather_nd, ops::eval_gather_nd)
FLOE_KERNEL(REFERENCE, ONE_HOT, ANY, ops::AxisPrepared, ops::prepare_one_hot, ops::eval_one_hot)
