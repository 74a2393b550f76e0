// SPDX-License-Identifier: Apache-2.0
// Checkpoint fuzzing helpers (ckpt_fixture.h). Table layout (LevelDB): blocks,
// each followed by a 1-byte compression type and a masked CRC32C over block +
// type; a 48-byte footer holds the metaindex and index block handles.
#include "tests/fuzz/ckpt_fixture.h"

#include "converter/frontend/checkpoint/checkpoint_reader.h"
#include "converter/ir/error.h"
#include "converter/pipeline/convert.h"
#include "schemas/contract/checksum.h"
#include "tests/fuzz/fuzz_support.h"

namespace floe::fuzz {
namespace {

constexpr size_t kFooterSize = 48;

bool get_varint(const std::string& s, size_t* pos, size_t end, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *pos < end; shift += 7) {
    const uint8_t b = static_cast<uint8_t>(s[(*pos)++]);
    *v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

uint32_t get_le32(const std::string& s, size_t pos) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(s[pos + i])) << (8 * i);
  return v;
}

// Re-stamps the trailer of the block at [offset, offset+size); false when it does not fit.
bool restamp_block(std::string* t, uint64_t offset, uint64_t size) {
  if (offset > t->size() || size > t->size() - offset || t->size() - offset - size < 5) return false;
  const uint32_t crc = masked_crc32c(t->data() + offset, static_cast<size_t>(size + 1));
  for (int i = 0; i < 4; ++i) (*t)[offset + size + 1 + i] = static_cast<char>(crc >> (8 * i));
  return true;
}

}  // namespace

uint32_t masked_crc32c(const void* data, size_t size) {
  const uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

void put_varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    *out += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  *out += static_cast<char>(v);
}

void put_le32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) *out += static_cast<char>(v >> (8 * i));
}

void restamp_table_crcs(std::string* t) {
  if (t->size() < kFooterSize) return;
  const size_t footer = t->size() - kFooterSize;
  size_t pos = footer;
  uint64_t meta_off, meta_size, index_off, index_size;
  if (!get_varint(*t, &pos, t->size(), &meta_off) || !get_varint(*t, &pos, t->size(), &meta_size) ||
      !get_varint(*t, &pos, t->size(), &index_off) || !get_varint(*t, &pos, t->size(), &index_size)) {
    return;
  }
  restamp_block(t, meta_off, meta_size);
  // Data blocks first: the index block's own CRC covers their handles, not their bytes.
  if (index_off <= footer && index_size <= footer - index_off && index_size >= 4 &&
      footer - index_off - index_size >= 5 && (*t)[index_off + index_size] == 0) {
    const size_t block_end = static_cast<size_t>(index_off + index_size);
    const uint32_t restarts = get_le32(*t, block_end - 4);
    if (restarts <= (index_size - 4) / 4) {
      const size_t entries_end = block_end - 4 - 4 * static_cast<size_t>(restarts);
      size_t p = static_cast<size_t>(index_off);
      while (p < entries_end) {
        uint64_t shared, unshared, value_len;
        if (!get_varint(*t, &p, entries_end, &shared) || !get_varint(*t, &p, entries_end, &unshared) ||
            !get_varint(*t, &p, entries_end, &value_len) || unshared > entries_end - p) {
          break;
        }
        p += static_cast<size_t>(unshared);
        if (value_len > entries_end - p) break;
        size_t v = p;
        uint64_t off, size;
        if (get_varint(*t, &v, p + static_cast<size_t>(value_len), &off) &&
            get_varint(*t, &v, p + static_cast<size_t>(value_len), &size)) {
          restamp_block(t, off, size);
        }
        p += static_cast<size_t>(value_len);
      }
    }
  }
  restamp_block(t, index_off, index_size);
}

std::string build_table(const std::vector<std::pair<std::string, std::string>>& sorted) {
  std::string file;
  auto finish_block = [&file](const std::string& contents) {
    const uint64_t offset = file.size();
    file += contents;
    file += '\0';  // uncompressed
    put_le32(&file, masked_crc32c(file.data() + offset, contents.size() + 1));
    return std::make_pair(offset, static_cast<uint64_t>(contents.size()));
  };
  auto encode_block = [](const std::vector<std::pair<std::string, std::string>>& items) {
    std::string block;
    for (const auto& [key, value] : items) {  // a restart at every entry: no prefix sharing
      put_varint(&block, 0);
      put_varint(&block, key.size());
      put_varint(&block, value.size());
      block += key;
      block += value;
    }
    uint32_t offset = 0;
    std::string restarts;
    for (const auto& [key, value] : items) {
      put_le32(&restarts, offset);
      std::string entry;
      put_varint(&entry, 0);
      put_varint(&entry, key.size());
      put_varint(&entry, value.size());
      offset += static_cast<uint32_t>(entry.size() + key.size() + value.size());
    }
    if (items.empty()) put_le32(&restarts, 0);
    block += restarts;
    put_le32(&block, static_cast<uint32_t>(items.empty() ? 1 : items.size()));
    return block;
  };
  std::vector<std::pair<std::string, std::string>> index_items;
  if (!sorted.empty()) {
    const auto data = finish_block(encode_block(sorted));
    std::string handle;
    put_varint(&handle, data.first);
    put_varint(&handle, data.second);
    index_items.emplace_back(sorted.back().first, handle);
  }
  const auto meta = finish_block(encode_block({}));
  const auto index = finish_block(encode_block(index_items));
  std::string footer;
  put_varint(&footer, meta.first);
  put_varint(&footer, meta.second);
  put_varint(&footer, index.first);
  put_varint(&footer, index.second);
  footer.resize(40, '\0');
  put_le32(&footer, 0x8b80fb57u);
  put_le32(&footer, 0xdb477524u);
  return file + footer;
}

void convert_with_checkpoint(const std::string& prefix) {
  try {
    const conv::CheckpointReader reader = conv::CheckpointReader::open(prefix);
    reader.verify_all();
    for (const std::string& key : reader.keys()) (void)reader.read(key);
  } catch (const conv::ConvertError&) {
    // Still convert below: the converter reads only the keys the graph needs.
  }
  conv::ConvertOptions options;
  options.graph_path = source_path("examples/conv_seed/model/conv_seed.meta");
  options.checkpoint_path = prefix;
  options.outputs = {"conv"};
  conv::ConvertResult result;
  try {
    result = conv::convert(options);
  } catch (const conv::ConvertError&) {
    return;
  }
  require_valid_converted_model(result.model);
}

}  // namespace floe::fuzz
