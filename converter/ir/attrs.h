// SPDX-License-Identifier: Apache-2.0
// NodeDef attribute access with TensorFlow's defaults, GraphDef input strings,
// and filling stripped default attrs (tf-formats §4, §5, §14).
// Lookup order for every attr_* getter: the node's own attr, then TF's default
// for (op, attr) from the built-in table (default_attrs.cc), then the caller's
// `default_value`; getters without one throw when all three are missing. A
// present attr of the wrong kind (e.g. `f` where an int is wanted) always throws.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "converter/ir/host_tensor.h"
#include "converter/proto/tf_subset.pb.h"

namespace floe::conv {

using floe::tfproto::AttrValue;
using floe::tfproto::GraphDef;
using floe::tfproto::NodeDef;
using floe::tfproto::OpList;

// The node's own attr, or nullptr (no defaults consulted).
const AttrValue* find_attr(const NodeDef& node, const std::string& name);

// TF's default for attr `name` of `op` from the built-in table, or nullptr.
const AttrValue* builtin_default_attr(const std::string& op, const std::string& name);

// The node's attr, else the built-in default, else nullptr.
const AttrValue* find_attr_or_default(const NodeDef& node, const std::string& name);

// "int", "list(float)", "list()" (empty list), "tensor", "unset" ... for messages.
std::string attr_kind_name(const AttrValue& value);

int64_t attr_int(const NodeDef& node, const std::string& name);
int64_t attr_int(const NodeDef& node, const std::string& name, int64_t default_value);
float attr_float(const NodeDef& node, const std::string& name);
float attr_float(const NodeDef& node, const std::string& name, float default_value);
bool attr_bool(const NodeDef& node, const std::string& name);
bool attr_bool(const NodeDef& node, const std::string& name, bool default_value);
std::string attr_string(const NodeDef& node, const std::string& name);
std::string attr_string(const NodeDef& node, const std::string& name,
                        const std::string& default_value);

// TF DataType number with _REF normalised away (DT_FLOAT_REF 101 -> DT_FLOAT 1).
int attr_type(const NodeDef& node, const std::string& name);
int attr_type(const NodeDef& node, const std::string& name, int default_value);

// list(int) / list(float) / list(string) / list(type). An empty `list {}` is a
// valid value of every list kind.
std::vector<int64_t> attr_ints(const NodeDef& node, const std::string& name);
std::vector<int64_t> attr_ints(const NodeDef& node, const std::string& name,
                               const std::vector<int64_t>& default_value);
std::vector<float> attr_floats(const NodeDef& node, const std::string& name);
std::vector<std::string> attr_strings(const NodeDef& node, const std::string& name);
std::vector<int> attr_types(const NodeDef& node, const std::string& name);

// A `shape` attr: dims with -1 for unknown sizes. When the shape has unknown
// rank, *unknown_rank is set to true and {} returned; without an `unknown_rank`
// out-parameter an unknown rank throws instead (callers that cannot handle it
// get a precise error rather than a silent scalar).
std::vector<int64_t> attr_shape(const NodeDef& node, const std::string& name,
                                bool* unknown_rank = nullptr);

// A Placeholder's `shape` with the producer < 22 rule applied: back then an
// empty (scalar-looking) shape meant "unknown shape" (tf-formats §2).
std::vector<int64_t> placeholder_shape(const NodeDef& node, int producer, bool* unknown_rank);

// The dtype (a TF DataType number) and shape of output `port` of a node that is
// fed or fixed instead of computed, as far as the NodeDef tells: DecodeWav's
// samples [desired_samples, desired_channels] float and sample rate int32
// scalar; otherwise the "T" / "dtype" / "out_type" attr (port 0 only) and the
// "_output_shapes" attr. False when the dtype is unknown; *unknown_rank is set
// when the shape is.
bool output_signature(const NodeDef& node, int port, int* tf_type, std::vector<int64_t>* shape, bool* unknown_rank);

// A `tensor` attr decoded with tensor_from_proto (e.g. Const's "value").
HostTensor attr_tensor(const NodeDef& node, const std::string& name);

// One entry of NodeDef.input: "name" -> {name, 0}, "name:3" -> {name, 3},
// "^name" -> control dependency. Throws ConvertError on an empty string, an
// empty node name, a non-decimal port, or a control input with a port.
struct InputRef {
  std::string node;
  int port = 0;
  bool control = false;
};
InputRef parse_input(const std::string& input);

// Canonical spelling: "name" for port 0, "name:3", "^name".
std::string format_input(const InputRef& ref);

// Fills every attr a node lacks from its OpDef's default_value (as TF's
// importer does with AddDefaultAttrsToGraphDef), in the graph's nodes and in its
// library functions' bodies. Ops missing from `ops` are left alone. Returns the
// number of attrs added.
size_t apply_default_attrs(GraphDef& graph, const OpList& ops);

}  // namespace floe::conv
