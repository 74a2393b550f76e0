// SPDX-License-Identifier: Apache-2.0
// TFLite Micro's Signal library (its audio front end): the CUSTOM ops floe
// reads, their flexbuffer options checked and their tables precomputed.
#include "converter/frontend/tflite/importer.h"

#include <algorithm>

#include "converter/frontend/tflite/custom_options.h"

namespace floe::conv::tflite_detail {

namespace {

const char* const kSignalOps[] = {"SignalWindow",
                                  "SignalFftAutoScale",
                                  "SignalRfft",
                                  "SignalEnergy",
                                  "SignalFilterBank",
                                  "SignalFilterBankSquareRoot",
                                  "SignalFilterBankSpectralSubtraction",
                                  "SignalPCAN",
                                  "SignalFilterBankLog"};

bool is_signal_op(const std::string& name) {
  return std::find(std::begin(kSignalOps), std::end(kSignalOps), name) != std::end(kSignalOps);
}

}  // namespace

std::string Importer::custom_unsupported_reason(const fb::Operator* op) const {
  const std::string name = custom_code(op);
  if (!is_signal_op(name)) return "CUSTOM '" + name + "'";
  if (name == "SignalRfft" && op->custom_options() != nullptr) {
    // TFLM also has float32 and int32 forms; floe has the int16 one (an
    // unreadable map is reported when the op is lowered).
    try {
      const CustomOptions options(op->custom_options()->data(), op->custom_options()->size());
      if (options.has("T") && options.integer("T") != 7) {
        return "CUSTOM 'SignalRfft' (" + std::string(dtype_name(tflite_dtype(static_cast<int8_t>(options.integer("T"))))) +
               ": int16 only)";
      }
    } catch (const std::runtime_error&) {
    }
  }
  return "";
}

int Importer::add_constant(const std::string& name, DType dtype, std::vector<int64_t> shape, const void* data) {
  auto host = std::make_shared<HostTensor>();
  host->dtype = dtype;
  host->shape = shape;
  const size_t bytes = static_cast<size_t>(host->num_elements()) * dtype_size(dtype);
  host->data.assign(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + bytes);
  Value v;
  v.name = name;
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.constant = std::move(host);
  const int id = out_.model.add_value(std::move(v));
  written_.push_back(true);
  return id;
}

// The Signal ops of TFLite Micro's audio front end, their attributes read
// from the custom options (signal_spectrum.h / signal_filter_bank.h in
// runtime/kernels/reference say what each computes). Shapes and tables are
// checked here for the message; the runtime's prepare checks them again.
void Importer::lower_signal(const std::string& name) {
  const auto* raw = op_->custom_options();
  auto options = [&]() {
    if (raw == nullptr) fail_op("custom options are missing (expected a FlexBuffer map of the op's attributes)");
    try {
      return CustomOptions(raw->data(), raw->size());
    } catch (const std::runtime_error& e) {
      fail_op(e.what());
    }
  };
  auto attribute = [&](const CustomOptions& o, const char* key, int64_t lo, int64_t hi) {
    int64_t v = 0;
    try {
      v = o.integer(key);
    } catch (const std::runtime_error& e) {
      fail_op(e.what());
    }
    if (v < lo || v > hi) {
      fail_op(std::string("attribute ") + key + " = " + std::to_string(v) + " is outside [" + std::to_string(lo) +
              ", " + std::to_string(hi) + "]");
    }
    return v;
  };
  auto outputs = [&](uint32_t n) {
    if (op_->outputs() == nullptr || op_->outputs()->size() != n) {
      fail_op("must have exactly " + std::to_string(n) + " output" + (n == 1 ? "" : "s"));
    }
  };
  auto vector_of = [&](int id, DType dtype, const char* role) {
    expect_dtype(id, dtype, role);
    if (value(id).shape.size() != 1) {
      fail_op(std::string(role) + " '" + short_name(value(id).name) + "' must be 1-D, is " +
              shape_to_string(value(id).shape));
    }
    return value(id).shape[0];
  };
  auto constant_of = [&](int id, const char* role) {
    if (!value(id).is_constant()) fail_op(std::string(role) + " '" + short_name(value(id).name) + "' must be a constant");
    return value(id).constant->as<int16_t>();
  };

  if (name == "SignalWindow") {
    outputs(1);
    const CustomOptions o = options();
    const int x = input(0), w = input(1), out = output();
    expect_dtype(x, DType::kInt16, "input");
    const int64_t n = vector_of(w, DType::kInt16, "weights");
    if (value(x).shape.empty() || value(x).shape.back() != n) {
      fail_op("input " + shape_to_string(value(x).shape) + " rows do not match " + std::to_string(n) + " weights");
    }
    expect_dtype(out, DType::kInt16, "output");
    expect_shape(out, value(x).shape);
    schema::SignalWindowOptionsT s;
    s.shift = static_cast<int32_t>(attribute(o, "shift", 0, 31));
    add_op(schema::OpCode::SIGNAL_WINDOW, {x, w}, {out}, wrap(s));
  } else if (name == "SignalFftAutoScale") {
    outputs(2);
    const int x = input(0), y = output(0), bits = output(1);
    const int64_t n = vector_of(x, DType::kInt16, "input");
    expect_dtype(y, DType::kInt16, "output");
    expect_shape(y, {n});
    expect_dtype(bits, DType::kInt32, "scale output");
    expect_shape(bits, {});
    add_op(schema::OpCode::SIGNAL_FFT_AUTO_SCALE, {x}, {y, bits});
  } else if (name == "SignalRfft") {
    outputs(1);
    const CustomOptions o = options();
    if (attribute(o, "T", 0, 127) != 7) fail_unsupported("SignalRfft computes int16 only here");
    const int64_t length = attribute(o, "fft_length", 4, 32768);
    if ((length & (length - 1)) != 0) fail_unsupported("fft_length " + std::to_string(length) + " is not a power of two");
    const int x = input(0), out = output();
    expect_dtype(x, DType::kInt16, "input");
    std::vector<int64_t> shape = value(x).shape;
    if (shape.empty() || shape.back() < 1 || shape.back() > length) {
      fail_op("input " + shape_to_string(shape) + " rows must hold 1.." + std::to_string(length) + " samples");
    }
    shape.back() = length + 2;
    expect_dtype(out, DType::kInt16, "output");
    expect_shape(out, shape);
    const std::vector<int16_t> tw = kissfft_twiddles(static_cast<int32_t>(length));
    const std::vector<int16_t> st = kissfft_super_twiddles(static_cast<int32_t>(length));
    const int twiddles = add_constant(short_name(value(out).name) + "/twiddles", DType::kInt16, {length / 2, 2}, tw.data());
    const int super_twiddles =
        add_constant(short_name(value(out).name) + "/super_twiddles", DType::kInt16, {length / 4, 2}, st.data());
    schema::SignalRfftOptionsT s;
    s.fft_length = static_cast<int32_t>(length);
    add_op(schema::OpCode::SIGNAL_RFFT, {x, twiddles, super_twiddles}, {out}, wrap(s));
  } else if (name == "SignalEnergy") {
    outputs(1);
    const CustomOptions o = options();
    const int x = input(0), out = output();
    const int64_t n = vector_of(x, DType::kInt16, "input");
    if (n % 2 != 0) fail_op("input holds " + std::to_string(n) + " values, not (re, im) pairs");
    expect_dtype(out, DType::kUInt32, "output");
    expect_shape(out, {n / 2});
    schema::SignalEnergyOptionsT s;
    s.start_index = static_cast<int32_t>(attribute(o, "start_index", 0, n / 2));
    s.end_index = static_cast<int32_t>(attribute(o, "end_index", s.start_index, n / 2));
    add_op(schema::OpCode::SIGNAL_ENERGY, {x}, {out}, wrap(s));
  } else if (name == "SignalFilterBank") {
    outputs(1);
    const CustomOptions o = options();
    const int x = input(0), out = output();
    std::vector<int> in{x};
    for (int k = 1; k <= 5; ++k) in.push_back(input(k));
    const int64_t bins = vector_of(x, DType::kUInt32, "input");
    const int64_t channels = attribute(o, "num_channels", 1, 32767);
    expect_dtype(out, DType::kUInt64, "output");
    expect_shape(out, {channels});
    const int64_t weights = vector_of(in[1], DType::kInt16, "weights");
    if (vector_of(in[2], DType::kInt16, "unweights") != weights) fail_op("weights and unweights differ in length");
    const char* roles[] = {"channel_frequency_starts", "channel_weight_starts", "channel_widths"};
    for (int k = 3; k <= 5; ++k) {
      if (vector_of(in[static_cast<size_t>(k)], DType::kInt16, roles[k - 3]) != channels + 1) {
        fail_op(std::string(roles[k - 3]) + " must hold num_channels + 1 = " + std::to_string(channels + 1) + " entries");
      }
    }
    const int16_t* freq = constant_of(in[3], roles[0]);
    const int16_t* start = constant_of(in[4], roles[1]);
    const int16_t* width = constant_of(in[5], roles[2]);
    constant_of(in[1], "weights");
    constant_of(in[2], "unweights");
    for (int64_t c = 0; c <= channels; ++c) {
      if (freq[c] < 0 || start[c] < 0 || width[c] < 0 || freq[c] + width[c] > bins || start[c] + width[c] > weights) {
        fail_op("channel " + std::to_string(c) + " (frequency start " + std::to_string(freq[c]) + ", weight start " +
                std::to_string(start[c]) + ", width " + std::to_string(width[c]) + ") reaches past " +
                std::to_string(bins) + " bins or " + std::to_string(weights) + " weights");
      }
    }
    add_op(schema::OpCode::SIGNAL_FILTER_BANK, in, {out});
  } else if (name == "SignalFilterBankSquareRoot") {
    outputs(1);
    const int x = input(0), bits = input(1), out = output();
    const int64_t c = vector_of(x, DType::kUInt64, "input");
    expect_dtype(bits, DType::kInt32, "scale_bits");
    if (value(bits).shape.size() > 1 || (value(bits).shape.size() == 1 && value(bits).shape[0] != 1)) {
      fail_op("scale_bits must be a scalar");
    }
    expect_dtype(out, DType::kUInt32, "output");
    expect_shape(out, {c});
    add_op(schema::OpCode::SIGNAL_FILTER_BANK_SQUARE_ROOT, {x, bits}, {out});
  } else if (name == "SignalFilterBankSpectralSubtraction") {
    outputs(2);
    const CustomOptions o = options();
    const int x = input(0), out = output(0), estimate = output(1);
    const int64_t c = vector_of(x, DType::kUInt32, "input");
    if (attribute(o, "num_channels", 0, INT32_MAX) != c) fail_op("num_channels differs from the input's length");
    for (int v : {out, estimate}) {
      expect_dtype(v, DType::kUInt32, "output");
      expect_shape(v, {c});
    }
    schema::SpectralSubtractionOptionsT s;
    s.smoothing = static_cast<uint32_t>(attribute(o, "smoothing", 0, UINT32_MAX));
    s.one_minus_smoothing = static_cast<uint32_t>(attribute(o, "one_minus_smoothing", 0, UINT32_MAX));
    s.alternate_smoothing = static_cast<uint32_t>(attribute(o, "alternate_smoothing", 0, UINT32_MAX));
    s.alternate_one_minus_smoothing =
        static_cast<uint32_t>(attribute(o, "alternate_one_minus_smoothing", 0, UINT32_MAX));
    s.smoothing_bits = static_cast<uint32_t>(attribute(o, "smoothing_bits", 0, 31));
    s.min_signal_remaining = static_cast<uint32_t>(attribute(o, "min_signal_remaining", 0, UINT32_MAX));
    s.spectral_subtraction_bits = static_cast<uint32_t>(attribute(o, "spectral_subtraction_bits", 0, 63));
    s.clamping = attribute(o, "clamping", 0, 1) != 0;
    // TFLM keeps the running noise estimate inside the op, zeroed at
    // AllocateTensors and by Reset(): floe's variable tensor behaves so.
    Value state;
    state.name = node_name_ + "/noise_estimate_state";
    state.dtype = DType::kUInt32;
    state.shape = {c};
    state.variable = true;
    const int state_id = out_.model.add_value(std::move(state));
    written_.push_back(true);
    add_op(schema::OpCode::SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION, {x, state_id}, {out, estimate}, wrap(s));
  } else if (name == "SignalPCAN") {
    outputs(1);
    const CustomOptions o = options();
    const int x = input(0), noise = input(1), lut = input(2), out = output();
    const int64_t c = vector_of(x, DType::kUInt32, "input");
    if (vector_of(noise, DType::kUInt32, "noise estimate") != c) fail_op("noise estimate differs from the input's length");
    if (vector_of(lut, DType::kInt16, "gain LUT") < 125) fail_op("gain LUT must hold 125 entries");
    expect_dtype(out, DType::kUInt32, "output");
    expect_shape(out, {c});
    schema::PcanOptionsT s;
    s.snr_shift = static_cast<int32_t>(attribute(o, "snr_shift", 0, 63));
    add_op(schema::OpCode::SIGNAL_PCAN, {x, noise, lut}, {out}, wrap(s));
  } else if (name == "SignalFilterBankLog") {
    outputs(1);
    const CustomOptions o = options();
    const int x = input(0), out = output();
    const int64_t c = vector_of(x, DType::kUInt32, "input");
    expect_dtype(out, DType::kInt16, "output");
    expect_shape(out, {c});
    schema::FilterBankLogOptionsT s;
    s.input_correction_bits = static_cast<int32_t>(attribute(o, "input_correction_bits", 0, 31));
    s.output_scale = static_cast<int32_t>(attribute(o, "output_scale", INT32_MIN, INT32_MAX));
    add_op(schema::OpCode::SIGNAL_FILTER_BANK_LOG, {x}, {out}, wrap(s));
  } else {
    fail_unsupported("custom op '" + name + "'");
  }
}


}  // namespace floe::conv::tflite_detail
