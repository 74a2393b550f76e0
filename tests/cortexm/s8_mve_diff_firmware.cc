// SPDX-License-Identifier: Apache-2.0
// Board (Helium only): s8_gemm and s8_depthwise (s8_gemm_mve.cc, s8_depthwise_mve.cc)
// against a scalar model of the contract in s8_microkernels.h, built on the
// reference kernels' arithmetic (runtime/kernels/reference/quantization.h),
// byte for byte, on seeded random cases: odd channel counts, k % 16 != 0,
// 1..9 rows, strides, padding, dilation, extreme zero points, per-channel
// multipliers with left and right shifts, narrow activation ranges. Bytes
// around and between the outputs must stay untouched. Exit status 0 only if
// every case matches (ctest runs this under QEMU).
#include <stdint.h>

#include "runtime/kernels/cortexm/s8_microkernels.h"
#include "runtime/kernels/reference/quantization.h"
#include "runtime/platform.h"

namespace {

using floe::cortexm::DepthwiseS8Shape;
using floe::cortexm::S8Requant;

constexpr int kGemmCases = 3000;
constexpr int kDepthwiseCases = 3000;
constexpr int8_t kGuard = 0x5A;

// xorshift32: small, seeded, the same sequence on every run.
struct Random {
  uint32_t state;
  uint32_t next() {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  }
  int32_t range(int32_t lo, int32_t hi) {  // inclusive
    return lo + static_cast<int32_t>(next() % static_cast<uint32_t>(hi - lo + 1));
  }
  bool chance(int percent) { return range(0, 99) < percent; }
  // Full-range int8, sometimes pinned at an extreme to reach the sum limits.
  int8_t s8(int extreme_percent) {
    if (chance(extreme_percent)) return chance(50) ? int8_t{-128} : int8_t{127};
    return static_cast<int8_t>(range(-128, 127));
  }
};

void print(const char* text) { floe::platform::log(text); }

void print_number(const char* label, int32_t v) {
  char text[48];
  int t = 0;
  for (const char* l = label; *l != '\0'; ++l) text[t++] = *l;
  uint32_t u = static_cast<uint32_t>(v);
  if (v < 0) {
    text[t++] = '-';
    u = 0u - u;
  }
  char digits[12];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  while (n > 0) text[t++] = digits[--n];
  text[t++] = ' ';
  text[t] = '\0';
  print(text);
}

// ---- per-channel requantization constants ---------------------------------

constexpr int kMaxChannels = 48;
int32_t g_bias[kMaxChannels], g_multiplier[kMaxChannels], g_shift[kMaxChannels];

// Multipliers from real scales 2^-20 .. 2^4 (right and left shifts), or
// with some chance the extremes of the Q31 range and shift.
// Half the cases have right shifts only (the kernels' fast requantization).
S8Requant random_requant(Random& rng, int32_t channels, int32_t bias_bits) {
  const bool right_only = rng.chance(50);
  for (int32_t c = 0; c < channels; ++c) {
    g_bias[c] = rng.chance(10) ? 0 : rng.range(-(1 << bias_bits), 1 << bias_bits);
    if (rng.chance(5)) {
      g_multiplier[c] = rng.chance(50) ? floe::ref::kInt32Max : (1 << 30);
      g_shift[c] = rng.range(-31, right_only ? -1 : 4);
    } else {
      const double mantissa = 0.5 + static_cast<double>(rng.next() % 1000000u) * 5e-7;
      const int exponent = rng.range(-20, right_only ? -1 : 4);
      const floe::ref::QuantizedMultiplier q =
          floe::ref::quantize_multiplier(ldexp(mantissa, exponent));
      g_multiplier[c] = q.multiplier;
      g_shift[c] = q.shift;
    }
  }
  S8Requant rq{g_bias, g_multiplier, g_shift, 0, -128, 127};
  rq.output_offset = rng.chance(20) ? (rng.chance(50) ? -128 : 127) : rng.range(-128, 127);
  if (rng.chance(40)) {
    rq.act_min = rng.range(-128, 127);
    rq.act_max = rng.range(rq.act_min, 127);
  }
  return rq;
}

int8_t model_output(int32_t acc, const S8Requant& rq, int32_t c) {
  const int32_t with_bias =
      static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(rq.bias[c]));
  const int32_t scaled =
      floe::ref::multiply_by_quantized_multiplier(with_bias, rq.multiplier[c], rq.shift[c]);
  const int32_t shifted =
      static_cast<int32_t>(static_cast<uint32_t>(scaled) + static_cast<uint32_t>(rq.output_offset));
  return static_cast<int8_t>(floe::ref::clamp_to(shifted, rq.act_min, rq.act_max));
}

// ---- GEMM ------------------------------------------------------------------

constexpr int32_t kMaxRows = 9, kMaxK = 200, kMaxStride = kMaxK + 24;
int8_t g_a[kMaxRows * kMaxStride];
int8_t g_w[kMaxChannels * kMaxK];
int8_t g_out[kMaxRows * (kMaxChannels + 8) + 32];
int8_t g_expected[sizeof(g_out)];

bool gemm_case(Random& rng, int index) {
  const int32_t rows = rng.range(1, kMaxRows);
  const int32_t channels = rng.chance(30) ? rng.range(1, 8) : rng.range(1, kMaxChannels);
  const int32_t k_size = rng.chance(20) ? rng.range(1, 20) : rng.range(1, kMaxK);
  const int32_t a_stride = k_size + (rng.chance(50) ? 0 : rng.range(1, 24));
  const int32_t out_stride = channels + (rng.chance(50) ? 0 : rng.range(1, 8));
  const int extremes = rng.chance(10) ? 90 : 5;
  for (int32_t i = 0; i < rows * a_stride; ++i) g_a[i] = rng.s8(extremes);
  for (int32_t i = 0; i < channels * k_size; ++i) g_w[i] = rng.s8(extremes);
  const S8Requant rq = random_requant(rng, channels, rng.chance(20) ? 30 : 16);

  // 16 guard bytes before and after the output, and the stride gaps.
  constexpr int32_t kLead = 16;
  const int32_t span = (rows - 1) * out_stride + channels;
  for (int32_t i = 0; i < span + 2 * kLead; ++i) g_out[i] = g_expected[i] = kGuard;
  for (int32_t r = 0; r < rows; ++r) {
    for (int32_t c = 0; c < channels; ++c) {
      int32_t acc = 0;
      for (int32_t k = 0; k < k_size; ++k) acc += g_a[r * a_stride + k] * g_w[c * k_size + k];
      g_expected[kLead + r * out_stride + c] = model_output(acc, rq, c);
    }
  }
  floe::cortexm::s8_gemm(g_a, a_stride, rows, g_w, channels, k_size, rq, g_out + kLead, out_stride);
  for (int32_t i = 0; i < span + 2 * kLead; ++i) {
    if (g_out[i] != g_expected[i]) {
      print_number("gemm case", index);
      print_number("rows", rows);
      print_number("channels", channels);
      print_number("k", k_size);
      print_number("byte", i - kLead);
      print_number("got", g_out[i]);
      print_number("expected", g_expected[i]);
      print("\n");
      return false;
    }
  }
  return true;
}

// ---- depthwise -------------------------------------------------------------

constexpr int32_t kMaxSide = 12, kMaxKernel = 5, kMaxBatches = 2;
constexpr int32_t kMaxDwChannels = 40;
int8_t g_input[kMaxBatches * kMaxSide * kMaxSide * kMaxDwChannels];
int8_t g_filter[kMaxKernel * kMaxKernel * kMaxDwChannels];
int8_t g_dw_out[kMaxBatches * kMaxSide * kMaxSide * kMaxDwChannels + 32];
int8_t g_dw_expected[sizeof(g_dw_out)];

// One spatial dimension: kernel, stride, dilation, padding, output size.
struct Axis {
  int32_t in, k, stride, dil, pad, out;
};

Axis random_axis(Random& rng, bool three_by_three, int32_t stride) {
  Axis a{};
  a.k = three_by_three ? 3 : rng.range(1, kMaxKernel);
  a.stride = stride;
  a.dil = three_by_three ? 1 : (rng.chance(25) ? rng.range(2, 3) : 1);
  const int32_t span = (a.k - 1) * a.dil + 1;
  a.in = rng.range(1, kMaxSide);
  // Usually at most the window's reach; sometimes beyond (windows wholly
  // outside the input: every tap skipped).
  const int32_t max_pad = rng.chance(10) ? span + 1 : (span - 1 < 2 ? span - 1 : 2);
  a.pad = rng.range(0, max_pad);
  const int32_t pad_after = rng.range(0, max_pad);
  const int32_t extent = a.in + a.pad + pad_after - span;
  a.out = extent < 0 ? 1 : extent / a.stride + 1;
  if (a.out > kMaxSide) a.out = kMaxSide;
  return a;
}

bool depthwise_case(Random& rng, int index) {
  // Mostly 3x3 (the fast paths) with stride 1 or 2, sometimes 3 and
  // different per axis; the rest anything.
  const bool three_by_three = rng.chance(60);
  const int32_t stride = rng.chance(80) ? rng.range(1, 2) : rng.range(1, 3);
  const Axis y = random_axis(rng, three_by_three, stride);
  const Axis x = random_axis(rng, three_by_three, rng.chance(70) ? stride : rng.range(1, 3));
  DepthwiseS8Shape s{};
  s.batches = rng.chance(20) ? 2 : 1;
  s.in_h = y.in, s.in_w = x.in;
  s.channels = rng.chance(30) ? rng.range(1, 9) : rng.range(1, kMaxDwChannels);
  s.k_h = y.k, s.k_w = x.k, s.out_h = y.out, s.out_w = x.out;
  s.stride_h = y.stride, s.stride_w = x.stride, s.dil_h = y.dil, s.dil_w = x.dil;
  s.pad_top = y.pad, s.pad_left = x.pad;
  const int32_t zero_point = rng.chance(30) ? (rng.chance(50) ? -128 : 127) : rng.range(-128, 127);
  s.input_offset = -zero_point;
  const int extremes = rng.chance(10) ? 90 : 5;
  const int32_t in_size = s.batches * s.in_h * s.in_w * s.channels;
  for (int32_t i = 0; i < in_size; ++i) g_input[i] = rng.s8(extremes);
  for (int32_t i = 0; i < s.k_h * s.k_w * s.channels; ++i) g_filter[i] = rng.s8(extremes);
  const S8Requant rq = random_requant(rng, s.channels, rng.chance(20) ? 30 : 16);

  constexpr int32_t kLead = 16;
  const int32_t out_size = s.batches * s.out_h * s.out_w * s.channels;
  for (int32_t i = 0; i < out_size + 2 * kLead; ++i) g_dw_out[i] = g_dw_expected[i] = kGuard;
  for (int32_t n = 0; n < s.batches; ++n) {
    for (int32_t oy = 0; oy < s.out_h; ++oy) {
      for (int32_t ox = 0; ox < s.out_w; ++ox) {
        for (int32_t c = 0; c < s.channels; ++c) {
          int32_t acc = 0;
          for (int32_t ky = 0; ky < s.k_h; ++ky) {
            const int32_t iy = oy * s.stride_h - s.pad_top + ky * s.dil_h;
            if (iy < 0 || iy >= s.in_h) continue;
            for (int32_t kx = 0; kx < s.k_w; ++kx) {
              const int32_t ix = ox * s.stride_w - s.pad_left + kx * s.dil_w;
              if (ix < 0 || ix >= s.in_w) continue;
              const int32_t v = g_input[((n * s.in_h + iy) * s.in_w + ix) * s.channels + c];
              acc += (v + s.input_offset) * g_filter[(ky * s.k_w + kx) * s.channels + c];
            }
          }
          g_dw_expected[kLead + ((n * s.out_h + oy) * s.out_w + ox) * s.channels + c] =
              model_output(acc, rq, c);
        }
      }
    }
  }
  floe::cortexm::s8_depthwise(s, g_input, g_filter, rq, g_dw_out + kLead);
  for (int32_t i = 0; i < out_size + 2 * kLead; ++i) {
    if (g_dw_out[i] != g_dw_expected[i]) {
      print_number("depthwise case", index);
      print_number("in", s.in_h);
      print_number("x", s.in_w);
      print_number("c", s.channels);
      print_number("k", s.k_h);
      print_number("x", s.k_w);
      print_number("stride", s.stride_h);
      print_number("x", s.stride_w);
      print_number("dil", s.dil_h);
      print_number("x", s.dil_w);
      print_number("pad", s.pad_top);
      print_number("x", s.pad_left);
      print_number("out", s.out_h);
      print_number("x", s.out_w);
      print_number("byte", i - kLead);
      print_number("got", g_dw_out[i]);
      print_number("expected", g_dw_expected[i]);
      print("\n");
      return false;
    }
  }
  return true;
}

}  // namespace

int main() {
  floe::platform::init();
  Random rng{0x2545F491u};
  int gemm_failures = 0, depthwise_failures = 0;
  for (int i = 0; i < kGemmCases; ++i) gemm_failures += gemm_case(rng, i) ? 0 : 1;
  print_number("s8_gemm cases", kGemmCases);
  print_number("failures", gemm_failures);
  print("\n");
  for (int i = 0; i < kDepthwiseCases; ++i) depthwise_failures += depthwise_case(rng, i) ? 0 : 1;
  print_number("s8_depthwise cases", kDepthwiseCases);
  print_number("failures", depthwise_failures);
  print("\n");
  const bool pass = gemm_failures == 0 && depthwise_failures == 0;
  print(pass ? "PASS\n" : "FAIL\n");
  return pass ? 0 : 1;
}
