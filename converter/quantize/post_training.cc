// SPDX-License-Identifier: Apache-2.0
// Post-training int8 quantization (see post_training.h).
#include "converter/quantize/post_training.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include "converter/eval/run_lowered.h"
#include "converter/ir/error.h"

namespace floe::conv {
namespace {

using Op = schema::OpCode;

// Below this, scales give multipliers the kernels cannot represent; TFLite
// would compute 0 for an all-zero range.
constexpr float kMinScale = 1e-6f;

std::string op_label(const LoweredOp& op) {
  return op.node_name + " (" + schema::EnumNameOpCode(op.opcode) + ")";
}

// ---- calibration data -------------------------------------------------------

std::string file_safe(std::string name) {
  for (char& c : name) {
    if (c == '/' || c == ':') c = '_';
  }
  return name;
}

bool names_input(const std::string& array_name, const std::string& input_name) {
  if (array_name == input_name || file_safe(array_name) == file_safe(input_name)) return true;
  const size_t colon = input_name.rfind(':');
  if (colon != std::string::npos && input_name.compare(colon, std::string::npos, ":0") == 0) {
    const std::string node = input_name.substr(0, colon);
    return array_name == node || array_name == file_safe(node);
  }
  return false;
}

[[noreturn]] void bad_data(const std::string& source, const std::string& why) {
  ErrorLocation where;
  where.file = source;
  throw ConvertError("calibration data " + source + ": " + why, ErrorCategory::kInvalidInput, where);
}

// ---- quantizing tensors -----------------------------------------------------

std::vector<float> floats_of(const HostTensor& t) {
  const float* p = t.as<float>();
  return std::vector<float>(p, p + t.num_elements());
}

std::shared_ptr<HostTensor> tensor(DType dtype, const std::vector<int64_t>& shape) {
  auto t = std::make_shared<HostTensor>();
  t->dtype = dtype;
  t->shape = shape;
  t->data.resize(static_cast<size_t>(element_count(shape)) * dtype_size(dtype));
  return t;
}

// real / scale rounded half away from zero, as TFLite's quantizer.
int64_t round_to_int(double v) { return static_cast<int64_t>(std::round(v)); }

// Symmetric per-channel int8 weights, [-127, 127], along `axis` (or one scale
// when axis < 0), each scale at least min_scales[channel] (when given).
Value symmetric_weights(const Value& w, int axis, const std::vector<float>& min_scales,
                        const std::vector<float>& trained_scales = {}) {
  const std::vector<float> data = floats_of(*w.constant);
  const std::vector<int64_t>& shape = w.shape;
  const int64_t channels = axis < 0 ? 1 : shape[static_cast<size_t>(axis)];
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis < 0 ? 0 : axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  auto channel_of = [&](int64_t i) { return axis < 0 ? 0 : (i / inner) % channels; };
  std::vector<float> max_abs(static_cast<size_t>(channels), 0.0f);
  for (int64_t i = 0; i < static_cast<int64_t>(data.size()); ++i) {
    float& m = max_abs[static_cast<size_t>(channel_of(i))];
    m = std::max(m, std::fabs(data[static_cast<size_t>(i)]));
  }
  Value q;
  q.name = w.name + "/int8";
  q.dtype = DType::kInt8;
  q.shape = shape;
  q.quantization.dimension = axis < 0 ? 0 : axis;
  for (size_t c = 0; c < max_abs.size(); ++c) {
    float scale = max_abs[c] > 0 ? max_abs[c] / 127.0f : 1.0f;  // an all-zero channel quantizes to 0 with any scale
    if (c < trained_scales.size()) scale = trained_scales[c];
    if (c < min_scales.size()) scale = std::max(scale, min_scales[c]);
    q.quantization.scale.push_back(scale);
    q.quantization.zero_point.push_back(0);
  }
  auto t = tensor(DType::kInt8, shape);
  for (int64_t i = 0; i < static_cast<int64_t>(data.size()); ++i) {
    const float s = q.quantization.scale[static_cast<size_t>(channel_of(i))];
    t->as<int8_t>()[i] = static_cast<int8_t>(std::clamp<int64_t>(round_to_int(data[static_cast<size_t>(i)] / s), -127, 127));
  }
  q.constant = std::move(t);
  return q;
}

// Scales for weights fake-quantized in training, per channel along `axis`
// (one when axis < 0). A fake-quantized weight is an integer multiple of its
// grid's scale whatever the grid's zero point, so with zero point 0 that scale
// holds it exactly while the multiple is within [-127, 127]. A channel with
// larger multiples (an asymmetric range such as contrib.quantize's per-tensor
// min/max of the weights, or -128 without narrow_range) gets max|w| / 127.
std::vector<float> trained_weight_scales(const Value& w, const Quantization& grid, int axis, int* requantized) {
  const std::vector<float> data = floats_of(*w.constant);
  const int64_t channels = axis < 0 ? 1 : w.shape[static_cast<size_t>(axis)];
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis < 0 ? 0 : axis) + 1; d < w.shape.size(); ++d) inner *= w.shape[d];
  std::vector<float> max_abs(static_cast<size_t>(channels), 0.0f);
  for (int64_t i = 0; i < static_cast<int64_t>(data.size()); ++i) {
    float& m = max_abs[static_cast<size_t>(axis < 0 ? 0 : (i / inner) % channels)];
    m = std::max(m, std::fabs(data[static_cast<size_t>(i)]));
  }
  std::vector<float> scales;
  for (size_t c = 0; c < max_abs.size(); ++c) {
    const float grid_scale = grid.scale.size() == 1 ? grid.scale[0] : grid.scale[c];
    if (round_to_int(max_abs[c] / grid_scale) <= 127) {
      scales.push_back(grid_scale);
    } else {
      scales.push_back(max_abs[c] / 127.0f);
      ++*requantized;
    }
  }
  return scales;
}

// int32 bias at input_scale * weight_scale[c].
Value int32_bias(const Value& b, float input_scale, const std::vector<float>& weight_scales) {
  const std::vector<float> data = floats_of(*b.constant);
  Value q;
  q.name = b.name + "/int32";
  q.dtype = DType::kInt32;
  q.shape = b.shape;
  auto t = tensor(DType::kInt32, b.shape);
  for (size_t c = 0; c < data.size(); ++c) {
    const float ws = weight_scales.size() == 1 ? weight_scales[0] : weight_scales[c];
    const double scale = static_cast<double>(input_scale) * static_cast<double>(ws);
    q.quantization.scale.push_back(static_cast<float>(scale));
    q.quantization.zero_point.push_back(0);
    const double v = std::round(static_cast<double>(data[c]) / scale);
    t->as<int32_t>()[c] = static_cast<int32_t>(std::clamp<double>(v, std::numeric_limits<int32_t>::min(),
                                                                  std::numeric_limits<int32_t>::max()));
  }
  q.constant = std::move(t);
  return q;
}

// A float constant read by an int8 op as an activation (e.g. ADD's addend).
Value asymmetric_constant(const Value& c, const Quantization& q) {
  Value v;
  v.name = c.name + "/int8";
  v.dtype = DType::kInt8;
  v.shape = c.shape;
  v.quantization = q;
  auto t = tensor(DType::kInt8, c.shape);
  const std::vector<float> data = floats_of(*c.constant);
  for (size_t i = 0; i < data.size(); ++i) {
    t->as<int8_t>()[i] = static_cast<int8_t>(std::clamp<int64_t>(
        round_to_int(data[i] / q.scale[0]) + q.zero_point[0], -128, 127));
  }
  v.constant = std::move(t);
  return v;
}

Quantization fixed(float scale, int64_t zero_point) {
  Quantization q;
  q.scale = {scale};
  q.zero_point = {zero_point};
  return q;
}

// ---- which ops run int8 -----------------------------------------------------

bool is_float(const LoweredModel& m, int v) { return v >= 0 && m.values[static_cast<size_t>(v)].dtype == DType::kFloat32; }
bool is_constant(const LoweredModel& m, int v) { return v >= 0 && m.values[static_cast<size_t>(v)].is_constant(); }

enum class Role { kPassThrough, kWeighted, kArithmetic, kFixedOutput, kShared, kReduce, kFoldableActivation };

bool role_of(Op code, Role* role) {
  switch (code) {
    case Op::CONV2D: case Op::DEPTHWISE_CONV2D: case Op::MATMUL: *role = Role::kWeighted; return true;
    case Op::MAX_POOL2D: case Op::AVG_POOL2D: case Op::RESHAPE: case Op::PAD: *role = Role::kPassThrough; return true;
    case Op::ADD: case Op::SUB: case Op::MUL: *role = Role::kArithmetic; return true;
    case Op::SOFTMAX: case Op::SIGMOID: case Op::TANH: *role = Role::kFixedOutput; return true;
    // MAXIMUM/MINIMUM: int8_arithmetic.cc accepts them with one shared
    // quantization, but the runtime has no int8 kernel for them: left float.
    case Op::CONCAT: *role = Role::kShared; return true;
    case Op::MEAN: *role = Role::kReduce; return true;
    case Op::RELU: case Op::RELU6: *role = Role::kFoldableActivation; return true;
    default: return false;
  }
}

// An op int8_arithmetic.cc gives integers to, in a form its kernel takes:
// float activations, constant weights and biases.
bool has_int8_kernel(const LoweredModel& m, const LoweredOp& op) {
  Role role;
  if (!role_of(op.opcode, &role) || role == Role::kFoldableActivation) return false;
  if (op.outputs.size() != 1 || !is_float(m, op.outputs[0]) || op.inputs.empty()) return false;
  if (role == Role::kWeighted) {
    if (op.inputs.size() < 2 || !is_float(m, op.inputs[0]) || is_constant(m, op.inputs[0])) return false;
    const Value& w = m.values[static_cast<size_t>(op.inputs[1])];
    if (!w.is_constant() || w.dtype != DType::kFloat32) return false;
    if (op.opcode == Op::MATMUL) {
      const auto* o = op.options.AsMatMulOptions();
      if (o == nullptr || o->transpose_a || w.shape.size() != 2) return false;
    } else if (w.shape.size() != 4) {
      return false;
    }
    const int64_t channels = op.opcode == Op::CONV2D ? w.shape[3]
                             : op.opcode == Op::DEPTHWISE_CONV2D ? w.shape[2] * w.shape[3]
                             : (op.options.AsMatMulOptions()->transpose_b ? w.shape[0] : w.shape[1]);
    for (size_t i = 2; i < op.inputs.size(); ++i) {
      if (op.inputs[i] < 0) continue;
      const Value& b = m.values[static_cast<size_t>(op.inputs[i])];
      if (i > 2 || !b.is_constant() || b.dtype != DType::kFloat32 || b.shape.size() != 1 || b.shape[0] != channels) {
        return false;
      }
    }
    return true;
  }
  if (op.opcode == Op::PAD) {
    const auto* o = op.options.AsPadOptions();
    if (o == nullptr || o->mode != schema::PadMode::CONSTANT || o->constant_value != 0.0f) return false;
  }
  const size_t arity = role == Role::kArithmetic ? 2 : role == Role::kShared ? op.inputs.size() : 1;
  if (op.inputs.size() != arity) return false;
  for (int v : op.inputs) {
    if (!is_float(m, v)) return false;
  }
  // A constant first operand would need its own range; such ops were folded.
  return !is_constant(m, op.inputs[0]) || role == Role::kArithmetic || role == Role::kShared;
}

// Union-find over value ids: values that must share one quantization.
struct Groups {
  std::vector<int> parent;
  explicit Groups(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int v) {
    while (parent[static_cast<size_t>(v)] != v) v = parent[static_cast<size_t>(v)] = parent[static_cast<size_t>(parent[static_cast<size_t>(v)])];
    return v;
  }
  void join(int a, int b) { parent[static_cast<size_t>(find(a))] = find(b); }
};

// Range of a constant's data.
ValueRange constant_range(const Value& c) {
  ValueRange r;
  for (float x : floats_of(*c.constant)) {
    r.min = r.seen ? std::min(r.min, x) : x;
    r.max = r.seen ? std::max(r.max, x) : x;
    r.seen = true;
  }
  return r;
}

// np.savez(x, y) names its arrays arr_0, arr_1, ...: their position.
int savez_position(const std::string& name) {
  if (name.size() < 5 || name.compare(0, 4, "arr_") != 0 || name.size() > 8) return -1;
  int k = 0;
  for (size_t i = 4; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    k = k * 10 + (name[i] - '0');
  }
  return k;
}

}  // namespace

std::vector<CalibrationSample> calibration_samples(const LoweredModel& model,
                                                   const std::vector<CalibrationArray>& arrays,
                                                   std::vector<std::string>* notes) {
  std::vector<const CalibrationArray*> for_input(model.inputs.size(), nullptr);
  std::string input_list;
  for (int v : model.inputs) input_list += (input_list.empty() ? "" : ", ") + model.values[static_cast<size_t>(v)].name;
  for (const CalibrationArray& array : arrays) {
    int input = -1;
    for (size_t i = 0; i < model.inputs.size() && input < 0; ++i) {
      if (names_input(array.name, model.values[static_cast<size_t>(model.inputs[i])].name)) input = static_cast<int>(i);
    }
    if (input < 0 && !array.named && arrays.size() == 1 && model.inputs.size() == 1) input = 0;
    const int position = savez_position(array.name);
    if (input < 0 && position >= 0 && static_cast<size_t>(position) < model.inputs.size()) input = position;
    if (input < 0) {
      bad_data(array.source, "input '" + array.name + "' is not a model input (inputs: " + input_list +
                                 (position >= 0 ? "; np.savez's unnamed arrays feed the inputs in order" : "") + ")");
    }
    if (for_input[static_cast<size_t>(input)] != nullptr) {
      bad_data(array.source, "input '" + model.values[static_cast<size_t>(model.inputs[static_cast<size_t>(input)])].name +
                                 "' is given twice");
    }
    for_input[static_cast<size_t>(input)] = &array;
  }
  // float64 arrays rounded to a float32 input's dtype, kept here.
  std::vector<CalibrationArray> rounded(model.inputs.size());
  int64_t count = -1;
  const CalibrationArray* first = nullptr;
  for (size_t i = 0; i < model.inputs.size(); ++i) {
    const Value& input = model.values[static_cast<size_t>(model.inputs[i])];
    const CalibrationArray* array = for_input[i];
    if (array == nullptr) {
      bad_data(arrays.empty() ? std::string("(none)") : arrays.front().source.substr(0, arrays.front().source.find(": member")),
               "no array for model input '" + input.name + "'");
    }
    if (array->tensor.dtype == DType::kFloat64 && input.dtype == DType::kFloat32) {
      CalibrationArray& r = rounded[i];
      r.name = array->name;
      r.source = array->source;
      r.tensor = narrowed_float64(array->tensor);
      if (notes != nullptr) {
        notes->push_back("calibration " + array->source + " is float64; rounded to float32, input '" + input.name +
                         "''s dtype");
      }
      array = for_input[i] = &r;
    }
    const HostTensor& t = array->tensor;
    if (t.dtype != input.dtype) {
      bad_data(array->source, "input '" + input.name + "' is " + dtype_name(input.dtype) + ", the array is " +
                                  dtype_name(t.dtype));
    }
    // An array of the input's shape is one sample; one whose leading dim is k
    // times the input's (the rest equal) is k samples, stacked along that dim,
    // so a batch-1 model takes [n, ...] and a batch-B model [k * B, ...].
    const int64_t model_batch = input.shape.empty() ? 0 : input.shape[0];
    const bool stacked = model_batch > 0 && t.shape.size() == input.shape.size() && !t.shape.empty() &&
                         t.shape[0] % model_batch == 0 &&
                         std::equal(input.shape.begin() + 1, input.shape.end(), t.shape.begin() + 1);
    if (!stacked && t.shape != input.shape) {
      bad_data(array->source, "input '" + input.name + "' has shape " + shape_to_string(input.shape) +
                                  ", the array has shape " + shape_to_string(t.shape) +
                                  (model_batch > 0 ? " (expected samples of it stacked along the first dim)" : ""));
    }
    const int64_t n = stacked ? t.shape[0] / model_batch : 1;
    if (n == 0) bad_data(array->source, "input '" + input.name + "' has no samples (an empty calibration set)");
    if (count >= 0 && n != count) {
      bad_data(array->source, "input '" + input.name + "' has " + std::to_string(n) + " samples, '" + first->name +
                                  "' has " + std::to_string(count));
    }
    count = n;
    first = array;
  }
  if (count <= 0) bad_data("(none)", "an empty calibration set");
  std::vector<CalibrationSample> samples(static_cast<size_t>(count));
  for (size_t i = 0; i < model.inputs.size(); ++i) {
    const Value& input = model.values[static_cast<size_t>(model.inputs[i])];
    const size_t bytes = static_cast<size_t>(element_count(input.shape)) * dtype_size(input.dtype);
    for (size_t s = 0; s < samples.size(); ++s) {
      HostTensor t;
      t.dtype = input.dtype;
      t.shape = input.shape;
      const uint8_t* from = for_input[i]->tensor.data.data() + s * bytes;
      t.data.assign(from, from + bytes);
      samples[s].push_back(std::move(t));
    }
  }
  return samples;
}

Quantization asymmetric_int8(float min, float max) {
  min = std::min(min, 0.0f);
  max = std::max(max, 0.0f);
  float scale = (max - min) / 255.0f;
  if (!(scale >= kMinScale)) scale = kMinScale;
  const float zero_point_from_min = -128.0f - min / scale;
  int64_t zero_point = 0;
  if (zero_point_from_min < -128.0f) {
    zero_point = -128;
  } else if (zero_point_from_min > 127.0f) {
    zero_point = 127;
  } else {
    zero_point = static_cast<int64_t>(std::round(zero_point_from_min));
  }
  return fixed(scale, zero_point);
}

std::vector<ValueRange> calibrate(const LoweredModel& model, const std::vector<CalibrationSample>& samples,
                                  const PostTrainingOptions& options) {
  std::vector<ValueRange> ranges(model.values.size());
  std::vector<int> producer(model.values.size(), -1);
  for (size_t i = 0; i < model.ops.size(); ++i)
    for (int v : model.ops[i].outputs) producer[static_cast<size_t>(v)] = static_cast<int>(i);
  LoweredRunner runner(model, "calibration");
  for (size_t s = 0; s < samples.size(); ++s) {
    if (options.on_sample) options.on_sample(s, samples.size());
    runner.run(samples[s], [&](int v, const TensorView& view) {
      if (view.dtype != DType::kFloat32) return;
      const float* data = view.as<const float>();
      const size_t n = view.bytes / sizeof(float);
      ValueRange& r = ranges[static_cast<size_t>(v)];
      for (size_t i = 0; i < n; ++i) {
        const float x = data[i];
        if (!std::isfinite(x)) {
          const int p = producer[static_cast<size_t>(v)];
          ErrorLocation where;
          if (p >= 0) {
            where.node = model.ops[static_cast<size_t>(p)].node_name;
            where.op = schema::EnumNameOpCode(model.ops[static_cast<size_t>(p)].opcode);
          }
          throw ConvertError("calibration: value '" + model.values[static_cast<size_t>(v)].name + "' is " +
                                 (std::isnan(x) ? "NaN" : "infinite") + " on calibration sample " + std::to_string(s) +
                                 (p >= 0 ? " (computed by " + op_label(model.ops[static_cast<size_t>(p)]) + ")"
                                         : std::string(" (a model input)")),
                             ErrorCategory::kInvalidInput, where);
        }
        r.min = r.seen ? std::min(r.min, x) : x;
        r.max = r.seen ? std::max(r.max, x) : x;
        r.seen = true;
      }
    });
  }
  if (options.method != CalibrationMethod::kPercentile) return ranges;
  // Second pass: a histogram of |value| over [0, max |value|] per value
  // (bounded memory, unlike keeping every value), then the bin where the
  // cumulative count reaches the percentile; its upper edge is the limit.
  constexpr size_t kBins = 1u << 14;
  std::vector<std::vector<uint64_t>> histograms(model.values.size());
  std::vector<uint64_t> totals(model.values.size(), 0);
  for (const CalibrationSample& sample : samples) {
    runner.run(sample, [&](int v, const TensorView& view) {
      if (view.dtype != DType::kFloat32) return;
      const ValueRange& r = ranges[static_cast<size_t>(v)];
      const float top = std::max(std::fabs(r.min), std::fabs(r.max));
      if (!(top > 0)) return;
      std::vector<uint64_t>& h = histograms[static_cast<size_t>(v)];
      if (h.empty()) h.assign(kBins, 0);
      const float* data = view.as<const float>();
      const size_t n = view.bytes / sizeof(float);
      for (size_t i = 0; i < n; ++i) {
        const size_t bin = std::min(kBins - 1, static_cast<size_t>(std::fabs(data[i]) / top * kBins));
        ++h[bin];
      }
      totals[static_cast<size_t>(v)] += n;
    });
  }
  for (size_t v = 0; v < ranges.size(); ++v) {
    const std::vector<uint64_t>& h = histograms[v];
    if (h.empty()) continue;
    const double wanted = options.percentile / 100.0 * static_cast<double>(totals[v]);
    const float top = std::max(std::fabs(ranges[v].min), std::fabs(ranges[v].max));
    uint64_t count = 0;
    size_t bin = 0;
    for (; bin < kBins; ++bin) {
      count += h[bin];
      if (static_cast<double>(count) >= wanted) break;
    }
    const float limit = top * static_cast<float>(std::min(bin + 1, kBins)) / static_cast<float>(kBins);
    ranges[v].min = std::max(ranges[v].min, -limit);
    ranges[v].max = std::min(ranges[v].max, limit);
  }
  return ranges;
}

namespace {

// One post-training quantization, in the steps quantize_post_training() runs:
// choose the ops that run int8, give every value they touch a quantization
// (groups of values that must share one), then rewrite the op list.
class PostTrainingQuantizer {
 public:
  PostTrainingQuantizer(LoweredModel& model, const std::vector<ValueRange>& calibrated,
                        const PostTrainingOptions& options, const std::map<int, Quantization>& trained)
      : m(model),
        options(options),
        trained(trained),
        original_values(model.values.size()),
        ranges(calibrated),
        readers(original_values, 0),
        producer(original_values, -1),
        graph_outputs(model.outputs.begin(), model.outputs.end()),
        int8(model.ops.size(), false),
        groups(original_values),
        as_int8(original_values, -1),
        as_float(original_values, -1) {
    ranges.resize(original_values);
    for (size_t i = 0; i < m.ops.size(); ++i) {
      for (int v : m.ops[i].inputs)
        if (v >= 0) ++readers[static_cast<size_t>(v)];
      for (int v : m.ops[i].outputs) producer[static_cast<size_t>(v)] = static_cast<int>(i);
    }
  }

  PostTrainingReport run() {
    choose_int8_ops();
    group_values();
    require_quantizations();
    rewrite_ops();
    convert_outputs();
    m.ops = std::move(ops);
    // Trained grids were only for the weights quantized above.
    for (Value& value : m.values) {
      if (value.dtype == DType::kFloat32) value.quantization = Quantization{};
    }
    return report;
  }

 private:
  // The role of an op chosen to run int8 (each such op has one: has_int8_kernel
  // and the folded activations only choose ops role_of names).
  static Role int8_role(Op code) {
    Role role = Role::kPassThrough;
    role_of(code, &role);
    return role;
  }

  // 1. Which ops run int8.
  void choose_int8_ops() {
    std::vector<size_t> refused;
    for (size_t i = 0; i < m.ops.size(); ++i) {
      const LoweredOp& op = m.ops[i];
      Role role;
      if (role_of(op.opcode, &role) && role == Role::kFoldableActivation) {
        // Runs int8 only folded into the clamp of the int8 ADD/SUB/MUL before it.
        const int in = op.inputs.empty() ? -1 : op.inputs[0];
        const int p = in >= 0 ? producer[static_cast<size_t>(in)] : -1;
        Role producer_role;
        if (p >= 0 && int8[static_cast<size_t>(p)] && role_of(m.ops[static_cast<size_t>(p)].opcode, &producer_role) &&
            producer_role == Role::kArithmetic && readers[static_cast<size_t>(in)] == 1 && !graph_outputs.count(in) &&
            op.inputs.size() == 1 && is_float(m, op.outputs[0])) {
          int8[i] = true;
          ranges[static_cast<size_t>(in)] = ranges[static_cast<size_t>(op.outputs[0])];  // the sum is only seen clamped
          continue;
        }
      } else if (has_int8_kernel(m, op)) {
        int8[i] = true;
        continue;
      }
      bool computes_floats = false;
      for (int v : op.outputs) computes_floats |= is_float(m, v);
      for (int v : op.inputs) computes_floats |= is_float(m, v);
      if (computes_floats) refused.push_back(i);
    }
    if (options.strict && !refused.empty()) {
      Refusal refusal;
      refusal.reason = "no int8 kernel";
      std::string list;
      for (size_t i : refused) {
        refusal.nodes_by_op[schema::EnumNameOpCode(m.ops[i].opcode)].push_back(m.ops[i].node_name);
        list += "\n  " + op_label(m.ops[i]);
      }
      ErrorLocation where;
      where.node = m.ops[refused.front()].node_name;
      where.op = schema::EnumNameOpCode(m.ops[refused.front()].opcode);
      throw ConvertError("--strict-int8: " + std::to_string(refused.size()) +
                             " op(s) have no int8 kernel and would stay float:" + list,
                         ErrorCategory::kUnsupported, where)
          .with_refusals({refusal});
    }
    for (size_t i : refused) report.float_ops.push_back(op_label(m.ops[i]));
  }

  // 2. Quantization of every value an int8 op touches: shared groups, fixed outputs.
  // Ops that move values keep their input's quantization (a pooled softmax
  // stays 1/256); CONCAT shares one range over its inputs and output, except inputs fixed by SOFTMAX/LOGISTIC/TANH, which are
  // requantized onto it (as TFLite's quantizer inserts a requantize).
  void group_values() {
    std::vector<int> fixed_values;
    for (size_t i = 0; i < m.ops.size(); ++i) {
      if (!int8[i]) continue;
      const LoweredOp& op = m.ops[i];
      const Role role = int8_role(op.opcode);
      const int out = op.outputs[0];
      if (role == Role::kPassThrough || role == Role::kFoldableActivation) groups.join(op.inputs[0], out);
      if (role == Role::kFixedOutput) fixed_values.push_back(out);
    }
    std::set<int> fixed_roots;
    for (int v : fixed_values) fixed_roots.insert(groups.find(v));
    for (size_t i = 0; i < m.ops.size(); ++i) {
      Role role;
      if (!int8[i] || !role_of(m.ops[i].opcode, &role) || role != Role::kShared) continue;
      for (int v : m.ops[i].inputs) {
        if (fixed_roots.count(groups.find(v)) == 0) groups.join(v, m.ops[i].outputs[0]);
      }
    }
    for (int v : fixed_values) {
      const LoweredOp& op = m.ops[static_cast<size_t>(producer[static_cast<size_t>(v)])];
      fixed_output[groups.find(v)] = op.opcode == Op::TANH ? fixed(1.0f / 128.0f, 0) : fixed(1.0f / 256.0f, -128);
    }
    for (size_t v = 0; v < original_values; ++v) {
      const Value& value = m.values[v];
      if (value.dtype != DType::kFloat32) continue;
      const ValueRange r = value.is_constant() ? constant_range(value) : ranges[v];
      if (!r.seen) continue;
      ValueRange& g = group_range[groups.find(static_cast<int>(v))];
      g.min = g.seen ? std::min(g.min, r.min) : r.min;
      g.max = g.seen ? std::max(g.max, r.max) : r.max;
      g.seen = true;
    }
    for (const auto& [v, q] : trained) trained_group.emplace(groups.find(v), q);
  }

  // The quantization of value v: its group's fixed, trained or measured one.
  Quantization params(int v) {
    const int root = groups.find(v);
    const auto f = fixed_output.find(root);
    if (f != fixed_output.end()) return f->second;
    const std::string& name = m.values[static_cast<size_t>(v)].name;
    const auto t = trained_group.find(root);
    if (t != trained_group.end()) {
      if (!m.values[static_cast<size_t>(v)].is_constant()) report.ranges_from_fake_quant.insert(name);
      return t->second;
    }
    const ValueRange& r = group_range[root];
    if (!r.seen) {
      throw ConvertError("internal error: post-training quantization: value '" + name +
                         "' was never seen during calibration");
    }
    if (!m.values[static_cast<size_t>(v)].is_constant()) report.ranges_from_calibration.insert(name);
    return asymmetric_int8(r.min, r.max);
  }

  // A value with a quantization to give it: fixed, trained or measured.
  bool has_quantization(int v) {
    const int root = groups.find(v);
    return fixed_output.count(root) > 0 || trained_group.count(root) > 0 || group_range[root].seen;
  }

  // Every value an int8 op reads or writes needs a quantization: fixed, trained
  // (FakeQuant) or calibrated. All values lacking one are refused together.
  void require_quantizations() {
    std::vector<int> missing;
    std::set<int> listed;
    auto need = [&](int v) {
      if (v < 0 || is_constant(m, v) || !is_float(m, v) || listed.count(v)) return;
      if (has_quantization(v)) return;
      listed.insert(v);
      missing.push_back(v);
    };
    if (options.int8_io) {
      for (int v : m.inputs) need(v);
    }
    for (size_t i = 0; i < m.ops.size(); ++i) {
      if (!int8[i]) continue;
      const Role role = int8_role(m.ops[i].opcode);
      for (size_t k = 0; k < m.ops[i].inputs.size(); ++k) {
        if (role != Role::kWeighted || k == 0) need(m.ops[i].inputs[k]);
      }
      need(m.ops[i].outputs[0]);
    }
    if (!missing.empty()) {
      Refusal refusal;
      refusal.reason = "no range: no FakeQuant gives one and no calibration data was given";
      std::string list;
      for (int v : missing) {
        const int p = producer[static_cast<size_t>(v)];
        const std::string by = p >= 0 ? op_label(m.ops[static_cast<size_t>(p)]) : std::string("a model input");
        refusal.nodes_by_op[p >= 0 ? schema::EnumNameOpCode(m.ops[static_cast<size_t>(p)].opcode) : "input"].push_back(
            m.values[static_cast<size_t>(v)].name);
        list += "\n  " + m.values[static_cast<size_t>(v)].name + " (" + (p >= 0 ? "computed by " : "") + by + ")";
      }
      ErrorLocation where;
      const int p = producer[static_cast<size_t>(missing.front())];
      if (p >= 0) {
        where.node = m.ops[static_cast<size_t>(p)].node_name;
        where.op = schema::EnumNameOpCode(m.ops[static_cast<size_t>(p)].opcode);
      }
      throw ConvertError("--quantize int8: " + std::to_string(missing.size()) +
                             " tensor(s) have no range (no FakeQuant gives one, and no --calibration data was given "
                             "to measure it):" + list,
                         ErrorCategory::kUnsupported, where)
          .with_refusals({refusal});
    }
  }

  // Value v as int8 (QUANTIZE) or as float (DEQUANTIZE), converted once.
  int convert_edge(int v, bool to_int8) {
    std::vector<int>& cache = to_int8 ? as_int8 : as_float;
    if (cache[static_cast<size_t>(v)] >= 0) return cache[static_cast<size_t>(v)];
    const int source = to_int8 ? as_float[static_cast<size_t>(v)] : as_int8[static_cast<size_t>(v)];
    Value converted;
    converted.name = m.values[static_cast<size_t>(v)].name + (to_int8 ? "/quantized" : "/dequantized");
    converted.dtype = to_int8 ? DType::kInt8 : DType::kFloat32;
    converted.shape = m.values[static_cast<size_t>(v)].shape;
    if (to_int8) converted.quantization = params(v);
    const int id = m.add_value(std::move(converted));
    LoweredOp op;
    op.opcode = to_int8 ? Op::QUANTIZE : Op::DEQUANTIZE;
    op.inputs = {source};
    op.outputs = {id};
    op.node_name = m.values[static_cast<size_t>(v)].name + (to_int8 ? "/quantize" : "/dequantize");
    ops.push_back(std::move(op));
    (to_int8 ? report.quantize_ops : report.dequantize_ops)++;
    cache[static_cast<size_t>(v)] = id;
    return id;
  }

  // An int8 value moved onto the quantization of `target` (int8 -> int8 QUANTIZE).
  int requantize(int v, int target) {
    const std::pair<int, int> key(v, groups.find(target));
    const auto it = requantized.find(key);
    if (it != requantized.end()) return it->second;
    const int source = convert_edge(v, true);
    Value moved;
    moved.name = m.values[static_cast<size_t>(v)].name + "/requantized";
    moved.dtype = DType::kInt8;
    moved.shape = m.values[static_cast<size_t>(v)].shape;
    moved.quantization = params(target);
    const int id = m.add_value(std::move(moved));
    LoweredOp op;
    op.opcode = Op::QUANTIZE;
    op.inputs = {source};
    op.outputs = {id};
    op.node_name = m.values[static_cast<size_t>(v)].name + "/requantize";
    ops.push_back(std::move(op));
    ++report.quantize_ops;
    requantized[key] = id;
    return id;
  }

  // A value an int8 op computes becomes int8 where it is.
  void make_int8_in_place(int v) {
    Value& value = m.values[static_cast<size_t>(v)];
    value.quantization = params(v);
    value.dtype = DType::kInt8;
    as_int8[static_cast<size_t>(v)] = v;
  }

  // 3. Rewrite: int8 ops read int8 values (QUANTIZE inserted after float
  // producers), float ops read float ones (DEQUANTIZE inserted after int8
  // producers); values computed by int8 ops become int8 in place.
  void rewrite_ops() {
    for (size_t v = 0; v < original_values; ++v) {
      if (m.values[v].dtype == DType::kFloat32 && !m.values[v].is_constant()) as_float[v] = static_cast<int>(v);
    }
    for (int v : m.inputs) {
      if (options.int8_io && m.values[static_cast<size_t>(v)].dtype == DType::kFloat32 && has_quantization(v)) {
        make_int8_in_place(v);
        as_float[static_cast<size_t>(v)] = -1;
      }
    }
    for (size_t i = 0; i < m.ops.size(); ++i) {
      LoweredOp op = m.ops[i];
      if (!int8[i]) {
        for (int& v : op.inputs) {
          if (v >= 0 && static_cast<size_t>(v) < original_values && as_float[static_cast<size_t>(v)] < 0 &&
              as_int8[static_cast<size_t>(v)] >= 0) {
            v = convert_edge(v, false);
          }
        }
        ops.push_back(std::move(op));
        continue;
      }
      const Role role = int8_role(op.opcode);
      const int activation = op.inputs[0];
      for (size_t k = 0; k < op.inputs.size(); ++k) {
        int& v = op.inputs[k];
        if (v < 0) continue;
        const Value& value = m.values[static_cast<size_t>(v)];
        if (role == Role::kWeighted && k >= 1) continue;  // below
        if (value.is_constant()) {
          v = m.add_value(asymmetric_constant(value, params(v)));
        } else if (role == Role::kShared && groups.find(v) != groups.find(op.outputs[0])) {
          v = requantize(v, op.outputs[0]);
        } else {
          v = convert_edge(v, true);
        }
      }
      if (role == Role::kWeighted) quantize_weights(op, activation);
      make_int8_in_place(op.outputs[0]);
      as_float[static_cast<size_t>(op.outputs[0])] = -1;
      ops.push_back(std::move(op));
      ++report.int8_ops;
    }
  }

  // A weighted op's weights quantized symmetric per channel on its axis (or
  // on its FakeQuant grid), its bias to int32 at input scale x weight scale.
  void quantize_weights(LoweredOp& op, int activation) {
    const Value w = m.values[static_cast<size_t>(op.inputs[1])];
    int axis = -1;
    if (op.opcode == Op::CONV2D) {
      axis = 3;
    } else if (op.opcode == Op::DEPTHWISE_CONV2D) {
      axis = w.shape[3] == 1 ? 2 : w.shape[2] == 1 ? 3 : -1;
    } else {
      axis = op.options.AsMatMulOptions()->transpose_b ? 0 : 1;
    }
    // A bias too large for int32 at input_scale * weight_scale enlarges that
    // weight scale instead, so |bias| stays within half the int32 range (as
    // TFLite's AdjustWeightsForBiasScale does); clamping would change the bias.
    const bool has_bias = op.inputs.size() > 2 && op.inputs[2] >= 0;
    const float input_scale = params(activation).scale[0];
    std::vector<float> min_scales;
    if (has_bias) {
      const std::vector<float> bias = floats_of(*m.values[static_cast<size_t>(op.inputs[2])].constant);
      const double limit = 0.5 * static_cast<double>(std::numeric_limits<int32_t>::max()) * input_scale;
      for (float b : bias) min_scales.push_back(static_cast<float>(std::fabs(b) / limit));
      if (axis < 0) min_scales = {*std::max_element(min_scales.begin(), min_scales.end())};
    }
    // Trained weights keep their FakeQuant grid's scale (per tensor, or per
    // channel on the op's axis), with zero point 0 as TFLite's int8 weights.
    const Quantization& grid = w.quantization;
    const bool grid_fits = !grid.empty() &&
                           (grid.scale.size() == 1 ||
                            (axis >= 0 && grid.dimension == axis &&
                             static_cast<int64_t>(grid.scale.size()) == w.shape[static_cast<size_t>(axis)]));
    if (!grid_fits) report.untrained_weight_ops.push_back(op_label(op));
    if (!grid.empty() && !grid_fits) {
      report.notes.push_back("weights of " + op_label(op) +
                             ": their FakeQuant grid is per channel on another axis than the op's; quantized "
                             "symmetric from their values instead");
    }
    std::vector<float> trained_scales;
    if (grid_fits) {
      int beyond_grid = 0;
      trained_scales = trained_weight_scales(w, grid, axis, &beyond_grid);
      ++report.weights_from_fake_quant;
      report.trained_weight_ops.push_back(op_label(op));
      if (beyond_grid > 0) {
        report.notes.push_back("weights of " + op_label(op) + ": " + std::to_string(beyond_grid) + " of " +
                               std::to_string(trained_scales.size()) +
                               " channel(s) reach beyond ±127 steps of their FakeQuant grid (an asymmetric range; "
                               "TFLite's int8 weights have zero point 0): those quantized symmetric from their "
                               "values, max|w| / 127");
      } else if (grid.scale.size() == 1) {
        axis = -1;  // the grid's one scale for the whole tensor
        trained_scales.resize(1);
        if (min_scales.size() > 1) min_scales = {*std::max_element(min_scales.begin(), min_scales.end())};
      }
    }
    Value qw = symmetric_weights(w, axis, min_scales, trained_scales);
    const std::vector<float> weight_scales = qw.quantization.scale;
    if (axis < 0) qw.quantization.dimension = 0;
    op.inputs[1] = m.add_value(std::move(qw));
    if (has_bias) {
      op.inputs[2] = m.add_value(int32_bias(m.values[static_cast<size_t>(op.inputs[2])], input_scale, weight_scales));
    }
  }

  // Outputs: float32 (DEQUANTIZE) or int8 (QUANTIZE) as asked; the output
  // keeps its name, the value it was computed as gets a suffix.
  void convert_outputs() {
    for (int& v : m.outputs) {
      const bool is_int8 = as_int8[static_cast<size_t>(v)] == v;
      if (is_int8 == options.int8_io || m.values[static_cast<size_t>(v)].dtype == DType::kBool) continue;
      if (!is_int8 && m.values[static_cast<size_t>(v)].dtype != DType::kFloat32) continue;
      if (!is_int8 && !has_quantization(v)) continue;
      const std::string name = m.values[static_cast<size_t>(v)].name;
      const int converted = convert_edge(v, !is_int8);
      m.values[static_cast<size_t>(v)].name = name + (is_int8 ? "/int8" : "/float");
      m.values[static_cast<size_t>(converted)].name = name;
      v = converted;
    }
  }

  LoweredModel& m;
  const PostTrainingOptions& options;
  const std::map<int, Quantization>& trained;
  PostTrainingReport report;
  const size_t original_values;
  std::vector<ValueRange> ranges;
  std::vector<int> readers, producer;
  const std::set<int> graph_outputs;
  std::vector<bool> int8;  // by op
  Groups groups;
  std::map<int, Quantization> fixed_output;    // group root -> quantization
  std::map<int, ValueRange> group_range;       // group root -> its values' range
  std::map<int, Quantization> trained_group;   // group root -> the first trained quantization
  std::vector<int> as_int8, as_float;          // by original value: its int8 / float version, -1 none yet
  std::map<std::pair<int, int>, int> requantized;  // (value, target group) -> the moved value
  std::vector<LoweredOp> ops;                  // the rewritten op list
};

}  // namespace

PostTrainingReport quantize_post_training(LoweredModel* model, const std::vector<ValueRange>& calibrated,
                                          const PostTrainingOptions& options,
                                          const std::map<int, Quantization>& trained) {
  return PostTrainingQuantizer(*model, calibrated, options, trained).run();
}

std::vector<LayerSqnr> measure_sqnr(const LoweredModel& float_model, const LoweredModel& quantized,
                                    const std::vector<CalibrationSample>& samples) {
  // The int8 ops' outputs that are the float model's values (same ids).
  std::map<int, size_t> layer_of;
  std::vector<LayerSqnr> layers;
  for (const LoweredOp& op : quantized.ops) {
    if (!op.requantization || op.outputs.size() != 1) continue;
    const int v = op.outputs[0];
    if (static_cast<size_t>(v) >= float_model.values.size() ||
        float_model.values[static_cast<size_t>(v)].dtype != DType::kFloat32) {
      continue;
    }
    layer_of[v] = layers.size();
    layers.push_back({op.node_name, schema::EnumNameOpCode(op.opcode), 0});
  }
  std::vector<double> signal(layers.size(), 0), noise(layers.size(), 0);
  LoweredRunner float_runner(float_model, "SQNR (float model)");
  LoweredRunner int8_runner(quantized, "SQNR (int8 model)");
  for (const CalibrationSample& sample : samples) {
    std::map<int, std::vector<float>> reference;
    float_runner.run(sample, [&](int v, const TensorView& view) {
      if (layer_of.count(v) == 0) return;
      const float* p = view.as<const float>();
      reference[v].assign(p, p + view.bytes / sizeof(float));
    });
    // The int8 model's inputs: as they are, or quantized when they became int8.
    CalibrationSample inputs;
    for (size_t i = 0; i < quantized.inputs.size(); ++i) {
      const Value& in = quantized.values[static_cast<size_t>(quantized.inputs[i])];
      if (in.dtype != DType::kInt8 || sample[i].dtype != DType::kFloat32) {
        inputs.push_back(sample[i]);
        continue;
      }
      HostTensor t;
      t.dtype = DType::kInt8;
      t.shape = sample[i].shape;
      t.data.resize(static_cast<size_t>(sample[i].num_elements()));
      for (int64_t k = 0; k < sample[i].num_elements(); ++k) {
        t.as<int8_t>()[k] = static_cast<int8_t>(std::clamp<int64_t>(
            round_to_int(sample[i].as<float>()[k] / in.quantization.scale[0]) + in.quantization.zero_point[0], -128, 127));
      }
      inputs.push_back(std::move(t));
    }
    int8_runner.run(inputs, [&](int v, const TensorView& view) {
      const auto it = layer_of.find(v);
      if (it == layer_of.end() || view.dtype != DType::kInt8) return;
      const Quantization& q = quantized.values[static_cast<size_t>(v)].quantization;
      const std::vector<float>& f = reference[v];
      const int8_t* p = view.as<const int8_t>();
      for (size_t k = 0; k < f.size() && k < view.bytes; ++k) {
        const double real = static_cast<double>(q.scale[0]) * (p[k] - q.zero_point[0]);
        signal[it->second] += static_cast<double>(f[k]) * f[k];
        noise[it->second] += (f[k] - real) * (f[k] - real);
      }
    });
  }
  for (size_t i = 0; i < layers.size(); ++i) {
    layers[i].sqnr_db = noise[i] == 0 ? std::numeric_limits<double>::infinity() : 10.0 * std::log10(signal[i] / noise[i]);
  }
  return layers;
}

}  // namespace floe::conv
