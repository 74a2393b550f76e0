// SPDX-License-Identifier: Apache-2.0
// Strided slice and tile (see slice.h): an odometer over the output's outer
// dims keeps the input offset; the innermost dim is a strided copy loop.
#include "runtime/kernels/reference/slice.h"

#include "runtime/kernels/reference/element_copy.h"
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {
namespace {

template <typename U>
void slice_typed(const StridedSliceParams& p, In<void> input, Out<void> output) {
  const Shape& in = input.shape;
  const Shape& out = output.shape;
  const int64_t n = out.num_elements();
  const U* src = static_cast<const U*>(input.data);
  U* dst = static_cast<U*>(output.data);
  if (n == 0) return;
  if (out.rank == 0) {
    dst[0] = src[0];
    return;
  }
  ptrdiff_t in_stride[kMaxRank] = {};
  ptrdiff_t step = 1;
  for (int d = in.rank - 1; d >= 0; --d) {
    in_stride[d] = step;
    step *= in.dims[d];
  }
  ptrdiff_t move[kMaxRank] = {};  // input elements per output step along d
  ptrdiff_t base = 0;
  for (int d = 0; d < out.rank; ++d) {
    move[d] = static_cast<ptrdiff_t>(p.stride[d]) * in_stride[d];
    base += static_cast<ptrdiff_t>(p.begin[d]) * in_stride[d];
  }
  const int last = out.rank - 1;
  const ptrdiff_t inner = out.dims[last];
  const ptrdiff_t inner_move = move[last];
  ptrdiff_t index[kMaxRank] = {};
  ptrdiff_t off = base;
  for (int64_t done = 0; done < n; done += inner) {
    const U* s = src + off;
    U* o = dst + done;
    for (ptrdiff_t i = 0; i < inner; ++i) o[i] = s[i * inner_move];
    for (int d = last - 1; d >= 0; --d) {
      off += move[d];
      if (++index[d] < out.dims[d]) break;
      off -= move[d] * out.dims[d];
      index[d] = 0;
    }
  }
}

template <typename U>
void tile_typed(In<void> input, Out<void> output) {
  const Shape& in = input.shape;
  const Shape& out = output.shape;
  const int64_t n = out.num_elements();
  const U* src = static_cast<const U*>(input.data);
  U* dst = static_cast<U*>(output.data);
  if (n == 0) return;
  if (out.rank == 0) {
    dst[0] = src[0];
    return;
  }
  // Output index (o_d) reads input (o_d mod in_d): odometer with wrap-around.
  ptrdiff_t in_stride[kMaxRank] = {};
  ptrdiff_t step = 1;
  for (int d = in.rank - 1; d >= 0; --d) {
    in_stride[d] = step;
    step *= in.dims[d];
  }
  const int last = out.rank - 1;
  const ptrdiff_t inner = out.dims[last];
  const ptrdiff_t inner_in = in.dims[last];
  ptrdiff_t index[kMaxRank] = {};
  ptrdiff_t in_index[kMaxRank] = {};
  ptrdiff_t off = 0;
  for (int64_t done = 0; done < n; done += inner) {
    const U* s = src + off;
    U* o = dst + done;
    for (ptrdiff_t i = 0, j = 0; i < inner; ++i) {
      o[i] = s[j];
      if (++j == inner_in) j = 0;
    }
    for (int d = last - 1; d >= 0; --d) {
      ++index[d];
      if (++in_index[d] == in.dims[d]) {
        in_index[d] = 0;
        off -= in_stride[d] * (in.dims[d] - 1);
      } else {
        off += in_stride[d];
      }
      if (index[d] < out.dims[d]) break;
      index[d] = 0;
      off -= in_stride[d] * in_index[d];
      in_index[d] = 0;
    }
  }
}

}  // namespace

void strided_slice(const StridedSliceParams& params, In<void> input, Out<void> output) {
  with_element_type(params.element_size, [&](auto tag) {
    slice_typed<decltype(tag)>(params, input, output);
  });
}

void tile(size_t element_size, In<void> input, Out<void> output) {
  with_element_type(element_size, [&](auto tag) { tile_typed<decltype(tag)>(input, output); });
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

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

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, STRIDED_SLICE, ANY, ops::StridedSlicePrepared, ops::prepare_strided_slice, ops::eval_strided_slice)
FLOE_KERNEL(REFERENCE, TILE, ANY, NoParams, ops::prepare_tile, ops::eval_tile)
