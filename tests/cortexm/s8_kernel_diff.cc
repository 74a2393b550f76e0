// SPDX-License-Identifier: Apache-2.0
// run_s8_kernel_diff(): see s8_kernel_diff.h. Each case builds the operands the
// converter would write for the Cortex-M kernel from the reference operands
// (OHWI filter, bias minus zero_point * sum(weights)) and compares outputs.
#include "tests/cortexm/s8_kernel_diff.h"
#include "tests/cortexm/diff_support.h"

#include <stddef.h>

#include "runtime/kernels/cortexm/conv2d.h"
#include "runtime/kernels/cortexm/pool2d.h"
#include "runtime/kernels/cortexm/s8_microkernels.h"
#include "runtime/kernels/reference/conv2d.h"
#include "runtime/kernels/reference/depthwise_conv2d.h"
#include "runtime/kernels/reference/pool2d.h"
#include "runtime/kernels/reference/matmul.h"
#include "runtime/kernels/common/wrapping.h"
#if defined(FLOE_S8_X86) || defined(FLOE_S8_NEON)
#include "runtime/core/parallel.h"
#endif

namespace floe::testing {
namespace {

constexpr size_t kMaxIn = 4096, kMaxFilter = 8192, kMaxOut = 4096, kMaxChannels = 64, kMaxScratch = 4096;
int8_t g_in[kMaxIn], g_filter[kMaxFilter], g_relaid[kMaxFilter], g_scratch[kMaxScratch];
int8_t g_ref[kMaxOut], g_opt[kMaxOut];
int32_t g_bias[kMaxChannels], g_folded[kMaxChannels], g_mult[kMaxChannels], g_shift[kMaxChannels];
#if defined(FLOE_S8_X86)
int32_t g_unsigned_bias[kMaxChannels];
#endif

using Random = DiffRandom;

// Quantization of one case: zero points at and between the int8 extremes,
// Q31 multipliers in [2^30, 2^31) with shifts from -20 to +4, clamp ranges
// of no activation, RELU and RELU6 kinds.
struct Quant {
  int32_t input_offset, output_offset, act_min, act_max;
};

// short_path: the converter's short-requantization ranges (shifts in
// [-22, -1]; the biases here keep every accumulator far below 2^30).
Quant random_quant(Random& rng, int32_t channels, bool short_path) {
  Quant q;
  const int32_t zp_kind = rng.range(0, 3);
  const int32_t zp = zp_kind == 0 ? -128 : zp_kind == 1 ? 127 : rng.range(-128, 127);
  q.input_offset = -zp;
  q.output_offset = rng.range(-128, 127);
  const int32_t clamp_kind = rng.range(0, 2);
  q.act_min = clamp_kind == 0 ? -128 : rng.range(-128, 0);
  q.act_max = clamp_kind == 2 ? rng.range(q.act_min, 127) : 127;
  for (int32_t c = 0; c < channels; ++c) {
    g_mult[c] = static_cast<int32_t>((uint32_t{1} << 30) + (rng.next() >> 2));
    g_shift[c] = short_path ? rng.range(-22, -1) : rng.range(-20, 4);
    g_bias[c] = rng.range(-40000, 40000);
  }
  return q;
}

// The short path's bias: the converter writes it doubled.
void double_bias(int32_t* bias, int32_t channels) {
  for (int32_t c = 0; c < channels; ++c) bias[c] *= 2;
}

void fill(Random& rng, int8_t* data, size_t n) {
  for (size_t k = 0; k < n; ++k) data[k] = static_cast<int8_t>(rng.range(-128, 127));
}

// The converter's fold for [channels][k] weights (converter/lower/backend_cortexm.cc).
void fold(const int8_t* weights, int32_t channels, int32_t k, int32_t input_offset) {
  for (int32_t c = 0; c < channels; ++c) {
    uint32_t sum = 0;
    for (int32_t i = 0; i < k; ++i) sum += static_cast<uint32_t>(static_cast<int32_t>(weights[c * k + i]));
    g_folded[c] = static_cast<int32_t>(static_cast<uint32_t>(g_bias[c]) + static_cast<uint32_t>(input_offset) * sum);
  }
}

struct Checker {
  S8DiffReport* report;
  S8DiffLog log;
  uint32_t seed;
  void compare(const char* kernel, int case_index, size_t n) {
    if (!same_outputs(g_ref, g_opt, n, seed, kernel, case_index, log)) ++report->failures;
  }
};

// Weights in TFLite's [-127, 127]: the *_NARROW_WEIGHTS kernels' promise.
void narrow(int8_t* data, size_t n) {
  for (size_t k = 0; k < n; ++k) data[k] = data[k] == -128 ? -127 : data[k];
}

#if defined(FLOE_S8_X86)
// The x86-64 targets' unsigned-input bias (converter/lower/backend_cortexm.cc):
// the folded bias less 128 * sum_k w[c][k], wrapping.
void unsigned_bias(const int8_t* weights, int32_t channels, int32_t k) {
  for (int32_t c = 0; c < channels; ++c) {
    uint32_t sum = 0;
    for (int32_t i = 0; i < k; ++i) sum += static_cast<uint32_t>(static_cast<int32_t>(weights[c * k + i]));
    g_unsigned_bias[c] = static_cast<int32_t>(static_cast<uint32_t>(g_folded[c]) - 128u * sum);
  }
}

// The GEMM of g_in (rows a_stride apart) against g_filter with the unsigned-
// input bias: AVX512-VNNI's byte dot products, the same bytes as g_ref.
void unsigned_gemm(const cortexm::S8Requant& rq, int32_t a_stride, int32_t channels, int32_t rows, int32_t k,
                   int index, Checker& check) {
  unsigned_bias(g_filter, channels, k);
  cortexm::S8Requant rq_unsigned = rq;
  rq_unsigned.bias_unsigned = g_unsigned_bias;
  cortexm::s8_gemm(g_in, a_stride, rows, g_filter, channels, k, rq_unsigned, g_opt, channels);
  check.compare("s8_gemm unsigned-input bias (VNNI)", index, static_cast<size_t>(rows * channels));
  ++check.report->unsigned_gemm_cases;
}
#endif

// large: up to 40 rows and 64 channels, enough to split by rows (8 and
// more) or, below 8 rows, by channels (past 16).
void gemm_case(Random& rng, Checker& check, int index, bool short_path, bool narrow_weights = false,
               bool large = false) {
  const int32_t rows = rng.range(1, large ? 40 : 9), channels = rng.range(1, large ? 64 : 19), k = rng.range(1, 70);
  const Quant q = random_quant(rng, channels, short_path);
  fill(rng, g_in, static_cast<size_t>(rows * k));
  fill(rng, g_filter, static_cast<size_t>(channels * k));
  if (narrow_weights) narrow(g_filter, static_cast<size_t>(channels * k));
  const int32_t a_dims[2] = {rows, k}, w_dims[2] = {channels, k}, o_dims[2] = {rows, channels}, b_dims[1] = {channels};
  const ref::FullyConnectedS8Params params = {q.input_offset, 0, q.output_offset, 0, 0, q.act_min, q.act_max};
  ref::fully_connected_s8(params, {{g_in, {a_dims, 2}}, {g_filter, {w_dims, 2}}, {g_bias, {b_dims, 1}}, g_mult,
                                   g_shift, {g_ref, {o_dims, 2}}});
  fold(g_filter, channels, k, q.input_offset);
  if (short_path) double_bias(g_folded, channels);
  const cortexm::S8Requant rq = {g_folded,   g_mult,   g_shift,    q.output_offset,
                                 q.act_min,  q.act_max, short_path, narrow_weights};
  cortexm::s8_gemm(g_in, k, rows, g_filter, channels, k, rq, g_opt, channels);
  check.compare(short_path ? "s8_gemm short requantization" : narrow_weights ? "s8_gemm narrow weights" : "s8_gemm",
                index, static_cast<size_t>(rows * channels));
#if defined(FLOE_S8_X86)
  // s8_gemm takes the VNNI build where the CPU has it: the AVX2 one too.
  if (!short_path && cortexm::s8_x86_avx2_available()) {
    cortexm::s8_gemm_avx2(g_in, k, rows, g_filter, channels, k, rq, g_opt, channels);
    check.compare("s8_gemm_avx2", index, static_cast<size_t>(rows * channels));
  }
  if (!short_path && cortexm::s8_x86_vnni_available()) {
    unsigned_gemm(rq, k, channels, rows, k, index, check);
  }
#endif
}

#if !defined(FLOE_CORTEXM_S8_MVE)
// The short-requantization GEMM's channel-pair paths at their edges: k a
// multiple of 8 beyond the 64 widened columns (72, 128, 136), and k not a
// multiple of 8 in rows laid k rounded up to 8 apart (s8_gemm_row_stride),
// whose extra bytes hold random values the kernel must not count; rows 2-9
// (odd ones included), odd and even channel counts.
int strided_gemm_cases(Random& rng, Checker& check) {
  const int32_t ks[] = {72, 128, 136, 9, 13, 41, 63};
  int index = 0;
  for (int32_t k : ks) {
    for (int32_t rows = 2; rows <= 9; rows += 3) {
      for (int32_t channels = 2; channels <= 7; channels += 5) {
        const int32_t stride = cortexm::s8_gemm_row_stride(k, true);
        const Quant q = random_quant(rng, channels, true);
        fill(rng, g_scratch, static_cast<size_t>(rows * stride));  // the padding bytes too
        for (int32_t r = 0; r < rows; ++r) {
          for (int32_t i = 0; i < k; ++i) g_in[r * k + i] = g_scratch[r * stride + i];
        }
        fill(rng, g_filter, static_cast<size_t>(channels * k));
        const int32_t a_dims[2] = {rows, k}, w_dims[2] = {channels, k}, o_dims[2] = {rows, channels};
        const int32_t b_dims[1] = {channels};
        const ref::FullyConnectedS8Params params = {q.input_offset, 0, q.output_offset, 0, 0, q.act_min, q.act_max};
        ref::fully_connected_s8(params, {{g_in, {a_dims, 2}}, {g_filter, {w_dims, 2}}, {g_bias, {b_dims, 1}}, g_mult,
                                         g_shift, {g_ref, {o_dims, 2}}});
        fold(g_filter, channels, k, q.input_offset);
        double_bias(g_folded, channels);
        const cortexm::S8Requant rq = {g_folded, g_mult, g_shift, q.output_offset, q.act_min, q.act_max, true};
        cortexm::s8_gemm(g_scratch, stride, rows, g_filter, channels, k, rq, g_opt, channels);
        check.compare("s8_gemm short requantization, strided rows", index++, static_cast<size_t>(rows * channels));
      }
    }
  }
  return index;
}

// s8_gemm_packed against the reference FULLY_CONNECTED (the same arithmetic as
// a 1x1 convolution), on the pairs the converter packs from the folded,
// doubled bias.
int32_t g_packed[kMaxChannels / 2 * (cortexm::kPackedGemmMaxK + 8)];

void packed_gemm_case(Random& rng, Checker& check, int index) {
  const int32_t rows = rng.range(1, 9), channels = 2 * rng.range(1, 16);
  const int32_t k = 8 * rng.range(1, cortexm::kPackedGemmMaxK / 8);
  // Half the cases lay the rows wider than k (im2col rows), with random bytes
  // between them that must not count.
  const int32_t stride = k + 8 * rng.range(0, 1);
  const Quant q = random_quant(rng, channels, true);
  fill(rng, g_scratch, static_cast<size_t>(rows * stride));
  for (int32_t r = 0; r < rows; ++r) {
    for (int32_t i = 0; i < k; ++i) g_in[r * k + i] = g_scratch[r * stride + i];
  }
  fill(rng, g_filter, static_cast<size_t>(channels * k));
  const int32_t a_dims[2] = {rows, k}, w_dims[2] = {channels, k}, o_dims[2] = {rows, channels}, b_dims[1] = {channels};
  const ref::FullyConnectedS8Params params = {q.input_offset, 0, q.output_offset, 0, 0, q.act_min, q.act_max};
  ref::fully_connected_s8(params, {{g_in, {a_dims, 2}}, {g_filter, {w_dims, 2}}, {g_bias, {b_dims, 1}}, g_mult,
                                   g_shift, {g_ref, {o_dims, 2}}});
  fold(g_filter, channels, k, q.input_offset);
  double_bias(g_folded, channels);
  for (int32_t c = 0; c < channels; c += 2) {
    cortexm::s8_pack_gemm_pair(g_filter + c * k, g_filter + (c + 1) * k, k, g_folded + c, g_mult + c, g_shift + c,
                               q.output_offset, g_packed + c / 2 * (k + 8));
  }
  cortexm::s8_gemm_packed(g_scratch, stride, rows, g_packed, channels, k, q.act_min, q.act_max, g_opt);
  check.compare("s8_gemm_packed", index, static_cast<size_t>(rows * channels));
}
#endif

void conv_case(Random& rng, Checker& check, int index, bool short_path, bool narrow_weights = false,
               bool whole_scratch = false) {
  cortexm::Conv2DS8Plan p{};
  const int kind = rng.range(0, 7);
  const bool pointwise = kind < 2;
  // Tall windows over few channels, like KWS's first layer (10x4 taps of
  // one channel, stride 2, on 49x10).
  const bool tall = kind == 7;
  p.batches = tall ? 1 : rng.range(1, 2);
  p.in_h = tall ? rng.range(8, 20) : rng.range(1, 9);
  p.in_w = tall ? rng.range(3, 10) : rng.range(1, 9);
  p.in_c = tall ? rng.range(1, 2) : rng.range(1, 9);
  p.out_c = tall ? rng.range(1, 6) : rng.range(1, 13);
  p.k_h = static_cast<int16_t>(pointwise ? 1 : (tall ? rng.range(5, 10) : rng.range(1, 4)));
  p.k_w = static_cast<int16_t>(pointwise ? 1 : rng.range(1, 4));
  p.stride_h = static_cast<int16_t>(pointwise ? 1 : rng.range(1, 3));
  p.stride_w = static_cast<int16_t>(pointwise ? 1 : rng.range(1, 3));
  p.dil_h = static_cast<int16_t>(pointwise ? 1 : rng.range(1, 2));
  p.dil_w = static_cast<int16_t>(pointwise ? 1 : rng.range(1, 2));
  p.pad_top = static_cast<int16_t>(pointwise ? 0 : rng.range(0, p.k_h - 1));
  p.pad_left = static_cast<int16_t>(pointwise ? 0 : rng.range(0, p.k_w - 1));
  // SAME-like or VALID-like extents; at least one output pixel.
  const int32_t span_h = (p.k_h - 1) * p.dil_h + 1, span_w = (p.k_w - 1) * p.dil_w + 1;
  const int32_t pad_h = p.pad_top + rng.range(0, p.k_h - 1), pad_w = p.pad_left + rng.range(0, p.k_w - 1);
  if (p.in_h + pad_h < span_h || p.in_w + pad_w < span_w) {
    return conv_case(rng, check, index, short_path, narrow_weights, whole_scratch);
  }
  p.out_h = (p.in_h + pad_h - span_h) / p.stride_h + 1;
  p.out_w = (p.in_w + pad_w - span_w) / p.stride_w + 1;
  p.k_size = p.k_h * p.k_w * p.in_c;
  p.kernel = static_cast<uint8_t>(pointwise ? schema::CortexMKernel::S8_GEMM : schema::CortexMKernel::S8_IM2COL_GEMM);
  const int32_t rows_total = p.out_h * p.out_w;
  p.chunk_rows = rng.range(1, rows_total < 7 ? rows_total : 7);
  // Split across threads: a scratch of whole images where it fits, as the
  // split needs four rows per thread.
  if (whole_scratch) {
    const int32_t fit = static_cast<int32_t>(kMaxScratch) / p.k_size;
    p.chunk_rows = rows_total < fit ? rows_total : fit;
  }
  const Quant q = random_quant(rng, p.out_c, short_path);
  p.input_zero_point = static_cast<int8_t>(-q.input_offset);
  p.output_offset = static_cast<int8_t>(q.output_offset);
  p.act_min = static_cast<int8_t>(q.act_min);
  p.act_max = static_cast<int8_t>(q.act_max);
  const size_t in_n = static_cast<size_t>(p.batches * p.in_h * p.in_w * p.in_c);
  const size_t f_n = static_cast<size_t>(p.k_size * p.out_c);
  fill(rng, g_in, in_n);
  fill(rng, g_filter, f_n);
  if (narrow_weights) narrow(g_filter, f_n);
  const int32_t in_dims[4] = {p.batches, p.in_h, p.in_w, p.in_c};
  const int32_t f_dims[4] = {p.k_h, p.k_w, p.in_c, p.out_c};
  const int32_t o_dims[4] = {p.batches, p.out_h, p.out_w, p.out_c}, b_dims[1] = {p.out_c};
  const ref::Conv2DS8Params params = {p.stride_h, p.stride_w, p.dil_h,         p.dil_w, p.pad_top, p.pad_left,
                                      q.input_offset, q.output_offset, 0, 0, q.act_min, q.act_max};
  ref::conv2d_s8(params, {{g_in, {in_dims, 4}}, {g_filter, {f_dims, 4}}, {g_bias, {b_dims, 1}}, g_mult, g_shift,
                          {g_ref, {o_dims, 4}}});
  // HWIO -> OHWI, as the converter writes it.
  for (int32_t t = 0; t < p.k_size; ++t) {
    for (int32_t c = 0; c < p.out_c; ++c) g_relaid[c * p.k_size + t] = g_filter[t * p.out_c + c];
  }
  fold(g_relaid, p.out_c, p.k_size, q.input_offset);
  if (short_path) double_bias(g_folded, p.out_c);
  p.short_requant = short_path;
  p.narrow_weights = narrow_weights;
  cortexm::plan_im2col(p);
  if (p.gather_im2col) ++check.report->gather_conv_cases;
  const cortexm::S8Requant rq = {g_folded,   g_mult,   g_shift,    q.output_offset,
                                 q.act_min,  q.act_max, short_path, narrow_weights};
  cortexm::conv2d_s8(p, g_in, g_relaid, rq, g_scratch, g_opt);
  check.compare(pointwise ? (short_path ? "conv2d 1x1 (s8_gemm) short requantization" : "conv2d 1x1 (s8_gemm)")
                          : (short_path ? "conv2d im2col short requantization" : "conv2d im2col"),
                index,
                static_cast<size_t>(p.batches * rows_total * p.out_c));
#if defined(FLOE_S8_X86)
  if (!short_path && cortexm::s8_x86_vnni_available()) {
    unsigned_bias(g_relaid, p.out_c, p.k_size);
    cortexm::S8Requant rq_unsigned = rq;
    rq_unsigned.bias_unsigned = g_unsigned_bias;
    cortexm::conv2d_s8(p, g_in, g_relaid, rq_unsigned, g_scratch, g_opt);
    check.compare("conv2d unsigned-input bias (VNNI)", index, static_cast<size_t>(p.batches * rows_total * p.out_c));
    ++check.report->unsigned_conv_cases;
  }
#endif
}

void depthwise_case(Random& rng, Checker& check, int index, bool short_path) {
  cortexm::DepthwiseS8Shape s{};
  const bool three = rng.range(0, 1) == 0;  // the 3x3 layers of KWS and person_detect
  s.batches = rng.range(1, 2);
  s.in_h = rng.range(1, 9);
  s.in_w = rng.range(1, 9);
  s.channels = rng.range(1, 21);
  s.k_h = three ? 3 : rng.range(1, 5);
  s.k_w = three ? 3 : rng.range(1, 5);
  s.stride_h = rng.range(1, 2);
  s.stride_w = three ? s.stride_h : rng.range(1, 3);
  s.dil_h = three ? 1 : rng.range(1, 2);
  s.dil_w = three ? 1 : rng.range(1, 2);
  s.pad_top = rng.range(0, s.k_h - 1);
  s.pad_left = rng.range(0, s.k_w - 1);
  const int32_t span_h = (s.k_h - 1) * s.dil_h + 1, span_w = (s.k_w - 1) * s.dil_w + 1;
  const int32_t pad_h = s.pad_top + rng.range(0, s.k_h - 1), pad_w = s.pad_left + rng.range(0, s.k_w - 1);
  if (s.in_h + pad_h < span_h || s.in_w + pad_w < span_w) return depthwise_case(rng, check, index, short_path);
  s.out_h = (s.in_h + pad_h - span_h) / s.stride_h + 1;
  s.out_w = (s.in_w + pad_w - span_w) / s.stride_w + 1;
  const Quant q = random_quant(rng, s.channels, short_path);
  s.input_offset = q.input_offset;
  fill(rng, g_in, static_cast<size_t>(s.batches * s.in_h * s.in_w * s.channels));
  fill(rng, g_filter, static_cast<size_t>(s.k_h * s.k_w * s.channels));
  const int32_t in_dims[4] = {s.batches, s.in_h, s.in_w, s.channels};
  const int32_t f_dims[4] = {s.k_h, s.k_w, s.channels, 1};
  const int32_t o_dims[4] = {s.batches, s.out_h, s.out_w, s.channels}, b_dims[1] = {s.channels};
  const ref::DepthwiseConv2DS8Params params = {s.stride_h, s.stride_w, s.dil_h, s.dil_w, s.pad_top, s.pad_left, 1,
                                               q.input_offset, q.output_offset, 0, 0, q.act_min, q.act_max};
  ref::depthwise_conv2d_s8(params, {{g_in, {in_dims, 4}}, {g_filter, {f_dims, 4}}, {g_bias, {b_dims, 1}}, g_mult,
                                    g_shift, {g_ref, {o_dims, 4}}});
  if (short_path) double_bias(g_bias, s.channels);
  const cortexm::S8Requant rq = {g_bias, g_mult, g_shift, q.output_offset, q.act_min, q.act_max, short_path};
  cortexm::s8_depthwise(s, g_in, g_filter, rq, g_opt);
  check.compare(short_path ? "s8_depthwise short requantization" : "s8_depthwise", index, static_cast<size_t>(s.batches * s.out_h * s.out_w * s.channels));
}

// int8 AVG_POOL2D: window, stride and padding with every window keeping an
// in-image tap (the prepare's rule), channel counts around the 16-channel
// block, extreme inputs (sums at the ends of their range), clamps.
void avg_pool_case(Random& rng, Checker& check, int index) {
  ref::Pool2DS8Params params{};
  const int32_t channels = rng.range(1, 33);
  const int32_t batches = channels > 16 ? 1 : rng.range(1, 2);  // within the buffers
  const int32_t in_h = rng.range(1, 8), in_w = rng.range(1, 8);
  const bool global = rng.range(0, 3) == 0;  // KWS's pool: the whole image, one output
  params.filter_h = global ? in_h : rng.range(1, 4);
  params.filter_w = global ? in_w : rng.range(1, 4);
  params.stride_h = rng.range(1, 3);
  params.stride_w = rng.range(1, 3);
  params.pad_top = global ? 0 : rng.range(0, params.filter_h - 1);
  params.pad_left = global ? 0 : rng.range(0, params.filter_w - 1);
  const int32_t pad_h = params.pad_top + (global ? 0 : rng.range(0, params.filter_h - 1));
  const int32_t pad_w = params.pad_left + (global ? 0 : rng.range(0, params.filter_w - 1));
  if (in_h + pad_h < params.filter_h || in_w + pad_w < params.filter_w) return avg_pool_case(rng, check, index);
  int32_t out_h = (in_h + pad_h - params.filter_h) / params.stride_h + 1;
  int32_t out_w = (in_w + pad_w - params.filter_w) / params.stride_w + 1;
  // No window entirely in the padding.
  while ((out_h - 1) * params.stride_h - params.pad_top >= in_h) --out_h;
  while ((out_w - 1) * params.stride_w - params.pad_left >= in_w) --out_w;
  const int kinds = rng.range(0, 2);
  params.act_min = kinds == 0 ? -128 : rng.range(-128, 0);
  params.act_max = kinds == 0 ? 127 : rng.range(params.act_min, 127);
  const size_t in_n = static_cast<size_t>(batches * in_h * in_w * channels);
  const int extreme = rng.range(0, 2);  // all -128, all 127, or random
  for (size_t i = 0; i < in_n; ++i) {
    g_in[i] = extreme == 0 ? int8_t{-128} : extreme == 1 ? int8_t{127} : static_cast<int8_t>(rng.range(-128, 127));
  }
  const int32_t in_dims[4] = {batches, in_h, in_w, channels};
  const int32_t o_dims[4] = {batches, out_h, out_w, channels};
  ref::avg_pool2d_s8(params, {{g_in, {in_dims, 4}}, {g_ref, {o_dims, 4}}});
  cortexm::avg_pool2d_s8(params, {{g_in, {in_dims, 4}}, {g_opt, {o_dims, 4}}});
  check.compare("avg_pool2d", index, static_cast<size_t>(batches * out_h * out_w * channels));
}

// The requantization at the int32 extremes and every shift the kernels accept
// ([-31, 30]): one-element GEMMs whose bias sets the accumulator.
void requantization_edges(Random& rng, Checker& check) {
  const int32_t accs[] = {INT32_MIN, INT32_MIN + 1, -(1 << 30) - 1, -(1 << 30), -12345, -1, 0, 1, 2, 3,
                          (1 << 30) - 1, 1 << 30, INT32_MAX - 1, INT32_MAX};
  const int32_t mults[] = {0, 1 << 30, INT32_MAX, 1518500250};
  int index = 0;
  for (int32_t shift = -31; shift <= 30; ++shift) {
    for (int32_t acc : accs) {
      for (int32_t mult : mults) {
        const int8_t one = 1, zero = 0;
        const int32_t bias = acc, m = mult, sh = shift;
        const int32_t offset = rng.range(-128, 127);
        const cortexm::S8Requant rq = {&bias, &m, &sh, offset, -128, 127};
        cortexm::s8_gemm(&zero, 1, 1, &one, 1, 1, rq, g_opt, 1);
        const int32_t v = ref::wrapping_add(ref::multiply_by_quantized_multiplier(acc, mult, shift), offset);
        g_ref[0] = static_cast<int8_t>(v < -128 ? -128 : (v > 127 ? 127 : v));
        check.compare("requantization edge", index++, 1);
      }
    }
  }
}

#if !defined(FLOE_CORTEXM_S8_MVE)
// The short requantization against the reference's double rounding for every
// shift it takes ([-22, -1]) and multipliers at both ends of [2^30, 2^31):
// every accumulator in [-1024, 1024], the ends of its range (|x| < 2^30), and
// for m = 2^30 (where y = (x + 1) >> 1) the rounding ties y = (j + 1/2) 2^e
// and their neighbours. One-element GEMMs whose doubled bias carries x.
int short_requantization_edges(Random& rng, Checker& check) {
  const int32_t mults[] = {1 << 30, INT32_MAX, 1518500250, static_cast<int32_t>((1u << 30) + (rng.next() >> 2))};
  int checks = 0;
  auto one = [&](int32_t x, int32_t m, int32_t shift, int32_t offset) {
    const int8_t input = 0, weight = 1;
    const int32_t bias2 = x * 2;
    const cortexm::S8Requant rq = {&bias2, &m, &shift, offset, -128, 127, true};
    cortexm::s8_gemm(&input, 1, 1, &weight, 1, 1, rq, g_opt, 1);
    const int32_t v = ref::multiply_by_quantized_multiplier(x, m, shift) + offset;
    g_ref[0] = static_cast<int8_t>(v < -128 ? -128 : (v > 127 ? 127 : v));
    check.compare("short requantization edge", checks++, 1);
  };
  const int32_t limit = (1 << 30) - 1;
  for (int32_t e = 1; e <= 22; ++e) {
    for (int32_t m : mults) {
      const int32_t offset = rng.range(-128, 127);
      for (int32_t x = -1024; x <= 1024; ++x) one(x, m, -e, offset);
      for (int32_t d = 0; d < 64; ++d) {
        one(limit - d, m, -e, offset);
        one(-limit + d, m, -e, offset);
      }
      if (m == (1 << 30)) {
        for (int32_t j = -40; j <= 40; ++j) {
          const int64_t tie = 2 * (int64_t{j} * (int64_t{1} << e) + (int64_t{1} << (e - 1)));
          for (int32_t d = -2; d <= 1; ++d) {
            const int64_t x = tie + d;
            if (x > -limit && x < limit) one(static_cast<int32_t>(x), m, -e, offset);
          }
        }
      }
    }
  }
  return checks;
}
#endif

}  // namespace

#if defined(FLOE_S8_X86) || defined(FLOE_S8_NEON)
// A pool that runs an op's tasks on the caller's thread in reverse order: a
// split's bands must cover the work exactly once whichever order they run in
// (the interpreter's runs with a real pool: tests/xnnpack/int8_exact_test.cc).
void run_reversed(void*, ParallelTask task, void* context, size_t count) {
  for (size_t i = count; i-- > 0;) task(context, i);
}

// Each kernel's cases again, split across 2, 3 and 4 threads.
void split_cases(Random& rng, Checker& check, int cases) {
  for (int i = 0; i < cases; ++i) {
    OpThreads pool;
    pool.run = run_reversed;
    pool.threads = static_cast<size_t>(2 + i % 3);
    const OpThreadsScope scope(pool);
    gemm_case(rng, check, i, false, false, /*large=*/true);
    conv_case(rng, check, i, false, false, /*whole_scratch=*/true);
    depthwise_case(rng, check, i, false);
    ++check.report->split_cases;
  }
}
#endif

S8DiffReport run_s8_kernel_diff(uint32_t seed, int cases, S8DiffLog log) {
  S8DiffReport report;
  Random rng{seed};
  Checker check{&report, log, seed};
  requantization_edges(rng, check);
  for (int i = 0; i < cases; ++i, ++report.gemm_cases) gemm_case(rng, check, i, false);
  for (int i = 0; i < cases; ++i, ++report.conv_cases) conv_case(rng, check, i, false);
  for (int i = 0; i < cases; ++i, ++report.narrow_gemm_cases) gemm_case(rng, check, i, false, true);
  for (int i = 0; i < cases; ++i, ++report.narrow_conv_cases) conv_case(rng, check, i, false, true);
  for (int i = 0; i < cases; ++i, ++report.depthwise_cases) depthwise_case(rng, check, i, false);
#if defined(FLOE_S8_X86) || defined(FLOE_S8_NEON)
  split_cases(rng, check, cases);
#endif
  for (int i = 0; i < cases; ++i, ++report.avg_pool_cases) avg_pool_case(rng, check, i);
#if !defined(FLOE_CORTEXM_S8_MVE)
  report.short_edge_checks = short_requantization_edges(rng, check);
  for (int i = 0; i < cases; ++i, ++report.short_gemm_cases) gemm_case(rng, check, i, true);
  report.short_strided_gemm_cases = strided_gemm_cases(rng, check);
  for (int i = 0; i < cases; ++i, ++report.packed_gemm_cases) packed_gemm_case(rng, check, i);
  for (int i = 0; i < cases; ++i, ++report.short_conv_cases) conv_case(rng, check, i, true);
  for (int i = 0; i < cases; ++i, ++report.short_depthwise_cases) depthwise_case(rng, check, i, true);
#endif
  Text t;
  t.s("int8 cortexm kernels vs reference, seed ").i(seed).s(": ").i(report.gemm_cases).s(" gemm, ")
      .i(report.conv_cases).s(" conv, ").i(report.depthwise_cases).s(" depthwise, ").i(report.avg_pool_cases)
      .s(" avg pool cases; short requantization ")
      .i(report.short_edge_checks).s(" edges, ")
      .i(report.short_gemm_cases + report.short_conv_cases + report.short_depthwise_cases +
         report.short_strided_gemm_cases + report.packed_gemm_cases)
      .s(" cases; ").i(report.gather_conv_cases).s(" conv on gather im2col; ").i(report.split_cases)
      .s(" split across threads; ").i(report.unsigned_gemm_cases + report.unsigned_conv_cases)
      .s(" on unsigned-input bias; ").i(report.failures).s(" not bit-exact");
  log(t.buffer);
  return report;
}

}  // namespace floe::testing
