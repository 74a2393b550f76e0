// SPDX-License-Identifier: Apache-2.0
// What the Helium (MVE, Cortex-M55) int8 kernels share (s8_gemm_mve.cc,
// s8_depthwise_mve.cc): per-channel constants of 4 channels in vector form and
// the requantization on 4 lanes, 4 channels per instruction: VSHL (left
// shift), VQRDMULH (TFLite's SaturatingRoundingDoublingHighMul, same rounding
// and the same single saturating case), then VRSHL by the negated right shift,
// which rounds ties up where TFLite rounds them away from zero: negative
// values with a nonzero right shift are first lowered by one (ties then land
// on the lower value, everything else is unchanged).
#pragma once

#if defined(FLOE_CORTEXM_S8_MVE)

#include <arm_mve.h>

namespace floe::cortexm {
namespace s8_detail {

// Per-channel constants of 4 channels in vector form.
struct Requant4 {
  int32x4_t multiplier;
  int32x4_t left_shift;   // max(shift, 0)
  int32x4_t right_shift;  // min(shift, 0): VRSHL shifts right by its negation
};

inline Requant4 make_requant4(int32x4_t multiplier, int32x4_t shift) {
  const int32x4_t zero = vdupq_n_s32(0);
  return {multiplier, vmaxq_s32(shift, zero), vminq_s32(shift, zero)};
}

// multiply_by_quantized_multiplier on 4 lanes (bias already added).
// kRightOnly: every shift of these channels is negative (the usual case,
// checked per block of channels): no left shift, and every lane's fix-up
// applies, so it needs no mask.
template <bool kRightOnly>
inline int32x4_t scale4(int32x4_t x, const Requant4& q) {
  if constexpr (kRightOnly) {
    x = vqrdmulhq_s32(x, q.multiplier);
    x = vqaddq_s32(x, vshrq_n_s32(x, 31));
    return vrshlq_s32(x, q.right_shift);
  } else {
    x = vshlq_s32(x, q.left_shift);
    x = vqrdmulhq_s32(x, q.multiplier);
    // -1 where x < 0 and the right shift is nonzero (its sign bit is set):
    // turns VRSHL's ties-up into ties-away-from-zero. Saturating, so INT32_MIN
    // (an exact multiple of every power of two) stays put.
    const int32x4_t fixup = vshrq_n_s32(vandq_s32(x, q.right_shift), 31);
    x = vqaddq_s32(x, fixup);
    return vrshlq_s32(x, q.right_shift);
  }
}

}  // namespace s8_detail
}  // namespace floe::cortexm

#endif  // FLOE_CORTEXM_S8_MVE
