// SPDX-License-Identifier: Apache-2.0
#include "runtime/kernels/reference/audio_spectrogram.h"

#include <math.h>

#include "runtime/core/op_adapter.h"

namespace floe::ref {

void audio_spectrogram_f32(const AudioSpectrogramParams& p, const AudioSpectrogramOperands& ops, FftPass pass) {
  const int32_t channels = ops.output.shape.dims[0];
  const int32_t frames = ops.output.shape.dims[1];
  const int32_t bins = ops.output.shape.dims[2];
  float* out = ops.output.data;
  for (int32_t c = 0; c < channels; ++c) {
    for (int32_t f = 0; f < frames; ++f, out += bins) {
      // Windowed sample pairs (x[2j], x[2j+1]) go straight to their bit-reversed
      // slot; samples past the window are the FFT's zero padding.
      const float* x = ops.samples.data + static_cast<ptrdiff_t>(f) * p.stride * channels + c;
      const float* w = ops.window;
      const int32_t* reverse = ops.fft.bit_reverse;
      const int32_t pairs = p.fft_length / 2, full = p.window_size / 2;
      int32_t j = 0;
      for (; j < full; ++j, x += 2 * channels, w += 2) {
        float* slot = ops.scratch + 2 * reverse[j];
        slot[0] = x[0] * w[0];
        slot[1] = x[channels] * w[1];
      }
      if (p.window_size & 1) {  // the last sample pairs with the first zero
        float* slot = ops.scratch + 2 * reverse[j++];
        slot[0] = x[0] * w[0];
        slot[1] = 0.0f;
      }
      for (; j < pairs; ++j) {
        float* slot = ops.scratch + 2 * reverse[j];
        slot[0] = 0.0f;
        slot[1] = 0.0f;
      }
      real_fft_power(ops.fft, ops.scratch, out, pass);
      if (!p.magnitude_squared) {
        for (int32_t k = 0; k < bins; ++k) out[k] = sqrtf(out[k]);
      }
    }
  }
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/dispatch.h).
namespace floe::ops {

namespace {

bool is_vector(const TensorView& v, DType dtype, int32_t length) {
  return v.dtype == dtype && v.shape.rank == 1 && v.shape.dims[0] == length;
}

// CORTEX_M ops: the same kernel with the Cortex-M radix-4 pass.
Status eval_audio_spectrogram_cortexm(const PreparedOp& ctx) {
  ref::audio_spectrogram_f32(ctx.params_as<ref::AudioSpectrogramParams>(), audio_spectrogram_operands(ctx),
                             ref::FftPass::kCortexM);
  return Status::kOk;
}

}  // namespace

const char* prepare_audio_spectrogram(const OpContext& ctx) {
  if (!has_io(ctx, 4, 2)) return FLOE_MSG("audio spectrogram takes samples, window, twiddles, bit reversal");
  const auto* o = ctx.op->options_as_AudioSpectrogramOptions();
  if (o == nullptr) return FLOE_MSG("audio spectrogram needs AudioSpectrogramOptions");
  const int32_t window = o->window_size(), stride = o->stride(), n = o->fft_length();
  if (window < 2 || stride < 1) return FLOE_MSG("window size must be > 1 and stride > 0");
  if (n < window || n > (1 << 24) || (n & (n - 1)) != 0) {
    return FLOE_MSG("fft_length must be a power of two >= window size");
  }
  const TensorView samples = ctx.input(0), out = ctx.output(0);
  if (!is_f32(samples) || samples.shape.rank != 2) return FLOE_MSG("samples must be float32 [length, channels]");
  if (!is_vector(ctx.input(1), DType::kFloat32, window)) return FLOE_MSG("window must be float32 [window_size]");
  if (!is_vector(ctx.input(2), DType::kFloat32, static_cast<int32_t>(ref::real_fft_twiddle_floats(n)))) {
    return FLOE_MSG("twiddles must be float32 [real_fft_twiddle_floats(fft_length)]");
  }
  const TensorView reverse = ctx.input(3);
  if (!is_vector(reverse, DType::kInt32, n / 2)) return FLOE_MSG("bit reversal must be int32 [fft_length/2]");
  const int32_t* r = static_cast<const int32_t*>(reverse.data);
  for (int32_t j = 0; j < n / 2; ++j) {
    if (r[j] < 0 || r[j] >= n / 2) return FLOE_MSG("bit reversal index out of range");
  }
  const int32_t length = samples.shape.dims[0], channels = samples.shape.dims[1];
  const int32_t frames = length < window ? 0 : 1 + (length - window) / stride;
  if (!is_f32(out) || out.shape.rank != 3 || out.shape.dims[0] != channels || out.shape.dims[1] != frames ||
      out.shape.dims[2] != n / 2 + 1) {
    return FLOE_MSG("spectrogram must be float32 [channels, frames, fft_length/2 + 1]");
  }
  if (!is_vector(ctx.output(1), DType::kFloat32, n)) return FLOE_MSG("scratch must be float32 [fft_length]");
  ref::AudioSpectrogramParams& p = ctx.params<ref::AudioSpectrogramParams>();
  p.window_size = window;
  p.stride = stride;
  p.fft_length = n;
  p.magnitude_squared = o->magnitude_squared() ? 1 : 0;
  if (ctx.op->backend() == schema::Backend::CORTEX_M) ctx.set_eval(eval_audio_spectrogram_cortexm);
  return nullptr;
}

ref::AudioSpectrogramOperands audio_spectrogram_operands(const PreparedOp& ctx) {
  const auto& p = ctx.params_as<ref::AudioSpectrogramParams>();
  return {in_as<float>(ctx.input(0)), static_cast<const float*>(ctx.input(1).data),
          {static_cast<const float*>(ctx.input(2).data), static_cast<const int32_t*>(ctx.input(3).data), p.fft_length},
          static_cast<float*>(ctx.output(1).data), out_as<float>(ctx.output(0))};
}

Status eval_audio_spectrogram(const PreparedOp& ctx) {
  ref::audio_spectrogram_f32(ctx.params_as<ref::AudioSpectrogramParams>(), audio_spectrogram_operands(ctx));
  return Status::kOk;
}

}  // namespace floe::ops
