// SPDX-License-Identifier: Apache-2.0
// 2-D MatMul with optional transposes, then + bias[N], then the fused activation
// (the order of TF's MatMul -> BiasAdd -> Relu). Loop orders are chosen so that the
// innermost loop walks contiguous memory for every transpose combination.
// The output must not overlap a or b (it is used as the accumulator).
#include "runtime/kernels/reference/matmul.h"

#include <math.h>
#include <stddef.h>
#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/reference/weighted_quantized_adapter.h"
#include "runtime/kernels/common/wrapping.h"

namespace floe::ref {

void matmul_f32(const MatMulParams& params, const MatMulOperands& ops) {
  const ptrdiff_t m = ops.output.shape.dims[0];
  const ptrdiff_t n = ops.output.shape.dims[1];
  const ptrdiff_t k_size = params.transpose_a ? ops.a.shape.dims[0] : ops.a.shape.dims[1];
  // a is stored [M,K] or [K,M]: element (i,k) of op(a) is a[i*a_row + k*a_col].
  const ptrdiff_t a_ld = ops.a.shape.dims[1];
  const ptrdiff_t a_row = params.transpose_a ? 1 : a_ld;
  const ptrdiff_t a_col = params.transpose_a ? a_ld : 1;
  const ptrdiff_t b_ld = ops.b.shape.dims[1];
  const float* a = ops.a.data;
  const float* b = ops.b.data;
  const float* bias = ops.bias.data;
  float* out = ops.output.data;

  const ActivationRange range = activation_range(params.activation);

  for (ptrdiff_t i = 0; i < m; ++i) {
    float* o = out + i * n;
    const float* a_i = a + i * a_row;
    if (!params.transpose_b) {
      // i-k-j: b is [K,N], so row k of b and row i of the output are both
      // contiguous; each a(i,k) is loaded once and broadcast along the row.
      for (ptrdiff_t j = 0; j < n; ++j) o[j] = 0.0f;
      for (ptrdiff_t k = 0; k < k_size; ++k) {
        const float aik = a_i[k * a_col];
        const float* b_k = b + k * b_ld;
        for (ptrdiff_t j = 0; j < n; ++j) o[j] += aik * b_k[j];
      }
    } else {
      // i-j-k: b is [N,K], so output (i,j) is a dot product with the contiguous
      // row j of b (and with row i of a unless a is transposed).
      for (ptrdiff_t j = 0; j < n; ++j) {
        const float* b_j = b + j * b_ld;
        float acc = 0.0f;
        for (ptrdiff_t k = 0; k < k_size; ++k) acc += a_i[k * a_col] * b_j[k];
        o[j] = acc;
      }
    }
    // Epilogue while the row is hot: bias is added after the full sum (BiasAdd).
    add_bias_and_activate(o, bias, n, params.activation, range);
  }
}

}  // namespace floe::ref

// ---- adapters: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {
namespace {

Status eval_matmul(const PreparedOp& ctx) {
  ref::matmul_f32(ctx.params_as<ref::MatMulParams>(), kernels::weighted_f32_operands<kernels::MatMulOperands>(ctx));
  return Status::kOk;
}

const char* prepare_matmul(const OpContext& ctx) {
  return kernels::check_matmul_f32(ctx, &ctx.params<ref::MatMulParams>());
}

using FullyConnectedQuantized = WeightedQuantizedEval<ref::FullyConnectedS8Params, ref::fully_connected_s8, ref::fully_connected_s16>;

// int8 (TFLite's FULLY_CONNECTED): a [M, K], weights [N, K] (transpose_b); 16x8 alike.
const char* prepare_fully_connected_s8(const OpContext& ctx) {
  if (const char* err = check_reference_weighted_s8(ctx)) return err;
  if (const char* err = kernels::check_fully_connected_s8_shapes(ctx)) return err;
  const Shape b = ctx.input(1).shape;
  const DType activations = ctx.input(0).dtype;
  WeightedS8 w;
  if (const char* err = prepare_weighted_s8(ctx, b.dims[0], &w, activations)) return err;
  ctx.params<ref::FullyConnectedS8Params>() = {w.input_offset, w.weight_offset, w.output_offset,
                                               w.output_multiplier, w.output_shift, w.act_min, w.act_max};
  FullyConnectedQuantized::select(ctx, activations, w.per_channel);
  return nullptr;
}

}  // namespace
}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, MATMUL, ANY, ref::MatMulParams, ops::prepare_matmul, ops::eval_matmul)
FLOE_KERNEL(REFERENCE, MATMUL, INT8, ref::FullyConnectedS8Params, ops::prepare_fully_connected_s8,
            ops::FullyConnectedQuantized::kS8PerTensor)
FLOE_KERNEL(REFERENCE, MATMUL, INT16, ref::FullyConnectedS8Params, ops::prepare_fully_connected_s8,
            ops::FullyConnectedQuantized::kS16PerTensor)


namespace floe::ref {

namespace {

template <typename T>
void fully_connected_quantized(const FullyConnectedS8Params& params, const WeightedOperands<T>& ops) {
  const Shape& fs = ops.filter.shape;
  const ptrdiff_t out_n = fs.dims[fs.rank - 2];
  const ptrdiff_t depth = fs.dims[fs.rank - 1];
  const ptrdiff_t batches = out_n == 0 ? 0 : ops.output.shape.num_elements() / out_n;
  for (ptrdiff_t b = 0; b < batches; ++b) {
    const T* x = ops.input.data + b * depth;
    T* out = ops.output.data + b * out_n;
    for (ptrdiff_t n = 0; n < out_n; ++n) {
      const int8_t* w = ops.filter.data + n * depth;
      typename QuantizedScheme<T>::Accumulator acc = 0;
      for (ptrdiff_t k = 0; k < depth; ++k) {
        acc += (w[k] + params.filter_offset) * (x[k] + params.input_offset);
      }
      out[n] = requantize_channel(acc, ops, n, params.output_multiplier, params.output_shift, params.output_offset,
                                  params.act_min, params.act_max);
    }
  }
}

}  // namespace

void fully_connected_s8(const FullyConnectedS8Params& params, const FullyConnectedS8Operands& ops) {
  fully_connected_quantized(params, ops);
}

void fully_connected_s16(const FullyConnectedS8Params& params, const FullyConnectedS16Operands& ops) {
  fully_connected_quantized(params, ops);
}

}  // namespace floe::ref
