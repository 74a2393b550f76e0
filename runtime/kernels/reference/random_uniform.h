// SPDX-License-Identifier: Apache-2.0
// RANDOM_UNIFORM: uniform values in [0, 1) drawn as TensorFlow's CPU
// RandomUniform kernel draws them, so a seeded op gives TF's numbers.
//
// The generator is Philox4x32-10 (Salmon et al., "Parallel random numbers:
// as easy as 1, 2, 3", SC 2011): a 64-bit key (TF's seed) and a 128-bit
// counter (its high half TF's seed2) give four 32-bit words per counter
// value. A float32 value takes the low 23 bits of one word as the mantissa
// of a float in [1, 2) minus 1; a float64 one 20 bits of one word and 32 of
// the next (TF's Uint32ToFloat / Uint64ToDouble), here rounded to float32.
// Values are the words in order: counter c gives values 4c..4c+3 (float32)
// or 2c, 2c+1 (float64).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "runtime/core/tensor.h"

namespace floe::ref {

struct Philox4x32 {
  uint32_t key[2];
  uint32_t counter[4];
};

// The four words of the counter's current value; the counter then advances by one.
void philox_next(Philox4x32& state, uint32_t out[4]);
// Advances the counter by `count` values (128-bit arithmetic, as TF's Skip).
void philox_skip(Philox4x32& state, uint64_t count);
// TF's PhiloxRandom(seed, seed2).
Philox4x32 philox_seeded(uint64_t seed, uint64_t seed2);

// Fills `count` values from `state` (which advances by the counters used).
void random_uniform(Philox4x32& state, bool float64_draws, float* out, size_t count);

}  // namespace floe::ref
