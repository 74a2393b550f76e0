// SPDX-License-Identifier: Apache-2.0
// CORTEX_M backend assignment: a per-op decision from the op's code, dtype and
// options, recorded in the model so the device never decides (it dispatches on
// Operator.backend, the row it takes: runtime/core/registry.h).
#include "converter/lower/backend_cortexm.h"

#include <algorithm>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <vector>

#include "runtime/kernels/cortexm/s16_microkernels.h"
#include "runtime/kernels/cortexm/s8_microkernels.h"
#include "schemas/contract/limits.h"

namespace floe::conv {
namespace {

bool all_f32(const LoweredModel& model, const std::vector<int>& values) {
  for (int v : values) {
    if (v >= 0 && model.values[static_cast<size_t>(v)].dtype != DType::kFloat32) return false;
  }
  return true;
}

bool takes(const LoweredModel& model, const LoweredOp& op) {
  if (!runs_on(op.opcode, schema::Backend::CORTEX_M)) return false;
  // AUDIO_SPECTROGRAM's int32 input is the FFT's constant bit-reversal table.
  if (op.opcode == schema::OpCode::AUDIO_SPECTROGRAM) return all_f32(model, {op.inputs[0]}) && all_f32(model, op.outputs);
  if (!all_f32(model, op.inputs) || !all_f32(model, op.outputs)) return false;
  if (op.opcode == schema::OpCode::AVG_POOL2D) return false;  // the Cortex-M pooling kernel is int8 only
  if (op.opcode == schema::OpCode::DEPTHWISE_CONV2D) {
    // Other multipliers would run the reference loop inside the Cortex-M
    // kernel anyway; saying so in the model keeps the plan truthful.
    const auto* options = op.options.AsDepthwiseConv2DOptions();
    return options != nullptr && options->depth_multiplier == 1;
  }
  return true;
}

// ---- int8: the kernels of runtime/kernels/cortexm/s8_microkernels.h ----------
// The device derives nothing: the converter picks the kernel per layer
// (Operator.cortexm_kernel), re-lays CONV2D filters OHWI, folds the input
// offset into a GEMM op's bias, writes per-channel multiplier/shift arrays
// (and a zero bias for a depthwise without one), and adds the im2col scratch
// as the op's output 1 so the arena plan holds it only during the op.

// An im2col chunk of this many bytes or less (rounded to whole rows, at least
// two for the 2-row GEMM block): larger chunks save little per-call work and
// would grow the arena.
constexpr int64_t kIm2colScratchBytes = 2048;

const Value& value(const LoweredModel& model, int v) { return model.values[static_cast<size_t>(v)]; }

// The kernels' plans hold window geometry in 16 bits (runtime/kernels/cortexm/s8_plans.h).
bool fit_int16(std::initializer_list<int64_t> values) {
  for (int64_t v : values) {
    if (v < -32768 || v > 32767) return false;
  }
  return true;
}

bool all_s8(const LoweredModel& model, const LoweredOp& op) {
  if (op.inputs.size() != 5 || op.outputs.size() != 1 || op.requantization == nullptr) return false;
  for (int i : {0, 1}) {
    if (op.inputs[static_cast<size_t>(i)] < 0 || value(model, op.inputs[static_cast<size_t>(i)]).dtype != DType::kInt8) {
      return false;
    }
  }
  for (int i : {3, 4}) {
    const int v = op.inputs[static_cast<size_t>(i)];
    if (v < 0 || !value(model, v).is_constant() || value(model, v).dtype != DType::kInt32) return false;
  }
  const int bias = op.inputs[2];
  if (bias >= 0 && (!value(model, bias).is_constant() || value(model, bias).dtype != DType::kInt32)) return false;
  return value(model, op.outputs[0]).dtype == DType::kInt8 && value(model, op.inputs[1]).is_constant();
}

int32_t input_zero_point(const LoweredOp& op) {
  return op.requantization->input_offsets.empty() ? 0 : -op.requantization->input_offsets[0];
}

int add_constant(LoweredModel* model, const std::string& name, DType dtype, std::vector<int64_t> shape,
                 const void* data, size_t bytes, Quantization quantization = {}) {
  auto t = std::make_shared<HostTensor>();
  t->dtype = dtype;
  t->shape = shape;
  t->data.resize(bytes);
  if (bytes > 0) std::memcpy(t->data.data(), data, bytes);
  Value v;
  v.name = name;
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.constant = std::move(t);
  v.quantization = std::move(quantization);
  return model->add_value(std::move(v));
}

std::vector<int32_t> int32_data(const LoweredModel& model, int v, size_t channels) {
  if (v < 0) return std::vector<int32_t>(channels, 0);
  const HostTensor& t = *value(model, v).constant;
  return std::vector<int32_t>(t.as<int32_t>(), t.as<int32_t>() + t.num_elements());
}

// Multiplier and shift arrays of [channels] (a per-tensor pair is repeated).
void per_channel_requantization(LoweredModel* model, LoweredOp& op, size_t channels) {
  for (int slot : {3, 4}) {
    std::vector<int32_t> data = int32_data(*model, op.inputs[static_cast<size_t>(slot)], channels);
    if (data.size() == channels) continue;
    data.assign(channels, data.empty() ? 0 : data[0]);
    op.inputs[static_cast<size_t>(slot)] =
        add_constant(model, op.node_name + (slot == 3 ? "/channel_multiplier" : "/channel_shift"), DType::kInt32,
                     {static_cast<int64_t>(channels)}, data.data(), data.size() * sizeof(int32_t));
  }
}

// The bias with the input offset folded in, for a GEMM over raw int8 rows
// ([channels][k] weights): bias[c] - zero_point * sum_k w[c][k], in the
// reference's wrapping int32 arithmetic.
void fold_bias(LoweredModel* model, LoweredOp& op, const int8_t* weights, size_t channels, size_t k) {
  const std::vector<int32_t> bias = int32_data(*model, op.inputs[2], channels);
  const int32_t zero_point = input_zero_point(op);
  std::vector<int32_t> folded(channels);
  for (size_t c = 0; c < channels; ++c) {
    int32_t sum = 0;
    for (size_t i = 0; i < k; ++i) sum += weights[c * k + i];
    folded[c] = static_cast<int32_t>(static_cast<uint32_t>(bias[c]) -
                                     static_cast<uint32_t>(zero_point) * static_cast<uint32_t>(sum));
  }
  op.inputs[2] = add_constant(model, op.node_name + "/folded_bias", DType::kInt32, {static_cast<int64_t>(channels)},
                              folded.data(), folded.size() * sizeof(int32_t));
}

// The short requantization (s8_microkernels.h, S8Requant::short_path) for
// M4/M33, taken when every channel c qualifies: multiplier in [2^30, 2^31),
// shift in [-22, -1] and |bias[c]| + max_input * abs_weight_sum[c] < 2^30, so
// no accumulator plus bias reaches 2^30 and the doubled bias fits. Then the
// bias at input 2 is written doubled and the caller records the variant.
bool short_requantization(LoweredModel* model, LoweredOp& op, const std::vector<int64_t>& abs_weight_sums,
                          int64_t max_input) {
  const size_t channels = abs_weight_sums.size();
  const std::vector<int32_t> bias = int32_data(*model, op.inputs[2], channels);
  const std::vector<int32_t> multiplier = int32_data(*model, op.inputs[3], channels);
  const std::vector<int32_t> shift = int32_data(*model, op.inputs[4], channels);
  if (bias.size() != channels || multiplier.size() != channels || shift.size() != channels) return false;
  constexpr int64_t kLimit = int64_t{1} << 30;
  std::vector<int32_t> doubled(channels);
  for (size_t c = 0; c < channels; ++c) {
    if (multiplier[c] < kLimit || shift[c] < -22 || shift[c] > -1) return false;
    if (std::abs(int64_t{bias[c]}) + max_input * abs_weight_sums[c] >= kLimit) return false;
    doubled[c] = bias[c] * 2;
  }
  op.inputs[2] = add_constant(model, op.node_name + "/doubled_bias", DType::kInt32, {static_cast<int64_t>(channels)},
                              doubled.data(), doubled.size() * sizeof(int32_t));
  return true;
}

// sum_k |w[c][k]| of [channels][k] weights.
std::vector<int64_t> abs_row_sums(const int8_t* weights, size_t channels, size_t k) {
  std::vector<int64_t> sums(channels, 0);
  for (size_t c = 0; c < channels; ++c) {
    for (size_t i = 0; i < k; ++i) sums[c] += std::abs(int64_t{weights[c * k + i]});
  }
  return sums;
}

// An in_c == 1 depthwise (person_detect's first layer, multiplier 8) is a
// convolution whose HWIO filter [kh, kw, 1, multiplier] has the same bytes.
void depthwise_as_conv2d(LoweredOp& op) {
  const schema::DepthwiseConv2DOptionsT d = *op.options.AsDepthwiseConv2DOptions();
  schema::Conv2DOptionsT c;
  c.stride_h = d.stride_h;
  c.stride_w = d.stride_w;
  c.dilation_h = d.dilation_h;
  c.dilation_w = d.dilation_w;
  c.pad_top = d.pad_top;
  c.pad_left = d.pad_left;
  c.pad_bottom = d.pad_bottom;
  c.pad_right = d.pad_right;
  c.activation = d.activation;
  op.opcode = schema::OpCode::CONV2D;
  op.options.Set(std::move(c));
}

// A groups-1 CONV2D's filter re-laid OHWI ([out_c][kh][kw][in_c]: output
// channel c's window is one contiguous GEMM row), with its quantization on
// axis 0, and whether the op is a 1x1, stride-1, unpadded convolution (a
// GEMM on the input pixels). False when the kernels' 16-bit plan fields or
// 2^16-column rows cannot hold the window, or the convolution is grouped.
struct OhwiFilter {
  std::string name;  // the original filter's
  int64_t k_h, k_w, in_c, out_c, k;
  std::vector<int8_t> weights;
  Quantization quantization;
  bool pointwise;
};

bool ohwi_filter(const LoweredModel& model, const LoweredOp& op, OhwiFilter* f) {
  const Value& filter = value(model, op.inputs[1]);
  const Value& input = value(model, op.inputs[0]);
  const Value& output = value(model, op.outputs[0]);
  if (filter.shape.size() != 4 || input.shape.size() != 4 || output.shape.size() != 4) return false;
  f->k_h = filter.shape[0], f->k_w = filter.shape[1], f->in_c = filter.shape[2], f->out_c = filter.shape[3];
  if (f->in_c != input.shape[3]) return false;  // grouped: the reference kernel
  const auto* o = op.options.AsConv2DOptions();
  f->k = f->k_h * f->k_w * f->in_c;
  if (o == nullptr || f->k <= 0 || f->out_c <= 0 || f->k > (int64_t{1} << 16)) return false;
  if (!fit_int16({f->k_h, f->k_w, o->stride_h, o->stride_w, o->dilation_h, o->dilation_w, o->pad_top, o->pad_left})) {
    return false;
  }
  // The kernels' int32 indexing (schemas/contract/limits.h).
  if (output.shape[1] * o->stride_h > kMaxCortexmStridedOutput ||
      output.shape[2] * o->stride_w > kMaxCortexmStridedOutput) {
    return false;
  }
  f->weights.resize(static_cast<size_t>(f->out_c * f->k));
  const int8_t* hwio = filter.constant->as<int8_t>();
  for (int64_t t = 0; t < f->k; ++t) {
    for (int64_t c = 0; c < f->out_c; ++c) f->weights[static_cast<size_t>(c * f->k + t)] = hwio[t * f->out_c + c];
  }
  f->name = filter.name;
  f->quantization = filter.quantization;
  if (f->quantization.scale.size() > 1) f->quantization.dimension = 0;
  f->pointwise = f->k_h == 1 && f->k_w == 1 && o->stride_h == 1 && o->stride_w == 1 && o->pad_top == 0 &&
                 o->pad_left == 0 && output.shape[1] == input.shape[1] && output.shape[2] == input.shape[2];
  return true;
}

bool s8_conv2d(LoweredModel* model, LoweredOp& op, bool short_ok) {
  OhwiFilter f;
  if (!ohwi_filter(*model, op, &f)) return false;
  const int64_t out_c = f.out_c, k = f.k;
  std::vector<int8_t>& ohwi = f.weights;
  const std::string& filter_name = f.name;
  fold_bias(model, op, ohwi.data(), static_cast<size_t>(out_c), static_cast<size_t>(k));
  per_channel_requantization(model, op, static_cast<size_t>(out_c));
  // The GEMM multiplies raw int8 rows (the offset is in the folded bias).
  const bool short_path =
      short_ok && short_requantization(model, op, abs_row_sums(ohwi.data(), static_cast<size_t>(out_c),
                                                               static_cast<size_t>(k)), 128);
  op.inputs[1] = add_constant(model, filter_name + "/ohwi", DType::kInt8, {out_c, f.k_h, f.k_w, f.in_c}, ohwi.data(),
                              ohwi.size(), std::move(f.quantization));

  const bool direct = f.pointwise;
  if (direct && short_path && out_c % 2 == 0 && k % 8 == 0 && k <= cortexm::kPackedGemmMaxK) {
    // The M4/M33 1x1 kernel's own filter: channel pairs widened, with their
    // requantization constants (s8_microkernels.h, s8_pack_gemm_pair).
    const std::vector<int32_t> bias2 = int32_data(*model, op.inputs[2], static_cast<size_t>(out_c));
    const std::vector<int32_t> multiplier = int32_data(*model, op.inputs[3], static_cast<size_t>(out_c));
    const std::vector<int32_t> shift = int32_data(*model, op.inputs[4], static_cast<size_t>(out_c));
    std::vector<int32_t> packed(static_cast<size_t>(cortexm::s8_packed_gemm_words(static_cast<int32_t>(out_c),
                                                                                  static_cast<int32_t>(k))));
    for (int64_t c = 0; c < out_c; c += 2) {
      cortexm::s8_pack_gemm_pair(&ohwi[static_cast<size_t>(c * k)], &ohwi[static_cast<size_t>((c + 1) * k)],
                                 static_cast<int32_t>(k), &bias2[static_cast<size_t>(c)],
                                 &multiplier[static_cast<size_t>(c)], &shift[static_cast<size_t>(c)],
                                 op.requantization->output_offset,
                                 &packed[static_cast<size_t>(c / 2 * (k + 8))]);
    }
    op.inputs[1] = add_constant(model, filter_name + "/packed_pairs", DType::kInt32, {out_c / 2, k + 8},
                                packed.data(), packed.size() * sizeof(int32_t));
    op.cortexm_kernel = schema::CortexMKernel::S8_GEMM_PACKED_SHORT_REQUANT;
    return true;
  }
  if (direct) {
    op.cortexm_kernel = short_path ? schema::CortexMKernel::S8_GEMM_SHORT_REQUANT : schema::CortexMKernel::S8_GEMM;
    return true;
  }
  const std::vector<int64_t>& out_shape = value(*model, op.outputs[0]).shape;
  const int64_t rows = out_shape[0] * out_shape[1] * out_shape[2];
  const int64_t chunk = std::min(rows, std::max<int64_t>(2, kIm2colScratchBytes / k / 2 * 2));
  Value scratch;
  scratch.name = op.node_name + "/im2col";
  scratch.dtype = DType::kInt8;
  scratch.shape = {chunk, k};
  op.outputs.push_back(model->add_value(std::move(scratch)));
  op.cortexm_kernel =
      short_path ? schema::CortexMKernel::S8_IM2COL_GEMM_SHORT_REQUANT : schema::CortexMKernel::S8_IM2COL_GEMM;
  return true;
}

bool s8_fully_connected(LoweredModel* model, LoweredOp& op, bool short_ok) {
  const auto* o = op.options.AsMatMulOptions();
  const Value& a = value(*model, op.inputs[0]);
  const Value& w = value(*model, op.inputs[1]);
  if (o == nullptr || o->transpose_a || !o->transpose_b || a.shape.size() != 2 || w.shape.size() != 2) return false;
  const auto& offsets = op.requantization->input_offsets;
  if (offsets.size() > 1 && offsets[1] != 0) return false;  // asymmetric weights: the reference kernel
  const size_t n = static_cast<size_t>(w.shape[0]), k = static_cast<size_t>(w.shape[1]);
  const std::shared_ptr<const HostTensor> weights = w.constant;
  fold_bias(model, op, weights->as<int8_t>(), n, k);
  per_channel_requantization(model, op, n);
  const bool short_path = short_ok && short_requantization(model, op, abs_row_sums(weights->as<int8_t>(), n, k), 128);
  op.cortexm_kernel = short_path ? schema::CortexMKernel::S8_GEMM_SHORT_REQUANT : schema::CortexMKernel::S8_GEMM;
  return true;
}

bool s8_depthwise(LoweredModel* model, LoweredOp& op, bool short_ok) {
  const auto* o = op.options.AsDepthwiseConv2DOptions();
  const Value& filter = value(*model, op.inputs[1]);
  if (o == nullptr || o->depth_multiplier != 1 || filter.shape.size() != 4 || filter.shape[3] != 1) return false;
  const Value& input = value(*model, op.inputs[0]);
  const Value& output = value(*model, op.outputs[0]);
  if (input.shape.size() != 4 || output.shape.size() != 4 ||
      !fit_int16({input.shape[1], input.shape[2], filter.shape[0], filter.shape[1], output.shape[1], output.shape[2],
                  o->stride_h, o->stride_w, o->dilation_h, o->dilation_w, o->pad_top, o->pad_left})) {
    return false;
  }
  const size_t channels = static_cast<size_t>(filter.shape[2]);
  const size_t taps = static_cast<size_t>(filter.shape[0] * filter.shape[1]);  // before values grow
  if (op.inputs[2] < 0) {
    const std::vector<int32_t> zeros(channels, 0);
    op.inputs[2] = add_constant(model, op.node_name + "/bias", DType::kInt32, {static_cast<int64_t>(channels)},
                                zeros.data(), zeros.size() * sizeof(int32_t));
  }
  per_channel_requantization(model, op, channels);
  // Filter [kh][kw][channels]; the products take input + offset, at most 255
  // in magnitude for offsets in [-127, 128].
  std::vector<int64_t> abs_sums(channels, 0);
  const int8_t* w = value(*model, op.inputs[1]).constant->as<int8_t>();
  for (size_t t = 0; t < taps; ++t) {
    for (size_t c = 0; c < channels; ++c) abs_sums[c] += std::abs(int64_t{w[t * channels + c]});
  }
  const int64_t offset = -input_zero_point(op);
  const int64_t max_input = std::max(std::abs(-128 + offset), std::abs(127 + offset));
  const bool short_path = short_ok && short_requantization(model, op, abs_sums, max_input);
  op.cortexm_kernel = short_path ? schema::CortexMKernel::S8_DEPTHWISE_SHORT_REQUANT : schema::CortexMKernel::S8_DEPTHWISE;
  return true;
}

// short_ok: the target's int8 kernels have the short requantization (M4,
// M33: not the M55's Helium kernels).
bool takes_s8(LoweredModel* model, LoweredOp& op, bool short_ok) {
  if (op.opcode == schema::OpCode::AVG_POOL2D) {
    // runtime/kernels/cortexm/pool2d.h: the reference's operands and params.
    return op.inputs.size() == 1 && op.outputs.size() == 1 && op.inputs[0] >= 0 && op.requantization != nullptr &&
           value(*model, op.inputs[0]).dtype == DType::kInt8 && value(*model, op.outputs[0]).dtype == DType::kInt8;
  }
  if (!all_s8(*model, op)) return false;
  switch (op.opcode) {
    case schema::OpCode::CONV2D:
      return s8_conv2d(model, op, short_ok);
    case schema::OpCode::MATMUL:
      return s8_fully_connected(model, op, short_ok);
    case schema::OpCode::DEPTHWISE_CONV2D: {
      const Value& filter = value(*model, op.inputs[1]);
      if (filter.shape.size() == 4 && filter.shape[2] == 1 && filter.shape[3] > 1 &&
          value(*model, op.inputs[0]).shape.size() == 4 && value(*model, op.inputs[0]).shape[3] == 1) {
        depthwise_as_conv2d(op);
        return s8_conv2d(model, op, short_ok);
      }
      return s8_depthwise(model, op, short_ok);
    }
    default:
      return false;
  }
}

// ---- int16x8: the kernels of runtime/kernels/cortexm/s16_microkernels.h -----
// As for int8, the converter decides and lays out everything: OHWI filters,
// an int64 bias always present, TFLM's 64-bit requantization already reduced
// to a Q15 multiplier and a right shift per channel, and the im2col scratch.

// int16 input and output, constant int8 weights, an absent or constant int64
// bias, constant int32 multipliers and shifts (shift <= 7: TFLite's 16x8
// range), zero offsets.
bool all_s16(const LoweredModel& model, const LoweredOp& op) {
  if (op.inputs.size() != 5 || op.outputs.size() != 1 || op.requantization == nullptr) return false;
  if (op.inputs[0] < 0 || op.inputs[1] < 0 || value(model, op.inputs[0]).dtype != DType::kInt16 ||
      value(model, op.inputs[1]).dtype != DType::kInt8 || !value(model, op.inputs[1]).is_constant() ||
      value(model, op.outputs[0]).dtype != DType::kInt16) {
    return false;
  }
  const int bias = op.inputs[2];
  if (bias >= 0 && (!value(model, bias).is_constant() || value(model, bias).dtype != DType::kInt64)) return false;
  for (int i : {3, 4}) {
    const int v = op.inputs[static_cast<size_t>(i)];
    if (v < 0 || !value(model, v).is_constant() || value(model, v).dtype != DType::kInt32) return false;
  }
  const schema::RequantizationT& r = *op.requantization;
  for (int32_t offset : r.input_offsets) {
    if (offset != 0) return false;
  }
  if (r.output_offset != 0) return false;
  for (int32_t shift : int32_data(model, op.inputs[4], 1)) {
    if (shift < -31 || shift > 7) return false;
  }
  for (int32_t multiplier : int32_data(model, op.inputs[3], 1)) {
    if (multiplier < 0) return false;
  }
  return true;
}

// Inputs 2, 3, 4 as the kernels take them, [channels] each: S16Requant's
// offsets (the int64 bias, zeros when absent, folded in), multipliers and
// right shifts.
// False (the op unchanged) when the arrays are not [channels] (or [1] for a
// per-tensor multiplier and shift).
bool s16_requantization(LoweredModel* model, LoweredOp& op, size_t channels) {
  std::vector<int64_t> bias(channels, 0);
  if (op.inputs[2] >= 0) {
    const HostTensor& t = *value(*model, op.inputs[2]).constant;
    bias.assign(t.as<int64_t>(), t.as<int64_t>() + t.num_elements());
  }
  std::vector<int32_t> multiplier = int32_data(*model, op.inputs[3], channels);
  std::vector<int32_t> shift = int32_data(*model, op.inputs[4], channels);
  if (bias.size() != channels || (multiplier.size() != channels && multiplier.size() != 1) ||
      shift.size() != multiplier.size()) {
    return false;
  }
  if (multiplier.size() != channels) multiplier.assign(channels, multiplier.empty() ? 0 : multiplier[0]);
  if (shift.size() != channels) shift.assign(channels, shift.empty() ? 0 : shift[0]);
  for (size_t c = 0; c < channels; ++c) {
    cortexm::s16_channel_requantization(bias[c], multiplier[c], shift[c], &bias[c], &multiplier[c], &shift[c]);
  }
  const int64_t n = static_cast<int64_t>(channels);
  op.inputs[2] = add_constant(model, op.node_name + "/requantization_offset", DType::kInt64, {n}, bias.data(),
                              bias.size() * sizeof(int64_t));
  op.inputs[3] = add_constant(model, op.node_name + "/s16_multiplier", DType::kInt32, {n}, multiplier.data(),
                              multiplier.size() * sizeof(int32_t));
  op.inputs[4] = add_constant(model, op.node_name + "/right_shift", DType::kInt32, {n}, shift.data(),
                              shift.size() * sizeof(int32_t));
  return true;
}

bool s16_conv2d(LoweredModel* model, LoweredOp& op) {
  OhwiFilter f;
  if (!ohwi_filter(*model, op, &f)) return false;
  const std::vector<int64_t>& out_shape = value(*model, op.outputs[0]).shape;
  const int64_t rows = out_shape[1] * out_shape[2];  // per image: the kernel's chunks do not span images
  if (rows > INT32_MAX) return false;
  if (!s16_requantization(model, op, static_cast<size_t>(f.out_c))) return false;
  op.inputs[1] = add_constant(model, f.name + "/ohwi", DType::kInt8, {f.out_c, f.k_h, f.k_w, f.in_c},
                              f.weights.data(), f.weights.size(), std::move(f.quantization));
  if (f.pointwise) {
    op.cortexm_kernel = schema::CortexMKernel::S16_GEMM;
    return true;
  }
  const int64_t chunk = cortexm::s16_im2col_rows(static_cast<int32_t>(f.k), static_cast<int32_t>(rows));
  Value scratch;
  scratch.name = op.node_name + "/im2col";
  scratch.dtype = DType::kInt16;
  scratch.shape = {chunk, f.k};
  op.outputs.push_back(model->add_value(std::move(scratch)));
  op.cortexm_kernel = schema::CortexMKernel::S16_IM2COL_GEMM;
  return true;
}

bool s16_fully_connected(LoweredModel* model, LoweredOp& op) {
  const auto* o = op.options.AsMatMulOptions();
  const Value& a = value(*model, op.inputs[0]);
  const Value& w = value(*model, op.inputs[1]);
  if (o == nullptr || o->transpose_a || !o->transpose_b || a.shape.size() != 2 || w.shape.size() != 2) return false;
  if (!s16_requantization(model, op, static_cast<size_t>(value(*model, op.inputs[1]).shape[0]))) return false;
  op.cortexm_kernel = schema::CortexMKernel::S16_GEMM;
  return true;
}

bool s16_depthwise(LoweredModel* model, LoweredOp& op) {
  const auto* o = op.options.AsDepthwiseConv2DOptions();
  const Value filter = value(*model, op.inputs[1]);
  if (o == nullptr || o->depth_multiplier != 1 || filter.shape.size() != 4 || filter.shape[3] != 1) return false;
  const std::vector<int64_t> in_shape = value(*model, op.inputs[0]).shape;
  const std::vector<int64_t> out_shape = value(*model, op.outputs[0]).shape;
  if (in_shape.size() != 4 || out_shape.size() != 4 || in_shape[3] != filter.shape[2] ||
      !fit_int16({in_shape[1], in_shape[2], filter.shape[0], filter.shape[1], out_shape[1], out_shape[2],
                  o->stride_h, o->stride_w, o->dilation_h, o->dilation_w, o->pad_top, o->pad_left})) {
    return false;
  }
  const int64_t taps = filter.shape[0] * filter.shape[1], channels = filter.shape[2];
  if (taps * channels > (int64_t{1} << 30) ||
      !cortexm::s16_depthwise_sums_fit(filter.constant->as<int8_t>(), static_cast<int32_t>(taps),
                                       static_cast<int32_t>(channels))) {
    return false;  // 32-bit sums could overflow: the reference's 64-bit ones
  }
  if (!s16_requantization(model, op, static_cast<size_t>(channels))) return false;
  op.cortexm_kernel = schema::CortexMKernel::S16_DEPTHWISE;
  return true;
}

bool takes_s16(LoweredModel* model, LoweredOp& op) {
  if (!all_s16(*model, op)) return false;
  switch (op.opcode) {
    case schema::OpCode::CONV2D:
      return s16_conv2d(model, op);
    case schema::OpCode::MATMUL:
      return s16_fully_connected(model, op);
    case schema::OpCode::DEPTHWISE_CONV2D: {
      const Value& filter = value(*model, op.inputs[1]);
      if (filter.shape.size() == 4 && filter.shape[2] == 1 && filter.shape[3] > 1 &&
          value(*model, op.inputs[0]).shape.size() == 4 && value(*model, op.inputs[0]).shape[3] == 1) {
        depthwise_as_conv2d(op);
        return s16_conv2d(model, op);
      }
      return s16_depthwise(model, op);
    }
    default:
      return false;
  }
}

}  // namespace

bool is_cortexm_target(const std::string& target) {
  return target == "cortex-m4" || target == "cortex-m33" || target == "cortex-m55";
}

int assign_cortexm_backends(LoweredModel* model, const std::string& target) {
  int assigned = 0;
  const bool short_ok = target == "cortex-m4" || target == "cortex-m33";
  for (LoweredOp& op : model->ops) {
    if (takes(*model, op) || takes_s8(model, op, short_ok) || takes_s16(model, op)) {
      op.backend = schema::Backend::CORTEX_M;
      ++assigned;
    }
  }
  model->target = target;
  return assigned;
}

// Multiply-adds of an int8 op as the exact kernels run it: output elements
// times the filter's elements per output channel (CONV2D OHWI, DEPTHWISE
// [k_h][k_w][C], FULLY_CONNECTED [N][K] alike).
uint64_t integer_op_macs(const LoweredModel& model, const LoweredOp& op) {
  auto elements = [&](int v) {
    uint64_t n = 1;
    for (int64_t d : value(model, v).shape) n *= static_cast<uint64_t>(d);
    return n;
  };
  const std::vector<int64_t>& out = value(model, op.outputs[0]).shape;
  const uint64_t channels = out.empty() || out.back() <= 0 ? 1 : static_cast<uint64_t>(out.back());
  return op.inputs.size() < 2 || op.inputs[1] < 0 ? 0 : elements(op.outputs[0]) * (elements(op.inputs[1]) / channels);
}

// The unsigned-input bias of a GEMM op (S8Requant::bias_unsigned): the folded
// bias less 128 * sum_k w[c][k], wrapping as the kernels' int32 sums do, as
// input 5.
void add_unsigned_input_bias(LoweredModel* model, LoweredOp& op) {
  const HostTensor& w = *value(*model, op.inputs[1]).constant;
  const std::vector<int64_t>& out = value(*model, op.outputs[0]).shape;
  const size_t channels = static_cast<size_t>(out.back());
  const size_t k = static_cast<size_t>(w.num_elements()) / channels;
  const std::vector<int32_t> bias = int32_data(*model, op.inputs[2], channels);
  std::vector<int32_t> unsigned_bias(channels);
  for (size_t c = 0; c < channels; ++c) {
    uint32_t sum = 0;
    for (size_t i = 0; i < k; ++i) sum += static_cast<uint32_t>(static_cast<int32_t>(w.as<int8_t>()[c * k + i]));
    unsigned_bias[c] = static_cast<int32_t>(static_cast<uint32_t>(bias[c]) - 128u * sum);
  }
  op.inputs.resize(5, -1);
  op.inputs.push_back(add_constant(model, op.node_name + "/unsigned_input_bias", DType::kInt32,
                                   {static_cast<int64_t>(channels)}, unsigned_bias.data(),
                                   unsigned_bias.size() * sizeof(int32_t)));
}

int assign_exact_integer_kernels(LoweredModel* model, bool unsigned_input_bias) {
  int assigned = 0;
  for (LoweredOp& op : model->ops) {
    if (takes_s8(model, op, /*short_ok=*/false) || takes_s16(model, op)) {
      op.backend = schema::Backend::CORTEX_M;
      ++assigned;
      // Split across the caller's threads only when the work repays the
      // pool's wake-up (the int8 kernels' split: runtime/core/parallel.h).
      op.single_threaded = integer_op_macs(*model, op) < kIntegerParallelMinMacs;
      // Weights in TFLite's [-127, 127] (every TFLite-quantized model's):
      // the GEMM may add products in pairs (s8_microkernels.h, narrow_weights).
      const bool gemm = op.cortexm_kernel == schema::CortexMKernel::S8_GEMM;
      if (!gemm && op.cortexm_kernel != schema::CortexMKernel::S8_IM2COL_GEMM) continue;
      if (unsigned_input_bias) add_unsigned_input_bias(model, op);
      const HostTensor& w = *value(*model, op.inputs[1]).constant;
      const int8_t* weights = w.as<int8_t>();
      if (std::find(weights, weights + w.num_elements(), int8_t{-128}) != weights + w.num_elements()) continue;
      op.cortexm_kernel = gemm ? schema::CortexMKernel::S8_GEMM_NARROW_WEIGHTS
                               : schema::CortexMKernel::S8_IM2COL_GEMM_NARROW_WEIGHTS;
    }
  }
  return assigned;
}

}  // namespace floe::conv
