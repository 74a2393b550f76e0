// SPDX-License-Identifier: Apache-2.0
// TensorProto -> HostTensor, following TensorFlow's Tensor::FromProto
// (tf-formats §3): tensor_content wins when non-empty; otherwise the typed field
// for the dtype is used, and when it holds fewer values than the shape needs the
// LAST value repeats (Grappler compresses constants that way); no values -> zeros.
// Half/bfloat16 travel as 16-bit patterns inside int32s. Bytes are little-endian.
#pragma once

#include <optional>
#include <string>

#include "converter/ir/host_tensor.h"
#include "converter/proto/tf_subset.pb.h"

namespace floe::conv {

// (Names differ from converter/frontend/checkpoint/tf_dtype.h on purpose: the two
// modules were written independently and must not collide until they are merged.)

// TF DataType number -> name ("DT_FLOAT", "DT_FLOAT_REF", or "DataType(77)").
std::string tf_datatype_name(int tf_dtype);

// _REF types are base + 100 (101..133); everything else is returned unchanged.
int tf_datatype_base(int tf_dtype);

// floe dtype for a TF DataType (_REF accepted), or nullopt when floe has no
// equivalent (string, complex, quantized, resource, variant, uint32/64, float8, ...).
std::optional<DType> floe_dtype_for_tf(int tf_dtype);

// Decodes `proto` into a dense tensor. `context` names where the proto came from
// (e.g. "node 'conv1/weights' attr 'value'") and prefixes every error message.
// Throws ConvertError on unsupported dtypes, unknown/negative dims, a
// tensor_content whose size does not match the shape, or a non-0/1 bool byte.
HostTensor tensor_from_proto(const floe::tfproto::TensorProto& proto, const std::string& context);

// Dimensions of a TensorShapeProto; -1 marks unknown dims. `unknown_rank` is set
// (when given) from the proto's unknown_rank flag.
std::vector<int64_t> dims_from_shape_proto(const floe::tfproto::TensorShapeProto& shape,
                                           bool* unknown_rank = nullptr);

}  // namespace floe::conv
