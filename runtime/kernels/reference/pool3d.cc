// SPDX-License-Identifier: Apache-2.0
// MAX_POOL3D / AVG_POOL3D (see pool3d.h). Semantics follow TensorFlow's
// documented pooling conventions; code is our own.
#include "runtime/kernels/reference/pool3d.h"

#include <float.h>
#include <stddef.h>

#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/common/window.h"

namespace floe::ref {
namespace {

template <bool kMax>
void pool3d(const Pool3DParams& p, In<float> input, Out<float> output) {
  const int32_t* id = input.shape.dims;
  const int32_t* od = output.shape.dims;
  const ptrdiff_t batches = id[0], in_d = id[1], in_h = id[2], in_w = id[3], ch = id[4];
  const ptrdiff_t out_d = od[1];
  const kernels::PoolWindows windows = {in_h, in_w, od[2], od[3], p.filter_h, p.filter_w,
                                        p.stride_h, p.stride_w, p.pad_top, p.pad_left};
  float* o = output.data;
  for (ptrdiff_t n = 0; n < batches; ++n) {
    for (ptrdiff_t oz = 0; oz < out_d; ++oz) {
      const ptrdiff_t z0 = oz * p.stride_d - p.pad_front;
      const kernels::TapRange taps_z = kernels::tap_range(z0, in_d, p.filter_d, 1);
      kernels::for_each_pool_window(windows, [&](ptrdiff_t y0, ptrdiff_t x0, kernels::TapRange taps_y,
                                                 kernels::TapRange taps_x) {
        const ptrdiff_t count =
            (taps_z.end - taps_z.begin) * (taps_y.end - taps_y.begin) * (taps_x.end - taps_x.begin);
        for (ptrdiff_t c = 0; c < ch; ++c) {
          float acc = kMax ? -FLT_MAX : 0.0f;
          bool any = false;
          for (ptrdiff_t z = z0 + taps_z.begin; z < z0 + taps_z.end; ++z) {
            for (ptrdiff_t y = y0 + taps_y.begin; y < y0 + taps_y.end; ++y) {
              for (ptrdiff_t x = x0 + taps_x.begin; x < x0 + taps_x.end; ++x) {
                const float v = input.data[(((n * in_d + z) * in_h + y) * in_w + x) * ch + c];
                if (kMax) {
                  if (!any || v > acc) acc = v;
                } else {
                  acc += v;
                }
                any = true;
              }
            }
          }
          o[c] = kMax ? acc : (count > 0 ? acc / static_cast<float>(count) : 0.0f);
        }
        o += ch;
      });
    }
  }
}

}  // namespace

void max_pool3d_f32(const Pool3DParams& p, In<float> input, Out<float> output) { pool3d<true>(p, input, output); }
void avg_pool3d_f32(const Pool3DParams& p, In<float> input, Out<float> output) { pool3d<false>(p, input, output); }

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

const char* prepare_pool3d(const OpContext& ctx) {
  if (!has_io(ctx, 1, 1) || !all_f32(ctx)) return FLOE_MSG("expects 1 float32 input and output");
  const Shape in = ctx.input(0).shape, out = ctx.output(0).shape;
  if (in.rank != 5 || out.rank != 5) return FLOE_MSG("pool3d tensors must be NDHWC");
  if (in.dims[0] != out.dims[0] || in.dims[4] != out.dims[4]) return FLOE_MSG("pool3d changes batch or channels");
  const auto* o = ctx.op->options_as_Pool3DOptions();
  if (o == nullptr) return FLOE_MSG("missing Pool3DOptions");
  if (o->filter_d() < 1 || o->filter_h() < 1 || o->filter_w() < 1 || o->stride_d() < 1 || o->stride_h() < 1 ||
      o->stride_w() < 1) {
    return FLOE_MSG("filter sizes and strides must be >= 1");
  }
  if (o->pad_front() < 0 || o->pad_top() < 0 || o->pad_left() < 0) return FLOE_MSG("padding must be >= 0");
  ref::Pool3DParams& p = ctx.params<ref::Pool3DParams>();
  p.filter_d = o->filter_d();
  p.filter_h = o->filter_h();
  p.filter_w = o->filter_w();
  p.stride_d = o->stride_d();
  p.stride_h = o->stride_h();
  p.stride_w = o->stride_w();
  p.pad_front = o->pad_front();
  p.pad_top = o->pad_top();
  p.pad_left = o->pad_left();
  return nullptr;
}

Status eval_max_pool3d(const PreparedOp& ctx) {
  ref::max_pool3d_f32(ctx.params_as<ref::Pool3DParams>(), in_as<float>(ctx.input(0)), out_as<float>(ctx.output(0)));
  return Status::kOk;
}

Status eval_avg_pool3d(const PreparedOp& ctx) {
  ref::avg_pool3d_f32(ctx.params_as<ref::Pool3DParams>(), in_as<float>(ctx.input(0)), out_as<float>(ctx.output(0)));
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, MAX_POOL3D, ANY, ref::Pool3DParams, ops::prepare_pool3d, ops::eval_max_pool3d)
FLOE_KERNEL(REFERENCE, AVG_POOL3D, ANY, ref::Pool3DParams, ops::prepare_pool3d, ops::eval_avg_pool3d)
