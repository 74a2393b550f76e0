// SPDX-License-Identifier: Apache-2.0
// Interpreter: arena checks and one prepare per op at Init(), then a straight
// loop over the prepared records.
#include "runtime/core/interpreter.h"

#include "runtime/core/control_flow.h"
#include "runtime/core/registry.h"
#include "runtime/core/run_op.h"
#include "schemas/floe_generated.h"

namespace floe {
namespace {

// "x" names the same tensor as "x:0" (TF convention).
bool tensor_name_matches(const char* tensor_name, const char* query) {
  size_t i = 0;
  while (query[i] != '\0' && tensor_name[i] == query[i]) ++i;
  if (query[i] != '\0') return false;
  if (tensor_name[i] == '\0') return true;
  return tensor_name[i] == ':' && tensor_name[i + 1] == '0' && tensor_name[i + 2] == '\0';
}

}  // namespace

Interpreter::Interpreter(const Model& model, void* arena, size_t arena_bytes)
    : model_(model), arena_(static_cast<uint8_t*>(arena)) {
  given_[0] = arena_;
  given_bytes_[0] = arena_bytes;
  bind_arenas();
}

Interpreter::Interpreter(const Model& model, void* const* arenas, const size_t* arena_bytes, size_t arena_count)
    : model_(model), arena_(nullptr), arena_count_(arena_count) {
  for (size_t r = 0; r < arena_count && r < kMaxMemoryRegions; ++r) {
    given_[r] = static_cast<uint8_t*>(arenas[r]);
    given_bytes_[r] = arena_bytes[r];
  }
  bind_arenas();
}

// Each region's base: the caller's arenas, or, given one arena, the regions
// back to back at 16-byte boundaries (Model::arena_size()).
void Interpreter::bind_arenas() {
  if (!model_.loaded()) return;
  const uint32_t regions = model_.region_count();
  uint64_t at = 0;
  for (uint32_t r = 0; r < regions; ++r) {
    if (arena_count_ == 0) {
      arenas_[r] = given_[0] == nullptr ? nullptr : given_[0] + at;
      at += (model_.region_arena_size(r) + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
    } else {
      arenas_[r] = r < arena_count_ && r < kMaxMemoryRegions ? given_[r] : nullptr;
    }
  }
  arena_ = arenas_[model_.persistent_region()];
}

// Null, alignment and size of every arena against the model's regions: one
// arena holding them all (Model::arena_size()) or one per region
// (Model::region_arena_size()); both cases share one loop and its messages.
Status Interpreter::check_arenas() {
  const uint32_t regions = model_.region_count();
  if (arena_count_ != 0 && arena_count_ != regions) {
    return fail(Status::kInvalidArgument,
                FLOE_MSG("arena count differs from Model::region_count()"));
  }
  const uint32_t count = arena_count_ == 0 ? 1 : regions;
  for (uint32_t r = 0; r < count; ++r) {
    const uint64_t needed = arena_count_ == 0 ? model_.arena_size() : model_.region_arena_size(r);
    if (given_[r] == nullptr && needed > 0) return fail(Status::kInvalidArgument, FLOE_MSG("arena is null"));
    if (reinterpret_cast<uintptr_t>(given_[r]) % kTensorAlignment != 0) {
      return fail(Status::kMisalignedArena, FLOE_MSG("arena must be 16-byte aligned"));
    }
    if (given_bytes_[r] < needed) {
      return fail(Status::kArenaTooSmall,
                  FLOE_MSG("arena is smaller than Model::arena_size() (per region: region_arena_size())"));
    }
  }
  return Status::kOk;
}

// Out of line: one call per error path instead of three stores each (core size).
__attribute__((noinline)) Status Interpreter::fail(Status status, const char* message, int32_t op) {
  error_.status = status;
  error_.message = message;
  error_.op = op;
  return status;
}

bool Interpreter::runs_on_backend(size_t op_index) const {
  return initialized_ && backend_owns(backend_, static_cast<uint32_t>(op_index));
}

size_t Interpreter::arena_used() const {
  if (!initialized_) return 0;
  uint64_t other_regions = 0;
  for (uint32_t r = 0; r < model_.region_count(); ++r) {
    if (r != model_.persistent_region()) other_regions += model_.region_arena_size(r);
  }
  // The prepared ops' region starts on the 16-byte boundary after the
  // activations and the backend's region: the gap before it is used too.
  const uint64_t before_persistent = model_.activation_arena_size() + other_regions + backend_bytes_used_;
  return static_cast<size_t>((before_persistent + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment) +
         persistent_used_;
}

Status Interpreter::Init() {
  initialized_ = false;
  has_loops_ = false;
  backend_ = nullptr;
  backend_ops_ = 0;
  backend_bytes_used_ = 0;
  ops_ = nullptr;
  op_count_ = 0;
  persistent_used_ = 0;
  error_ = Error();
  if (!model_.loaded()) return fail(Status::kNotInitialized, FLOE_MSG("model is not loaded"));
  FLOE_RETURN_IF_ERROR(check_arenas());
  bind_arenas();
  // The persistent region, laid out as PersistentLayout (persistent_layout.h) describes;
  // the ops must fill the size the model states for this pointer width exactly.
  persistent_offset_ = static_cast<size_t>(model_.persistent_offset());
  uint8_t* const region = arena_ + persistent_offset_;
  const size_t region_bytes = static_cast<size_t>(model_.persistent_size());
  for (size_t i = 0; i < region_bytes; ++i) region[i] = 0;
  const auto* ops = model_.schema()->operators();
  const uint32_t op_count = ops->size();
  auto* records = reinterpret_cast<PreparedOp*>(region);
  uint8_t* next = region + align_persistent(uint64_t{op_count} * sizeof(PreparedOp));
  const char* mismatch = FLOE_MSG("persistent region mismatch (reconvert the model)");
  for (uint32_t i = 0; i < op_count; ++i) {
    const schema::Operator* op = ops->Get(i);
    // The row the converter's choices name (non-null: checked by Model::Load).
    const KernelRow* kernel = model_.kernel(i);
    if (kernel == nullptr) {
      return fail(Status::kUnsupportedOp, FLOE_MSG("no kernel for this op, dtype and backend (none exists, or not selected)"),
                  static_cast<int32_t>(i));
    }
    const uint16_t params_bytes = kernel->params_bytes;
    const auto* inputs = op->inputs();
    const auto* outputs = op->outputs();
    const uint32_t input_count = inputs->size(), operand_count = input_count + outputs->size();
    auto* operands = reinterpret_cast<TensorView*>(next);
    uint8_t* params = next + align_persistent(uint64_t{operand_count} * sizeof(TensorView));
    next = params + align_persistent(params_bytes);
    // Nothing is written unless the record, operands and params lie inside.
    if (next > region + region_bytes) return fail(Status::kInvalidModel, mismatch);
    for (uint32_t k = 0; k < operand_count; ++k) {
      operands[k] = bind_tensor(model_, arenas_, k < input_count ? inputs->Get(k) : outputs->Get(k - input_count));
    }
    PreparedOp& record = records[i];
    record.params = params_bytes > 0 ? params : nullptr;
    record.operands = operands;
    record.inputs = static_cast<uint16_t>(input_count);
    record.outputs = static_cast<uint16_t>(operand_count - input_count);
    record.opcode = static_cast<uint16_t>(op->opcode());
    record.flags = op->opcode() == schema::OpCode::WHILE ? PreparedOp::kLoop
                   : op->opcode() == schema::OpCode::IF  ? PreparedOp::kIf
                                                         : 0;
    has_loops_ = has_loops_ || record.flags != 0;
    record.eval = kernel->eval;
    const OpContext ctx{op, &record, model_.schema()->tensors()};
    if (const char* reason = kernel->prepare(ctx)) {
      return fail(Status::kInvalidModel, reason, static_cast<int32_t>(i));
    }
  }
  const size_t used = static_cast<size_t>(next - region);
  if (used != region_bytes) return fail(Status::kInvalidModel, mismatch);
  // Backend operators are created after the checks above, in the arena region
  // after the activations (the activations serve as Init-time scratch); it
  // ends where the persistent region starts. Builds without a kernel library
  // compile none of this (kHasBackend, runtime/core/backend.h).
  if constexpr (kHasBackend) {
    BackendInit backend_init;
    backend_init.arena = arena_;
    backend_init.region_arenas = arenas_;
    backend_init.arena_bytes = persistent_offset_;
    backend_init.activation_bytes = static_cast<size_t>(model_.activation_arena_size());
    backend_init.thread_pool = thread_pool_;
    BackendResult backend;
    if (backend_prepare(model_, backend_init, &backend) != Status::kOk) {
      return fail(backend.error.status, backend.error.message, backend.error.op);
    }
    // The converter marks ops too small for the thread pool; they run on the
    // caller's thread. floe's own kernels split the others (runtime/core/parallel.h).
    op_threads_ = thread_pool_ != nullptr ? backend_op_threads(thread_pool_) : OpThreads{};
    for (uint32_t i = 0; i < op_count; ++i) {
      if (!ops->Get(i)->single_threaded() && thread_pool_ != nullptr) records[i].flags |= PreparedOp::kUseThreadPool;
      if (backend_owns(backend.state, i)) records[i].flags |= PreparedOp::kOnBackend;
    }
    backend_ = backend.state;
    backend_ops_ = backend.ops_taken;
    backend_bytes_used_ = backend.bytes_used;
  }
  ops_ = records;
  op_count_ = op_count;
  persistent_used_ = used;
  initialized_ = true;
  return Status::kOk;
}

// Ops run in plan order. A model with run-time loops or ifs takes the
// control-flow path instead (runtime/core/control_flow.cc), which its
// registry links. Both paths are calls of their own, so that Invoke's frame
// stays out of the deepest kernel's chain (tests/cortexm/stack_depth.py).
Status Interpreter::Invoke() {
  if (!initialized_) return fail(Status::kNotInitialized, FLOE_MSG("Init() has not succeeded"));
  if (has_loops_) return kKernelRegistry.control_flow->invoke(*this);  // non-null: checked by Model::Load
  return invoke_ops();
}

// Every variable to its zero point, then each resource variable to the
// initial value its ASSIGN_VARIABLE ops carry (input 1, checked at prepare):
// what the ops that own them set at Init().
Status Interpreter::ResetVariableTensors() {
  if (!initialized_) return fail(Status::kNotInitialized, FLOE_MSG("Init() has not succeeded"));
  const auto* tensors = model_.schema()->tensors();
  for (uint32_t i = 0; i < tensors->size(); ++i) {
    // A variable marked constant would be bytes of the model: no op may use it as state.
    if (!tensors->Get(i)->variable() || tensors->Get(i)->is_constant()) continue;
    reset_variable(bind_tensor(model_, arenas_, static_cast<int32_t>(i)), model_.quantization(i).zero_point);
  }
  for (size_t i = 0; i < op_count_; ++i) {
    const PreparedOp& op = ops_[i];
    if (op.opcode != static_cast<uint16_t>(schema::OpCode::ASSIGN_VARIABLE) || !op.has_input(1)) continue;
    const TensorView initial = op.input(1), variable = op.output(0);
    const uint8_t* from = static_cast<const uint8_t*>(initial.data);
    uint8_t* to = static_cast<uint8_t*>(variable.data);
    for (size_t k = 0; k < variable.bytes; ++k) to[k] = from[k];
  }
  return Status::kOk;
}

#if defined(__GNUC__)
__attribute__((noinline))
#endif
Status Interpreter::invoke_ops() {
  const size_t count = op_count_;
  for (size_t i = 0; i < count; ++i) {
    const Status status = run_op(i);
    if (status != Status::kOk) return status;
  }
  return Status::kOk;
}

size_t Interpreter::input_count() const {
  return model_.loaded() ? model_.schema()->inputs()->size() : 0;
}
size_t Interpreter::output_count() const {
  return model_.loaded() ? model_.schema()->outputs()->size() : 0;
}

TensorView Interpreter::input(size_t i) const {
  if (i >= input_count()) return TensorView();
  return bind_tensor(model_, arenas_, model_.schema()->inputs()->Get(static_cast<uint32_t>(i)));
}
TensorView Interpreter::output(size_t i) const {
  if (i >= output_count()) return TensorView();
  return bind_tensor(model_, arenas_, model_.schema()->outputs()->Get(static_cast<uint32_t>(i)));
}
Quantization Interpreter::input_quantization(size_t i) const {
  if (i >= input_count()) return Quantization();
  return model_.quantization(static_cast<size_t>(model_.schema()->inputs()->Get(static_cast<uint32_t>(i))));
}
Quantization Interpreter::output_quantization(size_t i) const {
  if (i >= output_count()) return Quantization();
  return model_.quantization(static_cast<size_t>(model_.schema()->outputs()->Get(static_cast<uint32_t>(i))));
}
TensorView Interpreter::tensor(size_t index) const {
  if (!model_.loaded() || index >= model_.tensor_count()) return TensorView();
  return bind_tensor(model_, arenas_, static_cast<int32_t>(index));
}

int Interpreter::find_io(const void* list, const char* name) const {
  const auto* indices = static_cast<const flatbuffers::Vector<int32_t>*>(list);
  for (uint32_t i = 0; i < indices->size(); ++i) {
    const TensorView view = model_.tensor(static_cast<size_t>(indices->Get(i)));
    if (tensor_name_matches(view.name, name)) return static_cast<int>(i);
  }
  return -1;
}

int Interpreter::input_index(const char* name) const {
  return model_.loaded() && name ? find_io(model_.schema()->inputs(), name) : -1;
}
int Interpreter::output_index(const char* name) const {
  return model_.loaded() && name ? find_io(model_.schema()->outputs(), name) : -1;
}

}  // namespace floe
