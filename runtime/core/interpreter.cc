// SPDX-License-Identifier: Apache-2.0
// Interpreter: arena checks at Init(), then a straight loop over the operators.
#include "runtime/core/interpreter.h"

#include "runtime/core/dispatch.h"
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
    : model_(model), arena_(static_cast<uint8_t*>(arena)), arena_bytes_(arena_bytes) {}

Status Interpreter::fail(Status status, const char* message, int32_t op) {
  error_.status = status;
  error_.message = message;
  error_.op = op;
  return status;
}

bool Interpreter::runs_on_backend(size_t op_index) const {
  return initialized_ && backend_owns(backend_, static_cast<uint32_t>(op_index));
}

Status Interpreter::Init() {
  initialized_ = false;
  backend_ = nullptr;
  backend_ops_ = 0;
  backend_bytes_used_ = 0;
  error_ = Error();
  if (!model_.loaded()) return fail(Status::kNotInitialized, FLOE_MSG("model is not loaded"));
  if (arena_ == nullptr && model_.arena_size() > 0) {
    return fail(Status::kInvalidArgument, FLOE_MSG("arena is null"));
  }
  if (reinterpret_cast<uintptr_t>(arena_) % kTensorAlignment != 0) {
    return fail(Status::kMisalignedArena, FLOE_MSG("arena must be 16-byte aligned"));
  }
  if (arena_bytes_ < model_.arena_size()) {
    return fail(Status::kArenaTooSmall, FLOE_MSG("arena is smaller than the model's arena_size"));
  }
  const auto* ops = model_.schema()->operators();
  for (uint32_t i = 0; i < ops->size(); ++i) {
    const schema::Operator* op = ops->Get(i);
    const OpKernel* kernel = find_kernel(op->opcode());  // non-null: checked by Model::Load
    const OpContext ctx{op, &model_, arena_};
    if (const char* reason = kernel->prepare(ctx)) {
      return fail(Status::kInvalidModel, reason, static_cast<int32_t>(i));
    }
  }
  // Backend operators are created after the checks above, in the arena region
  // after the activations (the activations serve as Init-time scratch).
  BackendInit backend_init;
  backend_init.arena = arena_;
  backend_init.arena_bytes = arena_bytes_;
  backend_init.activation_bytes = static_cast<size_t>(model_.activation_arena_size());
  backend_init.thread_pool = thread_pool_;
  BackendResult backend;
  if (backend_prepare(model_, backend_init, &backend) != Status::kOk) {
    return fail(backend.error.status, backend.error.message, backend.error.op);
  }
  backend_ = backend.state;
  backend_ops_ = backend.ops_taken;
  backend_bytes_used_ = backend.bytes_used;
  initialized_ = true;
  return Status::kOk;
}

Status Interpreter::Invoke() {
  if (!initialized_) return fail(Status::kNotInitialized, FLOE_MSG("Init() has not succeeded"));
  const auto* ops = model_.schema()->operators();
  for (uint32_t i = 0; i < ops->size(); ++i) {
    const schema::Operator* op = ops->Get(i);
    Status status;
    if (backend_owns(backend_, i)) {
      // The converter marks ops too small for the thread pool; they run on this thread.
      void* pool = thread_pool_ != nullptr && !op->single_threaded() ? thread_pool_ : nullptr;
      status = backend_run(backend_, i, pool);
    } else {
      status = find_kernel(op->opcode())->eval(OpContext{op, &model_, arena_});
    }
    if (status != Status::kOk) {
      return fail(status, FLOE_MSG("kernel failed"), static_cast<int32_t>(i));
    }
    if (observer_ != nullptr) observer_(observer_user_, i, find_kernel(op->opcode())->name);
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
  return bind_tensor(model_, arena_, model_.schema()->inputs()->Get(static_cast<uint32_t>(i)));
}
TensorView Interpreter::output(size_t i) const {
  if (i >= output_count()) return TensorView();
  return bind_tensor(model_, arena_, model_.schema()->outputs()->Get(static_cast<uint32_t>(i)));
}
TensorView Interpreter::tensor(size_t index) const {
  if (!model_.loaded() || index >= model_.tensor_count()) return TensorView();
  return bind_tensor(model_, arena_, static_cast<int32_t>(index));
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
