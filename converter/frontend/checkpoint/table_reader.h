// SPDX-License-Identifier: Apache-2.0
// Reader for the LevelDB-format sorted string table TF uses as the bundle index
// (tf-formats.md §11.2): footer + magic, block handles, prefix-compressed block
// entries with restart arrays, masked-CRC32C trailers, Snappy blocks (type 1).
// Indexes are small, so the whole table is decoded into memory at once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace floe::conv::ckpt {

// Footer: metaindex handle, index handle, zero padding to 40 bytes, 8-byte magic.
constexpr size_t kTableFooterSize = 48;
constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;  // stored low word first
// Trailer after each block: 1 compression-type byte + 4-byte masked CRC32C.
constexpr size_t kBlockTrailerSize = 5;

struct TableEntry {
  std::string key;
  std::string value;
};

// Decodes every entry of the table held in `file_bytes`, in key order. Verifies
// the magic, every handle's bounds, every block CRC, restart arrays and that keys
// strictly increase (bytewise). `file_name` prefixes every error message.
std::vector<TableEntry> parse_table(std::string_view file_bytes, const std::string& file_name);

// Reads `path` fully and parses it as above.
std::vector<TableEntry> read_table_file(const std::string& path);

// True when `path` is a regular file of at least 48 bytes ending with the table
// magic (a V2 .index, or a V1 checkpoint). Never throws.
bool file_has_table_magic(const std::string& path);

}  // namespace floe::conv::ckpt
