// SPDX-License-Identifier: Apache-2.0
// Quantization-aware-trained graphs (see quantization_aware.h).
#include "converter/quantize/quantization_aware.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "converter/ir/error.h"
#include "converter/quantize/fake_quant_ranges.h"

namespace floe::conv {
namespace {

std::vector<float> floats_of(const Value& v) {
  const float* p = v.constant->as<float>();
  return std::vector<float>(p, p + v.constant->num_elements());
}

bool same(const Quantization& a, const Quantization& b) { return a.scale == b.scale && a.zero_point == b.zero_point; }

}  // namespace

TrainedRanges trained_ranges(const LoweredModel& model) {
  TrainedRanges trained;
  for (size_t i = 0; i < model.ops.size(); ++i) {
    const LoweredOp& op = model.ops[i];
    if (op.opcode != schema::OpCode::FAKE_QUANT || op.inputs.size() != 3 || op.outputs.size() != 1) continue;
    const Value& x = model.values[static_cast<size_t>(op.inputs[0])];
    if (x.is_constant() || x.dtype != DType::kFloat32) continue;
    const std::string where = op.node_name + " (FAKE_QUANT): ";
    const Value& lo = model.values[static_cast<size_t>(op.inputs[1])];
    const Value& hi = model.values[static_cast<size_t>(op.inputs[2])];
    if (!lo.is_constant() || !hi.is_constant()) {
      trained.unusable.push_back(where + "min/max are computed at run time (a FakeQuant range must be a constant or "
                                         "a checkpoint variable)");
      continue;
    }
    const auto* o = op.options.AsFakeQuantOptions();
    const int num_bits = o != nullptr ? o->num_bits : 8;
    const bool narrow = o != nullptr && o->narrow_range;
    if (num_bits != 8) {
      trained.unusable.push_back(where + "num_bits " + std::to_string(num_bits) +
                                 ": only 8-bit FakeQuant grids map onto int8 tensors (int8 kernels clamp to "
                                 "[-128, 127], not to 2^" + std::to_string(num_bits) +
                                 " levels; TFLite's converter would re-derive an 8-bit grid from the same min/max, "
                                 "which is not the grid the model was trained with)");
      continue;
    }
    const std::vector<float> min = floats_of(lo), max = floats_of(hi);
    if (min.size() != 1 || max.size() != 1) {
      trained.unusable.push_back(where + "per-channel FakeQuant on an activation (" + std::to_string(min.size()) +
                                 " ranges): int8 activations have one scale");
      continue;
    }
    const NudgedRange r = nudge_fake_quant(min[0], max[0], 8, narrow);
    if (!(r.scale > 0) || !std::isfinite(r.scale)) {
      trained.unusable.push_back(where + "empty or invalid range [" + std::to_string(min[0]) + ", " +
                                 std::to_string(max[0]) + "]");
      continue;
    }
    const Quantization q = int8_from_fake_quant(min, max, narrow, 0);
    // A value already given another quantization (two FakeQuants reading it)
    // keeps the first; this op then stays a float op between its neighbours.
    const auto existing = trained.quantization.find(op.inputs[0]);
    if (existing != trained.quantization.end() && !same(existing->second, q)) continue;
    trained.quantization[op.inputs[0]] = q;
    trained.quantization[op.outputs[0]] = q;
    if (narrow) trained.narrow_range.insert({op.inputs[0], op.outputs[0]});
    trained.fake_quants.push_back(i);
  }
  return trained;
}

int drop_trained_fake_quants(const TrainedRanges& trained, LoweredModel* model) {
  LoweredModel& m = *model;
  std::vector<bool> remove(m.ops.size(), false);
  std::set<int> inputs(m.inputs.begin(), m.inputs.end());
  int dropped = 0;
  for (size_t i : trained.fake_quants) {
    const int in = m.ops[i].inputs[0], out = m.ops[i].outputs[0];
    const bool out_is_output = std::count(m.outputs.begin(), m.outputs.end(), out) > 0;
    const bool in_is_io = inputs.count(in) > 0 || std::count(m.outputs.begin(), m.outputs.end(), in) > 0;
    if (out_is_output && in_is_io) continue;  // both names must stay: kept as a float op
    for (LoweredOp& op : m.ops) {
      std::replace(op.inputs.begin(), op.inputs.end(), out, in);
    }
    if (out_is_output) {
      std::replace(m.outputs.begin(), m.outputs.end(), out, in);
      m.values[static_cast<size_t>(in)].name = m.values[static_cast<size_t>(out)].name;
    }
    remove[i] = true;
    ++dropped;
  }
  std::vector<LoweredOp> kept;
  for (size_t i = 0; i < m.ops.size(); ++i) {
    if (!remove[i]) kept.push_back(std::move(m.ops[i]));
  }
  m.ops = std::move(kept);
  return dropped;
}

void clamp_narrow_range_outputs(const TrainedRanges& trained, LoweredModel* model) {
  for (LoweredOp& op : model->ops) {
    if (!op.requantization || op.outputs.size() != 1 || trained.narrow_range.count(op.outputs[0]) == 0) continue;
    if (model->values[static_cast<size_t>(op.outputs[0])].dtype != DType::kInt8) continue;
    op.requantization->activation_min = std::max(op.requantization->activation_min, -127);
  }
}

void refuse_unusable_fake_quants(const std::vector<std::string>& unusable) {
  if (unusable.empty()) return;
  std::string list;
  Refusal refusal;
  refusal.reason = "FakeQuant range int8 cannot follow";
  for (const std::string& u : unusable) {
    list += "\n  " + u;
    refusal.nodes_by_op["FakeQuant"].push_back(u.substr(0, u.find(' ')));
  }
  ErrorLocation where;
  where.node = unusable.front().substr(0, unusable.front().find(' '));
  throw ConvertError("--quantize int8: " + std::to_string(unusable.size()) +
                         " FakeQuant op(s) cannot give int8 ranges:" + list,
                     ErrorCategory::kUnsupported, where)
      .with_refusals({refusal});
}

}  // namespace floe::conv
