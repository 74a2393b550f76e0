// SPDX-License-Identifier: Apache-2.0
// float32 neural-network kernels added for TF op coverage: batched matmul
// (broadcast batch dims), transposed 2-D convolution (TF Conv2DBackpropInput),
// NHWC image resizing (bilinear, nearest, bicubic, area with TF's align_corners
// / half_pixel_centers conventions), cumulative sum/product, fake quantization,
// top-k, log-softmax and local response normalization. Shapes are validated by
// the dispatch prepare step; outputs never alias inputs.
#pragma once

#include "runtime/core/tensor.h"

namespace floe::ref {

struct BatchMatMulParams {
  bool adj_x = false;
  bool adj_y = false;
};
// x [..., M, K] (or [..., K, M]), y [..., K, N] (or [..., N, K]); batch dims broadcast.
void batch_matmul_f32(const BatchMatMulParams& p, In<float> x, In<float> y, Out<float> output);

struct TransposeConv2DParams {
  int32_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int32_t pad_top = 0, pad_left = 0;  // of the forward convolution
};
// input [N, H, W, Cin] (the forward conv's output), filter [kh, kw, Cout, Cin],
// output [N, OH, OW, Cout] (the forward conv's input).
void transpose_conv2d_f32(const TransposeConv2DParams& p, In<float> input, In<float> filter,
                          Out<float> output);

enum class ResizeMode : uint8_t { kBilinear, kNearest, kBicubic, kArea };
struct ResizeParams {
  ResizeMode mode = ResizeMode::kBilinear;
  bool align_corners = false;
  bool half_pixel_centers = false;
};
// NHWC; nearest works on any element size (element_size), the others on float32.
void resize(const ResizeParams& p, size_t element_size, In<void> input, Out<void> output);

struct CumulativeParams {
  int32_t axis = 0;
  bool exclusive = false;
  bool reverse = false;
  bool product = false;
};
bool cumulative_supports(DType dtype);
void cumulative(const CumulativeParams& p, DType dtype, In<void> input, Out<void> output);

// min/max: one value, or one per last-dim channel (count = channels).
void fake_quant_f32(int32_t num_bits, bool narrow_range, In<float> input, In<float> min, In<float> max,
                    Out<float> output);

// Last axis. sorted: values descending, ties keep the lower index first;
// unsorted: TF's heap layout (the k largest, smallest at position 0).
void topk_f32(bool sorted, In<float> input, Out<float> values, Out<int32_t> indices);

void log_softmax_f32(In<float> input, Out<float> output);

struct LrnParams {
  int32_t depth_radius = 5;
  float bias = 1.0f, alpha = 1.0f, beta = 0.5f;
};
void lrn_f32(const LrnParams& p, In<float> input, Out<float> output);

}  // namespace floe::ref

namespace floe::ref {

struct ExtractPatchesParams {
  int32_t size_h = 1, size_w = 1, stride_h = 1, stride_w = 1, rate_h = 1, rate_w = 1;
  int32_t pad_top = 0, pad_left = 0;
};
// NHWC input -> [N, OH, OW, size_h * size_w * C], taps in (ky, kx, c) order;
// taps in the padding are zero. Any element size.
void extract_patches(const ExtractPatchesParams& p, size_t element_size, In<void> input, Out<void> output);

}  // namespace floe::ref

namespace floe::ref {

struct Conv3DParams {
  int32_t stride_d = 1, stride_h = 1, stride_w = 1;
  int32_t dilation_d = 1, dilation_h = 1, dilation_w = 1;
  int32_t pad_front = 0, pad_top = 0, pad_left = 0;
};
// NDHWC input, DHWIO filter, output [N, OD, OH, OW, Cout]; taps in the padding
// contribute zero.
void conv3d_f32(const Conv3DParams& p, In<float> input, In<float> filter, Out<float> output);

}  // namespace floe::ref
