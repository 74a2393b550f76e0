// SPDX-License-Identifier: Apache-2.0
// run_cortexm_kernel_diff(): see kernel_diff.h. For every case the reference
// kernel runs twice: on the data, and on |data| without activation, which gives
// the sum of |products| each output's rounding error is bounded by.
#include "tests/cortexm/kernel_diff.h"
#include "tests/cortexm/diff_text.h"

#include <stddef.h>
#include <string.h>

#include "runtime/kernels/cortexm/conv2d.h"
#include "runtime/kernels/cortexm/depthwise_conv2d.h"
#include "runtime/kernels/cortexm/isa.h"
#include "runtime/kernels/cortexm/matmul.h"
#include "runtime/kernels/reference/conv2d.h"
#include "runtime/kernels/reference/depthwise_conv2d.h"
#include "runtime/kernels/reference/matmul.h"

namespace floe::testing {
namespace {

constexpr size_t kMaxIn = 2048, kMaxFilter = 4096, kMaxOut = 4096, kMaxBias = 64;
float g_in[kMaxIn], g_filter[kMaxFilter], g_bias[kMaxBias];
float g_abs_in[kMaxIn], g_abs_filter[kMaxFilter], g_abs_bias[kMaxBias];
float g_ref[kMaxOut], g_opt[kMaxOut], g_mag[kMaxOut];

// A small deterministic generator (LCG, numerical recipes constants).
struct Random {
  uint32_t state;
  uint32_t next() { return state = state * 1664525u + 1013904223u; }
  int range(int lo, int hi) { return lo + static_cast<int>((next() >> 8) % static_cast<uint32_t>(hi - lo + 1)); }
  float uniform() { return static_cast<float>(next() >> 8) * (2.0f / 16777216.0f) - 1.0f; }
  template <typename T, size_t N>
  T pick(const T (&options)[N]) { return options[(next() >> 8) % N]; }
};

void fill(Random& rng, size_t n, float* data, float* abs_data) {
  for (size_t k = 0; k < n; ++k) {
    data[k] = rng.uniform();
    abs_data[k] = data[k] < 0.0f ? -data[k] : data[k];
  }
}

Activation activation_for(int k) {
  constexpr Activation kAll[] = {Activation::kNone, Activation::kRelu, Activation::kRelu6};
  return kAll[k % 3];
}

struct Checker {
  DiffReport* report;
  DiffLog log;
  uint32_t seed;

  // Compares g_opt with g_ref over n outputs of a sum of `terms` products.
  void compare(const Text& what, size_t n, int terms) {
    ++report->cases;
    for (size_t k = 0; k < n; ++k) {
      bool ok;
      float bound = 0.0f;
      if (report->exact) {
        ok = memcmp(&g_opt[k], &g_ref[k], sizeof(float)) == 0;
      } else {
        bound = static_cast<float>(terms + 2) * (1.0f / 8388608.0f) * g_mag[k] + 1e-30f;
        const float diff = g_opt[k] > g_ref[k] ? g_opt[k] - g_ref[k] : g_ref[k] - g_opt[k];
        ok = diff <= bound;
      }
      if (!ok) {
        ++report->failures;
        Text t;
        t.s("MISMATCH seed ").i(seed).s(" ").s(what.buffer).s(" out[").i(static_cast<int64_t>(k))
            .s("] opt ").bits(g_opt[k]).s(" ref ").bits(g_ref[k]).s(" bound ").bits(bound);
        log(t.buffer);
        return;  // one line per case
      }
    }
  }
};

void matmul_cases(Random& rng, Checker& check) {
  constexpr int kN[] = {1, 3, 4, 7, 8, 9, 15, 16, 17, 33, 37};
  constexpr int kK[] = {1, 5, 16, 70};
  int variant = 0;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      for (int n : kN) {
        for (int k : kK) {
          const int m = 1 + (variant % 3);
          const bool with_bias = variant % 2 == 0;
          ref::MatMulParams p;
          p.transpose_a = ta != 0;
          p.transpose_b = tb != 0;
          p.activation = activation_for(variant / 2);
          ++variant;
          const int32_t a_dims[2] = {ta ? k : m, ta ? m : k};
          const int32_t b_dims[2] = {tb ? n : k, tb ? k : n};
          const int32_t o_dims[2] = {m, n};
          const int32_t bias_dims[1] = {n};
          fill(rng, static_cast<size_t>(m * k), g_in, g_abs_in);
          fill(rng, static_cast<size_t>(k * n), g_filter, g_abs_filter);
          fill(rng, static_cast<size_t>(n), g_bias, g_abs_bias);
          ref::MatMulOperands ops{{g_in, {a_dims, 2}}, {g_filter, {b_dims, 2}},
                                  {with_bias ? g_bias : nullptr, {bias_dims, 1}}, {g_ref, {o_dims, 2}}};
          ref::matmul_f32(p, ops);
          ops.output.data = g_opt;
          cortexm::matmul_f32(p, ops);
          ref::MatMulParams abs_p = p;
          abs_p.activation = Activation::kNone;
          ref::MatMulOperands abs_ops{{g_abs_in, {a_dims, 2}}, {g_abs_filter, {b_dims, 2}},
                                      {with_bias ? g_abs_bias : nullptr, {bias_dims, 1}}, {g_mag, {o_dims, 2}}};
          ref::matmul_f32(abs_p, abs_ops);
          Text what;
          what.s("matmul m=").i(m).s(" k=").i(k).s(" n=").i(n).s(ta ? " ta" : "").s(tb ? " tb" : "")
              .s(with_bias ? " bias" : "").s(" act=").i(static_cast<int>(p.activation));
          check.compare(what, static_cast<size_t>(m * n), k);
        }
      }
    }
  }
}

// Random NHWC window geometry with an output of at least 1x1; false if the
// buffers cannot hold it (the caller draws again).
struct Geometry {
  int32_t in[4], filter[4], out[4];
  int32_t stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
};

bool draw_window(Random& rng, int channels_in, int filter_c2, int out_c, Geometry* g) {
  const int batches = rng.range(1, 2);
  const int in_h = rng.range(1, 9), in_w = rng.range(1, 9);
  const int k_h = rng.range(1, 3), k_w = rng.range(1, 3);
  g->stride_h = rng.range(1, 2);
  g->stride_w = rng.range(1, 2);
  g->dil_h = rng.range(1, 2);
  g->dil_w = rng.range(1, 2);
  const int span_h = g->dil_h * (k_h - 1) + 1, span_w = g->dil_w * (k_w - 1) + 1;
  // Padding before in [0, span-1], after in [0, span-1]: VALID, SAME and lopsided.
  g->pad_top = rng.range(0, span_h - 1);
  g->pad_left = rng.range(0, span_w - 1);
  const int pad_h = g->pad_top + rng.range(0, span_h - 1), pad_w = g->pad_left + rng.range(0, span_w - 1);
  const int out_h = (in_h + pad_h - span_h) / g->stride_h + 1;
  const int out_w = (in_w + pad_w - span_w) / g->stride_w + 1;
  if (in_h + pad_h < span_h || in_w + pad_w < span_w || out_h < 1 || out_w < 1) return false;
  const int32_t in[4] = {batches, in_h, in_w, channels_in};
  const int32_t filter[4] = {k_h, k_w, channels_in, filter_c2};
  const int32_t out[4] = {batches, out_h, out_w, out_c};
  memcpy(g->in, in, sizeof in);
  memcpy(g->filter, filter, sizeof filter);
  memcpy(g->out, out, sizeof out);
  return static_cast<size_t>(batches * in_h * in_w * channels_in) <= kMaxIn &&
         static_cast<size_t>(k_h * k_w * channels_in * filter_c2) <= kMaxFilter &&
         static_cast<size_t>(batches * out_h * out_w * out_c) <= kMaxOut &&
         static_cast<size_t>(out_c) <= kMaxBias;
}

Text describe(const char* op, const Geometry& g, int variant) {
  Text t;
  t.s(op).s(" in=").i(g.in[0]).s("x").i(g.in[1]).s("x").i(g.in[2]).s("x").i(g.in[3]).s(" k=").i(g.filter[0])
      .s("x").i(g.filter[1]).s(" c2=").i(g.filter[3]).s(" s=").i(g.stride_h).s(",").i(g.stride_w).s(" d=")
      .i(g.dil_h).s(",").i(g.dil_w).s(" pad=").i(g.pad_top).s(",").i(g.pad_left).s(" v=").i(variant);
  return t;
}

void conv2d_cases(Random& rng, Checker& check) {
  constexpr int kOutC[] = {1, 2, 3, 4, 5, 8, 9, 16, 17, 20, 33};
  for (int variant = 0; variant < 80; ++variant) {
    Geometry g;
    const int in_c = rng.range(1, 5), out_c = rng.pick(kOutC);
    if (!draw_window(rng, in_c, out_c, out_c, &g)) {
      --variant;
      continue;
    }
    ref::Conv2DParams p;
    p.stride_h = g.stride_h;
    p.stride_w = g.stride_w;
    p.dilation_h = g.dil_h;
    p.dilation_w = g.dil_w;
    p.pad_top = g.pad_top;
    p.pad_left = g.pad_left;
    p.activation = activation_for(variant);
    const bool with_bias = variant % 2 == 1;
    const int32_t bias_dims[1] = {out_c};
    const size_t n_in = static_cast<size_t>(g.in[0] * g.in[1] * g.in[2] * g.in[3]);
    const size_t n_f = static_cast<size_t>(g.filter[0] * g.filter[1] * g.filter[2] * g.filter[3]);
    const size_t n_out = static_cast<size_t>(g.out[0] * g.out[1] * g.out[2] * g.out[3]);
    fill(rng, n_in, g_in, g_abs_in);
    fill(rng, n_f, g_filter, g_abs_filter);
    fill(rng, static_cast<size_t>(out_c), g_bias, g_abs_bias);
    ref::Conv2DOperands ops{{g_in, {g.in, 4}}, {g_filter, {g.filter, 4}},
                            {with_bias ? g_bias : nullptr, {bias_dims, 1}}, {g_ref, {g.out, 4}}};
    ref::conv2d_f32(p, ops);
    ops.output.data = g_opt;
    cortexm::conv2d_f32(p, ops);
    ref::Conv2DParams abs_p = p;
    abs_p.activation = Activation::kNone;
    ref::Conv2DOperands abs_ops{{g_abs_in, {g.in, 4}}, {g_abs_filter, {g.filter, 4}},
                                {with_bias ? g_abs_bias : nullptr, {bias_dims, 1}}, {g_mag, {g.out, 4}}};
    ref::conv2d_f32(abs_p, abs_ops);
    check.compare(describe("conv2d", g, variant), n_out, g.filter[0] * g.filter[1] * in_c);
  }
}

void depthwise_cases(Random& rng, Checker& check) {
  constexpr int kChannels[] = {1, 3, 4, 7, 8, 15, 16, 17, 33, 37};
  for (int variant = 0; variant < 80; ++variant) {
    Geometry g;
    const int channels = rng.pick(kChannels);
    const int mult = 1;  // the kernel's contract (its row refuses other multipliers)
    if (!draw_window(rng, channels, mult, channels * mult, &g)) {
      --variant;
      continue;
    }
    ref::DepthwiseConv2DParams p;
    p.stride_h = g.stride_h;
    p.stride_w = g.stride_w;
    p.dilation_h = g.dil_h;
    p.dilation_w = g.dil_w;
    p.pad_top = g.pad_top;
    p.pad_left = g.pad_left;
    p.depth_multiplier = mult;
    p.activation = activation_for(variant);
    const bool with_bias = variant % 2 == 0;
    const int32_t bias_dims[1] = {channels * mult};
    const size_t n_in = static_cast<size_t>(g.in[0] * g.in[1] * g.in[2] * g.in[3]);
    const size_t n_f = static_cast<size_t>(g.filter[0] * g.filter[1] * g.filter[2] * g.filter[3]);
    const size_t n_out = static_cast<size_t>(g.out[0] * g.out[1] * g.out[2] * g.out[3]);
    fill(rng, n_in, g_in, g_abs_in);
    fill(rng, n_f, g_filter, g_abs_filter);
    fill(rng, static_cast<size_t>(channels * mult), g_bias, g_abs_bias);
    ref::DepthwiseConv2DOperands ops{{g_in, {g.in, 4}}, {g_filter, {g.filter, 4}},
                                     {with_bias ? g_bias : nullptr, {bias_dims, 1}}, {g_ref, {g.out, 4}}};
    ref::depthwise_conv2d_f32(p, ops);
    ops.output.data = g_opt;
    cortexm::depthwise_conv2d_f32(p, ops);
    ref::DepthwiseConv2DParams abs_p = p;
    abs_p.activation = Activation::kNone;
    ref::DepthwiseConv2DOperands abs_ops{{g_abs_in, {g.in, 4}}, {g_abs_filter, {g.filter, 4}},
                                         {with_bias ? g_abs_bias : nullptr, {bias_dims, 1}},
                                         {g_mag, {g.out, 4}}};
    ref::depthwise_conv2d_f32(abs_p, abs_ops);
    check.compare(describe("depthwise", g, variant), n_out, g.filter[0] * g.filter[1]);
  }
}

}  // namespace

DiffReport run_cortexm_kernel_diff(uint32_t seed, DiffLog log) {
  DiffReport report;
  report.exact = cortexm::kIsaName[0] == 'p';  // "portable"
  Random rng{seed};
  Checker check{&report, log, seed};
  matmul_cases(rng, check);
  conv2d_cases(rng, check);
  depthwise_cases(rng, check);
  Text t;
  t.s("cortexm kernels (").s(cortexm::kIsaName).s(") vs reference, seed ").i(seed).s(": ").i(report.cases)
      .s(" cases, ").i(report.failures).s(report.exact ? " not bit-exact" : " outside the bound");
  log(t.buffer);
  return report;
}

}  // namespace floe::testing
