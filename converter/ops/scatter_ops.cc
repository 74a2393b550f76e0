// SPDX-License-Identifier: Apache-2.0
// Scatter ops, all onto the SCATTER_ND_* kernels (runtime/kernels/reference/scatter.h):
//   ScatterNd (indices, updates, shape)           zeros, then ADD (duplicates sum, as TF)
//   TensorScatter{Update,Add,Sub,Min,Max}          a copy of the tensor, then the mode
//   ScatterNd{Update,Add,Sub}, Scatter{Update,Add,Sub,Mul,Div,Min,Max}
//     variable updates: their output is the variable after the update, which is
//     what Session.run returns when one is fetched (the variable's value comes
//     from freezing, or from the initializer Assign that feeds it; see
//     passes/training_structure.h). Scatter* index the first dim only: their
//     indices [I...] become [I..., 1].
// TensorScatterUpdate / ScatterUpdate with duplicate indices: TF leaves the
// order unspecified; floe applies index rows in order, so the last one wins.
// Constant indices are range-checked here; fed ones by the kernel at Invoke().
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

struct ScatterKind {
  const char* tf_op;
  schema::OpCode opcode;
  bool first_dim_indices;  // Scatter*: indices address dim 0 only
};

constexpr ScatterKind kKinds[] = {
    {"ScatterNd", schema::OpCode::SCATTER_ND_ADD, false},
    {"TensorScatterUpdate", schema::OpCode::SCATTER_ND_UPDATE, false},
    {"TensorScatterAdd", schema::OpCode::SCATTER_ND_ADD, false},
    {"TensorScatterSub", schema::OpCode::SCATTER_ND_SUB, false},
    {"TensorScatterMin", schema::OpCode::SCATTER_ND_MIN, false},
    {"TensorScatterMax", schema::OpCode::SCATTER_ND_MAX, false},
    {"ScatterNdUpdate", schema::OpCode::SCATTER_ND_UPDATE, false},
    {"ScatterNdAdd", schema::OpCode::SCATTER_ND_ADD, false},
    {"ScatterNdSub", schema::OpCode::SCATTER_ND_SUB, false},
    {"ScatterUpdate", schema::OpCode::SCATTER_ND_UPDATE, true},
    {"ScatterAdd", schema::OpCode::SCATTER_ND_ADD, true},
    {"ScatterSub", schema::OpCode::SCATTER_ND_SUB, true},
    {"ScatterMul", schema::OpCode::SCATTER_ND_MUL, true},
    {"ScatterDiv", schema::OpCode::SCATTER_ND_DIV, true},
    {"ScatterMin", schema::OpCode::SCATTER_ND_MIN, true},
    {"ScatterMax", schema::OpCode::SCATTER_ND_MAX, true},
};

const ScatterKind& kind_of(const NodeContext& ctx) {
  for (const ScatterKind& k : kKinds) {
    if (ctx.node().op() == k.tf_op) return k;
  }
  ctx.fail("internal error: not a scatter op");
}

bool from_zeros(const NodeContext& ctx) { return ctx.node().op() == "ScatterNd"; }

// The output shape, and the index depth k of the indices as the kernel reads them.
struct ScatterGeometry {
  std::vector<int64_t> shape;
  std::vector<int64_t> index_shape;  // [..., k]
};

ScatterGeometry scatter_geometry(const NodeContext& ctx) {
  ctx.expect_inputs(3, 3);
  const ScatterKind& kind = kind_of(ctx);
  const int indices = from_zeros(ctx) ? 0 : 1, updates = indices + 1;
  ScatterGeometry g;
  if (from_zeros(ctx)) {
    g.shape = ctx.constant_ints(2, "the ScatterNd shape");
    for (int64_t d : g.shape) {
      if (d < 0) ctx.fail("shape " + shape_to_string(g.shape) + " has a negative dim");
    }
  } else {
    g.shape = ctx.input(0).shape;
  }
  g.index_shape = ctx.input(indices).shape;
  if (kind.first_dim_indices) {
    if (g.shape.empty()) ctx.fail("the variable is a scalar; " + std::string(kind.tf_op) + " indexes its first dim");
    g.index_shape.push_back(1);
  } else if (g.index_shape.empty()) {
    ctx.fail("indices must have rank >= 1, have shape []");
  }
  const int64_t k = g.index_shape.back();
  if (k < 0 || k > static_cast<int64_t>(g.shape.size())) {
    ctx.fail("index depth " + std::to_string(k) + " (the last dim of indices " +
             shape_to_string(ctx.input(indices).shape) + ") exceeds the rank of " + shape_to_string(g.shape));
  }
  std::vector<int64_t> expected(g.index_shape.begin(), g.index_shape.end() - 1);
  expected.insert(expected.end(), g.shape.begin() + k, g.shape.end());
  if (ctx.input(updates).shape != expected) {
    ctx.fail("updates have shape " + shape_to_string(ctx.input(updates).shape) + ", expected " +
             shape_to_string(expected) + " (indices " + shape_to_string(ctx.input(indices).shape) +
             " into " + shape_to_string(g.shape) + ")");
  }
  // Known indices are checked now; fed ones fail Invoke() when out of range.
  if (ctx.input(indices).value && k > 0) {
    const std::vector<int64_t> values = ctx.constant_ints(indices, "indices");
    for (size_t i = 0; i < values.size(); ++i) {
      const int64_t dim = g.shape[i % static_cast<size_t>(k)];
      if (values[i] < 0 || values[i] >= dim) {
        ctx.fail("index " + std::to_string(values[i]) + " (element " + std::to_string(i) + " of indices) is out of range [0, " +
                 std::to_string(dim) + ") for " + shape_to_string(g.shape));
      }
    }
  }
  return g;
}

std::vector<TensorInfo> infer_scatter(const NodeContext& ctx) {
  const ScatterGeometry g = scatter_geometry(ctx);
  const DType dtype = ctx.input(from_zeros(ctx) ? 1 : 0).dtype;
  // The arithmetic kernels take float32, int32 and int64; narrower types are
  // computed in those (ops/evaluate.h). UPDATE moves elements of any type.
  static const DType kArithmetic[] = {DType::kFloat32, DType::kInt32,  DType::kInt64,  DType::kFloat16, DType::kBFloat16,
                                      DType::kInt8,    DType::kInt16,  DType::kUInt8,  DType::kUInt16};
  bool supported = kind_of(ctx).opcode == schema::OpCode::SCATTER_ND_UPDATE;
  for (DType t : kArithmetic) supported = supported || t == dtype;
  if (!supported) ctx.fail(std::string("dtype ") + dtype_name(dtype) + " is not supported by " + ctx.node().op());
  return {TensorInfo{dtype, g.shape, nullptr}};
}

void lower_scatter(LowerContext& ctx) {
  const ScatterGeometry g = scatter_geometry(ctx);
  const ScatterKind& kind = kind_of(ctx);
  const int first = from_zeros(ctx) ? 0 : 1;
  int indices = ctx.input_value(first);
  if (kind.first_dim_indices) indices = ctx.reshaped_value(indices, g.index_shape, "indices_nd");
  std::vector<int> inputs = {indices, ctx.input_value(first + 1)};
  if (!from_zeros(ctx)) inputs.insert(inputs.begin(), ctx.input_value(0));
  ctx.add_op(kind.opcode, std::move(inputs), {ctx.output_value(0)});
}

}  // namespace

const std::vector<OpHandler>& scatter_handlers() {
  static const std::vector<OpHandler> handlers = [] {
    std::vector<OpHandler> h;
    for (const ScatterKind& k : kKinds) h.push_back({k.tf_op, infer_scatter, lower_scatter});
    return h;
  }();
  return handlers;
}

}  // namespace floe::conv
