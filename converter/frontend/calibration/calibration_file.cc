// SPDX-License-Identifier: Apache-2.0
// Calibration files (see calibration_file.h). The zip reader follows PKWARE's
// APPNOTE: end-of-central-directory record (and its zip64 form, which numpy's
// np.savez may write), central directory entries, local headers; members
// stored (method 0, np.savez) or deflated (method 8, np.savez_compressed,
// inflated by zlib).
#include "converter/frontend/calibration/calibration_file.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <stdexcept>

#include <zlib.h>

#include "converter/ir/error.h"
#include "runtime/tools/npy.h"

namespace floe::conv {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& why, int64_t offset = -1) {
  ErrorLocation where;
  where.file = path;
  where.byte_offset = offset;
  throw ConvertError("calibration data " + path + ": " + why, ErrorCategory::kInvalidInput, where);
}

constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfCentralDirectory = 0x06054b50;
constexpr uint32_t kZip64End = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kSaturated32 = 0xffffffffu;

// Bounds-checked little-endian reads: every field of a zip is untrusted.
class Reader {
 public:
  Reader(const std::vector<uint8_t>& bytes, const std::string& path) : bytes_(bytes), path_(path) {}
  uint64_t get(uint64_t at, int width) const {
    if (at > bytes_.size() || bytes_.size() - at < static_cast<uint64_t>(width)) {
      fail(path_, "truncated zip: a field at byte " + std::to_string(at) + " lies past the end", static_cast<int64_t>(at));
    }
    uint64_t v = 0;
    for (int i = width - 1; i >= 0; --i) v = (v << 8) | bytes_[at + static_cast<uint64_t>(i)];
    return v;
  }
  void need(uint64_t at, uint64_t size, const char* what) const {
    if (at > bytes_.size() || bytes_.size() - at < size) {
      fail(path_, std::string("truncated zip: ") + what + " at byte " + std::to_string(at) + " runs past the end",
           static_cast<int64_t>(at));
    }
  }

 private:
  const std::vector<uint8_t>& bytes_;
  const std::string& path_;
};

uint32_t crc32(const uint8_t* data, size_t size) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < size; ++i) c = table[(c ^ data[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

HostTensor tensor_of(tools::NpyArray array) {
  HostTensor t;
  t.dtype = array.dtype;
  t.shape = std::move(array.shape);
  t.data = std::move(array.data);
  return t;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open for reading");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail(path, "read error");
  return bytes;
}

// A deflated member (raw deflate, no zlib header) of exactly `size` bytes.
// The header's size is untrusted: it is checked against the most deflate can
// expand to, and the output grows only as zlib produces bytes, so a small file
// claiming gigabytes costs nothing.
std::vector<uint8_t> inflate_member(const uint8_t* data, uint64_t compressed, uint64_t size,
                                    const std::string& member, uint64_t offset) {
  // Deflate's densest code (a 258-byte match in under 2 bits) expands at most
  // 1032:1; the constant covers a stream's fixed overhead.
  constexpr uint64_t kMaxRatio = 1032;
  if (size > compressed * kMaxRatio + kMaxRatio) {
    fail(member, "claims " + std::to_string(size) + " bytes uncompressed from " + std::to_string(compressed) +
                     " compressed, more than deflate can expand to (corrupt header)",
         static_cast<int64_t>(offset));
  }
  constexpr uint64_t kGrowth = uint64_t{16} << 20;
  std::vector<uint8_t> out;
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) fail(member, "zlib: inflateInit2 failed");
  z.next_in = const_cast<Bytef*>(data);
  uint64_t in_left = compressed, produced = 0;
  uint8_t no_room = 0;  // zlib refuses a null next_out, which an empty vector gives
  int result = Z_OK;
  // zlib's counters are 32-bit: feed and drain in chunks, growing the output
  // up to the claimed size. Output beyond it leaves avail_out at 0 with the
  // stream unfinished, which is reported below.
  while (result == Z_OK) {
    if (produced == out.size() && out.size() < size) out.resize(std::min<uint64_t>(size, out.size() + kGrowth));
    const uInt in_chunk = static_cast<uInt>(std::min<uint64_t>(in_left, 1u << 30));
    const uInt out_chunk = static_cast<uInt>(std::min<uint64_t>(out.size() - produced, 1u << 30));
    z.next_out = out.empty() ? &no_room : out.data() + produced;
    z.avail_in = in_chunk;
    z.avail_out = out_chunk;
    result = inflate(&z, Z_NO_FLUSH);
    in_left -= in_chunk - z.avail_in;
    produced += out_chunk - z.avail_out;
    if (result == Z_OK && z.avail_in == in_chunk && z.avail_out == out_chunk) result = Z_BUF_ERROR;  // no progress
  }
  inflateEnd(&z);
  if (result != Z_STREAM_END || produced != size) {
    fail(member, std::string("corrupt deflate data") + (z.msg != nullptr ? std::string(" (zlib: ") + z.msg + ")" : "") +
                     (result == Z_STREAM_END  ? ": shorter than the size its header gives"
                      : produced == size ? ": longer than the size its header gives"
                                         : ""),
         static_cast<int64_t>(offset));
  }
  return out;
}

bool starts_with(const std::vector<uint8_t>& bytes, const char* magic, size_t n) {
  return bytes.size() >= n && std::memcmp(bytes.data(), magic, n) == 0;
}

void check_unique(const std::vector<CalibrationArray>& arrays, const std::string& path) {
  std::set<std::string> seen;
  for (const CalibrationArray& a : arrays) {
    if (!seen.insert(a.name).second) fail(path, "input '" + a.name + "' appears twice");
  }
}

}  // namespace

std::vector<CalibrationArray> parse_npz(const std::vector<uint8_t>& bytes, const std::string& path) {
  const Reader r(bytes, path);
  // The end record sits in the last 22 + 65535 (comment) bytes.
  if (bytes.size() < 22) fail(path, "not a zip/.npz file (shorter than an end-of-central-directory record)");
  int64_t end = -1;
  const uint64_t lowest = bytes.size() > 22 + 65535 ? bytes.size() - 22 - 65535 : 0;
  for (uint64_t at = bytes.size() - 22 + 1; at-- > lowest;) {
    if (r.get(at, 4) == kEndOfCentralDirectory) {
      end = static_cast<int64_t>(at);
      break;
    }
  }
  if (end < 0) fail(path, "not a zip/.npz file (no end-of-central-directory record)");
  const uint64_t e = static_cast<uint64_t>(end);
  uint64_t entries = r.get(e + 10, 2);
  uint64_t directory = r.get(e + 16, 4);
  if (entries == 0xffff || directory == kSaturated32) {  // zip64: the real values are in the zip64 end record
    if (e < 20 || r.get(e - 20, 4) != kZip64Locator) fail(path, "zip64 end record locator missing", end);
    const uint64_t z = r.get(e - 20 + 8, 8);
    if (r.get(z, 4) != kZip64End) fail(path, "zip64 end record missing", static_cast<int64_t>(z));
    entries = r.get(z + 32, 8);
    directory = r.get(z + 48, 8);
  }
  std::vector<CalibrationArray> arrays;
  uint64_t at = directory;
  for (uint64_t i = 0; i < entries; ++i) {
    if (r.get(at, 4) != kCentralHeader) fail(path, "bad central directory entry", static_cast<int64_t>(at));
    const uint64_t flags = r.get(at + 8, 2), method = r.get(at + 10, 2), crc = r.get(at + 16, 4);
    uint64_t compressed = r.get(at + 20, 4), size = r.get(at + 24, 4);
    const uint64_t name_length = r.get(at + 28, 2), extra_length = r.get(at + 30, 2),
                   comment_length = r.get(at + 32, 2);
    uint64_t local = r.get(at + 42, 4);
    r.need(at + 46, name_length + extra_length + comment_length, "a central directory entry");
    const std::string name(reinterpret_cast<const char*>(bytes.data() + at + 46), name_length);
    // zip64 extra field: the saturated 32-bit fields, in this order.
    for (uint64_t x = at + 46 + name_length; x + 4 <= at + 46 + name_length + extra_length;) {
      const uint64_t id = r.get(x, 2), length = r.get(x + 2, 2);
      uint64_t field = x + 4;
      if (id == 1) {
        if (size == kSaturated32) size = r.get(field, 8), field += 8;
        if (compressed == kSaturated32) compressed = r.get(field, 8), field += 8;
        if (local == kSaturated32) local = r.get(field, 8);
      }
      x += 4 + length;
    }
    at += 46 + name_length + extra_length + comment_length;
    const std::string member = path + ": member " + name;
    if (flags & 1) fail(member, "encrypted zip members are not supported");
    if (method != 0 && method != 8) {
      fail(member, "zip compression method " + std::to_string(method) + " is not supported (np.savez stores, "
                   "np.savez_compressed deflates)");
    }
    if (method == 0 && compressed != size) fail(member, "stored member whose compressed and uncompressed sizes differ");
    if (r.get(local, 4) != kLocalHeader) fail(member, "bad local header", static_cast<int64_t>(local));
    const uint64_t data = local + 30 + r.get(local + 26, 2) + r.get(local + 28, 2);
    r.need(data, compressed, "member data");
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".npy") != 0) continue;  // not an array
    const std::vector<uint8_t> npy =
        method == 8 ? inflate_member(bytes.data() + data, compressed, size, member, data)
                    : std::vector<uint8_t>(bytes.begin() + static_cast<std::ptrdiff_t>(data),
                                           bytes.begin() + static_cast<std::ptrdiff_t>(data + size));
    if (crc32(npy.data(), npy.size()) != crc) fail(member, "CRC-32 mismatch (corrupt file)", static_cast<int64_t>(data));
    CalibrationArray array;
    array.name = name.substr(0, name.size() - 4);
    array.source = member;
    try {
      array.tensor = tensor_of(tools::parse_npy(npy, member));
    } catch (const ConvertError&) {
      throw;
    } catch (const std::exception& error) {
      fail(path, error.what());
    }
    arrays.push_back(std::move(array));
  }
  if (arrays.empty()) fail(path, "the .npz holds no .npy arrays (an empty calibration set)");
  check_unique(arrays, path);
  return arrays;
}

std::vector<CalibrationArray> read_calibration(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<std::string> files;
    for (const fs::directory_entry& entry : fs::directory_iterator(path, ec)) {
      if (entry.path().extension() == ".npy" && entry.is_regular_file(ec)) files.push_back(entry.path().string());
    }
    if (ec) fail(path, "cannot list the directory: " + ec.message());
    if (files.empty()) fail(path, "the directory holds no .npy files (an empty calibration set)");
    std::sort(files.begin(), files.end());
    std::vector<CalibrationArray> arrays;
    for (const std::string& file : files) {
      CalibrationArray array;
      array.name = fs::path(file).stem().string();
      array.source = file;
      try {
        array.tensor = tensor_of(tools::read_npy(file));
      } catch (const std::exception& error) {
        fail(file, error.what());
      }
      arrays.push_back(std::move(array));
    }
    return arrays;
  }
  if (!fs::exists(path, ec)) fail(path, "no such file or directory");
  const std::vector<uint8_t> bytes = read_bytes(path);
  if (starts_with(bytes, "\x93NUMPY", 6)) {
    CalibrationArray array;
    array.name = fs::path(path).stem().string();
    array.named = false;
    array.source = path;
    try {
      array.tensor = tensor_of(tools::parse_npy(bytes, path));
    } catch (const std::exception& error) {
      fail(path, error.what());
    }
    return {std::move(array)};
  }
  if (!starts_with(bytes, "PK", 2)) fail(path, "neither an .npz (zip) nor an .npy file, nor a directory of .npy files");
  return parse_npz(bytes, path);
}

}  // namespace floe::conv
