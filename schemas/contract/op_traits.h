// SPDX-License-Identifier: Apache-2.0
// Each op's traits (the rows of schemas/contract/ops.def) as a constexpr table
// indexed by opcode: the converter's passes, backend choice and persistent
// layout read them, and so do the runtime's Model::Load and Init(). Header-only
// and freestanding, so the converter need not include runtime/core.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "schemas/contract/limits.h"
#include "schemas/floe_generated.h"

namespace floe {

enum class OpShape : uint8_t {
  OTHER,
  ELEMENTWISE_UNARY,   // one input; each output element from its element
  ELEMENTWISE_BINARY,  // two inputs broadcast against each other
  SAME_BYTES,          // the output is the input's bytes under a new shape
};

enum class OpWeights : uint8_t {
  NONE,
  WEIGHTS,       // input 1 is a filter
  WEIGHTS_BIAS,  // input 1 weights; optional input 2 one bias per output channel
};

// One bit per schema::Backend: bit b set when backend b implements the op.
constexpr uint8_t backend_bit(schema::Backend backend) {
  return static_cast<uint8_t>(1u << static_cast<unsigned>(backend));
}
static_assert(static_cast<unsigned>(schema::Backend::MAX) < 8, "backend bits fit a byte");

enum class OpBackends : uint8_t {
  REFERENCE_ONLY = backend_bit(schema::Backend::REFERENCE),
  XNNPACK = REFERENCE_ONLY | backend_bit(schema::Backend::XNNPACK),
  CORTEX_M = REFERENCE_ONLY | backend_bit(schema::Backend::CORTEX_M),
  XNNPACK_CORTEX_M = XNNPACK | CORTEX_M,
};

struct OpTraits {
  schema::OpOptions options = schema::OpOptions::NONE;  // the options union member
  uint16_t params_bytes = 0;  // the params block every backend's kernels fit in
  OpShape shape = OpShape::OTHER;
  uint8_t max_inputs = 0;
  OpWeights weights = OpWeights::NONE;
  uint8_t backends = 0;  // backend_bit()s; 0 = not an op of this list

  constexpr bool known() const { return backends != 0; }
  constexpr bool elementwise_unary() const { return shape == OpShape::ELEMENTWISE_UNARY; }
  constexpr bool elementwise_binary() const { return shape == OpShape::ELEMENTWISE_BINARY; }
  constexpr bool runs_on(schema::Backend backend) const {
    return static_cast<unsigned>(backend) < 8 && (backends & backend_bit(backend)) != 0;
  }
};

namespace op_traits_detail {

struct Row {
  schema::OpCode code;
  OpTraits traits;
};

inline constexpr Row kRows[] = {
#define FLOE_OP(code, options, params_bytes, shape, max_inputs, weights, backends)              \
  {schema::OpCode::code,                                                                           \
   {schema::OpOptions::options, params_bytes, OpShape::shape, max_inputs, OpWeights::weights,     \
    static_cast<uint8_t>(OpBackends::backends)}},
#include "schemas/contract/ops.def"
};

constexpr size_t kCodeCount = static_cast<size_t>(schema::OpCode::MAX) + 1;

struct Table {
  OpTraits by_code[kCodeCount];
  bool rows_valid;  // every row's code in range and listed once
};

constexpr Table make_table() {
  Table table{};
  table.rows_valid = true;
  for (const Row& row : kRows) {
    const size_t code = static_cast<size_t>(row.code);
    if (code == 0 || code >= kCodeCount || table.by_code[code].known()) table.rows_valid = false;
    if (code < kCodeCount) table.by_code[code] = row.traits;
  }
  return table;
}

inline constexpr Table kTable = make_table();
static_assert(kTable.rows_valid, "schemas/contract/ops.def: each row names a distinct opcode");

}  // namespace op_traits_detail

// The traits of `code`; known() is false for codes outside the op list.
constexpr OpTraits op_traits(schema::OpCode code) {
  return static_cast<size_t>(code) < op_traits_detail::kCodeCount
             ? op_traits_detail::kTable.by_code[static_cast<size_t>(code)]
             : OpTraits{};
}

// Bytes of the params block of `code` in the persistent region (the same on
// every ABI; every backend's kernels of the op fit it); 0 for an unknown code.
constexpr size_t op_params_bytes(schema::OpCode code) { return op_traits(code).params_bytes; }

constexpr size_t op_traits_row_count() {
  return sizeof(op_traits_detail::kRows) / sizeof(op_traits_detail::kRows[0]);
}

static_assert(op_traits(schema::OpCode::CONCAT).max_inputs == kMaxConcatInputs,
              "CONCAT takes up to kMaxConcatInputs inputs (the runtime gathers them on the stack)");

}  // namespace floe
