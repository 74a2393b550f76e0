// SPDX-License-Identifier: Apache-2.0
// Conversion-time evaluation through the runtime (see run_lowered.h).
#include "converter/eval/run_lowered.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#include "converter/ir/error.h"
#include "runtime/core/registry.h"
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

// The runtime refusing a model the converter built is a converter defect: an
// internal error naming the operator (never the input file's fault).
[[noreturn]] void refused(const LoweredModel& lowered, const std::string& context, const char* what,
                          const Error& e) {
  ErrorLocation where;
  std::string op_text;
  if (e.op >= 0 && static_cast<size_t>(e.op) < lowered.ops.size()) {
    const LoweredOp& op = lowered.ops[static_cast<size_t>(e.op)];
    where.node = op.node_name;
    where.op = schema::EnumNameOpCode(op.opcode);
    op_text = " at " + where.op + " '" + where.node + "'";
  }
  throw ConvertError(context + ": internal error: " + what + op_text + ": " + describe(e), ErrorCategory::kInternal,
                     where);
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
    flatbuffers::Offset<::floe::schema::TensorQuantization> quantization = 0;
    if (!value.quantization.empty()) {
      const Quantization& q = value.quantization;
      quantization = flatbuffers::Offset<::floe::schema::TensorQuantization>(
          schema::CreateTensorQuantization(builder, builder.CreateVector(q.scale), builder.CreateVector(q.zero_point),
                                           q.dimension)
              .o);
    }
    tensors.push_back(::floe::schema::CreateTensor(builder, builder.CreateString(value.name),
                                                   static_cast<::floe::schema::DType>(value.dtype),
                                                   builder.CreateVector(shape), value.is_constant(), offset,
                                                   value.byte_size(), -1, -1, quantization, 0,
                                                   ::floe::schema::DType::INVALID, false, value.variable));
  }
  constants.resize(align_up(constants.size()));
  builder.ForceVectorAlignment(constants.size(), 1, kAlignment);
  const auto constants_fb = builder.CreateVector(constants);
  // Ops run on the reference kernels, except int8 ops the Cortex-M backend
  // re-laid out (Operator.cortexm_kernel): only their kernel reads that layout.
  auto op_backend = [](const LoweredOp& op) {
    return op.cortexm_kernel != schema::CortexMKernel::NONE ? ::floe::schema::Backend::CORTEX_M
                                                            : ::floe::schema::Backend::REFERENCE;
  };
  std::vector<flatbuffers::Offset<::floe::schema::Operator>> ops;
  for (const LoweredOp& op : model.ops) {
    // int8 ops carry the integers converter/quantize derived for them.
    const flatbuffers::Offset<::floe::schema::Requantization> requantization(
        op.requantization ? schema::CreateRequantization(builder, op.requantization.get()).o : 0);
    ops.push_back(::floe::schema::CreateOperator(builder, runtime_opcode(op.opcode), builder.CreateVector(op.inputs),
                                                 builder.CreateVector(op.outputs),
                                                 static_cast<::floe::schema::OpOptions>(op.options.type),
                                                 op.options.Pack(builder), 0, op_backend(op), false, requantization,
                                                 static_cast<::floe::schema::CortexMKernel>(op.cortexm_kernel)));
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
    refused(lowered, context, "folding failed", model.error());
  }
  const size_t arena_size = static_cast<size_t>(model.arena_size());
  const AlignedBuffer arena = aligned_zeros(arena_size);
  Interpreter interpreter(model, arena.get(), arena_size);
  if (interpreter.Init() != Status::kOk || interpreter.Invoke() != Status::kOk) {
    refused(lowered, context, "folding failed", interpreter.error());
  }
  std::vector<HostTensor> outputs;
  for (size_t i = 0; i < interpreter.output_count(); ++i) outputs.push_back(host_tensor_of(interpreter.output(i)));
  return outputs;
}

struct LoweredRunner::State {
  const LoweredModel* lowered = nullptr;
  std::string context;
  AlignedBuffer model_buffer, arena;
  Model model;
  std::unique_ptr<Interpreter> interpreter;
  const Observer* observe = nullptr;
};

LoweredRunner::LoweredRunner(const LoweredModel& lowered, const std::string& context) : state_(new State) {
  State& s = *state_;
  s.lowered = &lowered;
  s.context = context;
  const std::vector<uint8_t> bytes = pack(lowered);
  s.model_buffer = aligned_zeros(bytes.size());
  std::memcpy(s.model_buffer.get(), bytes.data(), bytes.size());
  if (s.model.Load(s.model_buffer.get(), bytes.size()) != Status::kOk) {
    refused(lowered, context, "the model does not load", s.model.error());
  }
  const size_t arena_size = static_cast<size_t>(s.model.arena_size());
  s.arena = aligned_zeros(arena_size);
  s.interpreter = std::make_unique<Interpreter>(s.model, s.arena.get(), arena_size);
  if (s.interpreter->Init() != Status::kOk) {
    refused(lowered, context, "the model does not prepare", s.interpreter->error());
  }
  s.interpreter->set_observer(
      [](void* user, size_t op_index, const char*) {
        State& st = *static_cast<State*>(user);
        if (st.observe == nullptr || !*st.observe) return;
        for (int v : st.lowered->ops[op_index].outputs) {
          (*st.observe)(v, st.interpreter->tensor(static_cast<size_t>(v)));
        }
      },
      &s);
}

LoweredRunner::~LoweredRunner() = default;

std::vector<HostTensor> LoweredRunner::run(const std::vector<HostTensor>& inputs, const Observer& observe) {
  State& s = *state_;
  Interpreter& interpreter = *s.interpreter;
  if (inputs.size() != interpreter.input_count()) {
    throw ConvertError("internal error: " + s.context + ": " + std::to_string(inputs.size()) + " inputs for " +
                       std::to_string(interpreter.input_count()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorView view = interpreter.input(i);
    if (inputs[i].dtype != view.dtype || inputs[i].data.size() != view.bytes) {
      throw ConvertError("internal error: " + s.context + ": input " + std::to_string(i) + " has the wrong type or size");
    }
    std::memcpy(view.data, inputs[i].data.data(), view.bytes);
    if (observe) observe(s.lowered->inputs[i], view);
  }
  // Each run starts from the state Init() leaves (stateful ops: SVDF, LSTM).
  if (interpreter.ResetVariableTensors() != Status::kOk) {
    throw ConvertError(s.context + ": resetting the model's state failed: " + describe(interpreter.error()));
  }
  s.observe = &observe;
  const Status status = interpreter.Invoke();
  s.observe = nullptr;
  if (status != Status::kOk) throw ConvertError(s.context + ": running the model failed: " + describe(interpreter.error()));
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
