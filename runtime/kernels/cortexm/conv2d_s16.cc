// SPDX-License-Identifier: Apache-2.0
// Cortex-M CONV2D in int16x8 (Operator.cortexm_kernel S16_GEMM /
// S16_IM2COL_GEMM): the im2col driver over s16_gemm, its prepare and eval,
// the row. Its own translation unit: beside the int8 adapters (conv2d.cc)
// it would change how -Os inlines their shared accessors, and every int8
// firmware would grow.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "runtime/core/registry.h"
#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/common/window.h"
#include "runtime/kernels/cortexm/conv2d.h"
#include "runtime/kernels/cortexm/conv_geometry.h"
#include "runtime/kernels/cortexm/s16_adapter.h"

// The converter re-laid the filter OHWI (s16_gemm's [n][k] rows); the input
// zero point is 0, so an im2col row's padded taps are zeros.
namespace floe::cortexm {
namespace {

// n int16 values, two per 32-bit move (M-profile LDR / STR take unaligned
// addresses).
inline void copy_s16(int16_t* dst, const int16_t* src, ptrdiff_t n) {
  ptrdiff_t i = 0;
  for (; i + 2 <= n; i += 2) {
    uint32_t v;
    memcpy(&v, src + i, 4);
    memcpy(dst + i, &v, 4);
  }
  if (i < n) dst[i] = src[i];
}
inline void zero_s16(int16_t* dst, ptrdiff_t n) {
  if (n <= 0) return;  // most taps: no library call for nothing
  for (ptrdiff_t i = 0; i < n; ++i) dst[i] = 0;
}

// `rows` im2col rows (k_size apart) from output pixel (*oy, *ox) on, which it advances.
void im2col_rows_s16(const Conv2DS16Plan& p, const int16_t* image, ptrdiff_t rows, ptrdiff_t* oy, ptrdiff_t* ox,
                     int16_t* row) {
  const ptrdiff_t in_c = p.in_c, in_row = static_cast<ptrdiff_t>(p.in_w) * in_c;
  const ptrdiff_t tap_row = static_cast<ptrdiff_t>(p.k_w) * in_c;
  const bool undilated = p.dil_h == 1 && p.dil_w == 1;
  ptrdiff_t y = *oy, x = *ox;
  for (ptrdiff_t r = 0; r < rows; ++r) {
    const ptrdiff_t y0 = y * p.stride_h - p.pad_top, x0 = x * p.stride_w - p.pad_left;
    if (undilated && y0 >= 0 && y0 + p.k_h <= p.in_h && x0 >= 0 && x0 + p.k_w <= p.in_w) {
      // A window inside the image (every row of a VALID convolution): k_h runs.
      const int16_t* src = image + y0 * in_row + x0 * in_c;
      for (ptrdiff_t ky = 0; ky < p.k_h; ++ky, src += in_row, row += tap_row) copy_s16(row, src, tap_row);
    } else {
      const kernels::TapRange tx = kernels::tap_range(x0, p.in_w, p.k_w, p.dil_w);
      for (ptrdiff_t ky = 0; ky < p.k_h; ++ky, row += tap_row) {
        const ptrdiff_t iy = y0 + ky * p.dil_h;
        if (iy < 0 || iy >= p.in_h || tx.begin >= tx.end) {
          zero_s16(row, tap_row);
          continue;
        }
        zero_s16(row, tx.begin * in_c);
        const int16_t* src = image + iy * in_row + (x0 + tx.begin * p.dil_w) * in_c;
        if (p.dil_w == 1) {
          copy_s16(row + tx.begin * in_c, src, (tx.end - tx.begin) * in_c);
        } else {
          for (ptrdiff_t kx = tx.begin; kx < tx.end; ++kx, src += p.dil_w * in_c) copy_s16(row + kx * in_c, src, in_c);
        }
        zero_s16(row + tx.end * in_c, (p.k_w - tx.end) * in_c);
      }
    }
    if (++x == p.out_w) {
      x = 0;
      ++y;
    }
  }
  *oy = y;
  *ox = x;
}

}  // namespace

void conv2d_s16(const Conv2DS16Plan& p, const int16_t* input, const int8_t* filter, const S16Requant& rq,
                int16_t* scratch, int16_t* output) {
  const ptrdiff_t pixels = static_cast<ptrdiff_t>(p.out_h) * p.out_w;
  const ptrdiff_t image = static_cast<ptrdiff_t>(p.in_h) * p.in_w * p.in_c;
  for (ptrdiff_t n = 0; n < p.batches; ++n) {
    ptrdiff_t oy = 0, ox = 0;
    for (ptrdiff_t done = 0; done < pixels;) {
      const ptrdiff_t rows = pixels - done < p.chunk_rows ? pixels - done : p.chunk_rows;
      im2col_rows_s16(p, input + n * image, rows, &oy, &ox, scratch);
      s16_gemm(scratch, p.k_size, static_cast<int32_t>(rows), filter, p.out_c, p.k_size, rq,
               output + (n * pixels + done) * p.out_c, p.out_c);
      done += rows;
    }
  }
}

}  // namespace floe::cortexm

namespace floe::ops {
namespace {

Status eval_conv2d_s16_gemm(const PreparedOp& ctx) {
  const cortexm::Conv2DS16Plan& p = ctx.params_as<cortexm::Conv2DS16Plan>();
  cortexm::s16_gemm(static_cast<const int16_t*>(ctx.operands[0].data), p.in_c, p.batches * p.in_h * p.in_w,
                    static_cast<const int8_t*>(ctx.operands[1].data), p.out_c, p.k_size,
                    cortexm::s16_requant(ctx, p.act_min, p.act_max), static_cast<int16_t*>(ctx.output(0).data),
                    p.out_c);
  return Status::kOk;
}

Status eval_conv2d_s16_im2col(const PreparedOp& ctx) {
  const cortexm::Conv2DS16Plan& p = ctx.params_as<cortexm::Conv2DS16Plan>();
  cortexm::conv2d_s16(p, static_cast<const int16_t*>(ctx.operands[0].data),
                      static_cast<const int8_t*>(ctx.operands[1].data), cortexm::s16_requant(ctx, p.act_min, p.act_max),
                      static_cast<int16_t*>(ctx.output(1).data), static_cast<int16_t*>(ctx.output(0).data));
  return Status::kOk;
}

const char* prepare_conv2d_s16_cortexm(const OpContext& ctx) {
  const schema::CortexMKernel kernel = ctx.op->cortexm_kernel();
  if (kernel != schema::CortexMKernel::S16_GEMM && kernel != schema::CortexMKernel::S16_IM2COL_GEMM) {
    return FLOE_MSG("int16 conv2d: not a Cortex-M convolution kernel");
  }
  const bool im2col = kernel == schema::CortexMKernel::S16_IM2COL_GEMM;
  if (ctx.input_count() < 2 || ctx.output_count() < 1 || !ctx.has_input(0) || !ctx.has_input(1)) {
    return FLOE_MSG("int16 conv2d: missing operands");
  }
  const Shape input = ctx.input(0).shape, filter = ctx.input(1).shape, output = ctx.output(0).shape;
  if (input.rank != 4 || filter.rank != 4 || output.rank != 4) {
    return FLOE_MSG("int16 conv2d tensors must be 4-D (NHWC, OHWI)");
  }
  const int32_t out_c = filter.dims[0];
  cortexm::Conv2DS16Plan p{};
  if (const char* err = cortexm::prepare_s16_operands(ctx, out_c, im2col ? 2 : 1, &p.act_min, &p.act_max)) {
    return err;
  }
  if (filter.dims[3] != input.dims[3] || output.dims[3] != out_c || output.dims[0] != input.dims[0]) {
    return FLOE_MSG("int16 conv2d channel or batch dimensions disagree");
  }
  if (const char* err = cortexm::plan_conv_geometry(ctx, input, filter, output, &p)) return err;
  if (!im2col) {
    if (!cortexm::is_pointwise(p)) {
      return FLOE_MSG("int16 conv2d: the direct GEMM needs a 1x1, stride-1, unpadded convolution");
    }
    ctx.params<cortexm::Conv2DS16Plan>() = p;
    ctx.set_eval(eval_conv2d_s16_gemm);
    return nullptr;
  }
  const TensorView scratch = ctx.output(1);
  if (scratch.dtype != DType::kInt16 || scratch.shape.rank != 2 || scratch.shape.dims[1] != p.k_size ||
      scratch.shape.dims[0] < 1) {
    return FLOE_MSG("int16 conv2d: im2col scratch must be int16 [rows, k_h * k_w * in_c]");
  }
  p.chunk_rows = scratch.shape.dims[0];
  ctx.params<cortexm::Conv2DS16Plan>() = p;
  ctx.set_eval(eval_conv2d_s16_im2col);
  return nullptr;
}

}  // namespace
}  // namespace floe::ops

FLOE_KERNEL(CORTEX_M, CONV2D, INT16, cortexm::Conv2DS16Plan, ops::prepare_conv2d_s16_cortexm,
            ops::eval_conv2d_s16_gemm)
