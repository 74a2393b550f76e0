// SPDX-License-Identifier: Apache-2.0
// Backend selection for a target: which lowered ops XNNPACK runs (after the
// optimize passes fused bias and ReLU/ReLU6 into MatMul/Conv2D/Depthwise, which
// XNNPACK runs as one operator), and how many arena bytes XNNPACK's persistent
// state needs. The runtime
// mirror is runtime/kernels/xnnpack/operators.cc; both must agree on the
// op -> XNNPACK operator mapping for the budget to hold.
#pragma once

#include <cstdint>
#include <string>

#include "converter/ir/lowered.h"

namespace floe::conv {

struct BackendReport {
  std::string target;        // "reference", "x86_64", "x86_64-avx512", "aarch64" or "aarch64-no-dotprod"
  int xnnpack_ops = 0;       // ops assigned to XNNPACK
  int single_threaded_ops = 0;  // of those, marked too small for a thread pool
};

// Resolves "host" to the converter's own architecture; throws ConvertError for
// an unknown name. Known: reference, host, x86_64, x86_64-avx512, aarch64,
// aarch64-no-dotprod (schemas/contract/xnnpack_budget.h).
std::string resolve_target(const std::string& name);

// Assigns Operator.backend for `target` (resolved), fills model->target and
// plans the XNNPACK region for the ops' current order. "reference" changes nothing.
// XNNPACK ops doing less work than this (multiply-adds for MatMul/Conv2D/
// Depthwise, elements read and written otherwise) are marked single_threaded:
// measured on x86-64 (tests/bench/compare.sh, 2 threads), the pool's wake-up
// and join cost more than half of a 30k-MAC MatMul (300x100: 2.0 us alone,
// 2.2 us split), while a 41k-MAC one with 160 KB of weights gains 10 %.
constexpr uint64_t kParallelMinWork = 32768;

// int8_ops: XNNPACK may take int8 ops (--int8-rounding fast). Its QS8/QC8
// operators requantize in float and may differ from TFLM's fixed-point result
// by one step per op; without it every int8 op stays on floe's own kernels.
// Ops another backend already took are left alone.
BackendReport assign_backends(LoweredModel* model, const std::string& target, bool int8_ops);

// Fills model->xnnpack_budget and model->xnnpack_rewrites: the bytes Init()
// allocates for the XNNPACK ops, replayed in the ops' order (requests are
// aligned where the previous one ended, so the order changes the total). Run
// again whenever the ops are reordered after assign_backends.
void plan_xnnpack_region(LoweredModel* model);

}  // namespace floe::conv
