// SPDX-License-Identifier: Apache-2.0
// The structural check of a .floe buffer: a compact, table-driven replacement
// for the FlatBuffers-generated Verify() code (which instantiated the Verifier
// templates once per table, ~4.5 KB on Cortex-M). One routine walks every table
// reachable from the root through a small descriptor per table (the kind of
// each vtable slot, in schemas/floe.fbs order) and applies the same rules as
// flatbuffers::Verifier: offsets and vtables in bounds and aligned, vector
// lengths overflow-safe, strings 0-terminated, a table-count limit. Nesting is
// bounded by the schema itself (Model > Tensor/Operator > options: depth 3, no
// recursive tables), below flatbuffers' max_depth of 16. The buffer must be
// 16-byte aligned (refused otherwise; Model::Load reports that first), so
// offsets from the buffer start have the alignment of the addresses.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace floe {

// True when every table, vector, string and scalar that the generated
// accessors of schemas/floe.fbs can reach lies inside buffer[0, size) with
// natural alignment. Together with the file identifier check (Model::Load
// does it first, with its own message) it accepts nothing that
// schema::VerifyModelBuffer (max_depth 16, max_tables kMaxVerifiedTables)
// rejects (tests/runtime/verify_buffer_test.cc).
bool verify_model_buffer(const uint8_t* buffer, size_t size);

// Tables visited (vectors of tables count each element) before a buffer is
// refused: bounds verification time, like flatbuffers' max_tables.
constexpr uint32_t kMaxVerifiedTables = 1u << 20;

// The descriptors, exposed for the test that compares them with the schema.
// Table ids: 0 Model, 1 Tensor, 2 Operator, 2 + k the k-th OpOptions member,
// then the tables reached through a single-table field (kTable), from
// kFirstFieldTable on.
namespace verify_layout {

// A slot's code: kind in the high nibble, argument in the low nibble.
enum Kind : uint8_t {
  kScalar = 0x00,       // argument: byte size (1, 2, 4, 8)
  kVector = 0x10,       // vector of scalars; argument: element byte size
  kString = 0x20,
  kTableVector = 0x30,  // vector of tables; argument: table id
  kUnionType = 0x40,    // 1-byte union discriminant (the next slot is its value)
  kUnionValue = 0x50,   // offset to the table the preceding discriminant names
  kTable = 0x60,        // one table; argument: its id - kFirstFieldTable
};

constexpr uint32_t kUnionMembers = 38;  // OpOptions values 1..38 -> table ids 3..40
constexpr uint32_t kFirstFieldTable = 3 + kUnionMembers;  // 41 TensorQuantization, 42 Requantization
constexpr uint32_t kTableCount = kFirstFieldTable + 2;

// Slot codes of table `id` (its vtable slot i is codes[i]); returns the count.
uint32_t table_slots(uint32_t id, const uint8_t** codes);

}  // namespace verify_layout

}  // namespace floe
