// SPDX-License-Identifier: Apache-2.0
// The individual optimization passes (one file each), run in a fixed order by
// optimize.cc. Each rewrites the LoweredModel in place, keeps it valid and
// topologically ordered, and appends one line per rewrite to `log` (what it
// changed, named by the TF nodes involved). Each returns how many rewrites it
// made. Every pass preserves the model's outputs up to float rounding.
#pragma once

#include <string>
#include <vector>

#include "converter/ir/lowered.h"

namespace floe::conv::opt {

using PassLog = std::vector<std::string>;

// Ops whose inputs are all constant are run once through the reference kernels
// (run_lowered) and replaced by their results.
int fold_constants(LoweredModel& model, PassLog& log);

// TRANSPOSE pairs that compose to the identity cancel (or merge into one);
// transposes move down through elementwise ops (constant operands re-laid out
// by running the reference TRANSPOSE kernel), PAD, reductions and CONCAT, so
// NCHW islands lowered as transpose-op-transpose collapse to their boundaries.
int minimize_transposes(LoweredModel& model, PassLog& log);

// A zero CONSTANT PAD of the spatial dims feeding a CONV2D / DEPTHWISE_CONV2D
// becomes the convolution's own padding.
int fold_pads(LoweredModel& model, PassLog& log);

// Per-channel scale/shift chains (MUL/DIV/ADD/SUB by per-channel constants, with
// at least one scale: batch norm in inference form) after CONV2D /
// DEPTHWISE_CONV2D / MATMUL fold into the weights and bias.
int fold_batch_norms(LoweredModel& model, PassLog& log);

// ADD/SUB of a per-channel constant after CONV2D / DEPTHWISE_CONV2D / MATMUL
// becomes its bias; RELU / RELU6 / MINIMUM / MAXIMUM clamps after those and the
// pooling ops become the fused activation when they compose to NONE/RELU/RELU6.
int fuse_bias_activation(LoweredModel& model, PassLog& log);

// Ops none of whose outputs is read (or is a graph output), and values no op or
// graph input/output refers to, are removed; value ids are renumbered.
int eliminate_dead_code(LoweredModel& model, PassLog& log);

}  // namespace floe::conv::opt
