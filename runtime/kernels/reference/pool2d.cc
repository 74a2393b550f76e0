// SPDX-License-Identifier: Apache-2.0
// NHWC max and average pooling with explicit top/left padding (bottom/right is
// implied by the output size). Padded taps are ignored, not treated as zeros:
// each window is clipped to the image once, max reduces over what is left and
// average divides by how many taps are left (TF AvgPool semantics for SAME).
#include "runtime/kernels/reference/pool2d.h"

#include <math.h>

#include "runtime/kernels/common/window.h"
#include <stddef.h>
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {
namespace {

enum class Kind { kMax, kAvg };

// Output pixels are visited in order; for each, the channels (contiguous in
// input and output) are the innermost loop, so every tap is a contiguous vector
// max / add into the output pixel, which doubles as the accumulator.
template <Kind kKind>
void pool(const Pool2DParams& params, const Pool2DOperands& ops) {
  const int32_t* in_dims = ops.input.shape.dims;
  const int32_t* out_dims = ops.output.shape.dims;
  const ptrdiff_t batches = in_dims[0], in_h = in_dims[1], in_w = in_dims[2], c_n = in_dims[3];
  const ptrdiff_t out_h = out_dims[1], out_w = out_dims[2];
  const ptrdiff_t in_row = in_w * c_n;
  const ptrdiff_t in_image = in_h * in_row;

  const ActivationRange range = activation_range(params.activation);
  const float lo = range.lo, hi = range.hi;

  const kernels::PoolWindows windows = {in_h, in_w, out_h, out_w, params.filter_h, params.filter_w,
                                        params.stride_h, params.stride_w, params.pad_top, params.pad_left};
  float* o = ops.output.data;
  for (ptrdiff_t n = 0; n < batches; ++n) {
    const float* image = ops.input.data + n * in_image;
    kernels::for_each_pool_window(windows, [&](ptrdiff_t y0, ptrdiff_t x0, kernels::TapRange taps_y,
                                               kernels::TapRange taps_x) {
      // A window entirely in the padding (only possible with padding >= the
      // filter size, which SAME/VALID never produce) yields -inf for max, the
      // identity of max, and 0 for average rather than 0/0.
      const float init = kKind == Kind::kMax ? -INFINITY : 0.0f;
      for (ptrdiff_t c = 0; c < c_n; ++c) o[c] = init;
      for (ptrdiff_t ky = taps_y.begin; ky < taps_y.end; ++ky) {
        const float* in_y = image + (y0 + ky) * in_row;
        for (ptrdiff_t kx = taps_x.begin; kx < taps_x.end; ++kx) {
          const float* x = in_y + (x0 + kx) * c_n;
          if (kKind == Kind::kMax) {
            // NaN-propagating max, like binary Maximum.
            for (ptrdiff_t c = 0; c < c_n; ++c) {
              const float v = x[c];
              o[c] = (v > o[c] || v != v) ? v : o[c];
            }
          } else {
            for (ptrdiff_t c = 0; c < c_n; ++c) o[c] += x[c];
          }
        }
      }
      if (kKind == Kind::kAvg) {
        const ptrdiff_t count = (taps_y.end - taps_y.begin) * (taps_x.end - taps_x.begin);
        if (count > 0) {
          // sum / count as TensorFlow computes it (one rounding, not two).
          const float divisor = static_cast<float>(count);
          for (ptrdiff_t c = 0; c < c_n; ++c) o[c] /= divisor;
        }
      }
      if (params.activation != Activation::kNone) {
        for (ptrdiff_t c = 0; c < c_n; ++c) o[c] = o[c] < lo ? lo : (o[c] > hi ? hi : o[c]);
      }
      o += c_n;
    });
  }
}

}  // namespace

void max_pool2d_f32(const Pool2DParams& params, const Pool2DOperands& ops) {
  pool<Kind::kMax>(params, ops);
}

void avg_pool2d_f32(const Pool2DParams& params, const Pool2DOperands& ops) {
  pool<Kind::kAvg>(params, ops);
}

}  // namespace floe::ref

// ---- adapters: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {
namespace {

// An empty output has nothing to compute, while walking its other dims could
// take billions of steps (batch 720896 x 1024 rows of width 0, from fuzz_model).
Status eval_empty_pool(const PreparedOp&) { return Status::kOk; }

Status eval_max_pool2d_s8(const PreparedOp& ctx) {
  ref::max_pool2d_s8(ctx.params_as<ref::Pool2DS8Params>(),
                     {in_as<int8_t>(ctx.input(0)), out_as<int8_t>(ctx.output(0))});
  return Status::kOk;
}

Status eval_avg_pool2d_s8(const PreparedOp& ctx) {
  ref::avg_pool2d_s8(ctx.params_as<ref::Pool2DS8Params>(),
                     {in_as<int8_t>(ctx.input(0)), out_as<int8_t>(ctx.output(0))});
  return Status::kOk;
}

// int8: input and output share scale and zero point (the converter checked),
// so the kernel works on the stored integers and only clamps.
const char* prepare_pool2d_s8(const OpContext& ctx) {
  if (const char* err = kernels::check_pool2d_s8(ctx, &ctx.params<ref::Pool2DS8Params>())) return err;
  if (ctx.output(0).shape.num_elements() == 0) ctx.set_eval(eval_empty_pool);
  return nullptr;
}

Status eval_max_pool2d_s16(const PreparedOp& ctx) {
  ref::max_pool2d_s16(ctx.params_as<ref::Pool2DS8Params>(),
                      {in_as<int16_t>(ctx.input(0)), out_as<int16_t>(ctx.output(0))});
  return Status::kOk;
}

Status eval_avg_pool2d_s16(const PreparedOp& ctx) {
  ref::avg_pool2d_s16(ctx.params_as<ref::Pool2DS8Params>(),
                      {in_as<int16_t>(ctx.input(0)), out_as<int16_t>(ctx.output(0))});
  return Status::kOk;
}

// int16 (TFLite's 16x8 scheme): as int8, zero point 0 and int16 bounds.
const char* prepare_pool2d_s16(const OpContext& ctx) {
  if (!has_io(ctx, 1, 1) || ctx.input(0).dtype != DType::kInt16 || ctx.output(0).dtype != DType::kInt16) {
    return FLOE_MSG("int16 pooling takes one int16 input and output");
  }
  if (const char* err = kernels::check_pool_geometry(ctx)) return err;
  const auto* o = ctx.op->options_as_Pool2DOptions();
  if (kernels::pool_window_in_padding(*o, ctx.input(0).shape, ctx.output(0).shape)) {
    return FLOE_MSG("int16 pooling window entirely in the padding");
  }
  const char* why = nullptr;
  const schema::Requantization* r = requantization_of(ctx, &why, DType::kInt16);
  if (r == nullptr) return why;
  ref::Pool2DS8Params& p = ctx.params<ref::Pool2DS8Params>();
  kernels::set_pool_window(p, *o);
  p.act_min = r->activation_min();
  p.act_max = r->activation_max();
  if (ctx.output(0).shape.num_elements() == 0) ctx.set_eval(eval_empty_pool);
  return nullptr;
}

const char* prepare_pool2d(const OpContext& ctx) {
  if (const char* err = expect_f32_io(ctx, 1)) return err;
  if (const char* err = kernels::check_pool_geometry(ctx)) return err;
  const auto* o = ctx.op->options_as_Pool2DOptions();
  ref::Pool2DParams& params = ctx.params<ref::Pool2DParams>();
  kernels::set_pool_window(params, *o);
  params.activation = activation(o->activation());
  if (ctx.output(0).shape.num_elements() == 0) ctx.set_eval(eval_empty_pool);
  return nullptr;
}

Status eval_max_pool2d(const PreparedOp& ctx) {
  ref::max_pool2d_f32(ctx.params_as<ref::Pool2DParams>(),
                      {in_as<float>(ctx.input(0)), out_as<float>(ctx.output(0))});
  return Status::kOk;
}

Status eval_avg_pool2d(const PreparedOp& ctx) {
  ref::avg_pool2d_f32(ctx.params_as<ref::Pool2DParams>(),
                      {in_as<float>(ctx.input(0)), out_as<float>(ctx.output(0))});
  return Status::kOk;
}

}  // namespace
}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, MAX_POOL2D, ANY, ref::Pool2DParams, ops::prepare_pool2d, ops::eval_max_pool2d)
FLOE_KERNEL(REFERENCE, AVG_POOL2D, ANY, ref::Pool2DParams, ops::prepare_pool2d, ops::eval_avg_pool2d)
FLOE_KERNEL(REFERENCE, MAX_POOL2D, INT8, ref::Pool2DS8Params, ops::prepare_pool2d_s8, ops::eval_max_pool2d_s8)
FLOE_KERNEL(REFERENCE, AVG_POOL2D, INT8, ref::Pool2DS8Params, ops::prepare_pool2d_s8, ops::eval_avg_pool2d_s8)
FLOE_KERNEL(REFERENCE, MAX_POOL2D, INT16, ref::Pool2DS8Params, ops::prepare_pool2d_s16, ops::eval_max_pool2d_s16)
FLOE_KERNEL(REFERENCE, AVG_POOL2D, INT16, ref::Pool2DS8Params, ops::prepare_pool2d_s16, ops::eval_avg_pool2d_s16)


namespace floe::ref {
namespace {

// The walk the integer poolings share (int8, int16): for each output
// element, `window` folds the in-image taps of its channel (a rows x cols
// grid from `first`).
template <typename T, typename Operands, typename Window>
void pool2d_integer(const Pool2DS8Params& params, const Operands& ops, Window window) {
  const int32_t* in_dims = ops.input.shape.dims;
  const int32_t* out_dims = ops.output.shape.dims;
  const ptrdiff_t batches = in_dims[0], in_h = in_dims[1], in_w = in_dims[2], channels = in_dims[3];
  const ptrdiff_t out_h = out_dims[1], out_w = out_dims[2];
  const kernels::PoolWindows windows = {in_h, in_w, out_h, out_w, params.filter_h, params.filter_w,
                                        params.stride_h, params.stride_w, params.pad_top, params.pad_left};
  T* o = ops.output.data;
  for (ptrdiff_t n = 0; n < batches; ++n) {
    const T* image = ops.input.data + n * in_h * in_w * channels;
    kernels::for_each_pool_window(windows, [&](ptrdiff_t y0, ptrdiff_t x0, kernels::TapRange ty,
                                               kernels::TapRange tx) {
      for (ptrdiff_t c = 0; c < channels; ++c, ++o) {
        const T* first = image + ((y0 + ty.begin) * in_w + x0 + tx.begin) * channels + c;
        const int32_t v = window(first, ty.end - ty.begin, tx.end - tx.begin, in_w * channels, channels);
        *o = static_cast<T>(clamp_to(v, params.act_min, params.act_max));
      }
    });
  }
}

// The largest in-image tap. (Windows are function objects, not pointers:
// direct calls keep the firmware's stack-depth analysis exact.)
struct WindowMax {
  template <typename T>
  int32_t operator()(const T* p, ptrdiff_t rows, ptrdiff_t cols, ptrdiff_t row_step, ptrdiff_t col_step) const;
};

template <typename T>
int32_t WindowMax::operator()(const T* p, ptrdiff_t rows, ptrdiff_t cols, ptrdiff_t row_step,
                              ptrdiff_t col_step) const {
  int32_t m = INT32_MIN;
  for (ptrdiff_t y = 0; y < rows; ++y) {
    for (ptrdiff_t x = 0; x < cols; ++x) {
      const int32_t v = p[y * row_step + x * col_step];
      m = v > m ? v : m;
    }
  }
  return m;
}

// The in-image taps' sum over their count, rounded half away from zero
// (integer division truncates; adding half the count away from zero first).
struct WindowAverage {
  template <typename T>
  int32_t operator()(const T* p, ptrdiff_t rows, ptrdiff_t cols, ptrdiff_t row_step, ptrdiff_t col_step) const;
};

template <typename T>
int32_t WindowAverage::operator()(const T* p, ptrdiff_t rows, ptrdiff_t cols, ptrdiff_t row_step,
                                  ptrdiff_t col_step) const {
  int32_t sum = 0;
  for (ptrdiff_t y = 0; y < rows; ++y) {
    for (ptrdiff_t x = 0; x < cols; ++x) sum += p[y * row_step + x * col_step];
  }
  const int32_t count = static_cast<int32_t>(rows * cols);
  if (count == 0) return int32_t{0};
  return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

}  // namespace

void max_pool2d_s8(const Pool2DS8Params& params, const Pool2DS8Operands& ops) {
  pool2d_integer<int8_t>(params, ops, WindowMax{});
}

void avg_pool2d_s8(const Pool2DS8Params& params, const Pool2DS8Operands& ops) {
  pool2d_integer<int8_t>(params, ops, WindowAverage{});
}

void max_pool2d_s16(const Pool2DS8Params& params, const Pool2DS16Operands& ops) {
  pool2d_integer<int16_t>(params, ops, WindowMax{});
}

void avg_pool2d_s16(const Pool2DS8Params& params, const Pool2DS16Operands& ops) {
  pool2d_integer<int16_t>(params, ops, WindowAverage{});
}

}  // namespace floe::ref
