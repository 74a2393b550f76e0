// SPDX-License-Identifier: Apache-2.0
// SELECT: out = cond ? x : y, element-wise with broadcasting of all three
// operands (TF's SelectV2; TF1 Select's rank-1 condition is reshaped by the
// converter to broadcast along dim 0). cond is bool; x, y, out share any dtype.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

struct SelectOperands {
  In<uint8_t> cond;
  In<void> x;
  In<void> y;
  Out<void> output;
};

void select(size_t element_size, const SelectOperands& ops);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

const char* prepare_select(const OpContext& ctx);
Status eval_select(const PreparedOp& ctx);

}  // namespace floe::ops
