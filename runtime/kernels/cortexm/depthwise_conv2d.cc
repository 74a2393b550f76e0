// SPDX-License-Identifier: Apache-2.0
// Cortex-M DEPTHWISE_CONV2D. With depth multiplier 1 (MobileNet-style, the case
// the converter assigns here) an output pixel is, per channel, a sum over the
// window's taps of input x filter, both contiguous across channels: channels
// are computed in blocks held in registers over all taps (FPU: 8 scalars, two
// VLDMs and eight VFMAs per tap; MVE: 4 vectors = 16 channels) and the output
// is written once. Other multipliers
// run the reference kernel. Per channel the taps are summed in the reference's
// (ky, kx) order: the portable build is bit-exact with it.
#include "runtime/kernels/cortexm/depthwise_conv2d.h"

#include <stddef.h>

#include "runtime/kernels/cortexm/isa.h"
#include "runtime/kernels/common/window.h"
#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/cortexm/s8_adapter.h"
#include "runtime/kernels/cortexm/s8_plans.h"

namespace floe::cortexm {
namespace {

using kernels::TapRange;
using kernels::tap_range;
using kernels::unit_tap_range;

struct Geometry {
  const float* filter;
  const float* bias;  // null when absent
  ptrdiff_t channels;
  ptrdiff_t in_row;   // floats per input row
  ptrdiff_t f_row;    // floats per filter row: k_w * channels
  ptrdiff_t dil_h, dil_w;
  Clamp clamp;
  bool clamped;
};

struct Window {
  const float* image;
  ptrdiff_t y0, x0;
  TapRange ky, kx;
};

inline const float* tap_input(const Geometry& g, const Window& w, ptrdiff_t ky, ptrdiff_t kx) {
  return w.image + (w.y0 + ky * g.dil_h) * g.in_row + (w.x0 + kx * g.dil_w) * g.channels;
}
inline const float* tap_filter(const Geometry& g, ptrdiff_t ky, ptrdiff_t kx) {
  return g.filter + ky * g.f_row + kx * g.channels;
}

inline float finish(const Geometry& g, float sum, ptrdiff_t c) {
  if (g.bias != nullptr) sum += g.bias[c];
  return g.clamped ? g.clamp(sum) : sum;
}

#if defined(FLOE_CORTEXM_MVE)

inline float32x4_t finish4(const Geometry& g, float32x4_t sum, ptrdiff_t c, mve_pred16_t lanes) {
  if (g.bias != nullptr) sum = vaddq_f32(sum, vldrwq_z_f32(g.bias + c, lanes));
  if (g.clamped) {
    const float32x4_t lo = vdupq_n_f32(g.clamp.lo), hi = vdupq_n_f32(g.clamp.hi);
    sum = vpselq_f32(lo, sum, vcmpltq_f32(sum, lo));
    sum = vpselq_f32(hi, sum, vcmpgtq_f32(sum, hi));
  }
  return sum;
}

void pixel(const Geometry& g, const Window& w, float* o) {
  const mve_pred16_t all = vctp32q(4);
  const ptrdiff_t x_step = g.dil_w * g.channels;  // next tap along the row
  ptrdiff_t c = 0;
  for (; c + 16 <= g.channels; c += 16) {
    float32x4_t c0 = vdupq_n_f32(0.0f), c1 = c0, c2 = c0, c3 = c0;
    for (ptrdiff_t ky = w.ky.begin; ky < w.ky.end; ++ky) {
      const float* x = tap_input(g, w, ky, w.kx.begin) + c;
      const float* f = tap_filter(g, ky, w.kx.begin) + c;
      for (ptrdiff_t kx = w.kx.begin; kx < w.kx.end; ++kx, x += x_step, f += g.channels) {
        c0 = vfmaq_f32(c0, vld1q_f32(x), vld1q_f32(f));
        c1 = vfmaq_f32(c1, vld1q_f32(x + 4), vld1q_f32(f + 4));
        c2 = vfmaq_f32(c2, vld1q_f32(x + 8), vld1q_f32(f + 8));
        c3 = vfmaq_f32(c3, vld1q_f32(x + 12), vld1q_f32(f + 12));
      }
    }
    vst1q_f32(o + c, finish4(g, c0, c, all));
    vst1q_f32(o + c + 4, finish4(g, c1, c + 4, all));
    vst1q_f32(o + c + 8, finish4(g, c2, c + 8, all));
    vst1q_f32(o + c + 12, finish4(g, c3, c + 12, all));
  }
  for (; c < g.channels; c += 4) {
    const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(g.channels - c));
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (ptrdiff_t ky = w.ky.begin; ky < w.ky.end; ++ky) {
      const float* x = tap_input(g, w, ky, w.kx.begin) + c;
      const float* f = tap_filter(g, ky, w.kx.begin) + c;
      for (ptrdiff_t kx = w.kx.begin; kx < w.kx.end; ++kx, x += x_step, f += g.channels) {
        acc = vfmaq_f32(acc, vldrwq_z_f32(x, lanes), vldrwq_z_f32(f, lanes));
      }
    }
    vstrwq_p_f32(o + c, finish4(g, acc, c, lanes), lanes);
  }
}

#else  // FPU or portable

// The 8 accumulators of one channel block.
struct Acc8 {
  float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f, c4 = 0.0f, c5 = 0.0f, c6 = 0.0f, c7 = 0.0f;
};

#if !defined(FLOE_CORTEXM_FPU)
// Portable: acc[0..8) += sum over n taps of x[t * x_step + c] * f[t * f_step + c],
// one window row of one 8-channel block (the FPU build uses window8 below).
inline void row8(Acc8& a, const float* x, ptrdiff_t x_step, const float* f, ptrdiff_t f_step,
                 ptrdiff_t n) {
  for (ptrdiff_t t = 0; t < n; ++t, x += x_step, f += f_step) {
    a.c0 = mac(a.c0, x[0], f[0]);
    a.c1 = mac(a.c1, x[1], f[1]);
    a.c2 = mac(a.c2, x[2], f[2]);
    a.c3 = mac(a.c3, x[3], f[3]);
    a.c4 = mac(a.c4, x[4], f[4]);
    a.c5 = mac(a.c5, x[5], f[5]);
    a.c6 = mac(a.c6, x[6], f[6]);
    a.c7 = mac(a.c7, x[7], f[7]);
  }
}
#else
// The whole window of one 8-channel block in one loop nest: `rows` window rows
// of `taps` taps; after a row, x and f jump to the next row's first tap. One
// asm statement keeps the accumulators in the same registers throughout: two
// VLDMs and eight VFMAs per tap.
inline void window8(Acc8& a, const float* x, ptrdiff_t x_step, ptrdiff_t x_row_jump, const float* f,
                    ptrdiff_t f_step, ptrdiff_t f_row_jump, ptrdiff_t rows, ptrdiff_t taps) {
  if (rows <= 0 || taps <= 0) return;
  ptrdiff_t n;
  __asm__ volatile(
      "1:\n\t"
      "mov %[n], %[taps]\n\t"
      "2:\n\t"
      "vldmia %[x], {s8-s15}\n\t"
      "vldmia %[f], {s16-s23}\n\t"
      "add %[x], %[x], %[xs]\n\t"
      "add %[f], %[f], %[fs]\n\t"
      "vfma.f32 %[c0], s8, s16\n\t"
      "vfma.f32 %[c1], s9, s17\n\t"
      "vfma.f32 %[c2], s10, s18\n\t"
      "vfma.f32 %[c3], s11, s19\n\t"
      "vfma.f32 %[c4], s12, s20\n\t"
      "vfma.f32 %[c5], s13, s21\n\t"
      "vfma.f32 %[c6], s14, s22\n\t"
      "vfma.f32 %[c7], s15, s23\n\t"
      "subs %[n], %[n], #1\n\t"
      "bne 2b\n\t"
      "add %[x], %[x], %[xj]\n\t"
      "add %[f], %[f], %[fj]\n\t"
      "subs %[rows], %[rows], #1\n\t"
      "bne 1b\n\t"
      : [c0] "+t"(a.c0), [c1] "+t"(a.c1), [c2] "+t"(a.c2), [c3] "+t"(a.c3), [c4] "+t"(a.c4),
        [c5] "+t"(a.c5), [c6] "+t"(a.c6), [c7] "+t"(a.c7), [x] "+r"(x), [f] "+r"(f), [rows] "+r"(rows),
        [n] "=&r"(n)
      : [xs] "r"(x_step * static_cast<ptrdiff_t>(sizeof(float))),
        [fs] "r"(f_step * static_cast<ptrdiff_t>(sizeof(float))),
        [xj] "r"(x_row_jump * static_cast<ptrdiff_t>(sizeof(float))),
        [fj] "r"(f_row_jump * static_cast<ptrdiff_t>(sizeof(float))), [taps] "r"(taps)
      : "s8", "s9", "s10", "s11", "s12", "s13", "s14", "s15", "s16", "s17", "s18", "s19", "s20",
        "s21", "s22", "s23", "cc", "memory");
}
#endif

// Bias, then the clamp, as finish() does per channel; each test made once per block.
inline void finish8(const Geometry& g, Acc8& a, ptrdiff_t c, float* o) {
  if (g.bias != nullptr) {
    const float* b = g.bias + c;
    a.c0 += b[0], a.c1 += b[1], a.c2 += b[2], a.c3 += b[3];
    a.c4 += b[4], a.c5 += b[5], a.c6 += b[6], a.c7 += b[7];
  }
  if (g.clamped) {
    const Clamp k = g.clamp;
    a.c0 = k(a.c0), a.c1 = k(a.c1), a.c2 = k(a.c2), a.c3 = k(a.c3);
    a.c4 = k(a.c4), a.c5 = k(a.c5), a.c6 = k(a.c6), a.c7 = k(a.c7);
  }
  o[0] = a.c0, o[1] = a.c1, o[2] = a.c2, o[3] = a.c3;
  o[4] = a.c4, o[5] = a.c5, o[6] = a.c6, o[7] = a.c7;
}

void pixel(const Geometry& g, const Window& w, float* o) {
  const ptrdiff_t x_step = g.dil_w * g.channels;  // next tap along the row
  const ptrdiff_t taps = w.kx.end - w.kx.begin;
  ptrdiff_t c = 0;
  for (; c + 8 <= g.channels; c += 8) {
    Acc8 a;
#if defined(FLOE_CORTEXM_FPU)
    // From one row's end (taps steps in) to the next row's first tap.
    window8(a, tap_input(g, w, w.ky.begin, w.kx.begin) + c, x_step, g.dil_h * g.in_row - taps * x_step,
            tap_filter(g, w.ky.begin, w.kx.begin) + c, g.channels, g.f_row - taps * g.channels,
            w.ky.end - w.ky.begin, taps);
#else
    for (ptrdiff_t ky = w.ky.begin; ky < w.ky.end; ++ky) {
      row8(a, tap_input(g, w, ky, w.kx.begin) + c, x_step, tap_filter(g, ky, w.kx.begin) + c,
           g.channels, taps);
    }
#endif
    finish8(g, a, c, o + c);
  }
  for (; c < g.channels; ++c) {
    float acc = 0.0f;
    for (ptrdiff_t ky = w.ky.begin; ky < w.ky.end; ++ky) {
      const float* x = tap_input(g, w, ky, w.kx.begin) + c;
      const float* f = tap_filter(g, ky, w.kx.begin) + c;
      for (ptrdiff_t t = 0; t < taps; ++t, x += x_step, f += g.channels) acc = mac(acc, *x, *f);
    }
    o[c] = finish(g, acc, c);
  }
}

#endif

}  // namespace

void depthwise_conv2d_f32(const kernels::DepthwiseConv2DParams& params,
                          const kernels::DepthwiseConv2DOperands& ops) {
  const int32_t* in_dims = ops.input.shape.dims;
  const int32_t* f_dims = ops.filter.shape.dims;
  const int32_t* out_dims = ops.output.shape.dims;
  const ptrdiff_t batches = in_dims[0], in_h = in_dims[1], in_w = in_dims[2];
  const ptrdiff_t k_h = f_dims[0], k_w = f_dims[1];
  const ptrdiff_t out_h = out_dims[1], out_w = out_dims[2];

  Geometry g;
  g.filter = ops.filter.data;
  g.bias = ops.bias.data;
  g.channels = in_dims[3];
  g.in_row = in_w * g.channels;
  g.f_row = k_w * g.channels;
  g.dil_h = params.dilation_h;
  g.dil_w = params.dilation_w;
  g.clamp = clamp_for(params.activation);
  g.clamped = params.activation != Activation::kNone;

  float* o = ops.output.data;
  for (ptrdiff_t n = 0; n < batches; ++n) {
    Window w;
    w.image = ops.input.data + n * in_h * g.in_row;
    for (ptrdiff_t oy = 0; oy < out_h; ++oy) {
      w.y0 = oy * params.stride_h - params.pad_top;
      w.ky = tap_range(w.y0, in_h, k_h, g.dil_h);
      for (ptrdiff_t ox = 0; ox < out_w; ++ox, o += g.channels) {
        w.x0 = ox * params.stride_w - params.pad_left;
        w.kx = tap_range(w.x0, in_w, k_w, g.dil_w);
        pixel(g, w, o);
      }
    }
  }
}

}  // namespace floe::cortexm

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {
namespace {

Status eval_depthwise_conv2d_cortexm(const PreparedOp& ctx) {
  cortexm::depthwise_conv2d_f32(ctx.params_as<kernels::DepthwiseConv2DParams>(),
                                kernels::weighted_f32_operands<kernels::DepthwiseConv2DOperands>(ctx));
  return Status::kOk;
}

// The op's rules are the reference's (layer_checks.cc); the kernel takes
// multiplier 1 only, as the converter assigns it (converter/lower/backend_cortexm.cc).
const char* prepare_depthwise_conv2d_cortexm(const OpContext& ctx) {
  kernels::DepthwiseConv2DParams& params = ctx.params<kernels::DepthwiseConv2DParams>();
  if (const char* err = kernels::check_depthwise_conv2d_f32(ctx, &params)) return err;
  if (params.depth_multiplier != 1) return FLOE_MSG("the Cortex-M depthwise kernel takes depth multiplier 1");
  return nullptr;
}

}  // namespace
}  // namespace floe::ops

// ---- int8 DEPTHWISE_CONV2D (Operator.cortexm_kernel S8_DEPTHWISE) ------------
// Multiplier 1, filter [kh, kw, C, 1] = s8_depthwise's [kh][kw][C], raw bias.
// Other multipliers are not taken by the converter (an in_c == 1 depthwise is
// rewritten as a CONV2D there); they stay on the reference kernel.
namespace floe::ops {
namespace {

// Out of line: inlined, GCC assembles the shape through a vectorized staging
// copy on the eval's stack frame, which the kernel's deepest call adds to.
__attribute__((noinline)) void unpack_shape(const cortexm::DepthwiseS8Plan& p, cortexm::DepthwiseS8Shape* shape) {
  *shape = {p.batches,  p.in_h,   p.in_w,  p.channels, p.k_h,     p.k_w,      p.out_h,       p.out_w,
            p.stride_h, p.stride_w, p.dil_h, p.dil_w,  p.pad_top, p.pad_left, p.input_offset};
}

Status eval_depthwise_conv2d_s8_cortexm(const PreparedOp& ctx) {
  const cortexm::DepthwiseS8Plan& p = ctx.params_as<cortexm::DepthwiseS8Plan>();
  cortexm::DepthwiseS8Shape shape;
  unpack_shape(p, &shape);
  cortexm::s8_depthwise(shape, static_cast<const int8_t*>(ctx.input(0).data),
                        static_cast<const int8_t*>(ctx.input(1).data),
                        cortexm::s8_requant(ctx, p.output_offset, p.act_min, p.act_max, p.short_requant),
                        static_cast<int8_t*>(ctx.output(0).data));
  return Status::kOk;
}

bool fits_int16(int32_t v) { return v >= -32768 && v <= 32767; }

const char* prepare_depthwise_conv2d_s8_cortexm(const OpContext& ctx) {
  if (cortexm::general_kernel(ctx.op->cortexm_kernel()) != schema::CortexMKernel::S8_DEPTHWISE) {
    return FLOE_MSG("int8 depthwise: not a Cortex-M depthwise kernel");
  }
  if (ctx.input_count() < 2 || ctx.output_count() < 1 || !ctx.has_input(0) || !ctx.has_input(1)) {
    return FLOE_MSG("int8 depthwise: missing operands");
  }
  const auto* o = ctx.op->options_as_DepthwiseConv2DOptions();
  const Shape input = ctx.input(0).shape, filter = ctx.input(1).shape, output = ctx.output(0).shape;
  if (input.rank != 4 || filter.rank != 4 || output.rank != 4) return FLOE_MSG("int8 depthwise tensors must be 4-D");
  const int32_t channels = input.dims[3];
  if (o->depth_multiplier() != 1 || filter.dims[2] != channels || filter.dims[3] != 1 ||
      output.dims[3] != channels || output.dims[0] != input.dims[0]) {
    return FLOE_MSG("int8 Cortex-M depthwise needs multiplier 1 and matching channels");
  }
  if (const char* err = check_window(o->stride_h(), o->stride_w(), o->dilation_h(), o->dilation_w(),
                                     o->pad_top(), o->pad_left())) {
    return err;
  }
  cortexm::S8Quantization q;
  if (const char* err = cortexm::prepare_s8_operands(ctx, channels, 1, &q)) return err;
  for (int32_t v : {input.dims[1], input.dims[2], filter.dims[0], filter.dims[1], output.dims[1], output.dims[2],
                    o->stride_h(), o->stride_w(), o->dilation_h(), o->dilation_w(), o->pad_top(), o->pad_left()}) {
    if (!fits_int16(v)) return FLOE_MSG("int8 depthwise: shape beyond the Cortex-M kernel's range");
  }
  auto s16 = [](int32_t v) { return static_cast<int16_t>(v); };
  ctx.params<cortexm::DepthwiseS8Plan>() = {
      input.dims[0],       channels,           s16(input.dims[1]),  s16(input.dims[2]),    s16(filter.dims[0]),
      s16(filter.dims[1]), s16(output.dims[1]), s16(output.dims[2]), s16(o->stride_h()),    s16(o->stride_w()),
      s16(o->dilation_h()), s16(o->dilation_w()), s16(o->pad_top()), s16(o->pad_left()),   s16(q.input_offset),
      static_cast<int8_t>(q.output_offset), static_cast<int8_t>(q.act_min), static_cast<int8_t>(q.act_max),
      cortexm::is_short_requant(ctx.op->cortexm_kernel())};
  ctx.set_eval(eval_depthwise_conv2d_s8_cortexm);
  return nullptr;
}

}  // namespace
}  // namespace floe::ops

FLOE_KERNEL(CORTEX_M, DEPTHWISE_CONV2D, ANY, kernels::DepthwiseConv2DParams, ops::prepare_depthwise_conv2d_cortexm,
            ops::eval_depthwise_conv2d_cortexm)
FLOE_KERNEL(CORTEX_M, DEPTHWISE_CONV2D, INT8, cortexm::DepthwiseS8Plan, ops::prepare_depthwise_conv2d_s8_cortexm,
            ops::eval_depthwise_conv2d_s8_cortexm)
