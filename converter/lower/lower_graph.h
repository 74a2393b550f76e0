// SPDX-License-Identifier: Apache-2.0
// The lowering driver: shape/dtype inference, constant folding and lowering
// of the pruned, frozen graph into floe operators, in one topological walk.
#pragma once

#include <string>
#include <vector>

#include "converter/ir/graph.h"
#include "converter/ir/lowered.h"

namespace floe::conv {

// A tensor the caller feeds: it becomes a model input.
struct Feed {
  TensorRef ref;
  DType dtype = DType::kInvalid;         // what floe computes it in
  DType source_dtype = DType::kInvalid;  // the TF graph's dtype, when it differs (float64)
  std::vector<int64_t> shape;  // fully known; a complex input's ends in its pair dim of 2
  bool complex = false;        // complex64 (or complex128 with source_dtype float64): float32 pairs
};

struct LowerStats {
  int folded_nodes = 0;   // nodes evaluated at conversion time through the kernels
  int aliased_nodes = 0;  // Identity-like nodes that became no-ops
};

// Ops whose node, when fed, is a model input: nothing to infer or lower.
bool is_model_input_op(const std::string& op);

// Throws one ConvertError listing every kept node whose op floe cannot convert,
// with counts per op.
void check_supported_ops(const Graph& graph, const std::vector<bool>& keep);

// A FakeQuant node folded over constants (quantization-aware-trained weights):
// the constant value it became and the range it quantized them to.
struct FoldedFakeQuant {
  int value = -1;  // the folded constant in the lowered model
  std::string node;
  std::string op;
  int num_bits = 8;
  bool narrow_range = false;
  std::vector<float> min, max;  // one pair, or one per last-dim channel
};

LoweredModel lower_graph(const Graph& graph, const std::vector<bool>& keep,
                         const std::vector<Feed>& feeds, const std::vector<TensorRef>& fetches,
                         LowerStats* stats = nullptr, bool fold_constants = true,
                         std::vector<FoldedFakeQuant>* folded_fake_quants = nullptr);
// fold_constants = false (floe-convert --disable-pass fold-constants): nodes over
// constants are still evaluated (inference needs shape arguments), but they are
// also lowered as ops, so the model computes them at run time; the optimizer's
// fold-constants pass is then what folds them (tests compare both ways).
// folded_fake_quants (when given) receives every folded FakeQuant whose result
// a lowered op reads, so int8 quantization can keep the weights' trained grid.

}  // namespace floe::conv
