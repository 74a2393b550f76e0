// SPDX-License-Identifier: Apache-2.0
// Lowering and conversion-time evaluation of single TF nodes, shared by the
// graph passes (loop unrolling, static conds) and the lowering driver. Values
// are computed by the eval service (converter/eval): the runtime's reference
// kernels run the node's lowered ops.
#pragma once

#include <memory>
#include <vector>

#include "converter/ir/graph.h"
#include "converter/ir/lowered.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {

// Lowers `node` into `model` and returns its output value ids. Narrow dtypes
// (float16/bfloat16, 8/16-bit integers) are widened at the op boundary: narrow
// inputs are cast to float32/int32, the handler lowers a wide op, and each
// narrow output is cast back (exact for integers, TF-like rounding for half
// floats). input_values[i] = -1 for a constant input.
std::vector<int> lower_node(const Graph& graph, const Node& node, const OpHandler& handler,
                            const std::vector<const TensorInfo*>& inputs, const std::vector<TensorInfo>& outs,
                            LoweredModel& model, std::vector<int> input_values);

// Bytes of a tensor from its shape (a double: a fuzzed shape may claim more than 2^64).
double tensor_bytes(const TensorInfo& t);
// `bytes` in decimal for a message (a claimed size may not fit 64 bits).
std::string byte_count(double bytes);
// Throws ConvertError naming the node when an output would exceed one
// tensor's byte limit (kMaxTensorBytes), before anything is allocated.
void check_output_bytes(const Graph& graph, const Node& node, const std::vector<TensorInfo>& outs);

// worth_folding (ir/limits.h) for a node's inputs and inferred outputs: every
// fold (lowering, unrolling, evaluate_constant) leaves a large expansion of
// small constants to run time.
bool worth_folding(const std::vector<const TensorInfo*>& inputs, const std::vector<TensorInfo>& outs);

// The outputs of `node` computed from its constant inputs.
std::vector<HostTensor> fold_node(const Graph& graph, const Node& node, const OpHandler& handler,
                                  const std::vector<const TensorInfo*>& inputs,
                                  const std::vector<TensorInfo>& outs);

// The value of `tensor`, computed from the nodes in `keep` (its ancestors, none
// fed): null when it is not a conversion-time constant. Throws ConvertError
// when a node cannot be evaluated.
std::shared_ptr<const HostTensor> evaluate_constant(const Graph& graph, const std::vector<bool>& keep,
                                                    TensorRef tensor);

}  // namespace floe::conv
