// SPDX-License-Identifier: Apache-2.0
// Cortex-M int8 AVG_POOL2D with the channels innermost: for each output pixel
// and block of 16 channels, the window's in-image taps are summed in int32
// lanes (Helium: four widening VLDRB.S32 and four VADDs per tap; elsewhere a
// scalar loop over the block), then each sum is divided by the tap count,
// rounded half away from zero and clamped, as the reference does. The sums
// are the reference's exactly (integer addition), so every build is
// bit-exact with it. The reference walks each channel's taps a channel
// stride apart: ~6 instructions per tap, ~40k for KWS's global pool (125
// taps x 64 channels) on the M55.
#include "runtime/kernels/cortexm/pool2d.h"

#include <stddef.h>
#include <stdint.h>

#include "runtime/kernels/common/window.h"
#include "runtime/kernels/common/op_adapter.h"

#if defined(FLOE_CORTEXM_S8_MVE)
#include <arm_mve.h>
#endif

namespace floe::cortexm {
namespace {

constexpr int32_t kBlock = 16;

// The window's taps of channels [0, live) of one block from `first` (the
// top-left in-image tap): rows x cols taps, rows row_step bytes apart,
// columns `channels` bytes apart.
#if defined(FLOE_CORTEXM_S8_MVE)
template <bool kFull>
inline int32x4_t load4(const int8_t* p, mve_pred16_t live) {
  if constexpr (kFull) {
    (void)live;
    return vldrbq_s32(p);
  } else {
    return vldrbq_z_s32(p, live);
  }
}

template <bool kFull>
void sum_window(const int8_t* first, ptrdiff_t rows, ptrdiff_t cols, ptrdiff_t row_step, ptrdiff_t channels,
                int32_t live, int32_t sums[kBlock]) {
  const auto lanes = [live](int32_t from) {
    return vctp32q(static_cast<uint32_t>(live > from ? live - from : 0));
  };
  const mve_pred16_t p0 = lanes(0), p1 = lanes(4), p2 = lanes(8), p3 = lanes(12);
  int32x4_t s0 = vdupq_n_s32(0), s1 = s0, s2 = s0, s3 = s0;
  for (ptrdiff_t y = 0; y < rows; ++y, first += row_step) {
    const int8_t* p = first;
    for (ptrdiff_t x = 0; x < cols; ++x, p += channels) {
      s0 = vaddq_s32(s0, load4<kFull>(p, p0));
      s1 = vaddq_s32(s1, load4<kFull>(p + 4, p1));
      s2 = vaddq_s32(s2, load4<kFull>(p + 8, p2));
      s3 = vaddq_s32(s3, load4<kFull>(p + 12, p3));
    }
  }
  vst1q_s32(sums, s0);
  vst1q_s32(sums + 4, s1);
  vst1q_s32(sums + 8, s2);
  vst1q_s32(sums + 12, s3);
}
#else
template <bool kFull>
void sum_window(const int8_t* first, ptrdiff_t rows, ptrdiff_t cols, ptrdiff_t row_step, ptrdiff_t channels,
                int32_t live, int32_t sums[kBlock]) {
  const int32_t n = kFull ? kBlock : live;
  for (int32_t i = 0; i < n; ++i) sums[i] = 0;
  for (ptrdiff_t y = 0; y < rows; ++y, first += row_step) {
    const int8_t* p = first;
    for (ptrdiff_t x = 0; x < cols; ++x, p += channels) {
      for (int32_t i = 0; i < n; ++i) sums[i] += p[i];
    }
  }
}
#endif

// The reference's average: integer division after adding half the count
// away from zero, then the clamp.
inline int8_t average(int32_t sum, int32_t count, int32_t act_min, int32_t act_max) {
  int32_t v = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
  v = v < act_min ? act_min : (v > act_max ? act_max : v);
  return static_cast<int8_t>(v);
}

}  // namespace

void avg_pool2d_s8(const kernels::Pool2DS8Params& params, const kernels::Pool2DS8Operands& ops) {
  const int32_t* in_dims = ops.input.shape.dims;
  const int32_t* out_dims = ops.output.shape.dims;
  const ptrdiff_t batches = in_dims[0], in_h = in_dims[1], in_w = in_dims[2], channels = in_dims[3];
  const ptrdiff_t out_h = out_dims[1], out_w = out_dims[2];
  const int32_t act_min = params.act_min, act_max = params.act_max;
  int8_t* o = ops.output.data;
  for (ptrdiff_t n = 0; n < batches; ++n) {
    const int8_t* image = ops.input.data + n * in_h * in_w * channels;
    for (ptrdiff_t oy = 0; oy < out_h; ++oy) {
      const ptrdiff_t y0 = oy * params.stride_h - params.pad_top;
      const kernels::TapRange ty = kernels::tap_range(y0, in_h, params.filter_h, 1);
      for (ptrdiff_t ox = 0; ox < out_w; ++ox) {
        const ptrdiff_t x0 = ox * params.stride_w - params.pad_left;
        const kernels::TapRange tx = kernels::tap_range(x0, in_w, params.filter_w, 1);
        const ptrdiff_t rows = ty.end - ty.begin, cols = tx.end - tx.begin;
        const int32_t count = static_cast<int32_t>(rows * cols);  // >= 1 (prepare)
        const int8_t* first = image + ((y0 + ty.begin) * in_w + x0 + tx.begin) * channels;
        for (ptrdiff_t c = 0; c < channels; c += kBlock) {
          const int32_t live = channels - c < kBlock ? static_cast<int32_t>(channels - c) : kBlock;
          int32_t sums[kBlock];
          if (live == kBlock) {
            sum_window<true>(first + c, rows, cols, in_w * channels, channels, live, sums);
          } else {
            sum_window<false>(first + c, rows, cols, in_w * channels, channels, live, sums);
          }
          for (int32_t i = 0; i < live; ++i) o[i] = average(sums[i], count, act_min, act_max);
          o += live;
        }
      }
    }
  }
}

}  // namespace floe::cortexm

// ---- adapter: the op's rules are the reference's (layer_checks.cc).
namespace floe::ops {
namespace {

Status eval_avg_pool2d_s8_cortexm(const PreparedOp& ctx) {
  cortexm::avg_pool2d_s8(ctx.params_as<kernels::Pool2DS8Params>(),
                         {in_as<int8_t>(ctx.input(0)), out_as<int8_t>(ctx.output(0))});
  return Status::kOk;
}

// An empty output has nothing to compute (see the reference's pooling).
Status eval_empty_pool(const PreparedOp&) { return Status::kOk; }

const char* prepare_avg_pool2d_s8_cortexm(const OpContext& ctx) {
  if (const char* err = kernels::check_pool2d_s8(ctx, &ctx.params<kernels::Pool2DS8Params>())) return err;
  if (ctx.output(0).shape.num_elements() == 0) ctx.set_eval(eval_empty_pool);
  return nullptr;
}

}  // namespace
}  // namespace floe::ops

FLOE_KERNEL(CORTEX_M, AVG_POOL2D, INT8, kernels::Pool2DS8Params, ops::prepare_avg_pool2d_s8_cortexm,
            ops::eval_avg_pool2d_s8_cortexm)
