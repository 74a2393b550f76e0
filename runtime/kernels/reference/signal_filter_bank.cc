// SPDX-License-Identifier: Apache-2.0
// The Signal front end's filter-bank ops (see signal_filter_bank.h).
#include "runtime/kernels/reference/signal_filter_bank.h"

#include <stddef.h>

#include "runtime/core/quantization.h"
#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/reference/signal_spectrum.h"

namespace floe::ref {

void signal_filter_bank(const uint32_t* energy, const FilterBankTables& t, int32_t channels, uint64_t* out) {
  uint64_t weighted = 0, unweighted = 0;
  for (int32_t c = 0; c <= channels; ++c) {
    const uint32_t* e = energy + t.frequency_starts[c];
    const int16_t* w = t.weights + t.weight_starts[c];
    const int16_t* u = t.unweights + t.weight_starts[c];
    for (int32_t j = 0; j < t.widths[c]; ++j) {
      // int16 times uint64: the weight sign-extends, the sum wraps.
      weighted += static_cast<uint64_t>(int64_t{w[j]}) * e[j];
      unweighted += static_cast<uint64_t>(int64_t{u[j]}) * e[j];
    }
    if (c > 0) out[c - 1] = weighted;
    weighted = unweighted;
    unweighted = 0;
  }
}

namespace {

// Bit-by-bit square root over `Bits`-bit integers, rounded to nearest.
template <typename U, int Bits>
U rounded_sqrt(U x, int32_t significant_bits, U max_root) {
  U root = 0;
  const int32_t top = (Bits - significant_bits) | 1;
  U bit = U{1} << (Bits - 1 - top);
  for (int32_t i = (Bits - 1 - top) / 2 + 1; i > 0; --i) {
    if (x >= root + bit) {
      x -= root + bit;
      root = (root >> 1) + bit;
    } else {
      root >>= 1;
    }
    bit >>= 2;
  }
  if (x > root && root != max_root) ++root;
  return root;
}

int32_t msb64(uint64_t x) {
  return static_cast<uint32_t>(x >> 32) != 0 ? 32 + msb32(static_cast<uint32_t>(x >> 32))
                                             : x == 0 ? 64 : msb32(static_cast<uint32_t>(x));
}

}  // namespace

uint16_t sqrt32(uint32_t x) {
  if (x == 0) return 0;
  return static_cast<uint16_t>(rounded_sqrt<uint32_t, 32>(x, msb32(x), 0xFFFFu));
}

uint32_t sqrt64(uint64_t x) {
  if ((x >> 32) == 0) return sqrt32(static_cast<uint32_t>(x));
  return static_cast<uint32_t>(rounded_sqrt<uint64_t, 64>(x, msb64(x), 0xFFFFFFFFu));
}

void signal_spectral_subtraction(const SpectralSubtractionParams& p, const uint32_t* x, uint32_t* noise,
                                 uint32_t* out, int32_t channels) {
  for (int32_t i = 0; i < channels; ++i) {
    const bool even = (i & 1) == 0;
    const uint64_t smoothing = even ? p.smoothing : p.alternate_smoothing;
    const uint64_t keep = even ? p.one_minus_smoothing : p.alternate_one_minus_smoothing;
    const uint32_t scaled = x[i] << p.smoothing_bits;
    noise[i] = static_cast<uint32_t>((scaled * smoothing + noise[i] * keep) >> p.spectral_subtraction_bits);
    uint32_t estimate = noise[i];
    if (estimate > scaled) {
      estimate = scaled;
      if (p.clamping != 0) noise[i] = scaled;
    }
    const uint32_t floor =
        static_cast<uint32_t>((uint64_t{x[i]} * p.min_signal_remaining) >> p.spectral_subtraction_bits);
    const uint32_t subtracted = (scaled - estimate) >> p.smoothing_bits;
    out[i] = subtracted > floor ? subtracted : floor;
  }
}

namespace {

// PCAN's fixed point: the SNR in Q12, the output in Q6.
constexpr int32_t kSnrBits = 12, kOutputBits = 6;

// The gain for a noise estimate: three LUT entries per octave of x (its
// value, slope and curvature), read at x's 10-bit mantissa.
int16_t wide_dynamic_gain(uint32_t x, const int16_t* lut) {
  if (x <= 2) return lut[x];
  const int32_t octave = msb32(x);
  const int32_t base = 4 * octave - 6;
  const uint32_t shifted = octave < 11 ? x << (11 - octave) : x >> (octave - 11);
  const int32_t frac = static_cast<int16_t>(shifted & 0x3FF);
  int32_t r = (int32_t{lut[base + 2]} * frac) >> 5;
  r = static_cast<int32_t>(static_cast<uint32_t>(r) + (static_cast<uint32_t>(int32_t{lut[base + 1]}) << 5));
  r = static_cast<int32_t>(static_cast<uint32_t>(r) * static_cast<uint32_t>(frac));
  r = static_cast<int32_t>(static_cast<uint32_t>(r) + (1u << 14)) >> 15;
  return static_cast<int16_t>(r + lut[base]);
}

uint32_t shrink(uint32_t x) {
  if (x < (2u << kSnrBits)) return (x * x) >> (2 + 2 * kSnrBits - kOutputBits);
  return (x >> (kSnrBits - kOutputBits)) - (1u << kOutputBits);
}

}  // namespace

void signal_pcan(const uint32_t* x, const uint32_t* noise, const int16_t* gain_lut, int32_t snr_shift, uint32_t* out,
                 int32_t channels) {
  for (int32_t i = 0; i < channels; ++i) {
    const uint32_t gain = static_cast<uint32_t>(int32_t{wide_dynamic_gain(noise[i], gain_lut)});
    const uint32_t snr = static_cast<uint32_t>((uint64_t{x[i]} * gain) >> snr_shift);
    out[i] = shrink(snr);
  }
}

namespace {

// log2(1 + k / 128) - k / 128 in Q16 at k = 0..128 (and one entry past):
// TFLM's kLogLut, the correction a linear mantissa needs.
constexpr uint16_t kLogCorrection[130] = {
    0,    224,  442,  654,  861,  1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646, 2797, 2944, 3087, 3224,
    3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460, 4549, 4633, 4714, 4791, 4864, 4934, 5001, 5063,
    5123, 5178, 5231, 5280, 5326, 5368, 5408, 5444, 5477, 5507, 5533, 5557, 5578, 5595, 5610, 5622, 5631, 5637, 5640,
    5641, 5638, 5633, 5626, 5615, 5602, 5586, 5568, 5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332, 5291, 5249, 5203,
    5156, 5106, 5054, 5000, 4944, 4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341, 4264, 4184, 4103, 4020, 3935,
    3848, 3759, 3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981, 2875, 2768, 2659, 2549, 2437, 2323, 2207, 2090, 1971,
    1851, 1729, 1605, 1480, 1353, 1224, 1094, 963,  830,  695,  559,  421,  282,  142,  0,    0};

// ln(x) * scale in Q16 for x >= 2 (TFLM's Log32).
uint32_t log_q16(uint32_t x, uint32_t scale) {
  const int32_t integer = msb32(x) - 1;
  uint32_t frac = x - (1u << integer);
  frac = integer < 16 ? frac << (16 - integer) : frac >> (integer - 16);
  const uint32_t segment = frac >> 9;
  const int32_t c0 = kLogCorrection[segment], c1 = kLogCorrection[segment + 1];
  const int32_t correction = ((c1 - c0) * static_cast<int32_t>(frac - (segment << 9))) >> 16;
  const uint32_t log2 = (static_cast<uint32_t>(integer) << 16) + frac + static_cast<uint32_t>(c0 + correction);
  const uint32_t ln = static_cast<uint32_t>((uint64_t{45426} * log2 + 32768) >> 16);  // * ln(2) in Q16
  return (scale * ln + 32768) >> 16;
}

}  // namespace

void signal_filter_bank_log(const uint32_t* x, int16_t* out, int32_t channels, int32_t correction_bits,
                            int32_t output_scale) {
  for (int32_t i = 0; i < channels; ++i) {
    const uint32_t scaled = x[i] << correction_bits;
    if (scaled <= 1) {
      out[i] = 0;
      continue;
    }
    const uint32_t v = log_q16(scaled, static_cast<uint32_t>(output_scale));
    out[i] = static_cast<int16_t>(v < 32767u ? v : 32767u);
  }
}

}  // namespace floe::ref

// ---- adapters: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {
namespace {

bool is_vector(const TensorView& v, DType dtype, int64_t length) {
  return v.dtype == dtype && v.shape.rank == 1 && v.shape.dims[0] == length;
}

struct FilterBankParams {
  int32_t channels;
};

// The tables are constants, so their ranges are checked once here.
const char* prepare_signal_filter_bank(const OpContext& ctx) {
  if (!has_io(ctx, 6, 1)) return FLOE_MSG("SIGNAL_FILTER_BANK takes energy and five tables");
  const TensorView &energy = ctx.input(0), &w = ctx.input(1), &u = ctx.input(2), &out = ctx.output(0);
  if (out.dtype != DType::kUInt64 || out.shape.rank != 1 || energy.dtype != DType::kUInt32 ||
      energy.shape.rank != 1 || w.dtype != DType::kInt16 || w.shape.rank != 1 ||
      !is_vector(u, DType::kInt16, w.shape.dims[0])) {
    return FLOE_MSG("SIGNAL_FILTER_BANK takes uint32 [bins], int16 weights and unweights [w] to uint64 [channels]");
  }
  const int32_t channels = out.shape.dims[0];
  for (int k = 1; k <= 5; ++k) {
    if (!ctx.input_is_constant(k) || (k >= 3 && !is_vector(ctx.input(k), DType::kInt16, int64_t{channels} + 1))) {
      return FLOE_MSG("SIGNAL_FILTER_BANK tables must be int16 constants, the last three [channels + 1]");
    }
  }
  const int16_t* freq = data_as<const int16_t>(ctx.input(3));
  const int16_t* start = data_as<const int16_t>(ctx.input(4));
  const int16_t* width = data_as<const int16_t>(ctx.input(5));
  for (int32_t c = 0; c <= channels; ++c) {
    if (freq[c] < 0 || start[c] < 0 || width[c] < 0 || freq[c] + width[c] > energy.shape.dims[0] ||
        start[c] + width[c] > w.shape.dims[0]) {
      return FLOE_MSG("SIGNAL_FILTER_BANK channel reaches past its energy or weights");
    }
  }
  ctx.params<FilterBankParams>().channels = channels;
  return nullptr;
}

Status eval_signal_filter_bank(const PreparedOp& ctx) {
  const ref::FilterBankTables tables{data_as<const int16_t>(ctx.input(1)), data_as<const int16_t>(ctx.input(2)),
                                     data_as<const int16_t>(ctx.input(3)), data_as<const int16_t>(ctx.input(4)),
                                     data_as<const int16_t>(ctx.input(5))};
  ref::signal_filter_bank(data_as<const uint32_t>(ctx.input(0)), tables, ctx.params_as<FilterBankParams>().channels,
                          data_as<uint64_t>(ctx.output(0)));
  return Status::kOk;
}

const char* prepare_signal_filter_bank_square_root(const OpContext& ctx) {
  const TensorView &x = ctx.input(0), &bits = ctx.input(1), &out = ctx.output(0);
  if (!has_io(ctx, 2, 1) || x.dtype != DType::kUInt64 || x.shape.rank != 1 ||
      !is_vector(out, DType::kUInt32, x.shape.dims[0]) || bits.dtype != DType::kInt32 ||
      bits.shape.num_elements() != 1) {
    return FLOE_MSG("SIGNAL_FILTER_BANK_SQUARE_ROOT takes uint64 [c] and an int32 scalar to uint32 [c]");
  }
  return nullptr;
}

// The shift comes from SIGNAL_FFT_AUTO_SCALE at run time (0..15 there).
Status eval_signal_filter_bank_square_root(const PreparedOp& ctx) {
  const int32_t bits = *data_as<const int32_t>(ctx.input(1));
  if (bits < 0 || bits > 31) return Status::kKernelError;
  const uint64_t* x = data_as<const uint64_t>(ctx.input(0));
  uint32_t* out = data_as<uint32_t>(ctx.output(0));
  for (int32_t i = 0; i < ctx.output(0).shape.dims[0]; ++i) out[i] = ref::sqrt64(x[i]) >> bits;
  return Status::kOk;
}

const char* prepare_signal_spectral_subtraction(const OpContext& ctx) {
  const auto* o = ctx.op->options_as_SpectralSubtractionOptions();
  if (!has_io(ctx, 2, 2) || o == nullptr) {
    return FLOE_MSG("SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION takes signal and noise state to two outputs");
  }
  const TensorView& x = ctx.input(0);
  const int32_t c = x.shape.rank == 1 ? x.shape.dims[0] : -1;
  if (c < 0 || x.dtype != DType::kUInt32 || !is_vector(ctx.input(1), DType::kUInt32, c) ||
      !is_vector(ctx.output(0), DType::kUInt32, c) || !is_vector(ctx.output(1), DType::kUInt32, c)) {
    return FLOE_MSG("SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION operands must be uint32 [channels]");
  }
  if (!ctx.input_is_state(1)) return FLOE_MSG("the noise estimate must be a variable tensor live throughout");
  if (o->smoothing_bits() > 31 || o->spectral_subtraction_bits() > 63) {
    return FLOE_MSG("SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION shifts out of range");
  }
  ref::SpectralSubtractionParams& p = ctx.params<ref::SpectralSubtractionParams>();
  p.smoothing = o->smoothing();
  p.one_minus_smoothing = o->one_minus_smoothing();
  p.alternate_smoothing = o->alternate_smoothing();
  p.alternate_one_minus_smoothing = o->alternate_one_minus_smoothing();
  p.smoothing_bits = o->smoothing_bits();
  p.min_signal_remaining = o->min_signal_remaining();
  p.spectral_subtraction_bits = o->spectral_subtraction_bits();
  p.clamping = o->clamping() ? 1 : 0;
  reset_variable(ctx.input(1), 0);
  return nullptr;
}

// Output 1 is the estimate after this call (TFLM copies it out).
Status eval_signal_spectral_subtraction(const PreparedOp& ctx) {
  const int32_t channels = ctx.input(0).shape.dims[0];
  uint32_t* noise = data_as<uint32_t>(ctx.input(1));
  ref::signal_spectral_subtraction(ctx.params_as<ref::SpectralSubtractionParams>(), data_as<const uint32_t>(ctx.input(0)),
                                   noise, data_as<uint32_t>(ctx.output(0)), channels);
  uint32_t* copy = data_as<uint32_t>(ctx.output(1));
  for (int32_t i = 0; i < channels; ++i) copy[i] = noise[i];
  return Status::kOk;
}

struct PcanParams {
  int32_t snr_shift;
};

// The LUT's last entry read is 4 * 32 - 4 (an input of 32 significant bits).
constexpr int64_t kPcanLutEntries = 125;

const char* prepare_signal_pcan(const OpContext& ctx) {
  const auto* o = ctx.op->options_as_PcanOptions();
  if (!has_io(ctx, 3, 1) || o == nullptr) return FLOE_MSG("SIGNAL_PCAN takes signal, noise estimate and gain LUT");
  const TensorView& x = ctx.input(0);
  const int32_t c = x.shape.rank == 1 ? x.shape.dims[0] : -1;
  if (c < 0 || x.dtype != DType::kUInt32 || !is_vector(ctx.input(1), DType::kUInt32, c) ||
      !is_vector(ctx.output(0), DType::kUInt32, c) || ctx.input(2).dtype != DType::kInt16 ||
      ctx.input(2).shape.num_elements() < kPcanLutEntries) {
    return FLOE_MSG("SIGNAL_PCAN takes uint32 [c] twice and an int16 gain LUT of 125 entries to uint32 [c]");
  }
  if (o->snr_shift() < 0 || o->snr_shift() > 63) return FLOE_MSG("SIGNAL_PCAN snr_shift must be in [0, 63]");
  ctx.params<PcanParams>().snr_shift = o->snr_shift();
  return nullptr;
}

Status eval_signal_pcan(const PreparedOp& ctx) {
  ref::signal_pcan(data_as<const uint32_t>(ctx.input(0)), data_as<const uint32_t>(ctx.input(1)),
                   data_as<const int16_t>(ctx.input(2)), ctx.params_as<PcanParams>().snr_shift,
                   data_as<uint32_t>(ctx.output(0)), ctx.input(0).shape.dims[0]);
  return Status::kOk;
}

struct FilterBankLogParams {
  int32_t correction_bits, output_scale;
};

const char* prepare_signal_filter_bank_log(const OpContext& ctx) {
  const auto* o = ctx.op->options_as_FilterBankLogOptions();
  const TensorView& x = ctx.input(0);
  if (!has_io(ctx, 1, 1) || o == nullptr || x.dtype != DType::kUInt32 || x.shape.rank != 1 ||
      !is_vector(ctx.output(0), DType::kInt16, x.shape.dims[0])) {
    return FLOE_MSG("SIGNAL_FILTER_BANK_LOG takes uint32 [c] to int16 [c], FilterBankLogOptions");
  }
  if (o->input_correction_bits() < 0 || o->input_correction_bits() > 31) {
    return FLOE_MSG("SIGNAL_FILTER_BANK_LOG input_correction_bits must be in [0, 31]");
  }
  FilterBankLogParams& p = ctx.params<FilterBankLogParams>();
  p.correction_bits = o->input_correction_bits();
  p.output_scale = o->output_scale();
  return nullptr;
}

Status eval_signal_filter_bank_log(const PreparedOp& ctx) {
  const FilterBankLogParams& p = ctx.params_as<FilterBankLogParams>();
  ref::signal_filter_bank_log(data_as<const uint32_t>(ctx.input(0)), data_as<int16_t>(ctx.output(0)),
                              ctx.input(0).shape.dims[0], p.correction_bits, p.output_scale);
  return Status::kOk;
}

}  // namespace
}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, SIGNAL_FILTER_BANK, ANY, ops::FilterBankParams, ops::prepare_signal_filter_bank,
            ops::eval_signal_filter_bank)
FLOE_KERNEL(REFERENCE, SIGNAL_FILTER_BANK_SQUARE_ROOT, ANY, NoParams, ops::prepare_signal_filter_bank_square_root,
            ops::eval_signal_filter_bank_square_root)
FLOE_KERNEL(REFERENCE, SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION, ANY, ref::SpectralSubtractionParams,
            ops::prepare_signal_spectral_subtraction, ops::eval_signal_spectral_subtraction)
FLOE_KERNEL(REFERENCE, SIGNAL_PCAN, ANY, ops::PcanParams, ops::prepare_signal_pcan, ops::eval_signal_pcan)
FLOE_KERNEL(REFERENCE, SIGNAL_FILTER_BANK_LOG, ANY, ops::FilterBankLogParams, ops::prepare_signal_filter_bank_log,
            ops::eval_signal_filter_bank_log)
