// SPDX-License-Identifier: Apache-2.0
// NON_MAX_SUPPRESSION (see non_max_suppression.h). The selection order follows
// TensorFlow's documented NonMaxSuppressionV5 (highest current score first,
// lower box index on ties; each candidate compared once with each selected
// box); code is our own. A linear scan stands in for TF's priority queue: it
// picks the same candidate at every step without any allocation.
#include "runtime/kernels/reference/non_max_suppression.h"

#include <math.h>
#include <stddef.h>

#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {
namespace {

float box_iou(const float* a, const float* b) {
  const float a_ymin = fminf(a[0], a[2]), a_xmin = fminf(a[1], a[3]);
  const float a_ymax = fmaxf(a[0], a[2]), a_xmax = fmaxf(a[1], a[3]);
  const float b_ymin = fminf(b[0], b[2]), b_xmin = fminf(b[1], b[3]);
  const float b_ymax = fmaxf(b[0], b[2]), b_xmax = fmaxf(b[1], b[3]);
  const float area_a = (a_ymax - a_ymin) * (a_xmax - a_xmin);
  const float area_b = (b_ymax - b_ymin) * (b_xmax - b_xmin);
  if (area_a <= 0.0f || area_b <= 0.0f) return 0.0f;
  const float inter_h = fmaxf(fminf(a_ymax, b_ymax) - fmaxf(a_ymin, b_ymin), 0.0f);
  const float inter_w = fmaxf(fminf(a_xmax, b_xmax) - fmaxf(a_xmin, b_xmin), 0.0f);
  const float inter = inter_h * inter_w;
  return inter / (area_a + area_b - inter);
}

}  // namespace

Status non_max_suppression_f32(In<float> boxes, In<float> scores, float iou_threshold, float score_threshold,
                               float soft_nms_sigma, Out<int32_t> selected, Out<float> selected_scores,
                               int32_t* valid_count, NmsScratch scratch) {
  if (!(iou_threshold >= 0.0f && iou_threshold <= 1.0f) || !(soft_nms_sigma >= 0.0f)) return Status::kKernelError;
  const ptrdiff_t n = scores.shape.dims[0];
  const ptrdiff_t max_out = selected.shape.dims[0];
  const bool soft = soft_nms_sigma > 0.0f;
  const float scale = soft ? -0.5f / soft_nms_sigma : 0.0f;
  for (ptrdiff_t i = 0; i < n; ++i) {
    scratch.score[i] = scores.data[i] > score_threshold ? scores.data[i] : -INFINITY;
    scratch.compared[i] = 0;
  }
  ptrdiff_t count = 0;
  while (count < max_out) {
    ptrdiff_t best = -1;
    for (ptrdiff_t i = 0; i < n; ++i) {
      if (scratch.score[i] == -INFINITY) continue;
      if (best < 0 || scratch.score[i] > scratch.score[best]) best = i;
    }
    if (best < 0) break;
    const float original = scratch.score[best];
    float score = original;
    bool suppressed = false;
    for (ptrdiff_t j = count - 1; j >= scratch.compared[best]; --j) {
      const float iou = box_iou(boxes.data + 4 * best, boxes.data + 4 * selected.data[j]);
      // Soft NMS decays every overlap; hard NMS drops the candidate past the threshold.
      score *= soft || iou <= iou_threshold ? expf(scale * iou * iou) : 0.0f;
      if (!soft && iou > iou_threshold) {
        suppressed = true;
        break;
      }
      if (score <= score_threshold) break;
    }
    scratch.compared[best] = static_cast<int32_t>(count);
    scratch.score[best] = -INFINITY;
    if (suppressed) continue;
    if (score == original) {
      selected.data[count] = static_cast<int32_t>(best);
      selected_scores.data[count] = score;
      ++count;
    } else if (score > score_threshold) {
      scratch.score[best] = score;  // back among the candidates with its lowered score
    }
  }
  *valid_count = static_cast<int32_t>(count);
  for (ptrdiff_t k = count; k < max_out; ++k) {
    selected.data[k] = 0;
    selected_scores.data[k] = 0.0f;
  }
  return Status::kOk;
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {
namespace {

bool is_f32_scalar(const TensorView& v) { return is_f32(v) && v.shape.num_elements() == 1 && v.shape.rank <= 1; }

}  // namespace

const char* prepare_non_max_suppression(const OpContext& ctx) {
  if (ctx.input_count() != 5 || ctx.output_count() != 5) return FLOE_MSG("expects 5 inputs and 5 outputs");
  for (int i = 0; i < 4; ++i) {
    if (!ctx.has_input(i)) return FLOE_MSG("boxes, scores and thresholds are required");
  }
  const TensorView boxes = ctx.input(0), scores = ctx.input(1);
  if (!is_f32(boxes) || !is_f32(scores) || boxes.shape.rank != 2 || scores.shape.rank != 1 ||
      boxes.shape.dims[1] != 4 || boxes.shape.dims[0] != scores.shape.dims[0]) {
    return FLOE_MSG("expects float32 boxes [n, 4] and scores [n]");
  }
  for (int i = 2; i < 5; ++i) {
    if (ctx.has_input(i) && !is_f32_scalar(ctx.input(i))) return FLOE_MSG("thresholds must be float32 scalars");
  }
  const TensorView sel = ctx.output(0), sel_scores = ctx.output(1), count = ctx.output(2);
  const TensorView scratch_score = ctx.output(3), scratch_compared = ctx.output(4);
  if (sel.dtype != DType::kInt32 || sel.shape.rank != 1 || !is_f32(sel_scores) || !dims_equal(sel.shape, sel_scores.shape)) {
    return FLOE_MSG("selected indices must be int32 [max], scores float32 [max]");
  }
  if (count.dtype != DType::kInt32 || count.shape.num_elements() != 1) return FLOE_MSG("valid count must be int32 []");
  if (!is_f32(scratch_score) || scratch_compared.dtype != DType::kInt32 ||
      scratch_score.shape.num_elements() != scores.shape.dims[0] ||
      scratch_compared.shape.num_elements() != scores.shape.dims[0]) {
    return FLOE_MSG("scratch tensors must be float32 [n] and int32 [n]");
  }
  return nullptr;
}

Status eval_non_max_suppression(const PreparedOp& ctx) {
  const float sigma = ctx.has_input(4) ? *data_as<const float>(ctx.input(4)) : 0.0f;
  ref::NmsScratch scratch{data_as<float>(ctx.output(3)), data_as<int32_t>(ctx.output(4))};
  return ref::non_max_suppression_f32(in_as<float>(ctx.input(0)), in_as<float>(ctx.input(1)),
                                      *data_as<const float>(ctx.input(2)), *data_as<const float>(ctx.input(3)), sigma,
                                      out_as<int32_t>(ctx.output(0)), out_as<float>(ctx.output(1)),
                                      data_as<int32_t>(ctx.output(2)), scratch);
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, NON_MAX_SUPPRESSION, ANY, NoParams, ops::prepare_non_max_suppression, ops::eval_non_max_suppression)
