// SPDX-License-Identifier: Apache-2.0
// Random-access reads from a bundle data shard (`P.data-SSSSS-of-NNNNN`) with
// positional reads, so multi-GB shards are never loaded whole, plus the CRC
// rules of tf-formats.md §11.6 for fixed-size and DT_STRING tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace floe::conv::ckpt {

// An open, read-only data file. Move-only; closes on destruction.
class DataFile {
 public:
  explicit DataFile(const std::string& path);  // throws ConvertError if it cannot be opened
  ~DataFile();
  DataFile(DataFile&& other) noexcept;
  DataFile& operator=(DataFile&& other) noexcept;
  DataFile(const DataFile&) = delete;
  DataFile& operator=(const DataFile&) = delete;

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }

  // Reads exactly `length` bytes at `offset` (caller has bounds-checked); throws on I/O error.
  void read_exact(uint64_t offset, void* destination, size_t length) const;

  // CRC32C (unmasked) of [offset, offset + length), streamed in bounded chunks.
  uint32_t crc32c_of_range(uint64_t offset, uint64_t length) const;

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string path_;
};

// Checks a DT_STRING tensor of `num_elements` strings stored at [offset, offset+size):
// `varint64 len[N] | masked crc(lengths) | bytes`. Returns the unmasked CRC32C the
// entry's crc32c field must match; throws (naming `what`) on a malformed layout or a
// wrong length CRC.
uint32_t string_tensor_crc32c(const DataFile& file, uint64_t offset, uint64_t size,
                              uint64_t num_elements, const std::string& what);

}  // namespace floe::conv::ckpt
