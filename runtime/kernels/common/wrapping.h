// SPDX-License-Identifier: Apache-2.0
// Integer arithmetic that wraps (two's complement, as TF's kernels compute it)
// instead of being undefined behaviour: the values come from the model and its
// inputs. Float overloads are the plain operations, so templated kernels can
// use one spelling for every dtype. Freestanding.
#pragma once

namespace floe::ref {

template <typename T> inline T wrapping_add(T a, T b) { T r; __builtin_add_overflow(a, b, &r); return r; }
template <typename T> inline T wrapping_sub(T a, T b) { T r; __builtin_sub_overflow(a, b, &r); return r; }
template <typename T> inline T wrapping_mul(T a, T b) { T r; __builtin_mul_overflow(a, b, &r); return r; }
inline float wrapping_add(float a, float b) { return a + b; }
inline float wrapping_sub(float a, float b) { return a - b; }
inline float wrapping_mul(float a, float b) { return a * b; }
inline double wrapping_add(double a, double b) { return a + b; }
inline double wrapping_sub(double a, double b) { return a - b; }
inline double wrapping_mul(double a, double b) { return a * b; }

}  // namespace floe::ref
