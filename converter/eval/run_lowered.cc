// SPDX-License-Identifier: Apache-2.0
// Conversion-time evaluation through the runtime (see run_lowered.h).
#include "converter/eval/run_lowered.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#include "converter/ir/error.h"
#include "runtime/core/dispatch.h"
#include "runtime/core/interpreter.h"
#include "schemas/floe_generated.h"

namespace floe::conv {
namespace {

constexpr uint64_t kAlignment = kTensorAlignment;

uint64_t align_up(uint64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<uint8_t, FreeDeleter>;

AlignedBuffer aligned_zeros(size_t size) {
  const size_t rounded = align_up(size) + kAlignment;
  AlignedBuffer buffer(static_cast<uint8_t*>(std::aligned_alloc(kAlignment, rounded)));
  if (!buffer) throw ConvertError("out of memory");
  std::memset(buffer.get(), 0, rounded);
  return buffer;
}

std::string describe(const Error& e) {
  return std::string(status_name(e.status)) + ": " + e.message +
         (e.op >= 0 ? " (op " + std::to_string(e.op) + ")" : std::string());
}

::floe::schema::OpCode runtime_opcode(schema::OpCode code) {
  return static_cast<::floe::schema::OpCode>(static_cast<int>(code));
}

// The fragment as a .floe buffer the runtime accepts: constants packed in
// place, every other value in its own arena slot for the whole run (no reuse,
// so no lifetimes are needed), reference kernels only.
std::vector<uint8_t> pack(const LoweredModel& model) {
  flatbuffers::FlatBufferBuilder builder;
  std::vector<uint8_t> constants;
  std::map<const HostTensor*, uint64_t> placed;
  uint64_t arena = 0;
  std::vector<flatbuffers::Offset<::floe::schema::Tensor>> tensors;
  for (const Value& value : model.values) {
    std::vector<int32_t> shape(value.shape.begin(), value.shape.end());
    uint64_t offset = 0;
    if (value.is_constant()) {
      auto it = placed.find(value.constant.get());
      if (it == placed.end()) {
        offset = align_up(constants.size());
        constants.resize(offset);
        constants.insert(constants.end(), value.constant->data.begin(), value.constant->data.end());
        it = placed.emplace(value.constant.get(), offset).first;
      }
      offset = it->second;
    } else {
      offset = arena;
      arena = align_up(arena + value.byte_size());
    }
    tensors.push_back(::floe::schema::CreateTensor(builder, builder.CreateString(value.name),
                                                   static_cast<::floe::schema::DType>(value.dtype),
                                                   builder.CreateVector(shape), value.is_constant(), offset,
                                                   value.byte_size()));
  }
  constants.resize(align_up(constants.size()));
  builder.ForceVectorAlignment(constants.size(), 1, kAlignment);
  const auto constants_fb = builder.CreateVector(constants);
  std::vector<flatbuffers::Offset<::floe::schema::Operator>> ops;
  for (const LoweredOp& op : model.ops) {
    ops.push_back(::floe::schema::CreateOperator(builder, runtime_opcode(op.opcode), builder.CreateVector(op.inputs),
                                                 builder.CreateVector(op.outputs),
                                                 static_cast<::floe::schema::OpOptions>(op.options.type),
                                                 op.options.Pack(builder)));
  }
  const auto root = ::floe::schema::CreateModel(
      builder, kSchemaVersion, builder.CreateVector(tensors), builder.CreateVector(ops),
      builder.CreateVector(model.inputs), builder.CreateVector(model.outputs), arena, constants_fb,
      /*producer=*/0, /*payload_crc32c=*/0, /*target=*/0, /*xnnpack_arena_size=*/0,
      persistent_region_bytes(model, 4), persistent_region_bytes(model, 8));
  ::floe::schema::FinishModelBuffer(builder, root);
  return std::vector<uint8_t>(builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize());
}

}  // namespace

uint64_t persistent_region_bytes(const LoweredModel& model, uint64_t pointer_bytes) {
  PersistentLayout layout(pointer_bytes, model.ops.size());
  for (const LoweredOp& op : model.ops) {
    layout.add_op(op.inputs.size() + op.outputs.size(), op_params_bytes(runtime_opcode(op.opcode)));
  }
  return layout.total;
}

std::vector<HostTensor> run_lowered(const LoweredModel& lowered, const std::string& context) {
  const std::vector<uint8_t> bytes = pack(lowered);
  const AlignedBuffer model_buffer = aligned_zeros(bytes.size());
  std::memcpy(model_buffer.get(), bytes.data(), bytes.size());
  Model model;
  if (model.Load(model_buffer.get(), bytes.size()) != Status::kOk) {
    throw ConvertError(context + ": folding failed: " + describe(model.error()));
  }
  const size_t arena_size = static_cast<size_t>(model.arena_size());
  const AlignedBuffer arena = aligned_zeros(arena_size);
  Interpreter interpreter(model, arena.get(), arena_size);
  if (interpreter.Init() != Status::kOk || interpreter.Invoke() != Status::kOk) {
    throw ConvertError(context + ": folding failed: " + describe(interpreter.error()));
  }
  std::vector<HostTensor> outputs;
  for (size_t i = 0; i < interpreter.output_count(); ++i) outputs.push_back(host_tensor_of(interpreter.output(i)));
  return outputs;
}

HostTensor host_tensor_of(const TensorView& view) {
  HostTensor t;
  t.dtype = view.dtype;
  t.shape.assign(view.shape.dims, view.shape.dims + view.shape.rank);
  const auto* data = static_cast<const uint8_t*>(view.data);
  t.data.assign(data, data + view.bytes);
  return t;
}

}  // namespace floe::conv
