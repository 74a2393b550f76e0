// SPDX-License-Identifier: Apache-2.0
// Overwrites every operator table of a loaded .floe buffer with garbage: the
// operator's inline fields (opcode, backend, the offsets of its vectors and
// options), its input/output index vectors, its name, and its options table's
// inline fields. After Interpreter::Init() nothing may read them: Invoke()
// runs on the prepared records alone, so outputs must not change.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "schemas/floe_generated.h"

namespace floe::testing {

namespace scramble_detail {

// [table start + 4, table start + inline size): everything but the vtable offset.
inline void garble_table_inline(const flatbuffers::Table* table, uint8_t pattern) {
  const uint8_t* start = reinterpret_cast<const uint8_t*>(table);
  const uint8_t* vtable = table->GetVTable();
  const uint16_t inline_size = flatbuffers::ReadScalar<uint16_t>(vtable + sizeof(uint16_t));
  if (inline_size > sizeof(flatbuffers::soffset_t)) {
    std::memset(const_cast<uint8_t*>(start) + sizeof(flatbuffers::soffset_t), pattern,
                inline_size - sizeof(flatbuffers::soffset_t));
  }
}

}  // namespace scramble_detail

// `model_buffer` is the (writable) buffer the Model was loaded from. Returns
// the number of operators scrambled.
inline size_t scramble_operator_tables(void* model_buffer, uint8_t pattern = 0xA5) {
  const schema::Model* model = schema::GetModel(model_buffer);
  const auto* ops = model->operators();
  if (ops == nullptr) return 0;
  // Find everything first: garbling a table invalidates the offsets to its parts.
  struct Parts {
    const flatbuffers::Table* op;
    const flatbuffers::Table* options;
    std::vector<std::pair<uint8_t*, size_t>> blocks;  // vector / string contents
  };
  std::vector<Parts> parts;
  for (const schema::Operator* op : *ops) {
    Parts p;
    p.op = reinterpret_cast<const flatbuffers::Table*>(op);
    p.options = static_cast<const flatbuffers::Table*>(op->options());
    if (const auto* v = op->inputs()) {
      p.blocks.emplace_back(const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(v->data())), v->size() * 4);
    }
    if (const auto* v = op->outputs()) {
      p.blocks.emplace_back(const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(v->data())), v->size() * 4);
    }
    if (const auto* name = op->name()) {
      p.blocks.emplace_back(const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(name->data())), name->size());
    }
    parts.push_back(std::move(p));
  }
  for (Parts& p : parts) {
    for (const auto& [data, bytes] : p.blocks) std::memset(data, pattern, bytes);
    if (p.options != nullptr) scramble_detail::garble_table_inline(p.options, pattern);
    scramble_detail::garble_table_inline(p.op, pattern);
  }
  return parts.size();
}

}  // namespace floe::testing
