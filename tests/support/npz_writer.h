// SPDX-License-Identifier: Apache-2.0
// Test fixtures: .npy bytes and .npz (zip) archives laid out as numpy writes
// them (np.save / np.savez: stored members; numpy >= 1.22 forces a zip64
// extra field in each local header), plus variants a reader must refuse.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace floe::testing {

inline std::string npy_bytes(const std::string& descr, const std::vector<int64_t>& shape, const void* data,
                             size_t bytes) {
  std::string dims;  // numpy's repr: "()", "(4,)", "(2, 3)"
  for (size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(static_cast<const char*>(data), bytes);
  return out;
}

inline std::string npy_f32(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  return npy_bytes("<f4", shape, values.data(), values.size() * sizeof(float));
}

inline uint32_t zip_crc32(const std::string& data) {
  uint32_t c = 0xffffffffu;
  for (unsigned char byte : data) {
    c ^= byte;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
  }
  return c ^ 0xffffffffu;
}

struct NpzOptions {
  bool zip64_local_extra = true;  // as np.savez (force_zip64)
  uint16_t method = 0;            // only the header says so: the bytes stay stored
  bool corrupt_crc = false;
  // For members whose bytes the caller already deflated: the uncompressed
  // size and CRC-32 the directory gives (-1: the member bytes' own).
  int64_t uncompressed_size = -1;
  int64_t crc = -1;
};

// A zip of `members` (name -> bytes), stored.
inline std::string npz_bytes(const std::vector<std::pair<std::string, std::string>>& members,
                             const NpzOptions& options = {}) {
  auto put = [](std::string* out, uint64_t v, int width) {
    for (int i = 0; i < width; ++i) *out += static_cast<char>((v >> (8 * i)) & 0xff);
  };
  std::string out, directory;
  for (const auto& [name, data] : members) {
    const uint32_t crc =
        (options.crc >= 0 ? static_cast<uint32_t>(options.crc) : zip_crc32(data)) ^ (options.corrupt_crc ? 1u : 0u);
    const uint64_t size = options.uncompressed_size >= 0 ? static_cast<uint64_t>(options.uncompressed_size) : data.size();
    const uint64_t offset = out.size();
    std::string extra;
    if (options.zip64_local_extra) {
      put(&extra, 1, 2);
      put(&extra, 16, 2);
      put(&extra, size, 8);
      put(&extra, data.size(), 8);
    }
    put(&out, 0x04034b50, 4);
    put(&out, options.zip64_local_extra ? 45 : 20, 2);
    put(&out, 0, 2);
    put(&out, options.method, 2);
    put(&out, 0, 4);  // time, date
    put(&out, crc, 4);
    put(&out, options.zip64_local_extra ? 0xffffffffu : data.size(), 4);
    put(&out, options.zip64_local_extra ? 0xffffffffu : size, 4);
    put(&out, name.size(), 2);
    put(&out, extra.size(), 2);
    out += name + extra + data;
    put(&directory, 0x02014b50, 4);
    put(&directory, 20, 2);
    put(&directory, 20, 2);
    put(&directory, 0, 2);
    put(&directory, options.method, 2);
    put(&directory, 0, 4);
    put(&directory, crc, 4);
    put(&directory, data.size(), 4);
    put(&directory, size, 4);
    put(&directory, name.size(), 2);
    put(&directory, 0, 2);
    put(&directory, 0, 2);
    put(&directory, 0, 2);
    put(&directory, 0, 2);
    put(&directory, 0, 4);
    put(&directory, offset, 4);
    directory += name;
  }
  const uint64_t directory_offset = out.size();
  out += directory;
  put(&out, 0x06054b50, 4);
  put(&out, 0, 4);
  put(&out, members.size(), 2);
  put(&out, members.size(), 2);
  put(&out, directory.size(), 4);
  put(&out, directory_offset, 4);
  put(&out, 0, 2);
  return out;
}

}  // namespace floe::testing
