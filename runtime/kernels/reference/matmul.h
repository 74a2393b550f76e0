// SPDX-License-Identifier: Apache-2.0
// 2-D matrix product with optional transposes, bias and fused activation:
//   output[M,N] = act(op(a)[M,K] x op(b)[K,N] + bias[N])
// a is [M,K] ([K,M] when transpose_a), b is [K,N] ([N,K] when transpose_b).
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/kernels/reference/activation.h"
#include "runtime/core/op_adapter.h"

namespace floe::ref {

struct MatMulParams {
  bool transpose_a = false;
  bool transpose_b = false;
  Activation activation = Activation::kNone;
};

struct MatMulOperands {
  In<float> a;
  In<float> b;
  In<float> bias;  // data == nullptr when absent
  Out<float> output;
};

void matmul_f32(const MatMulParams& params, const MatMulOperands& ops);

}  // namespace floe::ref

// The op's adapter (runtime/ops.def names it; runtime/core/dispatch.h).
namespace floe::ops {

inline ref::MatMulOperands matmul_operands(const PreparedOp& ctx) {
  return {in_as<float>(ctx.input(0)), in_as<float>(ctx.input(1)), in_as<float>(ctx.input(2)),
          out_as<float>(ctx.output(0))};
}

const char* prepare_matmul(const OpContext& ctx);
Status eval_matmul(const PreparedOp& ctx);

}  // namespace floe::ops
