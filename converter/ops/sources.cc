// SPDX-License-Identifier: Apache-2.0
// Ops that produce or forward tensors without computing: Const, frozen
// variables, Identity-like ops (no floe op is emitted; the output aliases the
// input), and shape queries folded from static shapes (Shape, Size, Rank).
#include <cstring>

#include "converter/ir/tf_dtype.h"
#include "converter/ir/attrs.h"
#include "converter/ir/tensor_proto.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

std::vector<TensorInfo> infer_const(const NodeContext& ctx) {
  const Node& node = ctx.node();
  if (node.frozen_value) return {TensorInfo::of(node.frozen_value)};
  const tfproto::AttrValue* value = find_attr(node.def, "value");
  if (value == nullptr || !value->has_tensor()) ctx.fail("Const has no 'value' tensor");
  auto tensor = std::make_shared<const HostTensor>(
      tensor_from_proto(value->tensor(), ctx.graph().source() + ": node '" + node.name() + "'"));
  // TF's Const kernel refuses a value whose dtype is not the node's.
  const tfproto::AttrValue* declared = find_attr(node.def, "dtype");
  if (declared != nullptr && declared->value_case() == tfproto::AttrValue::kType &&
      tf_dtype_to_floe(tf_dtype_base(declared->type())) != tensor->dtype) {
    ctx.fail("attr 'dtype' is " + tf_dtype_name(declared->type()) + " but its value tensor is " +
             dtype_name(tensor->dtype));
  }
  return {TensorInfo::of(std::move(tensor))};
}

std::vector<TensorInfo> infer_variable(const NodeContext& ctx) {
  if (!ctx.node().frozen_value) {
    ctx.fail("variable was not frozen: pass --checkpoint with a checkpoint that holds it");
  }
  return {TensorInfo::of(ctx.node().frozen_value)};
}

std::vector<TensorInfo> infer_unfed_placeholder(const NodeContext& ctx) {
  ctx.fail("placeholder is needed but not fed (internal error: it should be a model input)");
}

// Identity-like: forward every input to the same-numbered output.
std::vector<TensorInfo> infer_forward(const NodeContext& ctx) {
  std::vector<TensorInfo> out;
  for (int i = 0; i < ctx.input_count(); ++i) out.push_back(ctx.input(i));
  if (out.empty()) ctx.fail("expects at least one input");
  return out;
}

// PlaceholderWithDefault (unfed): the default is input 0.
std::vector<TensorInfo> infer_first(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  return {ctx.input(0)};
}

// Print: output 0 is input 0; its printing is dropped (the summary notes it)
// and with it the use of the other inputs, the tensors it would print.
std::vector<TensorInfo> infer_print(const NodeContext& ctx) {
  if (ctx.input_count() < 1) ctx.fail("expects at least one input");
  return {ctx.input(0)};
}
void lower_first(LowerContext& ctx) { ctx.alias_output(0, ctx.input_value(0)); }

void lower_forward(LowerContext& ctx) {
  for (int i = 0; i < ctx.input_count(); ++i) ctx.alias_output(i, ctx.input_value(i));
}

std::shared_ptr<const HostTensor> int_tensor(DType dtype, const std::vector<int64_t>& values,
                                             std::vector<int64_t> shape) {
  auto t = std::make_shared<HostTensor>();
  t->dtype = dtype;
  t->shape = std::move(shape);
  t->data.resize(values.size() * dtype_size(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kInt64) {
      t->as<int64_t>()[i] = values[i];
    } else {
      t->as<int32_t>()[i] = static_cast<int32_t>(values[i]);
    }
  }
  return t;
}

DType out_type(const NodeContext& ctx) {
  return find_attr(ctx.node().def, "out_type") ? dtype_attr(ctx, "out_type") : DType::kInt32;
}

std::vector<TensorInfo> infer_shape(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  const auto& shape = ctx.input(0).shape;
  return {TensorInfo::of(int_tensor(out_type(ctx), shape, {static_cast<int64_t>(shape.size())}))};
}

std::vector<TensorInfo> infer_size(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  int64_t n = 1;
  for (int64_t d : ctx.input(0).shape) n *= d;
  return {TensorInfo::of(int_tensor(out_type(ctx), {n}, {}))};
}

std::vector<TensorInfo> infer_rank(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  return {TensorInfo::of(
      int_tensor(DType::kInt32, {static_cast<int64_t>(ctx.input(0).shape.size())}, {}))};
}

}  // namespace

const std::vector<OpHandler>& source_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"Const", infer_const, nullptr},
      {"VariableV2", infer_variable, nullptr},
      {"Variable", infer_variable, nullptr},
      {"VarHandleOp", infer_variable, nullptr},
      {"Placeholder", infer_unfed_placeholder, nullptr},
      {"PlaceholderV2", infer_unfed_placeholder, nullptr},
      {"PlaceholderWithDefault", infer_first, lower_forward},
      {"Identity", infer_forward, lower_forward},
      {"Print", infer_print, lower_first},
      {"IdentityN", infer_forward, lower_forward},
      {"ReadVariableOp", infer_forward, lower_forward},
      {"StopGradient", infer_forward, lower_forward},
      {"PreventGradient", infer_forward, lower_forward},
      {"CheckNumerics", infer_forward, lower_forward},
      {"Snapshot", infer_forward, lower_forward},
      {"Shape", infer_shape, nullptr},
      {"Size", infer_size, nullptr},
      {"Rank", infer_rank, nullptr},
  };
  return handlers;
}

}  // namespace floe::conv
