// SPDX-License-Identifier: Apache-2.0
// NHWC max and average pooling with explicit padding. Padded taps are ignored:
// max takes the maximum over in-bounds taps, average divides by their count
// (TensorFlow's AvgPool semantics for SAME padding).
#pragma once

#include "runtime/kernels/reference/quantization.h"
#include "runtime/core/tensor.h"
#include "runtime/kernels/reference/activation.h"
#include "runtime/core/dispatch.h"

namespace floe::ref {

struct Pool2DParams {
  int32_t filter_h = 1, filter_w = 1;
  int32_t stride_h = 1, stride_w = 1;
  int32_t pad_top = 0, pad_left = 0;
  Activation activation = Activation::kNone;
};

struct Pool2DOperands {
  In<float> input;
  Out<float> output;
};

void max_pool2d_f32(const Pool2DParams& params, const Pool2DOperands& ops);
void avg_pool2d_f32(const Pool2DParams& params, const Pool2DOperands& ops);

// ---- int8 pooling (input and output share scale and zero point) ----
// Max: the largest in-image tap. Average: the sum of in-image taps divided by
// their count, rounded half away from zero (TFLite's integer AveragePool).
// Both clamp to [act_min, act_max]. A window with no in-image tap is
// impossible with resolved SAME/VALID padding (prepare must refuse it).
struct Pool2DS8Params {
  int32_t filter_h, filter_w;
  int32_t stride_h, stride_w;
  int32_t pad_top, pad_left;
  int32_t act_min, act_max;
};

struct Pool2DS8Operands {
  In<int8_t> input;    // [N, H, W, C]
  Out<int8_t> output;  // [N, OH, OW, C]
};

void max_pool2d_s8(const Pool2DS8Params& params, const Pool2DS8Operands& ops);
void avg_pool2d_s8(const Pool2DS8Params& params, const Pool2DS8Operands& ops);

}  // namespace floe::ref

// The op's adapter (runtime/ops.def names it; runtime/core/dispatch.h).
namespace floe::ops {

// The params block: float or int8.
union Pool2DPrepared {
  ref::Pool2DParams f32;
  ref::Pool2DS8Params s8;
};

// The window fields every 2-D pooling's params hold (float, int8, with argmax),
// from its Pool2DOptions, read once at Init().
template <typename Params>
void set_pool_window(Params& p, const schema::Pool2DOptions& o) {
  p.filter_h = o.filter_h();
  p.filter_w = o.filter_w();
  p.stride_h = o.stride_h();
  p.stride_w = o.stride_w();
  p.pad_top = o.pad_top();
  p.pad_left = o.pad_left();
}

const char* prepare_pool2d(const OpContext& ctx);
Status eval_max_pool2d(const PreparedOp& ctx);
Status eval_avg_pool2d(const PreparedOp& ctx);

}  // namespace floe::ops
