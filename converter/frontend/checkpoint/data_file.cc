// SPDX-License-Identifier: Apache-2.0
// POSIX pread-based data-shard access. Reads loop until complete because pread
// may return short counts; EINTR is retried. Streams use a fixed 1 MiB buffer.
#include "converter/frontend/checkpoint/data_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "converter/frontend/checkpoint/crc32c.h"
#include "converter/ir/error.h"

namespace floe::conv::ckpt {
namespace {

constexpr size_t kStreamChunk = size_t(1) << 20;

// Sequential reader over [begin, end) of a data file, buffered in chunks.
class RangeStream {
 public:
  RangeStream(const DataFile& file, uint64_t begin, uint64_t end)
      : file_(file), next_read_(begin), end_(end) {}

  uint64_t remaining() const { return (end_ - next_read_) + (buffer_.size() - pos_); }

  bool next_byte(uint8_t& byte) {
    if (pos_ == buffer_.size() && !refill()) return false;
    byte = buffer_[pos_++];
    return true;
  }

  // Feeds exactly `length` bytes to `sink(const uint8_t*, size_t)`; false if fewer remain.
  template <typename Sink>
  bool consume(uint64_t length, Sink&& sink) {
    while (length > 0) {
      if (pos_ == buffer_.size() && !refill()) return false;
      const size_t take = static_cast<size_t>(std::min<uint64_t>(length, buffer_.size() - pos_));
      sink(buffer_.data() + pos_, take);
      pos_ += take;
      length -= take;
    }
    return true;
  }

 private:
  bool refill() {
    if (next_read_ >= end_) return false;
    const size_t take = static_cast<size_t>(std::min<uint64_t>(kStreamChunk, end_ - next_read_));
    buffer_.resize(take);
    file_.read_exact(next_read_, buffer_.data(), take);
    next_read_ += take;
    pos_ = 0;
    return true;
  }

  const DataFile& file_;
  uint64_t next_read_;
  uint64_t end_;
  std::vector<uint8_t> buffer_;
  size_t pos_ = 0;
};

void append_le(uint8_t* out, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}

}  // namespace

DataFile::DataFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    throw ConvertError(path + ": cannot open data file (" + std::strerror(errno) + ")");
  }
  struct stat st;
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw ConvertError(path + ": data file is not a regular file");
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

DataFile::~DataFile() {
  if (fd_ >= 0) ::close(fd_);
}

DataFile::DataFile(DataFile&& other) noexcept
    : fd_(other.fd_), size_(other.size_), path_(std::move(other.path_)) {
  other.fd_ = -1;
}

DataFile& DataFile::operator=(DataFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    size_ = other.size_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

void DataFile::read_exact(uint64_t offset, void* destination, size_t length) const {
  if (offset > size_ || length > size_ - offset) {
    throw ConvertError(path_ + ": read of " + std::to_string(length) + " bytes at offset " +
                       std::to_string(offset) + " runs past the end of the file (" +
                       std::to_string(size_) + " bytes)");
  }
  auto* out = static_cast<uint8_t*>(destination);
  while (length > 0) {
    const ssize_t got = ::pread(fd_, out, length, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      throw ConvertError(path_ + ": read failed at offset " + std::to_string(offset) + " (" +
                         (got < 0 ? std::strerror(errno) : "unexpected end of file") + ")");
    }
    out += got;
    offset += static_cast<uint64_t>(got);
    length -= static_cast<size_t>(got);
  }
}

uint32_t DataFile::crc32c_of_range(uint64_t offset, uint64_t length) const {
  std::vector<uint8_t> buffer(static_cast<size_t>(std::min<uint64_t>(length, kStreamChunk)));
  uint32_t crc = 0;
  while (length > 0) {
    const size_t take = static_cast<size_t>(std::min<uint64_t>(length, buffer.size()));
    read_exact(offset, buffer.data(), take);
    crc = crc32c_extend(crc, buffer.data(), take);
    offset += take;
    length -= take;
  }
  return crc;
}

uint32_t string_tensor_crc32c(const DataFile& file, uint64_t offset, uint64_t size,
                              uint64_t num_elements, const std::string& what) {
  RangeStream stream(file, offset, offset + size);
  uint32_t entry_crc = 0;
  uint32_t lengths_crc = 0;
  uint64_t total_string_bytes = 0;
  for (uint64_t i = 0; i < num_elements; ++i) {
    uint64_t length = 0;
    bool done = false;
    for (int shift = 0; shift < 70 && !done; shift += 7) {
      uint8_t byte = 0;
      if (!stream.next_byte(byte)) {
        throw ConvertError(what + ": string length " + std::to_string(i) + " runs past the tensor");
      }
      length |= uint64_t(byte & 0x7Fu) << shift;
      done = (byte & 0x80u) == 0;
    }
    if (!done)
      throw ConvertError(what + ": malformed varint for string length " + std::to_string(i));
    // The CRC covers fixed-width lengths, not the varints (see tf-formats.md §11.6).
    uint8_t fixed[8];
    const size_t width = length > 0xFFFFFFFFull ? 8 : 4;
    append_le(fixed, length, width);
    lengths_crc = crc32c_extend(lengths_crc, fixed, width);
    entry_crc = crc32c_extend(entry_crc, fixed, width);
    if (length > size - total_string_bytes) {
      throw ConvertError(what + ": string lengths add up to more than the tensor's size");
    }
    total_string_bytes += length;
  }
  uint8_t stored[4];
  size_t got = 0;
  stream.consume(4, [&](const uint8_t* p, size_t n) {
    std::memcpy(stored + got, p, n);
    got += n;
  });
  if (got != 4) throw ConvertError(what + ": missing the CRC of the string lengths");
  const uint32_t stored_masked = uint32_t(stored[0]) | (uint32_t(stored[1]) << 8) |
                                 (uint32_t(stored[2]) << 16) | (uint32_t(stored[3]) << 24);
  if (crc32c_unmask(stored_masked) != lengths_crc) {
    throw ConvertError(what + ": CRC32C mismatch in the string lengths");
  }
  entry_crc = crc32c_extend(entry_crc, stored, 4);
  if (stream.remaining() != total_string_bytes) {
    throw ConvertError(what + ": size does not match the string lengths (" +
                       std::to_string(total_string_bytes) + " string bytes, " +
                       std::to_string(stream.remaining()) + " bytes left)");
  }
  stream.consume(total_string_bytes,
                 [&](const uint8_t* p, size_t n) { entry_crc = crc32c_extend(entry_crc, p, n); });
  return entry_crc;
}

}  // namespace floe::conv::ckpt
