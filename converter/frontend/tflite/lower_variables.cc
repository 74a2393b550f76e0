// SPDX-License-Identifier: Apache-2.0
// Resource variables: VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE and
// CALL_ONCE (its initializer folded into the variable's initial value).
#include "converter/frontend/tflite/importer.h"

namespace floe::conv::tflite_detail {

// TFLite names a variable by (container, shared_name) in VAR_HANDLE and
// passes the handle to READ_VARIABLE, ASSIGN_VARIABLE and into called
// subgraphs. floe gives each name one variable value (state in the arena,
// kept across Invoke()); a read is a RESHAPE copy out of it (a snapshot, as
// TFLite copies), an assignment floe's ASSIGN_VARIABLE, which also carries
// the initial value and resets the variable. The ops keep their order
// (passes and the scheduler leave variable writes in place).

bool Importer::is_handle(int k) const {
  if (!has_input(k)) return false;
  return tflite_tensor(op_->inputs()->Get(static_cast<uint32_t>(k)), "operand")->type() == kTypeResource;
}

int Importer::handle_input(int k) {
  if (!has_input(k)) fail_op("input " + std::to_string(k) + " (a resource handle) is missing");
  const int32_t t = op_->inputs()->Get(static_cast<uint32_t>(k));
  const fb::Tensor* tensor = tflite_tensor(t, "operand");
  const std::string name = tensor->name() ? tensor->name()->str() : "tensor_" + std::to_string(t);
  if (tensor->type() != kTypeResource) {
    fail_op("input " + std::to_string(k) + " '" + short_name(name) + "' is not a resource handle");
  }
  const int r = handles_[static_cast<size_t>(t)];
  if (r < 0) fail_op("uses resource handle '" + short_name(name) + "' before a VAR_HANDLE writes it");
  return r;
}

int Importer::variable_value(int r, const Value& like, const std::string& use) {
  ResourceVariable& variable = resources_[static_cast<size_t>(r)];
  const std::string name = variable.shared_name.empty() ? "resource_variable_" + std::to_string(r)
                                                         : variable.shared_name;
  if (variable.value < 0) {
    Value v;
    v.name = name;
    v.dtype = like.dtype;
    v.shape = like.shape;
    v.quantization = like.quantization;
    v.variable = true;
    variable.value = out_.model.add_value(std::move(v));
    written_.push_back(true);  // readable from the start: its initial value or zero point
    return variable.value;
  }
  const Value& v = value(variable.value);
  if (v.dtype != like.dtype || v.shape != like.shape) {
    fail_op(use + " '" + short_name(like.name) + "' is " + dtype_name(like.dtype) + " " + shape_to_string(like.shape) +
            "; resource variable '" + short_name(name) + "' is " + dtype_name(v.dtype) + " " +
            shape_to_string(v.shape) + " (floe keeps a variable's dtype and shape fixed)");
  }
  expect_same_quantization(variable.value, like, use);
  return variable.value;
}

void Importer::lower_var_handle() {
  const auto* o = op_->builtin_options_as_VarHandleOptions();
  const std::string container = o != nullptr && o->container() != nullptr ? o->container()->str() : "";
  const std::string shared_name = o != nullptr && o->shared_name() != nullptr ? o->shared_name()->str() : "";
  if (has_input(0)) fail_op("must have no inputs");
  const int32_t t = op_->outputs()->Get(0);
  const fb::Tensor* tensor = tflite_tensor(t, "output");
  if (tensor->type() != kTypeResource) fail_op("output is not a resource tensor (TFLite type 13)");
  if (handles_[static_cast<size_t>(t)] >= 0) fail_op("writes a resource handle a VAR_HANDLE already wrote");
  // As TFLM looks variables up: the same shared name, and the same container
  // unless the op names none.
  int r = -1;
  for (size_t i = 0; i < resources_.size() && r < 0; ++i) {
    const ResourceVariable& v = resources_[i];
    if (v.shared_name == shared_name && (container.empty() || v.container == container)) r = static_cast<int>(i);
  }
  if (r < 0) {
    r = static_cast<int>(resources_.size());
    ResourceVariable variable;
    variable.container = container;
    variable.shared_name = shared_name;
    resources_.push_back(std::move(variable));
  }
  handles_[static_cast<size_t>(t)] = r;
}

void Importer::lower_read_variable() {
  const int r = handle_input(0);
  const int out = output();
  const int variable = variable_value(r, value(out), "output");
  variables_used_ = true;
  resources_[static_cast<size_t>(r)].read = true;
  add_op(schema::OpCode::RESHAPE, {variable}, {out});
}

void Importer::lower_assign_variable() {
  const int r = handle_input(0);
  const int x = input(1);
  const int variable = variable_value(r, value(x), "value");
  ResourceVariable& resource = resources_[static_cast<size_t>(r)];
  if (initializing_ >= 0) {
    // An init subgraph has no inputs and only these ops: x is a constant.
    if (!value(x).is_constant()) fail_op("assigns '" + short_name(value(x).name) + "', which is no constant");
    resource.initial = value(x).constant;
    resource.initializer = initializing_;
    return;
  }
  variables_used_ = true;
  resource.assigned = true;
  // The initial value rides on every assignment: the op resets the variable.
  std::vector<int> inputs = {x};
  if (resource.initial) {
    Value initial = value(variable);
    initial.name = short_name(initial.name) + "/initial_value";
    initial.variable = false;
    initial.constant = resource.initial;
    inputs.push_back(out_.model.add_value(std::move(initial)));
    written_.push_back(true);
  }
  add_op(schema::OpCode::ASSIGN_VARIABLE, inputs, {variable});
}

// CALL_ONCE runs its init subgraph at the first Invoke() (TFLite's session
// initializer: constants assigned to variables). floe folds it into the
// variables' initial values, which Init() and ResetVariableTensors() restore.
void Importer::lower_call_once() {
  const auto* o = op_->builtin_options_as_CallOnceOptions();
  if (o == nullptr) fail_op("CallOnceOptions are missing");
  const int index = called_subgraph(o->init_subgraph_index(), "init");
  if (has_input(0)) fail_op("must have no inputs");
  if (loop_ >= 0 || if_id_ >= 0 || initializing_ >= 0) {
    fail_unsupported("runs inside a WHILE, IF or init subgraph; floe folds a CALL_ONCE of the main graph into "
                     "initial values");
  }
  if (variables_used_) {
    fail_unsupported("comes after operators that read or assign resource variables; floe folds a CALL_ONCE that "
                     "runs before them into initial values");
  }
  if (!initialized_by_.insert(index).second) return;  // it assigns the same constants again
  initializing_ = index;
  inline_subgraph(index, {}, "init");
  initializing_ = -1;
}


}  // namespace floe::conv::tflite_detail
