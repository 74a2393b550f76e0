// SPDX-License-Identifier: Apache-2.0
// FlatBuffer emission from the lowered model and its arena plan (plan/). Invariants
// the runtime's validator re-checks: every tensor's size equals dtype x shape,
// constants and arena offsets are 16-byte aligned, and every arena range lies
// inside arena_size. Each arena tensor carries its planned lifetime (Model::Load
// re-proves the plan from it), and the finished buffer is sealed with
// payload_crc32c (schemas/contract/checksum.h).
#include "converter/emit/emit.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "converter/eval/run_lowered.h"
#include "converter/ir/error.h"
#include "converter/ir/limits.h"
#include "converter/plan/arena_plan.h"
#include "schemas/contract/checksum.h"
#include "schemas/contract/limits.h"

namespace floe::conv {
namespace {

constexpr uint64_t kAlignment = kTensorAlignment;
// Nonzero, so FlatBuffers stores the field (defaults are omitted); replaced by
// the real CRC once the buffer is complete.
constexpr uint32_t kChecksumPlaceholder = 0xFFFFFFFFu;

uint64_t align_up(uint64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }

// XNNPACK's region: its persistent budget, or more while a filter rewrite the
// activations cannot hold sits at the region's top (the runtime's rule:
// rewrites no larger than the activations go there).
uint64_t xnnpack_arena_size(const LoweredModel& model, uint64_t activation_bytes) {
  uint64_t size = model.xnnpack_budget;
  for (const XnnpackRewrite& rewrite : model.xnnpack_rewrites) {
    if (rewrite.bytes > activation_bytes) size = std::max(size, rewrite.region_bytes);
  }
  return size;
}

}  // namespace

// Bytes the arena of the persistent region holds after its activations, at
// most: XNNPACK's region (its alignment gap included) and the prepared ops'
// persistent region for the target's pointer width (Cortex-M: 32-bit).
uint64_t region_reserve(const LoweredModel& model) {
  uint64_t xnnpack = 0;
  for (const LoweredOp& op : model.ops) {
    if (op.backend == schema::Backend::XNNPACK) xnnpack = xnnpack_arena_size(model, 0);
  }
  const bool ptr32 = model.target.rfind("cortex-m", 0) == 0;
  return xnnpack + kAlignment + persistent_region_bytes(model, ptr32 ? 4 : 8);
}

void check_model_limits(const LoweredModel& model) {
  // converter/README.md "Limits": FlatBuffers addresses the model with 32-bit offsets.
  if (static_cast<int64_t>(model.ops.size()) > kMaxModelOps) {
    throw ConvertError("the model has " + std::to_string(model.ops.size()) + " operators, over floe's limit of " +
                       std::to_string(kMaxModelOps));
  }
  {
    uint64_t constant_bytes = 0;
    std::set<const HostTensor*> counted;
    for (const Value& value : model.values) {
      if (value.is_constant() && counted.insert(value.constant.get()).second) constant_bytes += value.constant->data.size();
    }
    if (constant_bytes > kMaxModelBytes) {
      throw ConvertError("the model's constants hold " + std::to_string(constant_bytes) +
                         " bytes, over floe's limit of " + std::to_string(kMaxModelBytes) + " bytes per model");
    }
  }
}

RegionRequest arena_request(const LoweredModel& model, const std::vector<MemoryRegion>& memory_regions) {
  bool uses_xnnpack = false;
  for (const LoweredOp& op : model.ops) uses_xnnpack |= op.backend == schema::Backend::XNNPACK;
  RegionRequest regions;
  regions.regions = memory_regions;
  if (!memory_regions.empty()) regions.reserve = region_reserve(model);
  // XNNPACK reads up to XNN_EXTRA_BYTES (16) past an operand: the last
  // region's arena goes on with XNNPACK's region, every other one gets 16
  // bytes of tail.
  if (uses_xnnpack) regions.tail = kAlignment;
  return regions;
}

std::vector<uint8_t> emit_model(const LoweredModel& model, const ArenaPlan& plan, const std::string& producer,
                                EmitStats* stats,
                                const std::vector<MemoryRegion>& memory_regions) {
  check_model_limits(model);
  bool uses_xnnpack = false;
  for (const LoweredOp& op : model.ops) uses_xnnpack |= op.backend == schema::Backend::XNNPACK;
  if (plan.offsets.size() != model.values.size()) {
    throw ConvertError("internal error: the arena plan covers " + std::to_string(plan.offsets.size()) +
                       " values, the model has " + std::to_string(model.values.size()));
  }
  // The XNNPACK and persistent regions follow the last region's activations.
  const bool several = plan.region_sizes.size() > 1;
  const uint32_t home = several ? static_cast<uint32_t>(plan.region_sizes.size() - 1) : 0;
  const uint64_t home_activations = several ? plan.region_sizes[home] : plan.arena_size;
  std::vector<uint64_t> offsets = plan.offsets;

  // Constant section: each distinct constant once, 16-byte aligned.
  std::vector<uint8_t> constants;
  std::map<const HostTensor*, uint64_t> placed;
  uint64_t parameter_count = 0;
  for (size_t v = 0; v < model.values.size(); ++v) {
    const Value& value = model.values[v];
    if (!value.is_constant()) continue;
    const HostTensor* data = value.constant.get();
    if (data->data.size() != value.byte_size()) {
      throw ConvertError("internal error: constant '" + value.name + "' has " +
                         std::to_string(data->data.size()) + " bytes, expected " +
                         std::to_string(value.byte_size()));
    }
    auto it = placed.find(data);
    if (it == placed.end()) {
      const uint64_t offset = align_up(constants.size());
      constants.resize(offset);
      constants.insert(constants.end(), data->data.begin(), data->data.end());
      it = placed.emplace(data, offset).first;
      parameter_count += static_cast<uint64_t>(data->num_elements());
    }
    offsets[v] = it->second;
  }
  constants.resize(align_up(constants.size()));
  // XNNPACK reads up to XNN_EXTRA_BYTES (16) past an operand; constants it reads
  // at run time (binary-op operands) may end the section, so pad it. Arena
  // operands of the last (or only) region need no padding: the XNNPACK region
  // follows its activations.
  if (uses_xnnpack) constants.resize(constants.size() + kAlignment);

  flatbuffers::FlatBufferBuilder builder(1024 + constants.size());
  builder.ForceVectorAlignment(constants.size(), 1, kAlignment);
  const auto constants_fb = builder.CreateVector(constants);

  std::vector<bool> complex(model.values.size(), false);
  for (size_t i = 0; i < model.inputs.size(); ++i) {
    if (model.input_is_complex(i)) complex[static_cast<size_t>(model.inputs[i])] = true;
  }
  for (size_t i = 0; i < model.outputs.size(); ++i) {
    if (model.output_is_complex(i)) complex[static_cast<size_t>(model.outputs[i])] = true;
  }
  std::vector<flatbuffers::Offset<schema::Tensor>> tensors;
  for (size_t v = 0; v < model.values.size(); ++v) {
    const Value& value = model.values[v];
    if (complex[v] && (value.dtype != DType::kFloat32 || value.shape.empty() || value.shape.back() != 2)) {
      throw ConvertError("'" + value.name + "' is complex64, held as float32 pairs, but became " +
                         dtype_name(value.dtype) + " " + shape_to_string(value.shape) +
                         " (a quantized model keeps its complex inputs and outputs float)");
    }
    std::vector<int32_t> shape;
    for (int64_t d : value.shape) {
      if (d < 0 || d > INT32_MAX) {
        throw ConvertError("internal error: tensor '" + value.name + "' has unresolved shape " +
                           shape_to_string(value.shape));
      }
      shape.push_back(static_cast<int32_t>(d));
    }
    flatbuffers::Offset<schema::TensorQuantization> quantization = 0;
    if (!value.quantization.empty()) {
      const Quantization& q = value.quantization;
      // Equal zero points (symmetric weights: all 0) are written once.
      std::vector<int64_t> zero_points = q.zero_point;
      if (!zero_points.empty() &&
          std::all_of(zero_points.begin(), zero_points.end(), [&](int64_t z) { return z == zero_points[0]; })) {
        zero_points.resize(1);
      }
      quantization = schema::CreateTensorQuantization(builder, builder.CreateVector(q.scale),
                                                      builder.CreateVector(zero_points), q.dimension);
    }
    tensors.push_back(schema::CreateTensor(
        builder, builder.CreateString(value.name), static_cast<schema::DType>(value.dtype),
        builder.CreateVector(shape), value.is_constant(), offsets[v], value.byte_size(),
        plan.live_first[v], plan.live_last[v], quantization, value.is_constant() ? 0 : plan.region[v],
        value.source_dtype == value.dtype ? schema::DType::INVALID : static_cast<schema::DType>(value.source_dtype),
        complex[v], value.variable));
  }

  std::vector<flatbuffers::Offset<schema::Operator>> ops;
  for (const LoweredOp& op : model.ops) {
    const flatbuffers::Offset<schema::Requantization> requantization =
        op.requantization ? schema::CreateRequantization(builder, op.requantization.get()) : 0;
    ops.push_back(schema::CreateOperator(builder, op.opcode, builder.CreateVector(op.inputs),
                                         builder.CreateVector(op.outputs), op.options.type,
                                         op.options.Pack(builder), builder.CreateString(op.node_name),
                                         op.backend, op.single_threaded, requantization,
                                         op.cortexm_kernel));
  }

  std::string region_names;
  for (const MemoryRegion& region : memory_regions) {
    region_names += (region_names.empty() ? "" : ",") + region.name;
  }
  // Version 2 only when an older runtime would misread the file: several regions.
  const auto root = schema::CreateModel(
      builder, /*version=*/several ? 2 : 1, builder.CreateVector(tensors), builder.CreateVector(ops),
      builder.CreateVector(model.inputs), builder.CreateVector(model.outputs), home_activations,
      constants_fb, builder.CreateString(producer), kChecksumPlaceholder,
      model.target.empty() ? 0 : builder.CreateString(model.target),
      xnnpack_arena_size(model, home_activations), persistent_region_bytes(model, 4),
      persistent_region_bytes(model, 8), several ? builder.CreateVector(plan.region_sizes) : 0,
      several ? builder.CreateString(region_names) : 0, home);
  schema::FinishModelBuffer(builder, root);

  if (stats) {
    stats->arena_bytes = plan.arena_size;
    stats->naive_bytes = plan.naive_bytes;
    stats->arena_lower_bound = plan.lower_bound;
    stats->aliased_values = plan.aliased_values;
    stats->arena_optimal = plan.optimal;
    stats->constant_bytes = constants.size();
    stats->parameter_count = parameter_count;
    stats->xnnpack_arena_bytes = xnnpack_arena_size(model, home_activations);
    stats->region_sizes = plan.region_sizes;
    stats->regions = memory_regions;
    stats->persistent_bytes_ptr32 = persistent_region_bytes(model, 4);
    stats->persistent_bytes_ptr64 = persistent_region_bytes(model, 8);
  }
  std::vector<uint8_t> bytes(builder.GetBufferPointer(),
                             builder.GetBufferPointer() + builder.GetSize());
  seal_model(&bytes);
  return bytes;
}

void seal_model(std::vector<uint8_t>* bytes) {
  flatbuffers::Verifier verifier(bytes->data(), bytes->size(), 16, 1u << 20);
  size_t field = 0;
  if (!schema::VerifyModelBuffer(verifier) || !find_model_checksum_field(bytes->data(), &field)) {
    throw ConvertError("internal error: emitted model has no payload_crc32c field to seal");
  }
  const uint32_t crc = compute_model_checksum(bytes->data(), bytes->size(), field);
  for (int i = 0; i < 4; ++i) (*bytes)[field + static_cast<size_t>(i)] = static_cast<uint8_t>(crc >> (8 * i));
}

}  // namespace floe::conv
