// SPDX-License-Identifier: Apache-2.0
// MAX_POOL_WITH_ARGMAX (see max_pool_with_argmax.h). Semantics follow
// TensorFlow's documented MaxPoolWithArgmax; code is our own.
#include "runtime/kernels/reference/max_pool_with_argmax.h"

#include <float.h>
#include <stddef.h>

#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/reference/pool2d.h"
#include "runtime/kernels/common/window.h"

namespace floe::ref {

void max_pool_with_argmax_f32(const MaxPoolArgmaxParams& p, In<float> input, Out<float> output, Out<void> argmax) {
  const int32_t* id = input.shape.dims;
  const int32_t* od = output.shape.dims;
  const ptrdiff_t batches = id[0], in_h = id[1], in_w = id[2], ch = id[3];
  const kernels::PoolWindows windows = {in_h, in_w, od[1], od[2], p.filter_h, p.filter_w,
                                        p.stride_h, p.stride_w, p.pad_top, p.pad_left};
  ptrdiff_t k = 0;
  for (ptrdiff_t n = 0; n < batches; ++n) {
    const int64_t batch_base = p.include_batch_in_index ? static_cast<int64_t>(n) * in_h * in_w * ch : 0;
    kernels::for_each_pool_window(windows, [&](ptrdiff_t y0, ptrdiff_t x0, kernels::TapRange taps_y,
                                               kernels::TapRange taps_x) {
      for (ptrdiff_t c = 0; c < ch; ++c, ++k) {
        float best = -FLT_MAX;
        int64_t best_index = -1;
        for (ptrdiff_t y = y0 + taps_y.begin; y < y0 + taps_y.end; ++y) {
          for (ptrdiff_t x = x0 + taps_x.begin; x < x0 + taps_x.end; ++x) {
            const int64_t flat = (static_cast<int64_t>(y) * in_w + x) * ch + c;
            const float v = input.data[n * in_h * in_w * ch + flat];
            if (best_index < 0 || v > best) {
              best = v;
              best_index = flat;
            }
          }
        }
        output.data[k] = best;
        const int64_t index = best_index < 0 ? -1 : batch_base + best_index;
        if (p.index_is_int64) {
          static_cast<int64_t*>(argmax.data)[k] = index;
        } else {
          static_cast<int32_t*>(argmax.data)[k] = static_cast<int32_t>(index);
        }
      }
    });
  }
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

const char* prepare_max_pool_with_argmax(const OpContext& ctx) {
  if (!has_io(ctx, 1, 2)) return FLOE_MSG("expects 1 input and 2 outputs");
  const TensorView in = ctx.input(0), out = ctx.output(0), arg = ctx.output(1);
  if (!is_f32(in) || !is_f32(out)) return FLOE_MSG("max pool with argmax is float32");
  if (arg.dtype != DType::kInt64 && arg.dtype != DType::kInt32) return FLOE_MSG("argmax must be int64 or int32");
  if (in.shape.rank != 4 || !dims_equal(out.shape, arg.shape)) return FLOE_MSG("tensors must be NHWC, argmax as output");
  if (out.shape.rank != 4 || out.shape.dims[0] != in.shape.dims[0] || out.shape.dims[3] != in.shape.dims[3]) {
    return FLOE_MSG("max pool changes batch or channels");
  }
  if (arg.dtype == DType::kInt32 && in.shape.num_elements() > INT32_MAX) return FLOE_MSG("int32 argmax overflows");
  const auto* o = ctx.op->options_as_Pool2DOptions();
  if (o == nullptr) return FLOE_MSG("missing Pool2DOptions");
  if (o->filter_h() < 1 || o->filter_w() < 1) return FLOE_MSG("filter sizes must be >= 1");
  if (const char* err = check_window(o->stride_h(), o->stride_w(), 1, 1, o->pad_top(), o->pad_left())) return err;
  if (o->activation() != schema::Activation::NONE) return FLOE_MSG("max pool with argmax has no fused activation");
  ref::MaxPoolArgmaxParams& p = ctx.params<ref::MaxPoolArgmaxParams>();
  kernels::set_pool_window(p, *o);
  p.include_batch_in_index = o->include_batch_in_index() ? 1 : 0;
  p.index_is_int64 = arg.dtype == DType::kInt64 ? 1 : 0;
  return nullptr;
}

Status eval_max_pool_with_argmax(const PreparedOp& ctx) {
  ref::max_pool_with_argmax_f32(ctx.params_as<ref::MaxPoolArgmaxParams>(), in_as<float>(ctx.input(0)),
                                out_as<float>(ctx.output(0)), out_void(ctx.output(1)));
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, MAX_POOL_WITH_ARGMAX, ANY, ref::MaxPoolArgmaxParams, ops::prepare_max_pool_with_argmax, ops::eval_max_pool_with_argmax)
