// SPDX-License-Identifier: Apache-2.0
// TensorProto -> HostTensor, following TensorFlow's Tensor::FromProto
// (tf-formats §3): tensor_content wins when non-empty; otherwise the typed field
// for the dtype is used, and when it holds fewer values than the shape needs the
// LAST value repeats (Grappler compresses constants that way); no values -> zeros.
// Half/bfloat16 travel as 16-bit patterns inside int32s. Bytes are little-endian.
// DataType names and the TF -> floe dtype mapping come from
// converter/ir/tf_dtype.h (one definition for both readers).
#pragma once

#include <string>
#include <vector>

#include "converter/ir/host_tensor.h"
#include "converter/proto/tf_subset.pb.h"

namespace floe::conv {

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
