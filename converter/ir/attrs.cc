// SPDX-License-Identifier: Apache-2.0
// Attribute getters, GraphDef input-string parsing and default-attr filling.
// The AttrValue oneof case (which field number appeared) decides the kind, never
// the value: `b: false` is a present bool, `list {}` a present empty list.
#include "converter/ir/attrs.h"

#include <unordered_map>

#include "converter/ir/tf_dtype.h"
#include "converter/ir/tensor_proto.h"
#include "converter/ir/error.h"
#include "converter/ir/limits.h"

namespace floe::conv {
namespace tfp = floe::tfproto;

namespace {

std::string node_context(const NodeDef& node) {
  return "node '" + node.name() + "' (op " + node.op() + ")";
}

[[noreturn]] void fail_kind(const NodeDef& node, const std::string& name, const AttrValue& value,
                            const char* expected) {
  throw ConvertError(node_context(node) + ": attr '" + name + "' is " + attr_kind_name(value) +
                     ", expected " + expected);
}

[[noreturn]] void fail_missing(const NodeDef& node, const std::string& name, const char* expected) {
  throw ConvertError(node_context(node) + ": required " + expected + " attr '" + name +
                     "' is missing (and TF defines no default floe knows of)");
}

// The attr (own or default) when it holds `wanted`; throws on another kind.
// Returns nullptr when absent everywhere.
const AttrValue* lookup(const NodeDef& node, const std::string& name,
                        AttrValue::ValueCase wanted, const char* expected) {
  const AttrValue* value = find_attr_or_default(node, name);
  if (value == nullptr) return nullptr;
  if (value->value_case() != wanted) fail_kind(node, name, *value, expected);
  return value;
}

// List attrs: a present `list` whose only populated member (if any) is the one
// `count` measures; returns nullptr when absent everywhere.
template <typename Count>
const AttrValue::ListValue* lookup_list(const NodeDef& node, const std::string& name,
                                        const char* expected, Count count) {
  const AttrValue* value = find_attr_or_default(node, name);
  if (value == nullptr) return nullptr;
  if (value->value_case() != AttrValue::kList) fail_kind(node, name, *value, expected);
  const auto& list = value->list();
  const int total = list.s_size() + list.i_size() + list.f_size() + list.b_size() +
                    list.type_size() + list.shape_size() + list.tensor_size() + list.func_size();
  if (total != count(list)) fail_kind(node, name, *value, expected);
  return &list;
}

// Scalar getters: own attr, built-in default, then `fallback` (nullptr = required).
template <typename T, typename Read>
T scalar_attr(const NodeDef& node, const std::string& name, AttrValue::ValueCase wanted,
              const char* expected, const T* fallback, Read read) {
  if (const AttrValue* value = lookup(node, name, wanted, expected)) return read(*value);
  if (fallback == nullptr) fail_missing(node, name, expected);
  return *fallback;
}

}  // namespace

const AttrValue* find_attr(const NodeDef& node, const std::string& name) {
  auto it = node.attr().find(name);
  return it == node.attr().end() ? nullptr : &it->second;
}

const AttrValue* find_attr_or_default(const NodeDef& node, const std::string& name) {
  const AttrValue* own = find_attr(node, name);
  return own != nullptr ? own : builtin_default_attr(node.op(), name);
}

std::string attr_kind_name(const AttrValue& value) {
  switch (value.value_case()) {
    case AttrValue::kS: return "string";
    case AttrValue::kI: return "int";
    case AttrValue::kF: return "float";
    case AttrValue::kB: return "bool";
    case AttrValue::kType: return "type";
    case AttrValue::kShape: return "shape";
    case AttrValue::kTensor: return "tensor";
    case AttrValue::kFunc: return "func";
    case AttrValue::kPlaceholder: return "placeholder";
    case AttrValue::VALUE_NOT_SET: return "unset";
    case AttrValue::kList: break;
  }
  const auto& list = value.list();
  if (list.s_size()) return "list(string)";
  if (list.i_size()) return "list(int)";
  if (list.f_size()) return "list(float)";
  if (list.b_size()) return "list(bool)";
  if (list.type_size()) return "list(type)";
  if (list.shape_size()) return "list(shape)";
  if (list.tensor_size()) return "list(tensor)";
  if (list.func_size()) return "list(func)";
  return "list()";
}

// ---------------------------------------------------------------- scalars
namespace {
int64_t read_int(const AttrValue& v) { return v.i(); }
float read_float(const AttrValue& v) { return v.f(); }
bool read_bool(const AttrValue& v) { return v.b(); }
std::string read_string(const AttrValue& v) { return v.s(); }
int read_type(const AttrValue& v) { return tf_dtype_base(v.type()); }
}  // namespace

int64_t attr_int(const NodeDef& node, const std::string& name) {
  return scalar_attr<int64_t>(node, name, AttrValue::kI, "int", nullptr, read_int);
}
int64_t attr_int(const NodeDef& node, const std::string& name, int64_t default_value) {
  return scalar_attr(node, name, AttrValue::kI, "int", &default_value, read_int);
}
float attr_float(const NodeDef& node, const std::string& name) {
  return scalar_attr<float>(node, name, AttrValue::kF, "float", nullptr, read_float);
}
float attr_float(const NodeDef& node, const std::string& name, float default_value) {
  return scalar_attr(node, name, AttrValue::kF, "float", &default_value, read_float);
}
bool attr_bool(const NodeDef& node, const std::string& name) {
  return scalar_attr<bool>(node, name, AttrValue::kB, "bool", nullptr, read_bool);
}
bool attr_bool(const NodeDef& node, const std::string& name, bool default_value) {
  return scalar_attr(node, name, AttrValue::kB, "bool", &default_value, read_bool);
}
std::string attr_string(const NodeDef& node, const std::string& name) {
  return scalar_attr<std::string>(node, name, AttrValue::kS, "string", nullptr, read_string);
}
std::string attr_string(const NodeDef& node, const std::string& name,
                        const std::string& default_value) {
  return scalar_attr(node, name, AttrValue::kS, "string", &default_value, read_string);
}
int attr_type(const NodeDef& node, const std::string& name) {
  return scalar_attr<int>(node, name, AttrValue::kType, "type", nullptr, read_type);
}
int attr_type(const NodeDef& node, const std::string& name, int default_value) {
  const int base = tf_dtype_base(default_value);
  return scalar_attr(node, name, AttrValue::kType, "type", &base, read_type);
}

// ------------------------------------------------------------------ lists
std::vector<int64_t> attr_ints(const NodeDef& node, const std::string& name) {
  const auto* list = lookup_list(node, name, "list(int)", [](const auto& l) { return l.i_size(); });
  if (list == nullptr) fail_missing(node, name, "list(int)");
  return {list->i().begin(), list->i().end()};
}

std::vector<int64_t> attr_ints(const NodeDef& node, const std::string& name,
                               const std::vector<int64_t>& default_value) {
  const auto* list = lookup_list(node, name, "list(int)", [](const auto& l) { return l.i_size(); });
  if (list == nullptr) return default_value;
  return {list->i().begin(), list->i().end()};
}

std::vector<float> attr_floats(const NodeDef& node, const std::string& name) {
  const auto* list = lookup_list(node, name, "list(float)", [](const auto& l) { return l.f_size(); });
  if (list == nullptr) fail_missing(node, name, "list(float)");
  return {list->f().begin(), list->f().end()};
}

std::vector<std::string> attr_strings(const NodeDef& node, const std::string& name) {
  const auto* list = lookup_list(node, name, "list(string)", [](const auto& l) { return l.s_size(); });
  if (list == nullptr) fail_missing(node, name, "list(string)");
  return {list->s().begin(), list->s().end()};
}

std::vector<int> attr_types(const NodeDef& node, const std::string& name) {
  const auto* list = lookup_list(node, name, "list(type)", [](const auto& l) { return l.type_size(); });
  if (list == nullptr) fail_missing(node, name, "list(type)");
  std::vector<int> types;
  for (int t : list->type()) types.push_back(tf_dtype_base(t));
  return types;
}

// ------------------------------------------------------- shape and tensor
bool output_signature(const NodeDef& node, int port, int* tf_type, std::vector<int64_t>* shape, bool* unknown_rank) {
  constexpr int kTfFloat = 1, kTfInt32 = 3;
  *tf_type = 0;
  *unknown_rank = true;
  shape->clear();
  if (const AttrValue* shapes = find_attr(node, "_output_shapes"); shapes && shapes->list().shape_size() > port) {
    const auto& s = shapes->list().shape(port);
    *unknown_rank = s.unknown_rank();
    for (const auto& d : s.dim()) shape->push_back(d.size());
  }
  if (node.op() == "DecodeWav" && (port == 0 || port == 1)) {
    if (port == 1) {
      *tf_type = kTfInt32;
      shape->clear();
      *unknown_rank = false;
      return true;
    }
    *tf_type = kTfFloat;
    const int64_t samples = attr_int(node, "desired_samples", -1);
    const int64_t channels = attr_int(node, "desired_channels", -1);
    if (*unknown_rank || shape->size() != 2) {
      *shape = {samples, channels};
      *unknown_rank = false;
    }
    return true;
  }
  if (port != 0) return false;
  for (const char* name : {"T", "dtype", "out_type"}) {
    if (const AttrValue* v = find_attr(node, name); v && v->value_case() == AttrValue::kType) {
      *tf_type = v->type();
      return true;
    }
  }
  return false;
}

std::vector<int64_t> attr_shape(const NodeDef& node, const std::string& name, bool* unknown_rank) {
  const AttrValue* v = lookup(node, name, AttrValue::kShape, "shape");
  if (v == nullptr) fail_missing(node, name, "shape");
  if (v->shape().unknown_rank()) {
    if (unknown_rank == nullptr) {
      throw ConvertError(node_context(node) + ": attr '" + name +
                         "' is a shape of unknown rank; a known rank is needed here");
    }
    *unknown_rank = true;
    return {};
  }
  if (unknown_rank != nullptr) *unknown_rank = false;
  if (v->shape().dim_size() > kMaxTensorRank) {
    throw ConvertError(node_context(node) + ": attr '" + name + "' has rank " + std::to_string(v->shape().dim_size()) +
                       ", over floe's limit of " + std::to_string(kMaxTensorRank));
  }
  return dims_from_shape_proto(v->shape());
}

std::vector<int64_t> placeholder_shape(const NodeDef& node, int producer, bool* unknown_rank) {
  std::vector<int64_t> dims = attr_shape(node, "shape", unknown_rank);
  if (producer < 22 && !*unknown_rank && dims.empty()) *unknown_rank = true;
  return dims;
}

HostTensor attr_tensor(const NodeDef& node, const std::string& name) {
  const AttrValue* v = lookup(node, name, AttrValue::kTensor, "tensor");
  if (v == nullptr) fail_missing(node, name, "tensor");
  return tensor_from_proto(v->tensor(), node_context(node) + " attr '" + name + "'");
}

// ------------------------------------------------------------ input strings
InputRef parse_input(const std::string& input) {
  auto bad = [&](const std::string& why) -> ConvertError {
    return ConvertError("malformed GraphDef input '" + input + "': " + why);
  };
  if (input.empty()) throw bad("empty string");
  InputRef ref;
  if (input[0] == '^') {
    ref.control = true;
    ref.node = input.substr(1);
    if (ref.node.empty()) throw bad("control input without a node name");
    if (ref.node.find(':') != std::string::npos) throw bad("a control input names a node, not an output port");
    return ref;
  }
  // Node names never contain ':', so the port starts after the last one.
  const size_t colon = input.rfind(':');
  if (colon == std::string::npos) {
    ref.node = input;
    return ref;
  }
  ref.node = input.substr(0, colon);
  const std::string port = input.substr(colon + 1);
  if (ref.node.empty()) throw bad("empty node name before ':'");
  if (ref.node.find(':') != std::string::npos) {
    throw bad("node names never contain ':' (\"node:out_arg:idx\" is FunctionDef-body syntax, not GraphDef)");
  }
  if (port.empty() || port.size() > 9 || port.find_first_not_of("0123456789") != std::string::npos) {
    throw bad("port '" + port + "' is not a decimal output index");
  }
  ref.port = std::stoi(port);
  return ref;
}

std::string format_input(const InputRef& ref) {
  if (ref.control) return "^" + ref.node;
  return ref.port == 0 ? ref.node : ref.node + ":" + std::to_string(ref.port);
}

// -------------------------------------------------------- default filling
namespace {

size_t fill_node_defaults(NodeDef& node, const std::unordered_map<std::string, const tfp::OpDef*>& ops) {
  auto it = ops.find(node.op());
  if (it == ops.end()) return 0;
  size_t added = 0;
  auto& attrs = *node.mutable_attr();
  for (const auto& attr_def : it->second->attr()) {
    if (!attr_def.has_default_value() || attrs.count(attr_def.name())) continue;
    attrs[attr_def.name()] = attr_def.default_value();
    ++added;
  }
  return added;
}

}  // namespace

size_t apply_default_attrs(GraphDef& graph, const OpList& op_list) {
  std::unordered_map<std::string, const tfp::OpDef*> ops;
  for (const auto& op : op_list.op()) ops[op.name()] = &op;
  if (ops.empty()) return 0;
  size_t added = 0;
  for (auto& node : *graph.mutable_node()) added += fill_node_defaults(node, ops);
  if (!graph.has_library()) return added;
  for (auto& function : *graph.mutable_library()->mutable_function()) {
    for (auto& node : *function.mutable_node_def()) added += fill_node_defaults(node, ops);
  }
  return added;
}

}  // namespace floe::conv
