// SPDX-License-Identifier: Apache-2.0
// NON_MAX_SUPPRESSION: TF's NonMaxSuppressionV4/V5 with pad_to_max_output_size:
// greedy selection by score of boxes whose IOU with every selected box is at
// most iou_threshold, among boxes scoring above score_threshold; with
// soft_nms_sigma > 0 (V5), overlapping candidates are re-scored by
// exp(-0.5 * iou^2 / sigma) instead of dropped. Outputs: selected indices and
// scores padded with 0 to max_output_size (their length), the valid count,
// and two scratch tensors ([n] current scores, [n] how many selected boxes
// each candidate was compared with). Thresholds may be fed: the kernel checks
// them as TF does (iou in [0, 1], sigma >= 0).
#pragma once

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

struct NmsScratch {
  float* score;           // [n] current score; -inf once taken or dropped
  int32_t* compared;      // [n] selected boxes already compared with
};

// soft_nms_sigma <= 0: hard NMS. Returns kKernelError for thresholds TF refuses.
Status non_max_suppression_f32(In<float> boxes, In<float> scores, float iou_threshold, float score_threshold,
                               float soft_nms_sigma, Out<int32_t> selected, Out<float> selected_scores,
                               int32_t* valid_count, NmsScratch scratch);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

const char* prepare_non_max_suppression(const OpContext& ctx);
Status eval_non_max_suppression(const PreparedOp& ctx);

}  // namespace floe::ops
