// SPDX-License-Identifier: Apache-2.0
// Handler lookup and the node contexts handlers work through.
#include "converter/ops/op_registry.h"

#include <algorithm>

#include <map>

#include "converter/ir/tf_dtype.h"
#include "converter/ir/attrs.h"
#include "converter/ir/error.h"

namespace floe::conv {

DType compute_dtype(DType t) { return t == DType::kFloat64 ? DType::kFloat32 : t; }

std::shared_ptr<const HostTensor> narrow_float64(std::shared_ptr<const HostTensor> value) {
  if (value->dtype != DType::kFloat64) return value;
  return std::make_shared<HostTensor>(narrowed_float64(*value));
}

TensorInfo TensorInfo::of(std::shared_ptr<const HostTensor> value) {
  value = narrow_float64(std::move(value));
  TensorInfo info;
  info.dtype = value->dtype;
  info.shape = value->shape;
  info.value = std::move(value);
  return info;
}

const TensorInfo& NodeContext::input(int i) const {
  if (i < 0 || i >= input_count()) {
    fail("expects at least " + std::to_string(i + 1) + " inputs, has " +
         std::to_string(input_count()));
  }
  return *inputs_[static_cast<size_t>(i)];
}

const HostTensor& NodeContext::constant_input(int i, const char* what) const {
  const TensorInfo& info = input(i);
  if (!info.value) {
    const std::string tensor = graph_.tensor_name(node_.inputs[static_cast<size_t>(i)]);
    throw ConvertError(graph_.source() + ": node '" + node_.name() + "' (op " + node_.op() + "): " + what +
                           " (input " + std::to_string(i) + ", '" + tensor +
                           "') must be known at conversion time; it depends on a graph input",
                       ErrorCategory::kNeedsConstant, ErrorLocation{graph_.source(), node_.name(), node_.op(), -1})
        .with_tensor(tensor);
  }
  return *info.value;
}

std::vector<int64_t> NodeContext::constant_ints(int i, const char* what) const {
  const HostTensor& t = constant_input(i, what);
  std::vector<int64_t> out;
  const int64_t n = t.num_elements();
  if (t.dtype == DType::kInt32) {
    for (int64_t k = 0; k < n; ++k) out.push_back(t.as<int32_t>()[k]);
  } else if (t.dtype == DType::kInt64) {
    for (int64_t k = 0; k < n; ++k) out.push_back(t.as<int64_t>()[k]);
  } else {
    fail(std::string(what) + " must be int32 or int64, got " + dtype_name(t.dtype));
  }
  return out;
}

void NodeContext::expect_inputs(int min, int max) const {
  if (input_count() < min || input_count() > max) {
    fail("expects " + (min == max ? std::to_string(min)
                                  : std::to_string(min) + ".." + std::to_string(max)) +
         " data inputs, has " + std::to_string(input_count()));
  }
}

void NodeContext::expect_rank(int i, int rank) const {
  if (static_cast<int>(input(i).shape.size()) != rank) {
    fail("input " + std::to_string(i) + " must have rank " + std::to_string(rank) +
         ", has shape " + shape_to_string(input(i).shape));
  }
}

void NodeContext::fail(const std::string& message) const {
  throw ConvertError(graph_.source() + ": node '" + node_.name() + "' (op " + node_.op() + "): " + message,
                     message.find("internal error") != std::string::npos ? ErrorCategory::kInternal
                                                                         : ErrorCategory::kInvalidInput,
                     ErrorLocation{graph_.source(), node_.name(), node_.op(), -1});
}

int LowerContext::input_value(int i) {
  const TensorInfo& info = input(i);
  int& value = input_values_[static_cast<size_t>(i)];
  if (value < 0) {
    if (!info.value) fail("internal error: input " + std::to_string(i) + " has no value");
    Value v;
    v.name = graph().tensor_name(node().inputs[static_cast<size_t>(i)]);
    v.dtype = info.dtype;
    v.shape = info.shape;
    v.constant = info.value;
    value = model_.add_value(std::move(v));
  }
  return value;
}

int LowerContext::output_value(int port) {
  int& value = output_values_[static_cast<size_t>(port)];
  if (value < 0) {
    const TensorInfo& info = outputs_[static_cast<size_t>(port)];
    Value v;
    v.name = node().name() + ":" + std::to_string(port);
    v.dtype = info.dtype;
    v.shape = info.shape;
    value = model_.add_value(std::move(v));
  }
  return value;
}

void LowerContext::alias_output(int port, int value) {
  output_values_[static_cast<size_t>(port)] = value;
}

int LowerContext::constant_value(const std::string& suffix, HostTensor tensor) {
  Value v;
  v.name = node().name() + "/" + suffix;
  v.dtype = tensor.dtype;
  v.shape = tensor.shape;
  v.constant = std::make_shared<const HostTensor>(std::move(tensor));
  return model_.add_value(std::move(v));
}

int LowerContext::intermediate_value(const std::string& suffix, DType dtype, std::vector<int64_t> shape) {
  Value v;
  v.name = node().name() + "/" + suffix;
  v.dtype = dtype;
  v.shape = std::move(shape);
  return model_.add_value(std::move(v));
}

void LowerContext::add_op(schema::OpCode opcode, std::vector<int> inputs, std::vector<int> outputs,
                          schema::OpOptionsUnion options) {
  LoweredOp op;
  op.opcode = opcode;
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  op.options = std::move(options);
  op.node_name = node().name();
  model_.ops.push_back(std::move(op));
}

int LowerContext::new_value(DType dtype, std::vector<int64_t> shape, const std::string& suffix) {
  Value v;
  v.name = node().name() + "/" + suffix;
  v.dtype = dtype;
  v.shape = std::move(shape);
  return model_.add_value(std::move(v));
}

int LowerContext::reshaped_value(int value, std::vector<int64_t> shape, const std::string& suffix) {
  const Value& from = model_.values[static_cast<size_t>(value)];
  if (from.is_constant()) {
    HostTensor t = *from.constant;
    t.shape = shape;
    return constant_value(suffix, std::move(t));
  }
  const int id = new_value(from.dtype, std::move(shape), suffix);
  add_op(schema::OpCode::RESHAPE, {value}, {id});
  return id;
}

int LowerContext::transposed_value(int value, const std::vector<int32_t>& perm, const std::string& suffix) {
  const Value& v = value_info(value);
  std::vector<int64_t> shape;
  for (int32_t p : perm) shape.push_back(v.shape[static_cast<size_t>(p)]);
  const int out = new_value(v.dtype, shape, suffix);
  schema::TransposeOptionsT o;
  o.perm = perm;
  add_op(schema::OpCode::TRANSPOSE, {value}, {out}, options(o));
  return out;
}

void require_float32_output(LowerContext& ctx) {
  if (ctx.output_info(0).dtype != DType::kFloat32) {
    ctx.fail(std::string("dtype ") + dtype_name(ctx.output_info(0).dtype) +
             " is not supported (float32 only)");
  }
}

namespace {

const std::map<std::string, const OpHandler*>& handler_table() {
  static const std::map<std::string, const OpHandler*> table = [] {
    std::map<std::string, const OpHandler*> t;
    for (const auto* family :
         {&elementwise_handlers(), &pool_handlers(), &shape_handlers(), &source_handlers(),
          &batch_norm_handlers(), &layout_handlers(), &math_handlers(), &reduce_handlers(),
          &slice_handlers(), &gather_handlers(), &scatter_handlers(), &matmul_handlers(), &conv_handlers(),
          &normalization_handlers(), &topk_handlers(), &cumulative_handlers(),
          &fake_quant_handlers(), &resize_handlers(), &space_depth_handlers(),
          &rnn_cell_handlers(), &index_handlers(), &audio_handlers(), &composite_handlers(), &random_handlers(), &loop_handlers(), &if_handlers(),
          &image_handlers(), &spectral_handlers(), &counting_handlers()}) {
      for (const OpHandler& h : *family) t.emplace(h.tf_op, &h);
    }
    return t;
  }();
  return table;
}

}  // namespace

const OpHandler* find_handler(const std::string& tf_op) {
  const auto& table = handler_table();
  const auto it = table.find(tf_op);
  return it == table.end() ? nullptr : it->second;
}

std::vector<const OpHandler*> registered_handlers() {
  std::vector<const OpHandler*> handlers;
  for (const auto& entry : handler_table()) handlers.push_back(entry.second);
  return handlers;
}

std::vector<int64_t> broadcast_shapes(const NodeContext& ctx, const std::vector<int64_t>& a,
                                      const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1) {
      ctx.fail("shapes " + shape_to_string(a) + " and " + shape_to_string(b) +
               " are not broadcast-compatible");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t normalize_axis(const NodeContext& ctx, int64_t axis, int64_t rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return a;
}

std::vector<int32_t> reduction_axes(const NodeContext& ctx) {
  const int64_t rank = static_cast<int64_t>(ctx.input(0).shape.size());
  std::vector<int32_t> axes;
  for (int64_t a : ctx.constant_ints(1, "the reduction axes")) {
    axes.push_back(static_cast<int32_t>(normalize_axis(ctx, a, rank)));
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

std::vector<TensorInfo> infer_reduction(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  const std::vector<int32_t> axes = reduction_axes(ctx);
  const bool keep_dims = attr_bool(ctx.node().def, "keep_dims", false);
  const auto& in = ctx.input(0).shape;
  std::vector<int64_t> out;
  for (size_t d = 0; d < in.size(); ++d) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<int32_t>(d));
    if (!reduced) {
      out.push_back(in[d]);
    } else if (keep_dims) {
      out.push_back(1);
    }
  }
  return {TensorInfo{ctx.input(0).dtype, out, nullptr}};
}

DType dtype_attr(const NodeContext& ctx, const char* name) {
  const int tf_type = attr_type(ctx.node().def, name, 0);
  const DType t = compute_dtype(tf_dtype_to_floe(tf_type));
  if (t == DType::kInvalid) {
    ctx.fail(std::string("attr '") + name + "' has dtype " + tf_dtype_name(tf_type) +
             ", which floe does not support");
  }
  return t;
}

}  // namespace floe::conv
