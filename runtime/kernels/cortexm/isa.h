// SPDX-License-Identifier: Apache-2.0
// Which instruction set the Cortex-M float kernels are compiled for, decided by
// the compiler's target macros (the board's -mcpu), never at run time:
//   FLOE_CORTEXM_MVE       Helium with float (M55, M85): 4-lane vector loops
//   FLOE_CORTEXM_FPU       a single-precision FPU (M4F, M7, M33): register-blocked
//                          scalar loops with fused multiply-add (VFMA.F32)
//   FLOE_CORTEXM_PORTABLE  anything else (the host build, M0/M3): the same
//                          blocking in plain C, unfused, so it runs and is tested everywhere
// The DSP extension's SIMD (SMLAD, SXTB16) is integer-only; it pays for the int8
// kernels, not these float ones.
#pragma once

#include <math.h>

#include "runtime/kernels/common/activation.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#define FLOE_CORTEXM_MVE 1
#include <arm_mve.h>
#elif defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M' && defined(__ARM_FP) && (__ARM_FP & 4)
#define FLOE_CORTEXM_FPU 1
#else
#define FLOE_CORTEXM_PORTABLE 1
#endif

namespace floe::cortexm {

// "mve", "fpu" or "portable": for logs and bench reports.
constexpr const char* kIsaName =
#if defined(FLOE_CORTEXM_MVE)
    "mve";
#elif defined(FLOE_CORTEXM_FPU)
    "fpu";
#else
    "portable";
#endif

// acc + a * b. On an FPU this is one VFMA (a single rounding): the optimized
// kernels therefore differ from the reference (separate multiply and add, see
// FLOE_RUNTIME_FLAGS' -ffp-contract=off) within the dot-product tolerance the
// tests state, and are bit-exact with it in the portable build.
inline float mac(float acc, float a, float b) {
#if defined(FLOE_CORTEXM_MVE) || defined(FLOE_CORTEXM_FPU)
  return __builtin_fmaf(a, b, acc);
#else
  return acc + a * b;
#endif
}

// The fused activation as a clamp range, applied exactly as the reference
// kernels apply it (NaN passes through): runtime/kernels/common/activation.h.
using Clamp = ActivationRange;
inline Clamp clamp_for(Activation activation) { return activation_range(activation); }

}  // namespace floe::cortexm
