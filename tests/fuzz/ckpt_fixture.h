// SPDX-License-Identifier: Apache-2.0
// Checkpoint fuzzing helpers: masked CRC32C (TF's), a lenient pass that
// re-stamps the block CRCs of a mutated index table so mutations reach the
// entry decoding behind them, a minimal table writer for structured inputs,
// and the conversion every checkpoint harness ends with (the conv_seed
// example's graph frozen from the fuzzed checkpoint, as floe-convert does).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace floe::fuzz {

uint32_t masked_crc32c(const void* data, size_t size);

// Rewrites, in place, the trailer CRC of every block the footer names and of
// every data block an uncompressed index block names. Never throws; leaves
// anything it cannot parse alone (the reader must then reject it).
void restamp_table_crcs(std::string* table);

void put_varint(std::string* out, uint64_t v);
void put_le32(std::string* out, uint32_t v);

// A single-block table of `sorted` (key, value) pairs with correct CRCs.
std::string build_table(const std::vector<std::pair<std::string, std::string>>& sorted);

// Opens the checkpoint at `prefix` the way the converter does, reads and
// verifies every tensor, then converts examples/conv_seed/model/conv_seed.meta
// with it. ConvertError anywhere is the clean outcome; an emitted model must
// pass require_valid_converted_model.
void convert_with_checkpoint(const std::string& prefix);

}  // namespace floe::fuzz
