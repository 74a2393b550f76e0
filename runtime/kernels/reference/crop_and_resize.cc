// SPDX-License-Identifier: Apache-2.0
// CROP_AND_RESIZE (see crop_and_resize.h). Sampling follows TensorFlow's
// documented CropAndResize (the CPU kernel's conventions); code is our own.
#include "runtime/kernels/reference/crop_and_resize.h"

#include <math.h>
#include <stddef.h>

#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {

Status crop_and_resize_f32(const CropAndResizeParams& p, In<float> image, In<float> boxes, In<int32_t> box_index,
                           Out<float> output, IndexFault* fault) {
  const int32_t* id = image.shape.dims;
  const int32_t* od = output.shape.dims;
  const ptrdiff_t batches = id[0], in_h = id[1], in_w = id[2], ch = id[3];
  const ptrdiff_t n_boxes = od[0], crop_h = od[1], crop_w = od[2];
  // Every index first: a bad one fails the Invoke before anything is written.
  for (ptrdiff_t b = 0; b < n_boxes; ++b) {
    if (box_index.data[b] < 0 || box_index.data[b] >= batches) {
      *fault = {box_index.data[b], static_cast<int32_t>(b), static_cast<int32_t>(batches)};
      return Status::kIndexOutOfRange;
    }
  }
  const float last_y = static_cast<float>(in_h - 1), last_x = static_cast<float>(in_w - 1);
  float* o = output.data;
  for (ptrdiff_t b = 0; b < n_boxes; ++b) {
    const float* box = boxes.data + 4 * b;
    const float y1 = box[0], x1 = box[1], y2 = box[2], x2 = box[3];
    const float* img = image.data + static_cast<ptrdiff_t>(box_index.data[b]) * in_h * in_w * ch;
    const float h_scale = crop_h > 1 ? (y2 - y1) * last_y / static_cast<float>(crop_h - 1) : 0.0f;
    const float w_scale = crop_w > 1 ? (x2 - x1) * last_x / static_cast<float>(crop_w - 1) : 0.0f;
    for (ptrdiff_t y = 0; y < crop_h; ++y) {
      const float in_y = crop_h > 1 ? y1 * last_y + static_cast<float>(y) * h_scale : 0.5f * (y1 + y2) * last_y;
      if (!(in_y >= 0.0f && in_y <= last_y)) {  // NaN coordinates extrapolate too
        for (ptrdiff_t k = 0; k < crop_w * ch; ++k) o[k] = p.extrapolation_value;
        o += crop_w * ch;
        continue;
      }
      const ptrdiff_t top = static_cast<ptrdiff_t>(floorf(in_y)), bottom = static_cast<ptrdiff_t>(ceilf(in_y));
      const float y_lerp = in_y - static_cast<float>(top);
      for (ptrdiff_t x = 0; x < crop_w; ++x, o += ch) {
        const float in_x = crop_w > 1 ? x1 * last_x + static_cast<float>(x) * w_scale : 0.5f * (x1 + x2) * last_x;
        if (!(in_x >= 0.0f && in_x <= last_x)) {
          for (ptrdiff_t c = 0; c < ch; ++c) o[c] = p.extrapolation_value;
          continue;
        }
        if (p.nearest) {
          const ptrdiff_t ny = static_cast<ptrdiff_t>(roundf(in_y)), nx = static_cast<ptrdiff_t>(roundf(in_x));
          const float* src = img + (ny * in_w + nx) * ch;
          for (ptrdiff_t c = 0; c < ch; ++c) o[c] = src[c];
          continue;
        }
        const ptrdiff_t left = static_cast<ptrdiff_t>(floorf(in_x)), right = static_cast<ptrdiff_t>(ceilf(in_x));
        const float x_lerp = in_x - static_cast<float>(left);
        const float* tl = img + (top * in_w + left) * ch;
        const float* tr = img + (top * in_w + right) * ch;
        const float* bl = img + (bottom * in_w + left) * ch;
        const float* br = img + (bottom * in_w + right) * ch;
        for (ptrdiff_t c = 0; c < ch; ++c) {
          const float t = tl[c] + (tr[c] - tl[c]) * x_lerp;
          const float bo = bl[c] + (br[c] - bl[c]) * x_lerp;
          o[c] = t + (bo - t) * y_lerp;
        }
      }
    }
  }
  return Status::kOk;
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

const char* prepare_crop_and_resize(const OpContext& ctx) {
  if (!has_io(ctx, 3, 1)) return FLOE_MSG("expects image, boxes, box indices and 1 output");
  const TensorView image = ctx.input(0), boxes = ctx.input(1), index = ctx.input(2), out = ctx.output(0);
  if (!is_f32(image) || !is_f32(boxes) || !is_f32(out) || index.dtype != DType::kInt32) {
    return FLOE_MSG("expects float32 image, boxes and output, int32 box indices");
  }
  if (image.shape.rank != 4 || out.shape.rank != 4 || boxes.shape.rank != 2 || index.shape.rank != 1) {
    return FLOE_MSG("expects image NHWC, boxes [n, 4], box indices [n]");
  }
  const int32_t n = out.shape.dims[0];
  if (boxes.shape.dims[0] != n || boxes.shape.dims[1] != 4 || index.shape.dims[0] != n ||
      out.shape.dims[3] != image.shape.dims[3]) {
    return FLOE_MSG("boxes, box indices and output disagree");
  }
  if ((image.shape.dims[1] == 0 || image.shape.dims[2] == 0) && out.shape.num_elements() != 0) {
    return FLOE_MSG("cannot crop an empty image");
  }
  const auto* o = ctx.op->options_as_CropAndResizeOptions();
  if (o == nullptr) return FLOE_MSG("missing CropAndResizeOptions");
  ref::CropAndResizeParams& p = ctx.params<ref::CropAndResizeParams>();
  p.extrapolation_value = o->extrapolation_value();
  p.nearest = o->nearest() ? 1 : 0;
  return nullptr;
}

Status eval_crop_and_resize(const PreparedOp& ctx) {
  return ref::crop_and_resize_f32(ctx.params_as<ref::CropAndResizeParams>(), in_as<float>(ctx.input(0)),
                                  in_as<float>(ctx.input(1)), in_as<int32_t>(ctx.input(2)),
                                  out_as<float>(ctx.output(0)), &static_cast<ref::CropAndResizeParams*>(ctx.params)->fault);
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, CROP_AND_RESIZE, ANY, ref::CropAndResizeParams, ops::prepare_crop_and_resize, ops::eval_crop_and_resize)
