// SPDX-License-Identifier: Apache-2.0
// run_s16_kernel_diff(): see s16_kernel_diff.h. Each case builds the operands
// the converter writes for the Cortex-M kernel from the reference operands
// (OHWI filter, the reduced Q15 multipliers and right shifts, the bias folded
// into the offsets) and compares outputs.
#include "tests/cortexm/s16_kernel_diff.h"

#include <stddef.h>

#include "runtime/kernels/cortexm/conv2d.h"
#include "runtime/kernels/cortexm/s16_microkernels.h"
#include "runtime/kernels/reference/conv2d.h"
#include "runtime/kernels/reference/depthwise_conv2d.h"
#include "runtime/kernels/reference/matmul.h"
#include "tests/cortexm/diff_support.h"

namespace floe::testing {
namespace {

constexpr size_t kMaxIn = 4096, kMaxFilter = 8192, kMaxOut = 4096, kMaxChannels = 64, kMaxScratch = 4096;
int16_t g_in[kMaxIn], g_scratch[kMaxScratch], g_ref[kMaxOut], g_opt[kMaxOut];
int8_t g_filter[kMaxFilter], g_relaid[kMaxFilter];
int64_t g_bias[kMaxChannels], g_offset[kMaxChannels];
int32_t g_mult[kMaxChannels], g_shift[kMaxChannels], g_q15[kMaxChannels], g_right[kMaxChannels];

using Random = DiffRandom;

// Half the cases take values at the ends of the range only: the products'
// extremes (-32768 * -128 = 2^22) summed over every column.
void fill_s16(Random& rng, int16_t* data, size_t n, bool extremes) {
  for (size_t k = 0; k < n; ++k) {
    data[k] = static_cast<int16_t>(extremes ? (rng.range(0, 1) ? -32768 : 32767) : rng.range(-32768, 32767));
  }
}
void fill_s8(Random& rng, int8_t* data, size_t n, bool extremes) {
  for (size_t k = 0; k < n; ++k) {
    data[k] = static_cast<int8_t>(extremes ? (rng.range(0, 1) ? -128 : 127) : rng.range(-128, 127));
  }
}

struct Clamp {
  int32_t act_min, act_max;
};

// Per-channel Q31 multipliers (a few at the cap 0x7FFF0000 and above, where
// the Q15 one saturates) and shifts in [-31, 7], int64 biases, a clamp; then
// the converter's reduction (converter/lower/backend_cortexm.cc).
Clamp random_quant(Random& rng, int32_t channels) {
  for (int32_t c = 0; c < channels; ++c) {
    const int32_t kind = rng.range(0, 7);
    g_mult[c] = kind == 0 ? static_cast<int32_t>(0x7FFF0000 + rng.range(0, 0xFFFF))
                          : static_cast<int32_t>((uint32_t{1} << 30) + (rng.next() >> 2));
    g_shift[c] = kind == 1 ? rng.range(-31, 7) : rng.range(-24, -8);
    const int64_t wide = int64_t{rng.range(-32768, 32767)} * (int64_t{1} << 24) + rng.range(-(1 << 20), 1 << 20);
    g_bias[c] = kind == 2 ? wide * (int64_t{1} << 22) : wide;  // near 2^62: wrapping arithmetic
    cortexm::s16_channel_requantization(g_bias[c], g_mult[c], g_shift[c], &g_offset[c], &g_q15[c], &g_right[c]);
  }
  const int32_t kind = rng.range(0, 2);
  Clamp q;
  q.act_min = kind == 0 ? -32768 : rng.range(-32768, 0);
  q.act_max = kind == 2 ? rng.range(q.act_min, 32767) : 32767;
  return q;
}

struct Checker {
  S16DiffReport* report;
  S16DiffLog log;
  uint32_t seed;
  void compare(const char* kernel, int case_index, size_t n) {
    if (!same_outputs(g_ref, g_opt, n, seed, kernel, case_index, log)) ++report->failures;
  }
};

cortexm::S16Requant requant(const Clamp& q) { return {g_offset, g_q15, g_right, q.act_min, q.act_max}; }

// long: k beyond one 32-bit partial-sum block (504 columns), up to three blocks.
void gemm_case(Random& rng, Checker& check, int index, bool long_rows = false) {
  const int32_t rows = long_rows ? rng.range(1, 3) : rng.range(1, 9);
  const int32_t channels = long_rows ? rng.range(1, 5) : rng.range(1, 19);
  const int32_t k = long_rows ? rng.range(490, 1360) : rng.range(1, 70);
  const bool extremes = rng.range(0, 1) == 0;
  const Clamp q = random_quant(rng, channels);
  fill_s16(rng, g_in, static_cast<size_t>(rows * k), extremes);
  fill_s8(rng, g_filter, static_cast<size_t>(channels * k), extremes);
  const int32_t a_dims[2] = {rows, k}, w_dims[2] = {channels, k}, o_dims[2] = {rows, channels}, b_dims[1] = {channels};
  const ref::FullyConnectedS8Params params = {0, 0, 0, 0, 0, q.act_min, q.act_max};
  ref::fully_connected_s16(params, {{g_in, {a_dims, 2}}, {g_filter, {w_dims, 2}}, {g_bias, {b_dims, 1}}, g_mult,
                                    g_shift, {g_ref, {o_dims, 2}}});
  cortexm::s16_gemm(g_in, k, rows, g_filter, channels, k, requant(q), g_opt, channels);
  check.compare(long_rows ? "s16_gemm, long rows" : "s16_gemm", index, static_cast<size_t>(rows * channels));
}

void conv_case(Random& rng, Checker& check, int index) {
  cortexm::Conv2DS16Plan p{};
  const bool pointwise = rng.range(0, 3) == 0;
  p.batches = rng.range(1, 2);
  p.in_h = rng.range(1, 9);
  p.in_w = rng.range(1, 9);
  p.in_c = rng.range(1, 9);
  p.out_c = rng.range(1, 13);
  p.k_h = static_cast<int16_t>(pointwise ? 1 : rng.range(1, 4));
  p.k_w = static_cast<int16_t>(pointwise ? 1 : rng.range(1, 4));
  p.stride_h = static_cast<int16_t>(pointwise ? 1 : rng.range(1, 3));
  p.stride_w = static_cast<int16_t>(pointwise ? 1 : rng.range(1, 3));
  p.dil_h = static_cast<int16_t>(pointwise ? 1 : rng.range(1, 2));
  p.dil_w = static_cast<int16_t>(pointwise ? 1 : rng.range(1, 2));
  p.pad_top = static_cast<int16_t>(pointwise ? 0 : rng.range(0, p.k_h - 1));
  p.pad_left = static_cast<int16_t>(pointwise ? 0 : rng.range(0, p.k_w - 1));
  const int32_t span_h = (p.k_h - 1) * p.dil_h + 1, span_w = (p.k_w - 1) * p.dil_w + 1;
  const int32_t pad_h = p.pad_top + (pointwise ? 0 : rng.range(0, p.k_h - 1));
  const int32_t pad_w = p.pad_left + (pointwise ? 0 : rng.range(0, p.k_w - 1));
  if (p.in_h + pad_h < span_h || p.in_w + pad_w < span_w) return conv_case(rng, check, index);
  p.out_h = (p.in_h + pad_h - span_h) / p.stride_h + 1;
  p.out_w = (p.in_w + pad_w - span_w) / p.stride_w + 1;
  p.k_size = p.k_h * p.k_w * p.in_c;
  const int32_t rows_total = p.out_h * p.out_w;
  p.chunk_rows = rng.range(1, rows_total < 7 ? rows_total : 7);
  const bool extremes = rng.range(0, 1) == 0;
  const Clamp q = random_quant(rng, p.out_c);
  p.act_min = static_cast<int16_t>(q.act_min);
  p.act_max = static_cast<int16_t>(q.act_max);
  fill_s16(rng, g_in, static_cast<size_t>(p.batches * p.in_h * p.in_w * p.in_c), extremes);
  fill_s8(rng, g_filter, static_cast<size_t>(p.k_size * p.out_c), extremes);
  const int32_t in_dims[4] = {p.batches, p.in_h, p.in_w, p.in_c};
  const int32_t f_dims[4] = {p.k_h, p.k_w, p.in_c, p.out_c};
  const int32_t o_dims[4] = {p.batches, p.out_h, p.out_w, p.out_c}, b_dims[1] = {p.out_c};
  const ref::Conv2DS8Params params = {p.stride_h, p.stride_w, p.dil_h, p.dil_w, p.pad_top, p.pad_left,
                                      0,          0,          0,       0,       q.act_min, q.act_max};
  ref::conv2d_s16(params, {{g_in, {in_dims, 4}}, {g_filter, {f_dims, 4}}, {g_bias, {b_dims, 1}}, g_mult, g_shift,
                           {g_ref, {o_dims, 4}}});
  for (int32_t t = 0; t < p.k_size; ++t) {  // HWIO -> OHWI, as the converter writes it
    for (int32_t c = 0; c < p.out_c; ++c) g_relaid[c * p.k_size + t] = g_filter[t * p.out_c + c];
  }
  if (pointwise) {
    cortexm::s16_gemm(g_in, p.in_c, p.batches * p.in_h * p.in_w, g_relaid, p.out_c, p.k_size, requant(q), g_opt,
                      p.out_c);
  } else {
    cortexm::conv2d_s16(p, g_in, g_relaid, requant(q), g_scratch, g_opt);
  }
  check.compare(pointwise ? "conv2d 1x1 (s16_gemm)" : "conv2d im2col (s16)", index,
                static_cast<size_t>(p.batches * rows_total * p.out_c));
}

void depthwise_case(Random& rng, Checker& check, int index) {
  cortexm::DepthwiseS16Shape s{};
  s.batches = rng.range(1, 2);
  s.in_h = rng.range(1, 9);
  s.in_w = rng.range(1, 9);
  s.channels = rng.range(1, 21);
  s.k_h = rng.range(1, 5);
  s.k_w = rng.range(1, 5);
  s.stride_h = rng.range(1, 2);
  s.stride_w = rng.range(1, 3);
  s.dil_h = rng.range(1, 2);
  s.dil_w = rng.range(1, 2);
  s.pad_top = rng.range(0, s.k_h - 1);
  s.pad_left = rng.range(0, s.k_w - 1);
  const int32_t span_h = (s.k_h - 1) * s.dil_h + 1, span_w = (s.k_w - 1) * s.dil_w + 1;
  const int32_t pad_h = s.pad_top + rng.range(0, s.k_h - 1), pad_w = s.pad_left + rng.range(0, s.k_w - 1);
  if (s.in_h + pad_h < span_h || s.in_w + pad_w < span_w) return depthwise_case(rng, check, index);
  s.out_h = (s.in_h + pad_h - span_h) / s.stride_h + 1;
  s.out_w = (s.in_w + pad_w - span_w) / s.stride_w + 1;
  const bool extremes = rng.range(0, 1) == 0;
  const Clamp q = random_quant(rng, s.channels);
  fill_s16(rng, g_in, static_cast<size_t>(s.batches * s.in_h * s.in_w * s.channels), extremes);
  fill_s8(rng, g_filter, static_cast<size_t>(s.k_h * s.k_w * s.channels), extremes);
  // At most 25 taps of |w| <= 128: the 32-bit sums' bound always holds here.
  const int32_t in_dims[4] = {s.batches, s.in_h, s.in_w, s.channels};
  const int32_t f_dims[4] = {s.k_h, s.k_w, s.channels, 1};
  const int32_t o_dims[4] = {s.batches, s.out_h, s.out_w, s.channels}, b_dims[1] = {s.channels};
  const ref::DepthwiseConv2DS8Params params = {s.stride_h, s.stride_w, s.dil_h, s.dil_w, s.pad_top, s.pad_left, 1,
                                               0,          0,          0,       0,       q.act_min, q.act_max};
  ref::depthwise_conv2d_s16(params, {{g_in, {in_dims, 4}}, {g_filter, {f_dims, 4}}, {g_bias, {b_dims, 1}}, g_mult,
                                     g_shift, {g_ref, {o_dims, 4}}});
  cortexm::s16_depthwise(s, g_in, g_filter, requant(q), g_opt);
  check.compare("s16_depthwise", index, static_cast<size_t>(s.batches * s.out_h * s.out_w * s.channels));
}

}  // namespace

S16DiffReport run_s16_kernel_diff(uint32_t seed, int cases, S16DiffLog log) {
  S16DiffReport report;
  Random rng{seed};
  Checker check{&report, log, seed};
  for (int i = 0; i < cases; ++i, ++report.gemm_cases) gemm_case(rng, check, i);
  for (int i = 0; i < cases / 10; ++i, ++report.long_gemm_cases) gemm_case(rng, check, i, true);
  for (int i = 0; i < cases; ++i, ++report.conv_cases) conv_case(rng, check, i);
  for (int i = 0; i < cases; ++i, ++report.depthwise_cases) depthwise_case(rng, check, i);
  Text t;
  t.s("int16x8 cortexm kernels vs reference, seed ").i(seed).s(": ").i(report.gemm_cases).s(" gemm, ").i(report.long_gemm_cases)
      .s(" long gemm, ").i(report.conv_cases).s(" conv, ").i(report.depthwise_cases).s(" depthwise cases; ").i(report.failures)
      .s(" not bit-exact");
  log(t.buffer);
  return report;
}

}  // namespace floe::testing
