// SPDX-License-Identifier: Apache-2.0
// TensorFlow's audio front end: AudioSpectrogram and Mfcc. Everything that
// does not depend on the audio is computed here, in double precision as TF
// computes it, and stored as constant inputs: the periodic Hann window, the
// real FFT's twiddles and bit-reversal permutation, the mel filterbank's
// per-bin weights and channels (from the sample rate, which must therefore be
// a constant), and the DCT-II matrix. The kernels only run them
// (runtime/kernels/reference/audio_spectrogram.cc, mfcc.cc).
#include <cmath>

#include "converter/ir/attrs.h"
#include "converter/ir/error.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

constexpr double kPi = 3.14159265358979323846;

int64_t next_power_of_two(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

struct SpectrogramAttrs {
  int64_t window_size, stride, fft_length;
  bool magnitude_squared;
};

SpectrogramAttrs spectrogram_attrs(const NodeContext& ctx) {
  const auto& def = ctx.node().def;
  SpectrogramAttrs a;
  a.window_size = attr_int(def, "window_size");
  a.stride = attr_int(def, "stride");
  a.magnitude_squared = attr_bool(def, "magnitude_squared", false);
  if (a.window_size <= 1) ctx.fail("window size must be > 1, got " + std::to_string(a.window_size));
  if (a.stride <= 0) ctx.fail("stride must be strictly positive, got " + std::to_string(a.stride));
  if (a.window_size > (int64_t{1} << 23)) ctx.fail("window size " + std::to_string(a.window_size) + " is too large");
  a.fft_length = next_power_of_two(a.window_size);
  return a;
}

std::vector<TensorInfo> infer_audio_spectrogram(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  const SpectrogramAttrs a = spectrogram_attrs(ctx);
  const TensorInfo& in = ctx.input(0);
  if (in.dtype != DType::kFloat32) ctx.fail("input must be float32 samples");
  if (in.shape.size() != 2) ctx.fail("input must be 2-dimensional [samples, channels], got " + shape_to_string(in.shape));
  const int64_t length = in.shape[0], channels = in.shape[1];
  const int64_t frames = length < a.window_size ? 0 : 1 + (length - a.window_size) / a.stride;
  return {TensorInfo{DType::kFloat32, {channels, frames, a.fft_length / 2 + 1}, nullptr}};
}

HostTensor float_tensor(std::vector<int64_t> shape, const std::vector<double>& values) {
  HostTensor t;
  t.dtype = DType::kFloat32;
  t.shape = std::move(shape);
  t.data.resize(values.size() * sizeof(float));
  for (size_t i = 0; i < values.size(); ++i) t.as<float>()[i] = static_cast<float>(values[i]);
  return t;
}

HostTensor int32_tensor(const std::vector<int32_t>& values) {
  HostTensor t;
  t.dtype = DType::kInt32;
  t.shape = {static_cast<int64_t>(values.size())};
  t.data.resize(values.size() * sizeof(int32_t));
  for (size_t i = 0; i < values.size(); ++i) t.as<int32_t>()[i] = values[i];
  return t;
}

void lower_audio_spectrogram(LowerContext& ctx) {
  const SpectrogramAttrs a = spectrogram_attrs(ctx);
  const int64_t n = a.fft_length, m = n / 2;
  // TF's periodic Hann window.
  std::vector<double> window(static_cast<size_t>(a.window_size));
  for (int64_t j = 0; j < a.window_size; ++j) {
    window[static_cast<size_t>(j)] = 0.5 - 0.5 * std::cos(2.0 * kPi * static_cast<double>(j) / static_cast<double>(a.window_size));
  }
  // The FFT's twiddles in the order its passes read them
  // (runtime/kernels/common/real_fft.h): per radix-4 pass of quarter-span S, the
  // arrays W_4S^j, W_4S^2j, W_4S^3j for j < S; then W_n^k, k = 0..m/2, for the split.
  std::vector<double> twiddles;
  auto twiddle = [&](int64_t k, int64_t length) {
    const double angle = 2.0 * kPi * static_cast<double>(k) / static_cast<double>(length);
    twiddles.push_back(std::cos(angle));
    twiddles.push_back(-std::sin(angle));
  };
  int stages = 0;
  while ((int64_t{1} << stages) < m) ++stages;
  for (int64_t s = (stages & 1) ? 2 : 1; 4 * s <= m; s *= 4) {
    for (int64_t power = 1; power <= 3; ++power) {
      for (int64_t j = 0; j < s; ++j) twiddle(power * j, 4 * s);
    }
  }
  for (int64_t k = 0; k <= m / 2; ++k) twiddle(k, n);
  // The m-point FFT's radix-2 input order.
  const int bits = stages;
  std::vector<int32_t> reverse(static_cast<size_t>(m));
  for (int64_t j = 0; j < m; ++j) {
    int64_t r = 0;
    for (int b = 0; b < bits; ++b) r |= ((j >> b) & 1) << (bits - 1 - b);
    reverse[static_cast<size_t>(j)] = static_cast<int32_t>(r);
  }
  schema::AudioSpectrogramOptionsT o;
  o.window_size = static_cast<int32_t>(a.window_size);
  o.stride = static_cast<int32_t>(a.stride);
  o.fft_length = static_cast<int32_t>(n);
  o.magnitude_squared = a.magnitude_squared;
  const int scratch = ctx.new_value(DType::kFloat32, {n}, "fft_scratch");
  ctx.add_op(schema::OpCode::AUDIO_SPECTROGRAM,
             {ctx.input_value(0), ctx.constant_value("hann_window", float_tensor({a.window_size}, window)),
              ctx.constant_value("fft_twiddles", float_tensor({static_cast<int64_t>(twiddles.size())}, twiddles)),
              ctx.constant_value("fft_bit_reverse", int32_tensor(reverse))},
             {ctx.output_value(0), scratch}, LowerContext::options(o));
}

// ---- Mfcc -----------------------------------------------------------------------------------

double hz_to_mel(double hz) { return 1127.0 * std::log1p(hz / 700.0); }

// The filterbank and DCT TF's Mfcc::Initialize builds for one spectrogram
// width and sample rate.
struct MfccDesign {
  int64_t channels = 0, coefficients = 0, first_bin = 0, sample_rate = 0;
  std::vector<double> weights;  // bins first_bin..last_bin
  std::vector<int32_t> band;
  std::vector<double> dct;      // [coefficients, channels]
};

MfccDesign design_mfcc(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const TensorInfo& spec = ctx.input(0);
  if (spec.dtype != DType::kFloat32 || spec.shape.size() != 3) {
    ctx.fail("spectrogram must be float32 [channels, frames, bins], got " + shape_to_string(spec.shape));
  }
  if (!ctx.input(1).shape.empty()) ctx.fail("sample_rate must be a scalar, got " + shape_to_string(ctx.input(1).shape));
  if (!ctx.input(1).value) {
    const std::string tensor = ctx.graph().tensor_name(ctx.node().inputs[1]);
    throw ConvertError(ctx.graph().source() + ": node '" + ctx.node().name() + "' (op Mfcc): the sample rate (input 1, '" +
                           tensor + "') must be known at conversion time, to compute the mel filterbank; fix it with "
                           "--freeze-input " + tensor + "=RATE (e.g. 16000)",
                       ErrorCategory::kNeedsConstant,
                       ErrorLocation{ctx.graph().source(), ctx.node().name(), ctx.node().op(), -1})
        .with_tensor(tensor);
  }
  const std::vector<int64_t> rate_values = ctx.constant_ints(1, "sample_rate");
  const double sample_rate = static_cast<double>(rate_values.at(0));
  const auto& def = ctx.node().def;
  // TF stores the limits as float attrs and computes in double from them.
  const double upper = static_cast<double>(attr_float(def, "upper_frequency_limit", 4000.0f));
  const double lower = static_cast<double>(attr_float(def, "lower_frequency_limit", 20.0f));
  MfccDesign d;
  d.sample_rate = rate_values.at(0);
  d.channels = attr_int(def, "filterbank_channel_count", 40);
  d.coefficients = attr_int(def, "dct_coefficient_count", 13);
  const int64_t bins = spec.shape[2];
  if (d.channels < 1 || d.channels > 4096) ctx.fail("filterbank_channel_count must be in [1, 4096]");
  if (sample_rate <= 0) ctx.fail("sample rate must be positive, got " + std::to_string(rate_values.at(0)));
  if (bins < 2) ctx.fail("the spectrogram needs at least 2 bins");
  if (lower < 0) ctx.fail("lower_frequency_limit must be nonnegative");
  if (upper <= lower) ctx.fail("upper_frequency_limit must be greater than lower_frequency_limit");
  if (d.coefficients < 1 || d.coefficients > d.channels) {
    ctx.fail("dct_coefficient_count must be in [1, filterbank_channel_count]");
  }
  // Channel centres evenly spaced in mel; one more at the top closes the last triangle.
  const double mel_low = hz_to_mel(lower), mel_high = hz_to_mel(upper);
  const double spacing = (mel_high - mel_low) / static_cast<double>(d.channels + 1);
  std::vector<double> centre(static_cast<size_t>(d.channels + 1));
  for (int64_t i = 0; i <= d.channels; ++i) centre[static_cast<size_t>(i)] = mel_low + spacing * static_cast<double>(i + 1);
  const double hz_per_bin = 0.5 * sample_rate / static_cast<double>(bins - 1);
  const int64_t first = static_cast<int64_t>(1.5 + lower / hz_per_bin);  // DC never contributes
  const int64_t last = static_cast<int64_t>(upper / hz_per_bin);
  if (last >= bins) {
    ctx.fail("upper_frequency_limit " + std::to_string(upper) + " Hz is above the spectrogram's highest bin (" +
             std::to_string(hz_per_bin * static_cast<double>(bins - 1)) + " Hz at sample rate " +
             std::to_string(rate_values.at(0)) + ")");
  }
  d.first_bin = first;
  int64_t channel = 0;
  for (int64_t i = first; i <= last; ++i) {
    const double mel = hz_to_mel(static_cast<double>(i) * hz_per_bin);
    while (channel < d.channels && centre[static_cast<size_t>(channel)] < mel) ++channel;
    const int64_t below = channel - 1;  // the channel whose falling edge this bin is on (-1: none)
    const double weight = below >= 0 ? (centre[static_cast<size_t>(below + 1)] - mel) /
                                           (centre[static_cast<size_t>(below + 1)] - centre[static_cast<size_t>(below)])
                                     : (centre[0] - mel) / (centre[0] - mel_low);
    d.band.push_back(static_cast<int32_t>(below));
    d.weights.push_back(weight);
  }
  // DCT-II with TF's sqrt(2 / N) scaling (no separate scale for c0).
  const double norm = std::sqrt(2.0 / static_cast<double>(d.channels));
  for (int64_t k = 0; k < d.coefficients; ++k) {
    for (int64_t j = 0; j < d.channels; ++j) {
      d.dct.push_back(norm * std::cos(static_cast<double>(k) * (kPi / static_cast<double>(d.channels)) *
                                      (static_cast<double>(j) + 0.5)));
    }
  }
  return d;
}

std::vector<TensorInfo> infer_mfcc(const NodeContext& ctx) {
  const MfccDesign d = design_mfcc(ctx);
  const auto& s = ctx.input(0).shape;
  return {TensorInfo{DType::kFloat32, {s[0], s[1], d.coefficients}, nullptr}};
}

void lower_mfcc(LowerContext& ctx) {
  const MfccDesign d = design_mfcc(ctx);
  schema::MfccOptionsT o;
  o.first_bin = static_cast<int32_t>(d.first_bin);
  o.sample_rate = static_cast<int32_t>(d.sample_rate);
  const int64_t used = static_cast<int64_t>(d.weights.size());
  const int scratch = ctx.new_value(DType::kFloat32, {d.channels}, "mel_energies");
  ctx.add_op(schema::OpCode::MFCC,
             {ctx.input_value(0), ctx.constant_value("mel_weights", float_tensor({used}, d.weights)),
              ctx.constant_value("mel_bands", int32_tensor(d.band)),
              ctx.constant_value("dct", float_tensor({d.coefficients, d.channels}, d.dct))},
             {ctx.output_value(0), scratch}, LowerContext::options(o));
}

}  // namespace

const std::vector<OpHandler>& audio_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"AudioSpectrogram", infer_audio_spectrogram, lower_audio_spectrogram},
      {"Mfcc", infer_mfcc, lower_mfcc},
  };
  return handlers;
}

}  // namespace floe::conv
