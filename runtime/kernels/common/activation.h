// SPDX-License-Identifier: Apache-2.0
// Output activations fused into an op (a clamp applied to each output value).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace floe {

// Mirrors floe::schema::Activation.
enum class Activation : uint8_t { kNone = 0, kRelu = 1, kRelu6 = 2 };

// A fused activation as the clamp range [lo, hi] every kernel applies to its
// outputs (v < lo ? lo : v > hi ? hi : v, so NaN passes through, as in TF).
struct ActivationRange {
  float lo;
  float hi;
  float operator()(float v) const { return v < lo ? lo : (v > hi ? hi : v); }
};

constexpr ActivationRange activation_range(Activation act) {
  return {act == Activation::kNone ? -__builtin_inff() : 0.0f,
          act == Activation::kRelu6 ? 6.0f : __builtin_inff()};
}

// The last step of a float weighted op's outputs (one pixel's channels, one
// matrix row): + bias when there is one, then the fused activation's clamp,
// TF's Conv2D / MatMul -> BiasAdd -> Relu order.
inline void add_bias_and_activate(float* out, const float* bias, ptrdiff_t count, Activation act,
                                  ActivationRange range) {
  if (bias != nullptr) {
    for (ptrdiff_t i = 0; i < count; ++i) out[i] += bias[i];
  }
  if (act != Activation::kNone) {
    for (ptrdiff_t i = 0; i < count; ++i) out[i] = range(out[i]);
  }
}

inline float apply_activation(Activation act, float v) {
  switch (act) {
    case Activation::kNone:
      return v;
    case Activation::kRelu:
      return v < 0.0f ? 0.0f : v;
    case Activation::kRelu6:
      return v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v);
  }
  return v;
}

}  // namespace floe
