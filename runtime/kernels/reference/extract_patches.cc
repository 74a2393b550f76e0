// SPDX-License-Identifier: Apache-2.0
// EXTRACT_PATCHES (TF ExtractImagePatches), any dtype (see extract_patches.h). Formulas follow the TensorFlow CPU kernels'
// documented conventions; code is our own.
#include "runtime/kernels/reference/extract_patches.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "runtime/kernels/reference/element_copy.h"
#include "runtime/core/quantization.h"
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {

void extract_patches(const ExtractPatchesParams& p, size_t element_size, In<void> input, Out<void> output) {
  const int32_t* id = input.shape.dims;
  const int32_t* od = output.shape.dims;
  const ptrdiff_t batches = id[0], in_h = id[1], in_w = id[2], ch = id[3];
  const ptrdiff_t out_h = od[1], out_w = od[2];
  const size_t run = static_cast<size_t>(ch) * element_size;
  const uint8_t* in = static_cast<const uint8_t*>(input.data);
  uint8_t* out = static_cast<uint8_t*>(output.data);
  for (ptrdiff_t n = 0; n < batches; ++n) {
    for (ptrdiff_t oy = 0; oy < out_h; ++oy) {
      for (ptrdiff_t ox = 0; ox < out_w; ++ox) {
        for (ptrdiff_t ky = 0; ky < p.size_h; ++ky) {
          const ptrdiff_t iy = oy * p.stride_h - p.pad_top + ky * p.rate_h;
          for (ptrdiff_t kx = 0; kx < p.size_w; ++kx, out += run) {
            const ptrdiff_t ix = ox * p.stride_w - p.pad_left + kx * p.rate_w;
            if (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w) {
              if (run) memset(out, p.pad_byte, run);
            } else if (run == 1) {  // one int8 channel (an im2col for XNNPACK): no call per byte
              *out = in[(n * in_h + iy) * in_w + ix];
            } else if (run) {
              memcpy(out, in + static_cast<size_t>((n * in_h + iy) * in_w + ix) * run, run);
            }
          }
        }
      }
    }
  }
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

const char* prepare_extract_patches(const OpContext& ctx) {
  if (!has_io(ctx, 1, 1)) return FLOE_MSG("expects 1 input and 1 output");
  const TensorView in = ctx.input(0), out = ctx.output(0);
  if (in.dtype != out.dtype || dtype_size(in.dtype) == 0) return FLOE_MSG("dtype mismatch");
  if (in.shape.rank != 4 || out.shape.rank != 4) return FLOE_MSG("tensors must be NHWC");
  const auto* o = ctx.op->options_as_ExtractPatchesOptions();
  if (o->size_h() < 1 || o->size_w() < 1 || o->stride_h() < 1 || o->stride_w() < 1 || o->rate_h() < 1 ||
      o->rate_w() < 1 || o->pad_top() < 0 || o->pad_left() < 0) {
    return FLOE_MSG("sizes, strides and rates must be >= 1, pads >= 0");
  }
  const int64_t depth = static_cast<int64_t>(o->size_h()) * o->size_w() * in.shape.dims[3];
  if (out.shape.dims[0] != in.shape.dims[0] || out.shape.dims[3] != depth) {
    return FLOE_MSG("output must be [N, OH, OW, size_h * size_w * C]");
  }
  // Taps outside the input are written as real zero, never read: 0 bytes, or
  // an int8 input's zero point (the converter's im2col of a narrow int8
  // convolution, converter/lower/backend_xnnpack.cc).
  ref::ExtractPatchesParams& p = ctx.params<ref::ExtractPatchesParams>();
  p.pad_byte = 0;
  if (in.dtype == DType::kInt8) {
    const Quantization q = ctx.input_quantization(0);
    if (q.quantized()) {
      if (q.channels != 1) return FLOE_MSG("an int8 input needs one zero point");
      p.pad_byte = static_cast<int32_t>(static_cast<uint8_t>(static_cast<int8_t>(q.zero_point)));
    }
  }
  p.size_h = o->size_h();
  p.size_w = o->size_w();
  p.stride_h = o->stride_h();
  p.stride_w = o->stride_w();
  p.rate_h = o->rate_h();
  p.rate_w = o->rate_w();
  p.pad_top = o->pad_top();
  p.pad_left = o->pad_left();
  return nullptr;
}

Status eval_extract_patches(const PreparedOp& ctx) {
  ref::extract_patches(ctx.params_as<ref::ExtractPatchesParams>(), dtype_size(ctx.input(0).dtype), in_void(ctx.input(0)), out_void(ctx.output(0)));
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, EXTRACT_PATCHES, ANY, ref::ExtractPatchesParams, ops::prepare_extract_patches, ops::eval_extract_patches)
