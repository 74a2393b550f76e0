// SPDX-License-Identifier: Apache-2.0
// What the converter accepts at most, checked before it allocates for an
// input (converter/README.md "Limits"). Beyond any of these it exits 2 naming the limit.
#pragma once

#include <cstdint>

#include "schemas/contract/limits.h"

namespace floe::conv {

// A graph file, a .tflite or a checkpoint .index: protobuf and FlatBuffers
// address messages with 32-bit offsets, so TF and TFLite write nothing larger.
constexpr uint64_t kMaxInputFileBytes = (uint64_t{1} << 31) - 1;
// Nodes of one GraphDef (counted in the encoded bytes before parsing).
constexpr int64_t kMaxGraphNodes = 500000;
// Rank of any tensor shape the graph declares (the runtime's kMaxRank).
constexpr int kMaxTensorRank = kMaxRank;
// Bytes of one constant tensor (its shape times its dtype's size), checked
// from the declared shape before any byte is allocated: a model holds at most
// kMaxModelBytes anyway.
constexpr uint64_t kMaxTensorBytes = (uint64_t{1} << 31) - 1;
// A node whose inputs are all constant is folded into a constant unless its
// outputs take more than this and more than its inputs together (Tile, Fill,
// a resize, a broadcast): then it stays a run-time op, so the model does not
// carry, and the converter does not compute, a large expansion of small data.
constexpr uint64_t kMaxFoldedExpansionBytes = uint64_t{64} << 20;
// Whether a node with all-constant inputs is folded (kMaxFoldedExpansionBytes);
// doubles, as a fuzzed shape may claim more than 2^64 bytes.
inline bool worth_folding(double input_bytes, double output_bytes) {
  return output_bytes <= static_cast<double>(kMaxFoldedExpansionBytes) || output_bytes <= input_bytes;
}
// Bytes all the graph's Const values claim together.
constexpr uint64_t kMaxClaimedConstantBytes = uint64_t{4} << 30;
// Bytes the graph's Const values claim beyond the values they list (TF fills
// a shape from a shorter value list with its last value): a few bytes of file
// must not make the converter hold gigabytes (each constant is copied a few
// times on its way to the model), the rule kMaxFoldedExpansionBytes sets for
// folds.
constexpr uint64_t kMaxExpandedConstantBytes = kMaxFoldedExpansionBytes;
// A written model (FlatBuffers' 32-bit offsets) and its operators.
constexpr uint64_t kMaxModelBytes = (uint64_t{1} << 31) - 1;
constexpr int64_t kMaxModelOps = 1000000;

}  // namespace floe::conv
