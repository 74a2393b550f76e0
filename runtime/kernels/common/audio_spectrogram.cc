// SPDX-License-Identifier: Apache-2.0
// AUDIO_SPECTROGRAM's checks, shared by every backend's row (audio_spectrogram.h).
#include "runtime/kernels/common/audio_spectrogram.h"

#include "runtime/kernels/common/op_adapter.h"

namespace floe::kernels {
namespace {

bool is_vector(const TensorView& v, DType dtype, int32_t length) {
  return v.dtype == dtype && v.shape.rank == 1 && v.shape.dims[0] == length;
}

}  // namespace

const char* prepare_audio_spectrogram_params(const OpContext& ctx) {
  if (!ops::has_io(ctx, 4, 2)) return FLOE_MSG("audio spectrogram takes samples, window, twiddles, bit reversal");
  const auto* o = ctx.op->options_as_AudioSpectrogramOptions();
  if (o == nullptr) return FLOE_MSG("audio spectrogram needs AudioSpectrogramOptions");
  const int32_t window = o->window_size(), stride = o->stride(), n = o->fft_length();
  if (window < 2 || stride < 1) return FLOE_MSG("window size must be > 1 and stride > 0");
  if (n < window || n > (1 << 24) || (n & (n - 1)) != 0) {
    return FLOE_MSG("fft_length must be a power of two >= window size");
  }
  const TensorView& samples = ctx.input(0);
  const TensorView& out = ctx.output(0);
  if (!ops::is_f32(samples) || samples.shape.rank != 2) return FLOE_MSG("samples must be float32 [length, channels]");
  if (!is_vector(ctx.input(1), DType::kFloat32, window)) return FLOE_MSG("window must be float32 [window_size]");
  if (!is_vector(ctx.input(2), DType::kFloat32, static_cast<int32_t>(real_fft_twiddle_floats(n)))) {
    return FLOE_MSG("twiddles must be float32 [real_fft_twiddle_floats(fft_length)]");
  }
  const TensorView& reverse = ctx.input(3);
  if (!is_vector(reverse, DType::kInt32, n / 2)) return FLOE_MSG("bit reversal must be int32 [fft_length/2]");
  // Its indices are checked here once and trusted by every Invoke(): a
  // constant of the model, not a tensor an op could change.
  if (!ctx.input_is_constant(3)) return FLOE_MSG("bit reversal must be a constant");
  const int32_t* r = static_cast<const int32_t*>(reverse.data);
  for (int32_t j = 0; j < n / 2; ++j) {
    if (r[j] < 0 || r[j] >= n / 2) return FLOE_MSG("bit reversal index out of range");
  }
  const int32_t length = samples.shape.dims[0], channels = samples.shape.dims[1];
  const int32_t frames = length < window ? 0 : 1 + (length - window) / stride;
  if (!ops::is_f32(out) || out.shape.rank != 3 || out.shape.dims[0] != channels || out.shape.dims[1] != frames ||
      out.shape.dims[2] != n / 2 + 1) {
    return FLOE_MSG("spectrogram must be float32 [channels, frames, fft_length/2 + 1]");
  }
  if (!is_vector(ctx.output(1), DType::kFloat32, n)) return FLOE_MSG("scratch must be float32 [fft_length]");
  AudioSpectrogramParams& p = ctx.params<AudioSpectrogramParams>();
  p.window_size = window;
  p.stride = stride;
  p.fft_length = n;
  p.magnitude_squared = o->magnitude_squared() ? 1 : 0;
  return nullptr;
}

}  // namespace floe::kernels
