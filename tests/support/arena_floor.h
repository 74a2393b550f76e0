// SPDX-License-Identifier: Apache-2.0
// The arena's floor computed from a .floe alone, independently of the
// converter's planner and of its own numbers (the same rule as
// ../shared/tools/floe-model/arena_bound.py): lifetimes from the operator list
// (a tensor is live from its first writer, or op 0 for graph inputs, to its
// last reader, or the op count for graph outputs; a run-time loop's operands and
// what it reads from before it live over the whole loop); the floor is the
// largest sum of the real sizes of the arena tensors live at one op.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "schemas/floe_generated.h"

namespace floe::testing {

struct ArenaLifetimes {
  std::map<int32_t, int32_t> first, last;  // arena tensors written or fed only
};

inline ArenaLifetimes arena_lifetimes(const schema::Model* model) {
  const int32_t ops = static_cast<int32_t>(model->operators()->size());
  ArenaLifetimes t;
  for (int32_t v : *model->inputs()) t.first[v] = 0;
  for (int32_t k = 0; k < ops; ++k) {
    const schema::Operator* op = model->operators()->Get(static_cast<uint32_t>(k));
    for (int32_t v : *op->outputs()) {
      t.first.emplace(v, k);
      t.last[v] = std::max(t.last.count(v) ? t.last[v] : k, k);
    }
    for (int32_t v : *op->inputs()) {
      if (v >= 0) t.last[v] = std::max(t.last.count(v) ? t.last[v] : k, k);
    }
  }
  for (int32_t v : *model->outputs()) t.last[v] = ops;
  // A WHILE reruns the ops [op, body_end): its operands and every tensor those
  // ops read that exists when the loop starts are live until the loop's last
  // op, since the next iteration reads them again (what the file's op list
  // alone does not say; arena_bound.py predates run-time loops). The operands
// themselves are live over the whole loop.
  for (int32_t w = 0; w < ops; ++w) {
    const schema::Operator* loop = model->operators()->Get(static_cast<uint32_t>(w));
    if (loop->opcode() != schema::OpCode::WHILE || loop->options_as_WhileOptions() == nullptr) continue;
    const int32_t end = std::min(ops, loop->options_as_WhileOptions()->body_end()) - 1;
    for (int32_t i = w; i <= end; ++i) {
      const schema::Operator* op = model->operators()->Get(static_cast<uint32_t>(i));
      for (const auto* list : {op->inputs(), op->outputs()}) {
        for (int32_t v : *list) {
          if (v < 0 || !t.first.count(v)) continue;
          if (i == w || t.first[v] <= w) t.last[v] = std::max(t.last[v], end);
          // The WHILE op stands for the loop's entry and every iteration's end,
          // where it reads the next values and the condition: its operands are
          // in use at op w (the runtime's plan check holds it to that).
          if (i == w) t.first[v] = std::min(t.first[v], w);
        }
      }
    }
  }
  for (auto it = t.first.begin(); it != t.first.end();) {
    if (model->tensors()->Get(static_cast<uint32_t>(it->first))->is_constant()) {
      t.last.erase(it->first);
      it = t.first.erase(it);
    } else {
      if (!t.last.count(it->first)) t.last[it->first] = it->second;
      ++it;
    }
  }
  return t;
}

inline uint64_t live_bytes_floor(const schema::Model* model) {
  const ArenaLifetimes t = arena_lifetimes(model);
  std::vector<int64_t> delta(model->operators()->size() + 2, 0);
  for (const auto& [v, begin] : t.first) {
    const int64_t size = static_cast<int64_t>(model->tensors()->Get(static_cast<uint32_t>(v))->size());
    delta[static_cast<size_t>(begin)] += size;
    delta[static_cast<size_t>(t.last.at(v)) + 1] -= size;
  }
  int64_t live = 0, peak = 0;
  for (int64_t d : delta) peak = std::max(peak, live += d);
  return static_cast<uint64_t>(peak);
}

inline uint64_t live_bytes_floor(const std::vector<uint8_t>& bytes) {
  return live_bytes_floor(schema::GetModel(bytes.data()));
}

// A chain: every arena tensor (of nonzero size) dies at most one op after the
// op that writes it, so at each op only its own inputs and outputs are live.
// Such a plan can always meet the floor (alternate the ends of the arena).
inline bool is_chain(const schema::Model* model) {
  const ArenaLifetimes t = arena_lifetimes(model);
  for (const auto& [v, begin] : t.first) {
    if (model->tensors()->Get(static_cast<uint32_t>(v))->size() > 0 && t.last.at(v) - begin > 1) return false;
  }
  return true;
}

}  // namespace floe::testing
