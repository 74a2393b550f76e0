// SPDX-License-Identifier: Apache-2.0
// FlatBuffer emission. Invariants the runtime's validator re-checks: every
// tensor's size equals dtype x shape, constants and arena offsets are 16-byte
// aligned, and every arena range lies inside arena_size. The plan itself is
// re-verified here with check_plan() before anything is written. Each arena
// tensor carries its planned lifetime (Model::Load re-proves the plan from it),
// and the finished buffer is sealed with payload_crc32c (model_checksum.h).
#include "converter/emit/emit.h"

#include <map>

#include "converter/ir/error.h"
#include "converter/plan/memory_planner.h"
#include "runtime/core/dispatch.h"
#include "runtime/core/model_checksum.h"

namespace floe::conv {
namespace {

constexpr uint64_t kAlignment = 16;
// Nonzero, so FlatBuffers stores the field (defaults are omitted); replaced by
// the real CRC once the buffer is complete.
constexpr uint32_t kChecksumPlaceholder = 0xFFFFFFFFu;

uint64_t align_up(uint64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }

// XNNPACK's persistent budget plus the Init scratch the activations cannot hold.
uint64_t xnnpack_arena_size(const LoweredModel& model, uint64_t activation_bytes) {
  if (model.xnnpack_budget == 0) return 0;
  const uint64_t scratch = model.xnnpack_scratch > activation_bytes ? align_up(model.xnnpack_scratch) : 0;
  return model.xnnpack_budget + scratch;
}

}  // namespace

uint64_t persistent_region_bytes(const LoweredModel& model, uint64_t pointer_bytes) {
  PersistentLayout layout(pointer_bytes, model.ops.size());
  for (const LoweredOp& op : model.ops) {
    layout.add_op(op.inputs.size() + op.outputs.size(),
                  op_params_bytes(static_cast<::floe::schema::OpCode>(static_cast<int>(op.opcode))));
  }
  return layout.total;
}

namespace {

// Arena lifetimes: a value is live from the op that writes it (or the start,
// for graph inputs) to the last op that reads it (or the end, for outputs).
std::vector<BufferRequest> buffer_requests(const LoweredModel& model,
                                           const std::vector<int>& arena_values) {
  const int32_t end = static_cast<int32_t>(model.ops.size());
  std::vector<int32_t> first(model.values.size(), -1), last(model.values.size(), -1);
  for (int v : model.inputs) first[static_cast<size_t>(v)] = 0;
  for (int32_t i = 0; i < end; ++i) {
    const LoweredOp& op = model.ops[static_cast<size_t>(i)];
    for (int v : op.outputs) {
      if (first[static_cast<size_t>(v)] < 0) first[static_cast<size_t>(v)] = i;
      last[static_cast<size_t>(v)] = std::max(last[static_cast<size_t>(v)], i);
    }
    for (int v : op.inputs) {
      if (v >= 0) last[static_cast<size_t>(v)] = std::max(last[static_cast<size_t>(v)], i);
    }
  }
  for (int v : model.outputs) last[static_cast<size_t>(v)] = end;
  std::vector<BufferRequest> requests;
  for (int v : arena_values) {
    BufferRequest r;
    r.size = model.values[static_cast<size_t>(v)].byte_size();
    r.first_op = std::max(first[static_cast<size_t>(v)], 0);
    r.last_op = std::max(last[static_cast<size_t>(v)], r.first_op);
    requests.push_back(r);
  }
  return requests;
}

}  // namespace

uint64_t Value::byte_size() const {
  uint64_t n = dtype_size(dtype);
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

std::vector<uint8_t> emit_model(const LoweredModel& model, const std::string& producer,
                                EmitStats* stats) {
  // Arena values: every non-constant value.
  std::vector<int> arena_values;
  for (size_t v = 0; v < model.values.size(); ++v) {
    if (!model.values[v].is_constant()) arena_values.push_back(static_cast<int>(v));
  }
  const std::vector<BufferRequest> requests = buffer_requests(model, arena_values);
  const MemoryPlan plan = plan_memory(requests, kAlignment);
  const std::string problem = check_plan(requests, plan, kAlignment);
  if (!problem.empty()) throw ConvertError("internal error: invalid memory plan: " + problem);

  std::vector<uint64_t> offsets(model.values.size(), 0);
  std::vector<int32_t> live_first(model.values.size(), -1), live_last(model.values.size(), -1);
  for (size_t i = 0; i < arena_values.size(); ++i) {
    const size_t v = static_cast<size_t>(arena_values[i]);
    offsets[v] = plan.offsets[i];
    live_first[v] = requests[i].first_op;
    live_last[v] = requests[i].last_op;
  }

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
  // operands need no padding: the XNNPACK region always follows the activations.
  bool uses_xnnpack = false;
  for (const LoweredOp& op : model.ops) uses_xnnpack |= op.backend == schema::Backend::XNNPACK;
  if (uses_xnnpack) constants.resize(constants.size() + kAlignment);

  flatbuffers::FlatBufferBuilder builder(1024 + constants.size());
  builder.ForceVectorAlignment(constants.size(), 1, kAlignment);
  const auto constants_fb = builder.CreateVector(constants);

  std::vector<flatbuffers::Offset<schema::Tensor>> tensors;
  for (size_t v = 0; v < model.values.size(); ++v) {
    const Value& value = model.values[v];
    std::vector<int32_t> shape;
    for (int64_t d : value.shape) {
      if (d < 0 || d > INT32_MAX) {
        throw ConvertError("internal error: tensor '" + value.name + "' has unresolved shape " +
                           shape_to_string(value.shape));
      }
      shape.push_back(static_cast<int32_t>(d));
    }
    tensors.push_back(schema::CreateTensor(
        builder, builder.CreateString(value.name), static_cast<schema::DType>(value.dtype),
        builder.CreateVector(shape), value.is_constant(), offsets[v], value.byte_size(),
        live_first[v], live_last[v]));
  }

  std::vector<flatbuffers::Offset<schema::Operator>> ops;
  for (const LoweredOp& op : model.ops) {
    ops.push_back(schema::CreateOperator(builder, op.opcode, builder.CreateVector(op.inputs),
                                         builder.CreateVector(op.outputs), op.options.type,
                                         op.options.Pack(builder), builder.CreateString(op.node_name),
                                         op.backend, op.single_threaded));
  }

  const auto root = schema::CreateModel(
      builder, /*version=*/1, builder.CreateVector(tensors), builder.CreateVector(ops),
      builder.CreateVector(model.inputs), builder.CreateVector(model.outputs), plan.arena_size,
      constants_fb, builder.CreateString(producer), kChecksumPlaceholder,
      model.target.empty() ? 0 : builder.CreateString(model.target),
      xnnpack_arena_size(model, plan.arena_size), persistent_region_bytes(model, 4),
      persistent_region_bytes(model, 8));
  schema::FinishModelBuffer(builder, root);

  if (stats) {
    stats->arena_bytes = plan.arena_size;
    stats->naive_bytes = 0;
    for (const BufferRequest& r : requests) stats->naive_bytes += align_up(r.size);
    stats->constant_bytes = constants.size();
    stats->parameter_count = parameter_count;
    stats->xnnpack_arena_bytes = xnnpack_arena_size(model, plan.arena_size);
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
