// SPDX-License-Identifier: Apache-2.0
// Cortex-M CONV2D, direct (no im2col buffer, so no scratch arena). For each
// output pixel the tap range is clipped once (window.h); output channels are
// computed in blocks held in registers over all taps and input channels (FPU:
// 8 scalars; MVE: 4 vectors = 16 channels, each input value broadcast by
// VFMA Qd,Qn,Rm; microkernels.h) over each window row's contiguous (kx, ic)
// run, so each filter value is loaded once per pixel and the output is written
// once. A single output channel (out_c == 1) is a dot product along
// the contiguous (kx, in_c) run of each window row instead (MVE: 4 lanes).
// Sums run over (ky, kx, ic) in the reference's order: the portable build is
// bit-exact with it.
#include "runtime/kernels/cortexm/conv2d.h"

#include <stddef.h>
#include <stdint.h>

#include "runtime/kernels/cortexm/isa.h"
#include "runtime/kernels/cortexm/microkernels.h"
#include "runtime/kernels/common/window.h"
#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/cortexm/conv_geometry.h"
#include "runtime/kernels/cortexm/s8_adapter.h"
#if defined(FLOE_S8_NEON) || defined(FLOE_S8_X86)
#include <string.h>

#include "runtime/core/parallel.h"
#endif

#if defined(FLOE_CORTEXM_S8_MVE)
#include <arm_mve.h>
#endif

namespace floe::cortexm {
namespace {

using kernels::TapRange;
using kernels::tap_range;
using kernels::unit_tap_range;

struct Geometry {
  const float* filter;
  const float* bias;  // null when absent
  ptrdiff_t in_c, out_c;
  ptrdiff_t in_row;   // floats per input row
  ptrdiff_t f_tap;    // floats per filter tap: in_c * out_c
  ptrdiff_t f_row;    // floats per filter row: k_w * f_tap
  ptrdiff_t dil_h, dil_w;
  Clamp clamp;
  bool clamped;
};

// One output pixel's window: its origin in the image and the taps inside it.
struct Window {
  const float* image;
  ptrdiff_t y0, x0;
  TapRange ky, kx;
};

inline const float* tap_input(const Geometry& g, const Window& w, ptrdiff_t ky, ptrdiff_t kx) {
  return w.image + (w.y0 + ky * g.dil_h) * g.in_row + (w.x0 + kx * g.dil_w) * g.in_c;
}

inline float finish(const Geometry& g, float sum, ptrdiff_t oc) {
  if (g.bias != nullptr) sum += g.bias[oc];
  return g.clamped ? g.clamp(sum) : sum;
}

// out_c == 1: one dot product per window row.
void single_channel(const Geometry& g, const Window& w, float* o) {
#if defined(FLOE_CORTEXM_MVE)
  const ptrdiff_t run = g.dil_w == 1 ? (w.kx.end - w.kx.begin) * g.in_c : g.in_c;
  const ptrdiff_t runs_per_row = g.dil_w == 1 ? (w.kx.begin < w.kx.end ? 1 : 0) : w.kx.end - w.kx.begin;
  float32x4_t acc = vdupq_n_f32(0.0f);
  for (ptrdiff_t ky = w.ky.begin; ky < w.ky.end; ++ky) {
    for (ptrdiff_t r = 0; r < runs_per_row; ++r) {
      const ptrdiff_t kx = w.kx.begin + r;
      const float* x = tap_input(g, w, ky, kx);
      const float* f = g.filter + ky * g.f_row + kx * g.f_tap;
      for (ptrdiff_t t = 0; t < run; t += 4) {
        const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(run - t));
        acc = vfmaq_f32(acc, vldrwq_z_f32(x + t, lanes), vldrwq_z_f32(f + t, lanes));
      }
    }
  }
  const float sum = (vgetq_lane_f32(acc, 0) + vgetq_lane_f32(acc, 1)) +
                    (vgetq_lane_f32(acc, 2) + vgetq_lane_f32(acc, 3));
  o[0] = finish(g, sum, 0);
#else
  float acc = 0.0f;
  if (w.ky.begin < w.ky.end && w.kx.begin < w.kx.end) {
    const float* x = tap_input(g, w, w.ky.begin, w.kx.begin);
    const float* f = g.filter + w.ky.begin * g.f_row + w.kx.begin * g.f_tap;
    const ptrdiff_t rows = w.ky.end - w.ky.begin;
    // Dilated columns (dilation_w == 1 runs single_channel_image instead).
    for (ptrdiff_t r = 0; r < rows; ++r, x += g.dil_h * g.in_row, f += g.f_row) {
      for (ptrdiff_t kx = 0; kx < w.kx.end - w.kx.begin; ++kx) {
        acc = dot(acc, x + kx * g.dil_w * g.in_c, f + kx * g.f_tap, g.in_c);
      }
    }
  }
  o[0] = finish(g, acc, 0);
#endif
}

#if !defined(FLOE_CORTEXM_MVE)

// The whole image when out_c == 1 and dilation_w == 1: each output is a few
// contiguous dot products (dot_rows). Kept apart from the general driver so
// that its few live values stay in registers: with few MACs per output, the
// window walk around them is most of the cost.
void single_channel_image(const Conv2DPlan& p, const float* input, const float* filter, const float* bias,
                          float* o) {
  const ptrdiff_t in_c = p.in_c;
  const ptrdiff_t in_row = static_cast<ptrdiff_t>(p.in_w) * in_c;
  const ptrdiff_t f_row = static_cast<ptrdiff_t>(p.k_w) * in_c;
  const ptrdiff_t row_step = p.dil_h * in_row;
  const float b = bias != nullptr ? bias[0] : 0.0f;
  for (ptrdiff_t n = 0; n < p.batches; ++n, input += p.in_h * in_row) {
    for (ptrdiff_t oy = 0; oy < p.out_h; ++oy) {
      const ptrdiff_t y0 = oy * p.stride_h - p.pad_top;
      const TapRange ky =
          p.dil_h == 1 ? unit_tap_range(y0, p.in_h, p.k_h) : tap_range(y0, p.in_h, p.k_h, p.dil_h);
      const ptrdiff_t rows = ky.end - ky.begin;
      const float* x_rows = input + (y0 + ky.begin * p.dil_h) * in_row;
      const float* f_rows = filter + ky.begin * f_row;
      ptrdiff_t x0 = -p.pad_left;
      for (ptrdiff_t ox = 0; ox < p.out_w; ++ox, x0 += p.stride_w) {
        const TapRange kx = unit_tap_range(x0, p.in_w, p.k_w);
        float sum = dot_rows(0.0f, x_rows + (x0 + kx.begin) * in_c, row_step, f_rows + kx.begin * in_c, f_row,
                             rows, (kx.end - kx.begin) * in_c);
        if (bias != nullptr) sum += b;
        if (p.clamped) sum = sum < p.clamp_lo ? p.clamp_lo : (sum > p.clamp_hi ? p.clamp_hi : sum);
        *o++ = sum;
      }
    }
  }
}

#endif

#if defined(FLOE_CORTEXM_MVE)

inline float32x4_t finish4(const Geometry& g, float32x4_t sum, ptrdiff_t oc, mve_pred16_t lanes) {
  if (g.bias != nullptr) sum = vaddq_f32(sum, vldrwq_z_f32(g.bias + oc, lanes));
  if (g.clamped) {
    const float32x4_t lo = vdupq_n_f32(g.clamp.lo), hi = vdupq_n_f32(g.clamp.hi);
    sum = vpselq_f32(lo, sum, vcmpltq_f32(sum, lo));
    sum = vpselq_f32(hi, sum, vcmpgtq_f32(sum, hi));
  }
  return sum;
}

void channel_blocks(const Geometry& g, const Window& w, float* o) {
  const mve_pred16_t all = vctp32q(4);
  ptrdiff_t oc = 0;
  for (; oc + 16 <= g.out_c; oc += 16) {
    alignas(16) float acc[16] = {};
    for (ptrdiff_t ky = w.ky.begin; ky < w.ky.end; ++ky) {
      const float* f_y = g.filter + ky * g.f_row + oc;
      if (g.dil_w == 1) {
        // The window row's (kx, ic) taps: contiguous input, filter out_c apart.
        if (w.kx.begin < w.kx.end) {
          mac16(acc, tap_input(g, w, ky, w.kx.begin), f_y + w.kx.begin * g.f_tap, g.out_c,
                (w.kx.end - w.kx.begin) * g.in_c);
        }
      } else {
        for (ptrdiff_t kx = w.kx.begin; kx < w.kx.end; ++kx) {
          mac16(acc, tap_input(g, w, ky, kx), f_y + kx * g.f_tap, g.out_c, g.in_c);
        }
      }
    }
    vst1q_f32(o + oc, finish4(g, vld1q_f32(acc), oc, all));
    vst1q_f32(o + oc + 4, finish4(g, vld1q_f32(acc + 4), oc + 4, all));
    vst1q_f32(o + oc + 8, finish4(g, vld1q_f32(acc + 8), oc + 8, all));
    vst1q_f32(o + oc + 12, finish4(g, vld1q_f32(acc + 12), oc + 12, all));
  }
  for (; oc < g.out_c; oc += 4) {
    const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(g.out_c - oc));
    float32x4_t c = vdupq_n_f32(0.0f);
    for (ptrdiff_t ky = w.ky.begin; ky < w.ky.end; ++ky) {
      for (ptrdiff_t kx = w.kx.begin; kx < w.kx.end; ++kx) {
        const float* x = tap_input(g, w, ky, kx);
        const float* f = g.filter + ky * g.f_row + kx * g.f_tap + oc;
        for (ptrdiff_t ic = 0; ic < g.in_c; ++ic, f += g.out_c) {
          c = vfmaq_n_f32(c, vldrwq_z_f32(f, lanes), x[ic]);
        }
      }
    }
    vstrwq_p_f32(o + oc, finish4(g, c, oc, lanes), lanes);
  }
}

#else  // FPU or portable

void channel_blocks(const Geometry& g, const Window& w, float* o) {
  ptrdiff_t oc = 0;
  for (; oc + 8 <= g.out_c; oc += 8) {
    float acc[8] = {};
    for (ptrdiff_t ky = w.ky.begin; ky < w.ky.end; ++ky) {
      const float* f_y = g.filter + ky * g.f_row + oc;
      if (g.dil_w == 1) {
        // The window row's (kx, ic) taps are contiguous in the input, and
        // out_c apart in the filter: one run.
        if (w.kx.begin < w.kx.end) {
          mac8(acc, tap_input(g, w, ky, w.kx.begin), f_y + w.kx.begin * g.f_tap, g.out_c,
               (w.kx.end - w.kx.begin) * g.in_c);
        }
      } else {
        for (ptrdiff_t kx = w.kx.begin; kx < w.kx.end; ++kx) {
          mac8(acc, tap_input(g, w, ky, kx), f_y + kx * g.f_tap, g.out_c, g.in_c);
        }
      }
    }
    for (int c = 0; c < 8; ++c) o[oc + c] = finish(g, acc[c], oc + c);
  }
  for (; oc + 4 <= g.out_c; oc += 4) {
    float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f;
    for (ptrdiff_t ky = w.ky.begin; ky < w.ky.end; ++ky) {
      for (ptrdiff_t kx = w.kx.begin; kx < w.kx.end; ++kx) {
        const float* x = tap_input(g, w, ky, kx);
        const float* f = g.filter + ky * g.f_row + kx * g.f_tap + oc;
        for (ptrdiff_t ic = 0; ic < g.in_c; ++ic, f += g.out_c) {
          const float xv = x[ic];
          c0 = mac(c0, xv, f[0]);
          c1 = mac(c1, xv, f[1]);
          c2 = mac(c2, xv, f[2]);
          c3 = mac(c3, xv, f[3]);
        }
      }
    }
    o[oc] = finish(g, c0, oc);
    o[oc + 1] = finish(g, c1, oc + 1);
    o[oc + 2] = finish(g, c2, oc + 2);
    o[oc + 3] = finish(g, c3, oc + 3);
  }
  for (; oc < g.out_c; ++oc) {
    float c = 0.0f;
    for (ptrdiff_t ky = w.ky.begin; ky < w.ky.end; ++ky) {
      for (ptrdiff_t kx = w.kx.begin; kx < w.kx.end; ++kx) {
        const float* x = tap_input(g, w, ky, kx);
        const float* f = g.filter + ky * g.f_row + kx * g.f_tap + oc;
        for (ptrdiff_t ic = 0; ic < g.in_c; ++ic, f += g.out_c) c = mac(c, x[ic], *f);
      }
    }
    o[oc] = finish(g, c, oc);
  }
}

#endif

}  // namespace

Conv2DPlan plan_conv2d(const kernels::Conv2DParams& params, const Shape& input, const Shape& filter,
                       const Shape& output) {
  Conv2DPlan p;
  p.batches = input.dims[0];
  p.in_h = input.dims[1];
  p.in_w = input.dims[2];
  p.in_c = input.dims[3];
  p.k_h = filter.dims[0];
  p.k_w = filter.dims[1];
  p.out_c = filter.dims[3];
  p.out_h = output.dims[1];
  p.out_w = output.dims[2];
  p.stride_h = params.stride_h;
  p.stride_w = params.stride_w;
  p.dil_h = params.dilation_h;
  p.dil_w = params.dilation_w;
  p.pad_top = params.pad_top;
  p.pad_left = params.pad_left;
  const Clamp clamp = clamp_for(params.activation);
  p.clamp_lo = clamp.lo;
  p.clamp_hi = clamp.hi;
  p.clamped = params.activation != Activation::kNone;
  return p;
}

void conv2d_f32(const Conv2DPlan& plan, const float* input, const float* filter, const float* bias,
                float* output) {
#if !defined(FLOE_CORTEXM_MVE)
  if (plan.out_c == 1 && plan.dil_w == 1) return single_channel_image(plan, input, filter, bias, output);
#endif
  const Conv2DPlan p = plan;  // a local copy: the output stores cannot alias it
  Geometry g;
  g.filter = filter;
  g.bias = bias;
  g.in_c = p.in_c;
  g.out_c = p.out_c;
  g.in_row = static_cast<ptrdiff_t>(p.in_w) * p.in_c;
  g.f_tap = static_cast<ptrdiff_t>(p.in_c) * p.out_c;
  g.f_row = p.k_w * g.f_tap;
  g.dil_h = p.dil_h;
  g.dil_w = p.dil_w;
  g.clamp = Clamp{p.clamp_lo, p.clamp_hi};
  g.clamped = p.clamped;

  float* o = output;
  for (ptrdiff_t n = 0; n < p.batches; ++n) {
    Window w;
    w.image = input + n * p.in_h * g.in_row;
    for (ptrdiff_t oy = 0; oy < p.out_h; ++oy) {
      w.y0 = oy * p.stride_h - p.pad_top;
      w.ky = tap_range(w.y0, p.in_h, p.k_h, g.dil_h);
      for (ptrdiff_t ox = 0; ox < p.out_w; ++ox, o += g.out_c) {
        w.x0 = ox * p.stride_w - p.pad_left;
        w.kx = tap_range(w.x0, p.in_w, p.k_w, g.dil_w);
        if (g.out_c == 1) {
          single_channel(g, w, o);
        } else {
          channel_blocks(g, w, o);
        }
      }
    }
  }
}

void conv2d_f32(const kernels::Conv2DParams& params, const kernels::Conv2DOperands& ops) {
  conv2d_f32(plan_conv2d(params, ops.input.shape, ops.filter.shape, ops.output.shape), ops.input.data,
             ops.filter.data, ops.bias.data, ops.output.data);
}

}  // namespace floe::cortexm

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {
namespace {

Status eval_conv2d_cortexm(const PreparedOp& ctx) {
  // Input, filter and output are present (prepare); an absent bias is bound
  // with data == nullptr, and a missing one is the output's slot.
  const TensorView* v = ctx.operands;
  const float* bias = ctx.inputs > 2 ? static_cast<const float*>(v[2].data) : nullptr;
  cortexm::conv2d_f32(ctx.params_as<cortexm::Conv2DPlan>(), static_cast<const float*>(v[0].data),
                      static_cast<const float*>(v[1].data), bias, static_cast<float*>(v[ctx.inputs].data));
  return Status::kOk;
}

// The op's rules are the reference's (layer_checks.cc); the plan is this kernel's.
const char* prepare_conv2d_cortexm(const OpContext& ctx) {
  kernels::Conv2DParams params;
  if (const char* err = kernels::check_conv2d_f32(ctx, &params)) return err;
  ctx.params<cortexm::Conv2DPlan>() =
      cortexm::plan_conv2d(params, ctx.input(0).shape, ctx.input(1).shape, ctx.output(0).shape);
  return nullptr;
}

}  // namespace
}  // namespace floe::ops

// ---- int8 (Operator.cortexm_kernel S8_GEMM / S8_IM2COL_GEMM) ----------------
// The converter re-laid the filter OHWI ([out_c][kh][kw][in_c] = s8_gemm's
// [n][k] rows) and folded the input offset into the bias, so a GEMM row is the
// window's raw input bytes: the input pixels themselves for a 1x1 stride-1
// unpadded convolution, else an im2col row in which padded taps hold the input
// zero point (they then add zero_point - zero_point = 0 to the sum).
namespace floe::cortexm {
namespace {

inline void fill(int8_t* dst, ptrdiff_t n, int8_t value) {
  if (n <= 0) return;  // the compiler may make the loop a library call: skip it when empty (most taps)
  for (ptrdiff_t i = 0; i < n; ++i) dst[i] = value;
}
inline void copy(int8_t* dst, const int8_t* src, ptrdiff_t n) {
#if defined(FLOE_S8_X86)
  // x86-64: whole words first (a memcpy of a constant size is one load and
  // one store; KWS's first layer copies runs of 4 bytes). Not on aarch64,
  // where the checks cost person_detect's runs of 3 bytes more instructions
  // than KWS's words save.
  for (; n >= 8; n -= 8, dst += 8, src += 8) memcpy(dst, src, 8);
  if (n >= 4) {
    memcpy(dst, src, 4);
    dst += 4;
    src += 4;
    n -= 4;
  }
#endif
  for (ptrdiff_t i = 0; i < n; ++i) dst[i] = src[i];
}

// On the M55 out of line: inlined, its locals would sit in conv2d_s8's frame
// under the Helium GEMM, the deepest call of an Invoke (1024 B stack budget).
// The DSP GEMM's frames are smaller, and a call per pixel costs ~40
// instructions there (person_detect's first layer: 2304 pixels).
#if defined(FLOE_CORTEXM_S8_MVE)
#define FLOE_IM2COL_ROW_LINKAGE __attribute__((noinline))
#else
#define FLOE_IM2COL_ROW_LINKAGE inline
#endif

// The im2col row of output pixel (oy, ox) of one image: k_h * k_w * in_c bytes.
FLOE_IM2COL_ROW_LINKAGE void im2col_row(const Conv2DS8Plan& p, const int8_t* image, ptrdiff_t oy, ptrdiff_t ox, int8_t* row) {
  const ptrdiff_t in_c = p.in_c, in_row = static_cast<ptrdiff_t>(p.in_w) * in_c;
  const ptrdiff_t y0 = oy * p.stride_h - p.pad_top, x0 = ox * p.stride_w - p.pad_left;
  const ptrdiff_t tap_row = static_cast<ptrdiff_t>(p.k_w) * in_c;
  const kernels::TapRange tx = kernels::tap_range(x0, p.in_w, p.k_w, p.dil_w);
  for (ptrdiff_t ky = 0; ky < p.k_h; ++ky, row += tap_row) {
    const ptrdiff_t y = y0 + ky * p.dil_h;
    if (y < 0 || y >= p.in_h || tx.begin == tx.end) {
      fill(row, tap_row, p.input_zero_point);
      continue;
    }
    fill(row, tx.begin * in_c, p.input_zero_point);
    const int8_t* src = image + y * in_row + (x0 + tx.begin * p.dil_w) * in_c;
    if (p.dil_w == 1) {
      copy(row + tx.begin * in_c, src, (tx.end - tx.begin) * in_c);  // one contiguous run
    } else {
      for (ptrdiff_t kx = tx.begin; kx < tx.end; ++kx, src += p.dil_w * in_c) copy(row + kx * in_c, src, in_c);
    }
    fill(row + tx.end * in_c, (p.k_w - tx.end) * in_c, p.input_zero_point);
  }
}

// `rows` im2col rows from output pixel (*oy, *ox) on, which it advances. Not
// inlined: its copy of the plan (kept in registers and its own frame, out of
// reach of the row stores) does not lie under s8_gemm's frame.
// Rows lie `stride` bytes apart (their bytes past k_size are left as they are).
__attribute__((noinline)) void im2col_rows(const Conv2DS8Plan& plan, const int8_t* image, ptrdiff_t rows,
                                           ptrdiff_t stride, ptrdiff_t* oy, ptrdiff_t* ox, int8_t* scratch) {
  const Conv2DS8Plan p = plan;
  const ptrdiff_t in_row = static_cast<ptrdiff_t>(p.in_w) * p.in_c, run = static_cast<ptrdiff_t>(p.k_w) * p.in_c;
  const bool undilated = p.dil_h == 1 && p.dil_w == 1;
  ptrdiff_t y = *oy, x = *ox;
  int8_t* row = scratch;
  for (ptrdiff_t r = 0; r < rows; ++r, row += stride) {
    const ptrdiff_t y0 = y * p.stride_h - p.pad_top, x0 = x * p.stride_w - p.pad_left;
    if (undilated && y0 >= 0 && y0 + p.k_h <= p.in_h && x0 >= 0 && x0 + p.k_w <= p.in_w) {
      // A window inside the image: k_h runs of k_w * in_c bytes, no bounds
      // (most rows; person_detect's first layer: 2304 of them, 9 bytes each).
      const int8_t* src = image + y0 * in_row + x0 * p.in_c;
      int8_t* dst = row;
      for (ptrdiff_t ky = 0; ky < p.k_h; ++ky, src += in_row, dst += run) copy(dst, src, run);
    } else {
      im2col_row(p, image, y, x, row);
    }
    if (++x == p.out_w) {
      x = 0;
      ++y;
    }
  }
  *oy = y;
  *ox = x;
}

#if defined(FLOE_CORTEXM_S8_MVE)
// Helium im2col (plan.gather_im2col): each 16 bytes of a row are one VLDRB
// gather from the window's top-left corner, by a table of the taps' byte
// offsets; a window that leaves the input gathers only its in-bounds taps (a
// predicate from the taps' window row and column against the input's bounds)
// and takes the zero point elsewhere (VPSEL). The byte-by-byte copy costs ~75
// instructions per window row of KWS's first layer (4 bytes), this ~10 per 16
// bytes.
constexpr int32_t kGatherMaxRow = 64;
constexpr int32_t kGatherMaxSpan = 255;  // the offsets are bytes

// The window's extent in input rows and columns minus one.
inline int32_t span_minus_one(int32_t k, int32_t dil) { return (k - 1) * dil; }

// Clamped to int8 for the per-lane compares: tap rows and columns are
// below 127 (plan_im2col), so the clamped bound decides the same.
inline int32_t clamp_s8(int32_t v) { return v < -128 ? -128 : (v > 127 ? 127 : v); }

// Per lane of an im2col row: the tap's byte offset from the window's
// top-left corner, and its row and column within the window. Lanes beyond
// k_size repeat the corner: their bytes are never stored.
struct GatherTables {
  uint8_t offset[kGatherMaxRow];
  int8_t tap_y[kGatherMaxRow], tap_x[kGatherMaxRow];
};

// 16 bytes of a row whose window lies inside the input: one gather; `store`
// is the predicate of the bytes that belong to the row (all but the last
// vector: every one). Assembly, like the one below, so that the predicate
// register is only ever set here (GCC 12 cannot be told it is clobbered;
// gather_im2col_rows is never inlined, and VPR is caller-saved).
inline void gather16(const int8_t* corner, const uint8_t* offset, int8_t* dst, uint32_t store) {
  int8x16_t off, bytes;
  __asm__ volatile(
      "vldrb.u8 %q[off], [%[po]]\n\t"
      "vldrb.u8 %q[bytes], [%[corner], %q[off]]\n\t"
      "vmsr p0, %[store]\n\t"
      "vpst\n\t"
      "vstrbt.8 %q[bytes], [%[dst]]\n\t"
      : [off] "=&w"(off), [bytes] "=&w"(bytes)
      : [po] "r"(offset), [corner] "r"(corner), [dst] "r"(dst), [store] "r"(store)
      : "memory");
}

// gather16 with the offsets already in a register (a one-vector row: the
// table's only vector is loaded once per chunk).
inline void gather16_held(const int8_t* corner, uint8x16_t offset, int8_t* dst, uint32_t store) {
  int8x16_t bytes;
  __asm__ volatile(
      "vldrb.u8 %q[bytes], [%[corner], %q[off]]\n\t"
      "vmsr p0, %[store]\n\t"
      "vpst\n\t"
      "vstrbt.8 %q[bytes], [%[dst]]\n\t"
      : [bytes] "=&w"(bytes)
      : [off] "w"(offset), [corner] "r"(corner), [dst] "r"(dst), [store] "r"(store)
      : "memory");
}

// 16 bytes of a row whose window leaves the input: the taps with
// y_lo <= tap_y < y_end and x_lo <= tap_x < x_end are gathered, the others
// take the zero point.
struct Bounds {
  int32_t y_lo, y_end, x_lo, x_end;
};
inline void gather16_border(const int8_t* corner, const GatherTables& t, int32_t v, const Bounds& b,
                            int8x16_t zero_point, int8_t* dst, uint32_t store) {
  int8x16_t off, ty, tx, bytes;
  __asm__ volatile(
      "vldrb.s8 %q[ty], [%[py]]\n\t"
      "vldrb.s8 %q[tx], [%[px]]\n\t"
      "vldrb.u8 %q[off], [%[po]]\n\t"
      "vcmp.s8 ge, %q[ty], %[ylo]\n\t"
      "vpsttt\n\t"
      "vcmpt.s8 lt, %q[ty], %[yend]\n\t"
      "vcmpt.s8 ge, %q[tx], %[xlo]\n\t"
      "vcmpt.s8 lt, %q[tx], %[xend]\n\t"
      "vpst\n\t"
      "vldrbt.u8 %q[bytes], [%[corner], %q[off]]\n\t"
      "vpsel %q[bytes], %q[bytes], %q[zp]\n\t"
      "vmsr p0, %[store]\n\t"
      "vpst\n\t"
      "vstrbt.8 %q[bytes], [%[dst]]\n\t"
      : [off] "=&w"(off), [ty] "=&w"(ty), [tx] "=&w"(tx), [bytes] "=&w"(bytes)
      : [py] "r"(t.tap_y + 16 * v), [px] "r"(t.tap_x + 16 * v), [po] "r"(t.offset + 16 * v),
        [corner] "r"(corner), [dst] "r"(dst), [store] "r"(store), [zp] "w"(zero_point), [ylo] "r"(b.y_lo),
        [yend] "r"(b.y_end), [xlo] "r"(b.x_lo), [xend] "r"(b.x_end)
      : "memory");
}

// `rows` im2col rows from output pixel (oy, ox) on. Not inlined: its
// tables then live only while the rows are built, not under the GEMM.
__attribute__((noinline)) void gather_im2col_rows(const Conv2DS8Plan& p, const int8_t* image, ptrdiff_t oy,
                                                  ptrdiff_t ox, ptrdiff_t rows, int8_t* row) {
  const int32_t in_c = p.in_c, in_h = p.in_h, in_w = p.in_w, in_row = in_w * in_c, k_size = p.k_size;
  const int32_t stride_w = p.stride_w, out_w = p.out_w;
  const int32_t vectors = (k_size + 15) / 16;
  GatherTables t;
  {
    // Lane by lane in (ky, kx, ic) order, the corner's lane for the rest.
    int32_t y = 0, x = 0, kx = 0, ic = 0, offset = 0;
    for (int32_t lane = 0; lane < k_size; ++lane) {
      t.offset[lane] = static_cast<uint8_t>(offset + ic);
      t.tap_y[lane] = static_cast<int8_t>(y);
      t.tap_x[lane] = static_cast<int8_t>(x);
      if (++ic == in_c) {
        ic = 0;
        x += p.dil_w;
        if (++kx == p.k_w) kx = 0, x = 0, y += p.dil_h;
        offset = y * in_row + x * in_c;
      }
    }
    for (int32_t lane = k_size; lane < 16 * vectors; ++lane) t.offset[lane] = 0, t.tap_y[lane] = 0, t.tap_x[lane] = 0;
  }
  const uint32_t tail = (uint32_t{1} << (k_size - 16 * (vectors - 1))) - 1;  // one bit per byte lane
  const int8x16_t zero_point = vdupq_n_s8(p.input_zero_point);
  const int32_t last_y = span_minus_one(p.k_h, p.dil_h), last_x = span_minus_one(p.k_w, p.dil_w);
  int32_t y0 = static_cast<int32_t>(oy) * p.stride_h - p.pad_top;
  int32_t x0 = static_cast<int32_t>(ox) * stride_w - p.pad_left;
  int32_t column = static_cast<int32_t>(ox);
  const uint8x16_t first_offsets = vldrbq_u8(t.offset);
  for (ptrdiff_t r = 0; r < rows; ++r, row += k_size) {
    // May point outside the input: only in-bounds taps are read through it.
    const int8_t* corner = reinterpret_cast<const int8_t*>(reinterpret_cast<uintptr_t>(image) +
                                                           static_cast<uintptr_t>(y0 * in_row + x0 * in_c));
    if (y0 >= 0 && x0 >= 0 && y0 + last_y < in_h && x0 + last_x < in_w) {
      if (vectors == 1) {
        gather16_held(corner, first_offsets, row, tail);
      } else {
        for (int32_t v = 0; v < vectors; ++v) {
          gather16(corner, t.offset + 16 * v, row + 16 * v, v < vectors - 1 ? 0xFFFFu : tail);
        }
      }
    } else {
      // Tap (y, x) is inside when -y0 <= y < in_h - y0 and -x0 <= x < in_w - x0.
      const Bounds b = {clamp_s8(-y0), clamp_s8(in_h - y0), clamp_s8(-x0), clamp_s8(in_w - x0)};
      for (int32_t v = 0; v < vectors; ++v) {
        gather16_border(corner, t, v, b, zero_point, row + 16 * v, v < vectors - 1 ? 0xFFFFu : tail);
      }
    }
    x0 += stride_w;
    if (++column == out_w) {
      column = 0;
      x0 = -p.pad_left;
      y0 += p.stride_h;
    }
  }
}
#endif

#if defined(FLOE_S8_NEON) || defined(FLOE_S8_X86)
// The host targets split an im2col convolution across the op's threads
// (runtime/core/parallel.h): each task takes a band of one image's output
// pixels and its own share of the scratch rows, so tasks share no bytes.
struct Im2colBands {
  const Conv2DS8Plan* plan;
  const S8Requant* rq;
  const int8_t* image;
  const int8_t* filter;
  int8_t* scratch;
  int8_t* output;    // the image's first output pixel
  ptrdiff_t pixels;  // of the image
  ptrdiff_t band;    // pixels per task
  ptrdiff_t chunk;   // scratch rows per task
};

void im2col_band(void* context, size_t task) {
  const Im2colBands& b = *static_cast<const Im2colBands*>(context);
  const Conv2DS8Plan& p = *b.plan;
  ptrdiff_t done = static_cast<ptrdiff_t>(task) * b.band;
  const ptrdiff_t end = done + b.band < b.pixels ? done + b.band : b.pixels;
  ptrdiff_t oy = done / p.out_w, ox = done % p.out_w;
  int8_t* scratch = b.scratch + static_cast<ptrdiff_t>(task) * b.chunk * p.k_size;
  while (done < end) {
    const ptrdiff_t rows = end - done < b.chunk ? end - done : b.chunk;
    im2col_rows(p, b.image, rows, p.k_size, &oy, &ox, scratch);
    s8_gemm(scratch, p.k_size, static_cast<int32_t>(rows), b.filter, p.out_c, p.k_size, *b.rq,
            b.output + done * p.out_c, p.out_c);
    done += rows;
  }
}
#endif

}  // namespace

void plan_im2col(Conv2DS8Plan& plan) {
  plan.gather_im2col = false;
#if defined(FLOE_CORTEXM_S8_MVE)
  const int32_t last_y = span_minus_one(plan.k_h, plan.dil_h), last_x = span_minus_one(plan.k_w, plan.dil_w);
  const int64_t last_offset =
      int64_t{last_y} * plan.in_w * plan.in_c + int64_t{last_x} * plan.in_c + plan.in_c - 1;
  plan.gather_im2col = plan.kernel == static_cast<uint8_t>(schema::CortexMKernel::S8_IM2COL_GEMM) &&
                       plan.k_size <= kGatherMaxRow && last_y < 127 && last_x < 127 &&
                       last_offset <= kGatherMaxSpan;
#endif
}

void conv2d_s8(const Conv2DS8Plan& plan, const int8_t* input, const int8_t* filter, const S8Requant& rq,
               int8_t* scratch, int8_t* output) {
  // Read in place (a copy would add its size to the deepest stack path:
  // this frame lies under s8_gemm's).
  const Conv2DS8Plan& p = plan;
  if (p.kernel == static_cast<uint8_t>(schema::CortexMKernel::S8_GEMM)) {
    s8_gemm(input, p.in_c, p.batches * p.in_h * p.in_w, filter, p.out_c, p.k_size, rq, output, p.out_c);
    return;
  }
  const ptrdiff_t pixels = static_cast<ptrdiff_t>(p.out_h) * p.out_w;
  const ptrdiff_t image_bytes = static_cast<ptrdiff_t>(p.in_h) * p.in_w * p.in_c;
#if defined(FLOE_S8_NEON) || defined(FLOE_S8_X86)
  // Rows k_size apart (the full requantization's GEMM stride), bands of whole
  // 4-row GEMM blocks, at least 4 scratch rows per task.
  const ptrdiff_t tasks = static_cast<ptrdiff_t>(parallel_threads());
  if (tasks > 1 && !p.short_requant && p.chunk_rows / tasks >= 4 && pixels >= 8 * tasks) {
    Im2colBands b{&p, &rq, nullptr, filter, scratch, nullptr, pixels, 0, p.chunk_rows / tasks};
    b.band = ((pixels + tasks - 1) / tasks + 3) & ~ptrdiff_t{3};
    for (ptrdiff_t n = 0; n < p.batches; ++n) {
      b.image = input + n * image_bytes;
      b.output = output + n * pixels * p.out_c;
      parallel_for(static_cast<size_t>((pixels + b.band - 1) / b.band), im2col_band, &b);
    }
    return;
  }
#endif
  // The scratch holds chunk_rows rows of k_size bytes: as many rows of the
  // GEMM's preferred stride as fit in it (at least one, or k_size apart).
  ptrdiff_t stride = s8_gemm_row_stride(p.k_size, p.short_requant);
  ptrdiff_t chunk = static_cast<ptrdiff_t>(p.chunk_rows) * p.k_size / stride;
  if (chunk < 1) {
    stride = p.k_size;
    chunk = p.chunk_rows;
  }
  // The bytes past k_size in each row: zero once per call (the GEMM may read
  // them; their weights are zero, and no im2col row writes them).
  for (ptrdiff_t r = 0; r < chunk && stride > p.k_size; ++r) fill(scratch + r * stride + p.k_size, stride - p.k_size, 0);
  for (ptrdiff_t n = 0; n < p.batches; ++n) {
    const int8_t* image = input + n * image_bytes;
    ptrdiff_t oy = 0, ox = 0;
    for (ptrdiff_t done = 0; done < pixels;) {
      const ptrdiff_t rows = pixels - done < chunk ? pixels - done : chunk;
#if defined(FLOE_CORTEXM_S8_MVE)
      if (p.gather_im2col) {  // rows k_size apart: Helium's s8_gemm_row_stride
        gather_im2col_rows(p, image, oy, ox, rows, scratch);
        oy += (ox + rows) / p.out_w;
        ox = (ox + rows) % p.out_w;
      } else
#endif
      {
        im2col_rows(p, image, rows, stride, &oy, &ox, scratch);
      }
      s8_gemm(scratch, static_cast<int32_t>(stride), static_cast<int32_t>(rows), filter, p.out_c, p.k_size, rq,
              output + (n * pixels + done) * p.out_c, p.out_c);
      done += rows;
    }
  }
}

}  // namespace floe::cortexm

namespace floe::ops {
namespace {

Status eval_conv2d_s8_gemm(const PreparedOp& ctx) {
  const cortexm::Conv2DS8Plan& p = ctx.params_as<cortexm::Conv2DS8Plan>();
  const TensorView* v = ctx.operands;
  cortexm::s8_gemm(static_cast<const int8_t*>(v[0].data), p.in_c, p.batches * p.in_h * p.in_w,
                   static_cast<const int8_t*>(v[1].data), p.out_c, p.k_size,
                   cortexm::s8_requant(ctx, p.output_offset, p.act_min, p.act_max, p.short_requant, p.narrow_weights),
                   static_cast<int8_t*>(ctx.output(0).data), p.out_c);  // 1x1: the pixels are the rows
  return Status::kOk;
}

Status eval_conv2d_s8_im2col(const PreparedOp& ctx) {
  const cortexm::Conv2DS8Plan& p = ctx.params_as<cortexm::Conv2DS8Plan>();
  const TensorView* v = ctx.operands;
  cortexm::conv2d_s8(p, static_cast<const int8_t*>(v[0].data), static_cast<const int8_t*>(v[1].data),
                            cortexm::s8_requant(ctx, p.output_offset, p.act_min, p.act_max, p.short_requant, p.narrow_weights),
                            static_cast<int8_t*>(ctx.output(1).data), static_cast<int8_t*>(ctx.output(0).data));
  return Status::kOk;
}

#if !defined(FLOE_CORTEXM_S8_MVE)
Status eval_conv2d_s8_packed(const PreparedOp& ctx) {
  const cortexm::Conv2DS8Plan& p = ctx.params_as<cortexm::Conv2DS8Plan>();
  const TensorView* v = ctx.operands;
  cortexm::s8_gemm_packed(static_cast<const int8_t*>(v[0].data), p.in_c, p.batches * p.in_h * p.in_w,
                          static_cast<const int32_t*>(v[1].data), p.out_c, p.k_size, p.act_min, p.act_max,
                          static_cast<int8_t*>(ctx.output(0).data));
  return Status::kOk;
}
#endif

// One channel's packed multiplier and K (words 1 and 2 of its four): the
// portable short requantization computes K * 2^32 + x * multiplier in int64,
// which a multiplier of at least 2^30 and |K| <= 2^29 keep from overflowing.
// The DSP's SMMLAR cannot overflow: there they only change values.
inline bool packed_words_fit(const int32_t* words) {
#if defined(FLOE_S8_DSP)
  (void)words;
  return true;
#else
  constexpr int32_t kMaxK = int32_t{1} << 29;
  return words[1] >= (int32_t{1} << 30) && words[2] >= -kMaxK && words[2] <= kMaxK;
#endif
}

// S8_GEMM_PACKED_SHORT_REQUANT: a 1x1 convolution whose filter input holds the
// packed channel pairs (s8_microkernels.h).
const char* prepare_conv2d_s8_packed(const OpContext& ctx) {
#if defined(FLOE_CORTEXM_S8_MVE)
  (void)ctx;
  return FLOE_MSG("int8 conv2d: the packed GEMM is an M4/M33 layout, not Helium's");
#else
  if (ctx.input_count() < 2 || ctx.output_count() < 1 || !ctx.has_input(0) || !ctx.has_input(1)) {
    return FLOE_MSG("int8 conv2d: missing operands");
  }
  const Shape input = ctx.input(0).shape, filter = ctx.input(1).shape, output = ctx.output(0).shape;
  if (input.rank != 4 || output.rank != 4 || filter.rank != 2) {
    return FLOE_MSG("int8 conv2d (packed GEMM): NHWC input and output, int32 [out_c / 2, in_c + 8] filter");
  }
  const int32_t in_c = input.dims[3], out_c = output.dims[3];
  cortexm::S8Quantization q;
  if (const char* err = cortexm::prepare_s8_operands(ctx, out_c, 1, &q)) return err;
  // in_c or out_c 0 would never end the DSP kernel's do-while loops.
  if (in_c < 8 || out_c < 2 || out_c % 2 != 0 || in_c % 8 != 0 || in_c > cortexm::kPackedGemmMaxK ||
      filter.dims[0] != out_c / 2 ||
      filter.dims[1] != in_c + 8 || output.dims[0] != input.dims[0] || output.dims[1] != input.dims[1] ||
      output.dims[2] != input.dims[2]) {
    return FLOE_MSG("int8 conv2d (packed GEMM): shapes outside the kernel's (in_c % 8, in_c <= 64, even out_c)");
  }
  if (reinterpret_cast<uintptr_t>(ctx.input(1).data) % 4 != 0) {
    return FLOE_MSG("int8 conv2d (packed GEMM): packed filter not 4-byte aligned");
  }
  // The kernel requantizes with the words packed after each pair's weights
  // (channel c's bias, multiplier, K, right shift e; then c+1's), not with
  // inputs 3 and 4 (which prepare_s8_operands checked): e in the same range,
  // and the multiplier and K as s8_pack_gemm_pair writes them where the
  // portable C arithmetic uses them (packed_words_fit).
  const int32_t* pair = static_cast<const int32_t*>(ctx.input(1).data) + in_c;  // channel c's, then c+1's
  for (int32_t c = 0; c < out_c; c += 2, pair += in_c + 8) {
    if (pair[3] < 1 || pair[3] > 22 || pair[7] < 1 || pair[7] > 22 || !packed_words_fit(pair) ||
        !packed_words_fit(pair + 4)) {
      return FLOE_MSG("int8 Cortex-M op: short requantization with a multiplier or shift out of its range");
    }
  }
  cortexm::Conv2DS8Plan p{};
  p.batches = input.dims[0];
  p.in_h = input.dims[1];
  p.in_w = input.dims[2];
  p.in_c = in_c;
  p.out_h = output.dims[1];
  p.out_w = output.dims[2];
  p.out_c = out_c;
  p.k_size = in_c;
  p.k_h = p.k_w = p.stride_h = p.stride_w = p.dil_h = p.dil_w = 1;
  p.output_offset = static_cast<int8_t>(q.output_offset);
  p.act_min = static_cast<int8_t>(q.act_min);
  p.act_max = static_cast<int8_t>(q.act_max);
  p.kernel = static_cast<uint8_t>(schema::CortexMKernel::S8_GEMM_PACKED_SHORT_REQUANT);
  p.short_requant = true;
  ctx.params<cortexm::Conv2DS8Plan>() = p;
  ctx.set_eval(eval_conv2d_s8_packed);
  return nullptr;
#endif
}

// Groups (in_c != the filter's in_c) are not taken by the converter; they stay
// on the reference kernel.
const char* prepare_conv2d_s8_cortexm(const OpContext& ctx) {
  if (ctx.op->cortexm_kernel() == schema::CortexMKernel::S8_GEMM_PACKED_SHORT_REQUANT) {
    return prepare_conv2d_s8_packed(ctx);
  }
  const schema::CortexMKernel kernel = cortexm::general_kernel(ctx.op->cortexm_kernel());
  if (kernel != schema::CortexMKernel::S8_GEMM && kernel != schema::CortexMKernel::S8_IM2COL_GEMM) {
    return FLOE_MSG("int8 conv2d: not a Cortex-M convolution kernel");
  }
  const bool im2col = kernel == schema::CortexMKernel::S8_IM2COL_GEMM;
  if (ctx.input_count() < 2 || ctx.output_count() < 1 || !ctx.has_input(0) || !ctx.has_input(1)) {
    return FLOE_MSG("int8 conv2d: missing operands");
  }
  const Shape input = ctx.input(0).shape, filter = ctx.input(1).shape, output = ctx.output(0).shape;
  if (input.rank != 4 || filter.rank != 4 || output.rank != 4) {
    return FLOE_MSG("int8 conv2d tensors must be 4-D (NHWC, OHWI)");
  }
  const int32_t out_c = filter.dims[0];
  cortexm::S8Quantization q;
  if (const char* err = cortexm::prepare_s8_operands(ctx, out_c, im2col ? 2 : 1, &q)) return err;
  if (filter.dims[3] != input.dims[3] || output.dims[3] != out_c || output.dims[0] != input.dims[0]) {
    return FLOE_MSG("int8 conv2d channel or batch dimensions disagree");
  }
  cortexm::Conv2DS8Plan p{};
  if (const char* err = cortexm::plan_conv_geometry(ctx, input, filter, output, &p)) return err;
  p.input_zero_point = static_cast<int8_t>(-q.input_offset);
  p.output_offset = static_cast<int8_t>(q.output_offset);
  p.act_min = static_cast<int8_t>(q.act_min);
  p.act_max = static_cast<int8_t>(q.act_max);
  p.kernel = static_cast<uint8_t>(kernel);
  p.short_requant = cortexm::is_short_requant(ctx.op->cortexm_kernel());
  p.narrow_weights = cortexm::is_narrow_weights(ctx.op->cortexm_kernel());
  if (!im2col) {
    if (!cortexm::is_pointwise(p)) {
      return FLOE_MSG("int8 conv2d: the direct GEMM needs a 1x1, stride-1, unpadded convolution");
    }
    ctx.params<cortexm::Conv2DS8Plan>() = p;
    ctx.set_eval(eval_conv2d_s8_gemm);
    return nullptr;
  }
  // The scratch: int8 [rows, k_size], rows >= 1 (the converter sized it).
  const TensorView scratch = ctx.output(1);
  if (scratch.dtype != DType::kInt8 || scratch.shape.rank != 2 || scratch.shape.dims[1] != p.k_size ||
      scratch.shape.dims[0] < 1) {
    return FLOE_MSG("int8 conv2d: im2col scratch must be int8 [rows, k_h * k_w * in_c]");
  }
  p.chunk_rows = scratch.shape.dims[0];
  cortexm::plan_im2col(p);
  ctx.params<cortexm::Conv2DS8Plan>() = p;
  ctx.set_eval(eval_conv2d_s8_im2col);
  return nullptr;
}

}  // namespace
}  // namespace floe::ops

FLOE_KERNEL(CORTEX_M, CONV2D, ANY, cortexm::Conv2DPlan, ops::prepare_conv2d_cortexm, ops::eval_conv2d_cortexm)
FLOE_KERNEL(CORTEX_M, CONV2D, INT8, cortexm::Conv2DS8Plan, ops::prepare_conv2d_s8_cortexm, ops::eval_conv2d_s8_gemm)
