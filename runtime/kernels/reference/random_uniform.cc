// SPDX-License-Identifier: Apache-2.0
// RANDOM_UNIFORM (see random_uniform.h).
#include "runtime/kernels/reference/random_uniform.h"

#include <string.h>

#include "runtime/core/registry.h"
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {
namespace {

// Philox4x32's round multipliers and its key schedule's Weyl increments.
constexpr uint32_t kMultiplierA = 0xD2511F53u, kMultiplierB = 0xCD9E8D57u;
constexpr uint32_t kWeylA = 0x9E3779B9u, kWeylB = 0xBB67AE85u;
constexpr int kRounds = 10;

inline void multiply_high_low(uint32_t a, uint32_t b, uint32_t* low, uint32_t* high) {
  const uint64_t product = static_cast<uint64_t>(a) * b;
  *low = static_cast<uint32_t>(product);
  *high = static_cast<uint32_t>(product >> 32);
}

inline float float_from_word(uint32_t word) {
  const uint32_t bits = 0x3F800000u | (word & 0x7FFFFFu);  // [1, 2)
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value - 1.0f;
}

inline float float_from_two_words(uint32_t high_word, uint32_t low_word) {
  const uint64_t bits = (uint64_t{1023} << 52) | (static_cast<uint64_t>(high_word & 0xFFFFFu) << 32) | low_word;
  double value;
  memcpy(&value, &bits, sizeof(value));
  return static_cast<float>(value - 1.0);
}

}  // namespace

Philox4x32 philox_seeded(uint64_t seed, uint64_t seed2) {
  Philox4x32 s;
  s.key[0] = static_cast<uint32_t>(seed);
  s.key[1] = static_cast<uint32_t>(seed >> 32);
  s.counter[0] = 0;
  s.counter[1] = 0;
  s.counter[2] = static_cast<uint32_t>(seed2);
  s.counter[3] = static_cast<uint32_t>(seed2 >> 32);
  return s;
}

void philox_next(Philox4x32& state, uint32_t out[4]) {
  uint32_t c[4] = {state.counter[0], state.counter[1], state.counter[2], state.counter[3]};
  uint32_t k0 = state.key[0], k1 = state.key[1];
  for (int round = 0; round < kRounds; ++round) {
    uint32_t low0, high0, low1, high1;
    multiply_high_low(kMultiplierA, c[0], &low0, &high0);
    multiply_high_low(kMultiplierB, c[2], &low1, &high1);
    const uint32_t next[4] = {high1 ^ c[1] ^ k0, low1, high0 ^ c[3] ^ k1, low0};
    memcpy(c, next, sizeof(c));
    k0 += kWeylA;
    k1 += kWeylB;
  }
  memcpy(out, c, sizeof(c));
  philox_skip(state, 1);
}

void philox_skip(Philox4x32& state, uint64_t count) {
  const uint32_t count_low = static_cast<uint32_t>(count);
  uint32_t count_high = static_cast<uint32_t>(count >> 32);
  state.counter[0] += count_low;
  if (state.counter[0] < count_low) ++count_high;
  state.counter[1] += count_high;
  if (state.counter[1] < count_high && ++state.counter[2] == 0) ++state.counter[3];
}

void random_uniform(Philox4x32& state, bool float64_draws, float* out, size_t count) {
  uint32_t words[4];
  size_t i = 0;
  while (i < count) {
    philox_next(state, words);
    if (float64_draws) {
      for (int k = 0; k < 2 && i < count; ++k) out[i++] = float_from_two_words(words[2 * k], words[2 * k + 1]);
    } else {
      for (int k = 0; k < 4 && i < count; ++k) out[i++] = float_from_word(words[k]);
    }
  }
}

}  // namespace floe::ref

// ---- adapter: prepare seeds the generator once at Init(); eval draws the
// values of one run and advances the generator as TF does between runs.
namespace floe::ops {
namespace {

// The op's params block (ops.def: 32 bytes): the generator at the start of
// the next Invoke().
struct RandomUniformPrepared {
  ref::Philox4x32 next_run;
  uint32_t float64_draws;
  uint32_t reserved;
};
static_assert(sizeof(RandomUniformPrepared) == 32, "RANDOM_UNIFORM params block");

const char* prepare_random_uniform(const OpContext& ctx) {
  if (!has_io(ctx, 0, 1) || ctx.output(0).dtype != DType::kFloat32) {
    return FLOE_MSG("expects no inputs and 1 float32 output");
  }
  const auto* options = ctx.op->options_as_RandomUniformOptions();
  if (options == nullptr) return FLOE_MSG("RandomUniformOptions missing");
  RandomUniformPrepared& p = ctx.params<RandomUniformPrepared>();
  p.next_run = ref::philox_seeded(static_cast<uint64_t>(options->seed()), static_cast<uint64_t>(options->seed2()));
  p.float64_draws = options->float64_draws() ? 1u : 0u;
  return nullptr;
}

Status eval_random_uniform(const PreparedOp& ctx) {
  RandomUniformPrepared& p = *static_cast<RandomUniformPrepared*>(ctx.params);
  const TensorView& out = ctx.output(0);
  const size_t count = out.bytes / sizeof(float);
  ref::Philox4x32 run = p.next_run;
  ref::random_uniform(run, p.float64_draws != 0, static_cast<float*>(out.data), count);
  // TF reserves 256 counter values per output element for each run.
  ref::philox_skip(p.next_run, static_cast<uint64_t>(count) << 8);
  return Status::kOk;
}

}  // namespace
}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, RANDOM_UNIFORM, FLOAT32, ops::RandomUniformPrepared, ops::prepare_random_uniform,
            ops::eval_random_uniform)
