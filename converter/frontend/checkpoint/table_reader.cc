// SPDX-License-Identifier: Apache-2.0
// Table decoding. Offsets in error messages are file offsets of the block (as
// stored, before decompression) plus, for entries, the offset inside the
// decoded block contents. All arithmetic on stored lengths is done in uint64
// against remaining sizes so no stored value can overflow or index out of range.
// CRCs in messages are unmasked values, comparable with any CRC-32C tool.
#include "converter/frontend/checkpoint/table_reader.h"

#include <snappy.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>

#include "converter/frontend/checkpoint/crc32c.h"
#include "converter/frontend/checkpoint/reader_text.h"
#include "converter/ir/error.h"
#include "converter/ir/limits.h"

namespace floe::conv::ckpt {
namespace {

enum BlockCompression : uint8_t { kNoCompression = 0, kSnappyCompression = 1 };

// Snappy's densest element (a 3-byte copy of 64 bytes) expands ~21x; a claimed
// length beyond this bound cannot be genuine and must not drive an allocation.
constexpr uint64_t kMaxSnappyExpansion = 24;

std::string hex32(uint32_t value) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", value);
  return buf;
}

uint32_t load_le32(const char* p) {
  const auto* u = reinterpret_cast<const uint8_t*>(p);
  return uint32_t(u[0]) | (uint32_t(u[1]) << 8) | (uint32_t(u[2]) << 16) | (uint32_t(u[3]) << 24);
}

// Varint decode over [pos, end) of `data`; false if truncated or over `max_bytes`.
bool get_varint(std::string_view data, size_t& pos, size_t max_bytes, uint64_t& value) {
  value = 0;
  for (size_t i = 0; i < max_bytes && pos < data.size(); ++i) {
    const uint8_t byte = static_cast<uint8_t>(data[pos++]);
    value |= uint64_t(byte & 0x7Fu) << (7 * i);
    if ((byte & 0x80u) == 0) return true;
  }
  return false;
}

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;
};

class TableParser {
 public:
  TableParser(std::string_view file, const std::string& name) : file_(file), name_(name) {}

  std::vector<TableEntry> parse() {
    if (file_.size() < kTableFooterSize) {
      fail("file is " + std::to_string(file_.size()) + " bytes, too short for the " +
           std::to_string(kTableFooterSize) + "-byte table footer (truncated?)");
    }
    const size_t footer_offset = file_.size() - kTableFooterSize;
    std::string_view footer = file_.substr(footer_offset);
    const uint64_t magic =
        uint64_t(load_le32(footer.data() + 40)) | (uint64_t(load_le32(footer.data() + 44)) << 32);
    if (magic != kTableMagic) {
      fail("bad table magic at offset " + std::to_string(footer_offset + 40) +
           " (not a checkpoint .index file, or truncated)");
    }
    size_t pos = 0;
    const BlockHandle metaindex =
        decode_handle(footer.substr(0, 40), pos, "footer metaindex handle", footer_offset);
    const BlockHandle index =
        decode_handle(footer.substr(0, 40), pos, "footer index handle", footer_offset);
    check_handle(metaindex, "metaindex block");  // always empty in TF; only bounds-checked

    const std::string index_contents = read_block(index, "index block");
    std::vector<TableEntry> index_entries = decode_block(index_contents, block_label(index));

    std::vector<TableEntry> entries;
    for (const TableEntry& separator : index_entries) {
      size_t hpos = 0;
      const BlockHandle data =
          decode_handle(separator.value, hpos, "data block handle in index block", index.offset);
      const std::string contents = read_block(data, "data block");
      std::vector<TableEntry> block_entries = decode_block(contents, block_label(data));
      for (TableEntry& entry : block_entries) {
        if (!entries.empty() && !(entries.back().key < entry.key)) {
          fail(block_label(data) + ": key '" + printable_key(entry.key) + "' is not greater than the " +
               "previous key '" + printable_key(entries.back().key) + "'");
        }
        entries.push_back(std::move(entry));
      }
    }
    return entries;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw ConvertError(name_ + ": " + what); }

  static std::string block_label(const BlockHandle& h) {
    return "block at offset " + std::to_string(h.offset) + " (size " + std::to_string(h.size) + ")";
  }

  BlockHandle decode_handle(std::string_view bytes, size_t& pos, const char* what,
                            uint64_t base_offset) const {
    BlockHandle h;
    if (!get_varint(bytes, pos, 10, h.offset) || !get_varint(bytes, pos, 10, h.size)) {
      fail(std::string("malformed ") + what + " near offset " + std::to_string(base_offset));
    }
    return h;
  }

  // Block plus trailer must end at or before the footer.
  void check_handle(const BlockHandle& h, const char* what) const {
    const uint64_t limit = file_.size() - kTableFooterSize;
    if (h.offset > limit || h.size > limit - h.offset ||
        kBlockTrailerSize > limit - h.offset - h.size) {
      fail(std::string(what) + " handle (offset " + std::to_string(h.offset) + ", size " +
           std::to_string(h.size) + ") lies outside the file's " + std::to_string(limit) +
           " bytes of blocks (truncated or corrupt)");
    }
  }

  // Returns the uncompressed block contents after verifying the trailer CRC.
  std::string read_block(const BlockHandle& h, const char* what) const {
    check_handle(h, what);
    const std::string label = std::string(what) + " at offset " + std::to_string(h.offset) +
                              " (size " + std::to_string(h.size) + ")";
    std::string_view stored =
        file_.substr(static_cast<size_t>(h.offset), static_cast<size_t>(h.size));
    const char* trailer = file_.data() + h.offset + h.size;
    const uint8_t type = static_cast<uint8_t>(trailer[0]);
    const uint32_t stored_crc = crc32c_unmask(load_le32(trailer + 1));
    // The CRC covers the stored (possibly compressed) bytes plus the type byte.
    const uint32_t computed_crc = crc32c_extend(crc32c(stored.data(), stored.size()), trailer, 1);
    if (stored_crc != computed_crc) {
      fail(label + ": CRC mismatch (stored " + hex32(stored_crc) + ", computed " +
           hex32(computed_crc) + ")");
    }
    if (type == kNoCompression) return std::string(stored);
    if (type != kSnappyCompression) {
      fail(label + ": unknown block compression type " + std::to_string(type));
    }
    size_t length = 0;
    if (!snappy::GetUncompressedLength(stored.data(), stored.size(), &length) ||
        length > stored.size() * kMaxSnappyExpansion) {
      fail(label + ": corrupt Snappy block header");
    }
    std::string contents(length, '\0');
    if (!snappy::RawUncompress(stored.data(), stored.size(), contents.data())) {
      fail(label + ": corrupt Snappy-compressed block");
    }
    return contents;
  }

  // Block layout: entries, uint32 restart offsets[num_restarts], uint32 num_restarts.
  std::vector<TableEntry> decode_block(std::string_view block, const std::string& label) const {
    if (block.size() < 4)
      fail(label + ": block of " + std::to_string(block.size()) + " bytes has no restart count");
    const uint32_t num_restarts = load_le32(block.data() + block.size() - 4);
    if (num_restarts > (block.size() - 4) / 4) {
      fail(label + ": restart count " + std::to_string(num_restarts) + " does not fit in " +
           std::to_string(block.size()) + " bytes");
    }
    const size_t entries_end = block.size() - 4 - size_t(num_restarts) * 4;
    for (uint32_t i = 0; i < num_restarts; ++i) {
      const uint32_t restart = load_le32(block.data() + entries_end + 4 * size_t(i));
      if (restart >= entries_end && !(restart == 0 && entries_end == 0)) {
        fail(label + ": restart[" + std::to_string(i) + "] = " + std::to_string(restart) +
             " is past the entries (" + std::to_string(entries_end) + " bytes)");
      }
    }

    std::vector<TableEntry> entries;
    std::string key;
    size_t pos = 0;
    while (pos < entries_end) {
      const size_t entry_offset = pos;
      std::string_view region = block.substr(0, entries_end);
      uint64_t shared = 0, unshared = 0, value_len = 0;
      if (!get_varint(region, pos, 5, shared) || !get_varint(region, pos, 5, unshared) ||
          !get_varint(region, pos, 5, value_len)) {
        fail(label + ": truncated entry header at block offset " + std::to_string(entry_offset));
      }
      if (shared > key.size() || unshared > entries_end - pos ||
          value_len > entries_end - pos - unshared) {
        fail(label + ": entry at block offset " + std::to_string(entry_offset) +
             " has inconsistent lengths (shared " + std::to_string(shared) + ", unshared " +
             std::to_string(unshared) + ", value " + std::to_string(value_len) + ")");
      }
      key.resize(static_cast<size_t>(shared));
      key.append(block.data() + pos, static_cast<size_t>(unshared));
      pos += static_cast<size_t>(unshared);
      entries.push_back({key, std::string(block.data() + pos, static_cast<size_t>(value_len))});
      pos += static_cast<size_t>(value_len);
    }
    return entries;
  }

  std::string_view file_;
  const std::string& name_;
};

}  // namespace

std::vector<TableEntry> parse_table(std::string_view file_bytes, const std::string& file_name) {
  return TableParser(file_bytes, file_name).parse();
}

std::vector<TableEntry> read_table_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConvertError(path + ": cannot open checkpoint index file");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) throw ConvertError(path + ": cannot determine the file size");
  if (static_cast<uint64_t>(size) > kMaxInputFileBytes) {
    throw ConvertError(path + ": checkpoint index of " + std::to_string(size) + " bytes, over floe's limit of " +
                       std::to_string(kMaxInputFileBytes) + " bytes");
  }
  in.seekg(0, std::ios::beg);
  std::string bytes(static_cast<size_t>(size), '\0');
  if (size > 0 && !in.read(bytes.data(), size)) throw ConvertError(path + ": read failed");
  return parse_table(bytes, path);
}

bool file_has_table_magic(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_size < static_cast<off_t>(kTableFooterSize)) {
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  in.seekg(st.st_size - 8);
  char magic[8];
  if (!in.read(magic, 8)) return false;
  const uint64_t value = uint64_t(load_le32(magic)) | (uint64_t(load_le32(magic + 4)) << 32);
  return value == kTableMagic;
}

}  // namespace floe::conv::ckpt
