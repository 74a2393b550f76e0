// SPDX-License-Identifier: Apache-2.0
// A hand-built .floe of one op (tensor 0 in, tensor 1 out, a 32-byte arena),
// for runtime tests that check what Load / Init / the API make of a record.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/registry.h"
#include "schemas/floe_generated.h"

namespace floe::testing {

// Finishes `b` as a model whose only op is `op` (of `code`) over `tensors`,
// with the prepared-op region sized for both pointer widths.
inline std::vector<uint8_t> finish_one_op_model(flatbuffers::FlatBufferBuilder& b,
                                                const std::vector<flatbuffers::Offset<schema::Tensor>>& tensors,
                                                flatbuffers::Offset<schema::Operator> op, schema::OpCode code) {
  uint64_t persistent[2];
  for (int wide = 0; wide < 2; ++wide) {
    PersistentLayout layout(wide ? 8 : 4, 1);
    layout.add_op(2, op_params_bytes(code));
    persistent[wide] = layout.total;
  }
  auto model = schema::CreateModel(b, 1, b.CreateVector(tensors), b.CreateVector(std::vector{op}),
                                   b.CreateVector(std::vector<int32_t>{0}), b.CreateVector(std::vector<int32_t>{1}),
                                   32, 0, b.CreateString("test"), 0, 0, 0, persistent[0], persistent[1]);
  schema::FinishModelBuffer(b, model);
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

}  // namespace floe::testing
