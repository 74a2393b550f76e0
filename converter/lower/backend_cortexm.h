// SPDX-License-Identifier: Apache-2.0
// Backend selection for the Cortex-M targets (cortex-m4, cortex-m33,
// cortex-m55): which lowered ops run the CORTEX_M kernels
// (runtime/kernels/cortexm). Those kernels need no arena state, so unlike
// XNNPACK there is no budget; the runtime's build picks the ISA variant
// (FPU or Helium) of the kernel the converter chose.
#pragma once

#include <string>

#include "converter/ir/lowered.h"

namespace floe::conv {

// True for "cortex-m4", "cortex-m33", "cortex-m55".
bool is_cortexm_target(const std::string& target);

// Assigns Operator.backend = CORTEX_M to the float32 MATMUL, CONV2D and
// depth-multiplier-1 DEPTHWISE_CONV2D ops (the shapes those kernels are tuned
// for; the rest stay on the reference kernels) and sets model->target.
// int8 ops (after converter/quantize) get an Operator.cortexm_kernel and the
// operand layout it needs: CONV2D with groups 1 (filter OHWI, folded bias,
// im2col scratch as output 1 unless 1x1/stride 1/unpadded), FULLY_CONNECTED
// with symmetric weights (folded bias), DEPTHWISE_CONV2D with multiplier 1, and
// an in_c == 1 depthwise rewritten as a CONV2D; the replaced constants are left
// for dead-code elimination. Grouped convolutions, other multipliers and
// asymmetric weights stay on the reference kernels.
// Returns the number of ops assigned.
int assign_cortexm_backends(LoweredModel* model, const std::string& target);

// The host and Cortex-A targets' exact integer path: the int8 and int16x8 ops
// above get the same kernels (their portable build, full requantization: no
// short path) so that they compute TFLM's bytes; float ops are left for
// XNNPACK and model->target for assign_backends. Returns the ops assigned.
// Ops of fewer multiply-adds than kIntegerParallelMinMacs are marked
// single_threaded (run on the caller's thread whatever pool it gives).
// unsigned_input_bias (the x86-64 targets): the GEMM ops also get input 5, the
// bias for inputs read as unsigned bytes that AVX512-VNNI's byte dot products
// need (runtime/kernels/cortexm/s8_microkernels.h, S8Requant::bias_unsigned).
int assign_exact_integer_kernels(LoweredModel* model, bool unsigned_input_bias);
constexpr uint64_t kIntegerParallelMinMacs = 32768;

}  // namespace floe::conv
