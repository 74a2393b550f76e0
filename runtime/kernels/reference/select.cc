// SPDX-License-Identifier: Apache-2.0
// SELECT (see select.h): the three-way broadcast walk over an element type of
// the operands' size.
#include "runtime/kernels/reference/select.h"

#include "runtime/kernels/reference/broadcast.h"
#include "runtime/kernels/reference/element_copy.h"

namespace floe::ref {

void select(size_t element_size, const SelectOperands& ops) {
  with_element_type(element_size, [&](auto tag) {
    using U = decltype(tag);
    broadcast_ternary(ops.cond.data, ops.cond.shape, static_cast<const U*>(ops.x.data), ops.x.shape,
                      static_cast<const U*>(ops.y.data), ops.y.shape, static_cast<U*>(ops.output.data),
                      ops.output.shape, [](uint8_t c, U x, U y) { return c != 0 ? x : y; });
  });
}

}  // namespace floe::ref
