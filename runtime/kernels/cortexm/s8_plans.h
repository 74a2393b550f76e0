// SPDX-License-Identifier: Apache-2.0
// The params blocks of the int8 Cortex-M CONV2D, FULLY_CONNECTED (MATMUL) and
// DEPTHWISE_CONV2D kernels (Operator.cortexm_kernel != NONE): everything their
// eval needs beyond the bound operands, computed once at Init by the op's
// prepare. Pointer-free and fixed-width like every params block, and no
// larger than the op's existing params union member, so that the persistent
// region (and every model converted before) keeps its size.
#pragma once

#include <stdint.h>

namespace floe::cortexm {

struct Conv2DS8Plan {
  int32_t batches, in_h, in_w, in_c, out_h, out_w, out_c;
  int32_t k_size;      // k_h * k_w * in_c: one GEMM row
  int32_t chunk_rows;  // im2col rows per s8_gemm call (the scratch holds that many)
  int16_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
  int8_t input_zero_point;  // fills the padded taps of an im2col row
  int8_t output_offset, act_min, act_max;
  uint8_t kernel;      // schema::CortexMKernel: S8_GEMM or S8_IM2COL_GEMM
  bool short_requant;  // the *_SHORT_REQUANT variant (S8Requant::short_path)
  bool gather_im2col;  // Helium: im2col rows by byte gathers (plan_im2col, conv2d.h)
  bool narrow_weights;  // the *_NARROW_WEIGHTS variant (S8Requant::narrow_weights)
};

struct FullyConnectedS8Plan {
  int32_t rows, k_size, channels;
  int32_t output_offset, act_min, act_max;
  bool short_requant;
  bool narrow_weights;
};

struct DepthwiseS8Plan {
  int32_t batches, channels;
  int16_t in_h, in_w, k_h, k_w, out_h, out_w;
  int16_t stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
  int16_t input_offset;
  int8_t output_offset, act_min, act_max;
  bool short_requant;
};

}  // namespace floe::cortexm
