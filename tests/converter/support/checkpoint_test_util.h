// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the checkpoint tests: a self-deleting temp directory, file
// copy/patch helpers, and a minimal table writer used only to build synthetic
// bundles for cases the corpus lacks (multi-block tables, partitioned variables).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "converter/frontend/checkpoint/crc32c.h"
#include "converter/ir/error.h"

namespace floe::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "floe_ckpt_XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_file_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Copies every regular file of `dir` into `into` (writable copies).
inline void copy_dir_files(const std::string& dir, const std::string& into) {
  for (const auto& item : std::filesystem::directory_iterator(dir)) {
    if (item.is_regular_file()) {
      write_file_bytes(into + "/" + item.path().filename().string(),
                       read_file_bytes(item.path().string()));
    }
  }
}

// Runs `fn`, expecting a ConvertError; returns its message ("" and a test failure otherwise).
template <typename Fn>
std::string convert_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const floe::conv::ConvertError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConvertError";
  return "";
}

// ---- Minimal protobuf / table writers for synthetic fixtures -------------------

inline void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}
inline void put_le32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>(v >> (8 * i));
}
inline void put_tag(std::string& out, uint32_t field, uint32_t wire_type) {
  put_varint(out, (uint64_t(field) << 3) | wire_type);
}
inline void put_len_field(std::string& out, uint32_t field, const std::string& bytes) {
  put_tag(out, field, 2);
  put_varint(out, bytes.size());
  out += bytes;
}

inline std::string shape_proto(const std::vector<int64_t>& dims) {
  std::string shape;
  for (int64_t d : dims) {
    std::string dim;
    if (d != 0) {
      put_tag(dim, 1, 0);
      put_varint(dim, static_cast<uint64_t>(d));
    }
    put_len_field(shape, 2, dim);
  }
  return shape;
}

// A BundleEntryProto for a non-partitioned tensor.
inline std::string entry_proto(int dtype, const std::vector<int64_t>& dims, int shard,
                               uint64_t offset, const std::string& data) {
  std::string e;
  put_tag(e, 1, 0);
  put_varint(e, static_cast<uint64_t>(dtype));
  put_len_field(e, 2, shape_proto(dims));
  if (shard != 0) {
    put_tag(e, 3, 0);
    put_varint(e, static_cast<uint64_t>(shard));
  }
  if (offset != 0) {
    put_tag(e, 4, 0);
    put_varint(e, offset);
  }
  if (!data.empty()) {
    put_tag(e, 5, 0);
    put_varint(e, data.size());
  }
  put_tag(e, 6, 5);
  put_le32(e, floe::conv::ckpt::crc32c_mask(floe::conv::ckpt::crc32c(data.data(), data.size())));
  return e;
}

// Writes a LevelDB-format table: uncompressed blocks of at most `entries_per_block`
// entries, a restart every `restart_interval` entries, an empty metaindex block.
// With `compress_block` (e.g. Snappy), every block is stored compressed (type 1).
inline std::string build_table(const std::vector<std::pair<std::string, std::string>>& sorted,
                               size_t entries_per_block = 1000, size_t restart_interval = 16,
                               std::string (*compress_block)(const std::string&) = nullptr) {
  std::string file;
  auto finish_block = [&file, compress_block](std::string contents) {
    const uint64_t offset = file.size();
    if (compress_block != nullptr) contents = compress_block(contents);
    file += contents;
    const char type = compress_block != nullptr ? 1 : 0;
    contents += type;
    file += type;
    put_le32(file, floe::conv::ckpt::crc32c_mask(
                       floe::conv::ckpt::crc32c(contents.data(), contents.size())));
    return std::make_pair(offset, uint64_t(contents.size() - 1));
  };
  auto encode_block = [](const std::vector<std::pair<std::string, std::string>>& items,
                         size_t interval) {
    std::string block;
    std::vector<uint32_t> restarts;
    std::string previous;
    for (size_t i = 0; i < items.size(); ++i) {
      size_t shared = 0;
      if (i % interval == 0) {
        restarts.push_back(static_cast<uint32_t>(block.size()));
      } else {
        while (shared < previous.size() && shared < items[i].first.size() &&
               previous[shared] == items[i].first[shared]) {
          ++shared;
        }
      }
      put_varint(block, shared);
      put_varint(block, items[i].first.size() - shared);
      put_varint(block, items[i].second.size());
      block += items[i].first.substr(shared);
      block += items[i].second;
      previous = items[i].first;
    }
    if (restarts.empty()) restarts.push_back(0);
    for (uint32_t r : restarts) put_le32(block, r);
    put_le32(block, static_cast<uint32_t>(restarts.size()));
    return block;
  };
  std::vector<std::pair<std::string, std::string>> index_items;
  for (size_t start = 0; start < sorted.size(); start += entries_per_block) {
    const size_t end = std::min(sorted.size(), start + entries_per_block);
    std::vector<std::pair<std::string, std::string>> items(sorted.begin() + start,
                                                           sorted.begin() + end);
    const auto handle = finish_block(encode_block(items, restart_interval));
    std::string value;
    put_varint(value, handle.first);
    put_varint(value, handle.second);
    index_items.emplace_back(items.back().first, value);  // last key is a valid separator
  }
  const auto meta = finish_block(encode_block({}, 1));
  const auto index = finish_block(encode_block(index_items, 1));
  std::string footer;
  put_varint(footer, meta.first);
  put_varint(footer, meta.second);
  put_varint(footer, index.first);
  put_varint(footer, index.second);
  footer.resize(40, '\0');
  put_le32(footer, 0x8b80fb57u);
  put_le32(footer, 0xdb477524u);
  return file + footer;
}

inline std::string single_shard_header() { return std::string("\x08\x01\x1a\x02\x08\x01", 6); }

}  // namespace floe::testing
