// SPDX-License-Identifier: Apache-2.0
// Host-only tool code (never built for a device): it may use the heap, the
// standard library and exceptions; the arena-only rule binds runtime/core and kernels.
// .npy reader/writer (format: numpy/lib/format.py). The reader parses the
// header with a small, strict parser for the Python dict literal numpy writes
// (never an evaluator), and checks the data length against the header before
// copying anything, so malformed files end in an exception, not a crash.
#include "runtime/tools/npy.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>

namespace floe::tools {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// numpy pads headers so the data begins on this boundary (numpy >= 1.14).
constexpr size_t kDataAlignment = 64;
// numpy reserves room for the first dim to grow to this many digits.
constexpr size_t kGrowthAxisMaxDigits = 21;

struct DtypeCode {
  floe::DType dtype;
  const char* code;  // numpy's kind + item size, e.g. "f4"
};

// Every floe dtype that has a .npy spelling. bfloat16 has none in plain numpy.
constexpr DtypeCode kDtypeCodes[] = {
    {floe::DType::kFloat32, "f4"}, {floe::DType::kFloat64, "f8"}, {floe::DType::kFloat16, "f2"},
    {floe::DType::kInt8, "i1"},    {floe::DType::kInt16, "i2"},   {floe::DType::kInt32, "i4"},
    {floe::DType::kInt64, "i8"},   {floe::DType::kUInt8, "u1"},   {floe::DType::kUInt16, "u2"},
    {floe::DType::kUInt32, "u4"},  {floe::DType::kUInt64, "u8"},  {floe::DType::kBool, "b1"},
};

[[noreturn]] void fail(const std::string& path, const std::string& reason) {
  throw std::runtime_error(path + ": " + reason);
}

// Printable, bounded rendering of header text for error messages.
std::string quote_for_message(const std::string& text) {
  constexpr size_t kMaxShown = 120;
  std::string out = "\"";
  for (size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > kMaxShown) out += "...";
  return out + "\"";
}

[[noreturn]] void fail_dtype(const std::string& path, const std::string& descr,
                             const std::string& why) {
  fail(path, "dtype '" + descr + "' " + why +
                 " (supported: <f4 <f8 <f2 <i8 <i4 <i2 <u2 |i1 |u1 |b1 <c8 <c16)");
}

// numpy's complex64 / complex128: interleaved (real, imaginary) float32 /
// float64, read as that float with a last dim of 2. Sets *complex.
floe::DType dtype_from_descr(const std::string& path, const std::string& descr, bool* complex) {
  *complex = descr == "<c8" || descr == "<c16";
  if (*complex) return descr == "<c8" ? floe::DType::kFloat32 : floe::DType::kFloat64;
  if (descr == ">c8" || descr == ">c16") {
    fail_dtype(path, descr, "is big-endian; save arr.astype(arr.dtype.newbyteorder('<')) instead");
  }
  if (descr.size() != 3) fail_dtype(path, descr, "is not supported");
  const char byte_order = descr[0];
  const std::string code = descr.substr(1);
  for (const DtypeCode& entry : kDtypeCodes) {
    if (code != entry.code) continue;
    // One-byte types have no byte order; numpy writes '|' but '<'/'>' mean the same.
    if (floe::dtype_size(entry.dtype) == 1) {
      if (byte_order == '|' || byte_order == '<' || byte_order == '>') return entry.dtype;
      fail_dtype(path, descr, "has an unknown byte order");
    }
    if (byte_order == '<') return entry.dtype;
    if (byte_order == '>')
      fail_dtype(path, descr,
                 "is big-endian; save arr.astype(arr.dtype.newbyteorder('<')) instead");
    fail_dtype(path, descr, "has no explicit little-endian byte order");
  }
  fail_dtype(path, descr, "is not supported");
}

std::string descr_for(const std::string& path, floe::DType dtype) {
  for (const DtypeCode& entry : kDtypeCodes)
    if (entry.dtype == dtype)
      return std::string(floe::dtype_size(dtype) == 1 ? "|" : "<") + entry.code;
  fail(path, "dtype #" + std::to_string(static_cast<int>(dtype)) + " has no .npy equivalent");
}

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// Parses exactly the dict literal numpy writes:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// with Python's rules for whitespace, quotes, trailing commas and one-element
// tuples, plus the 'L' suffix Python 2 era writers put on ints.
class HeaderParser {
 public:
  HeaderParser(const std::string& path, const std::string& text) : path_(path), text_(text) {}

  NpyHeader parse() {
    NpyHeader header;
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    expect('{', "the header to start with '{'");
    while (true) {
      skip_space();
      if (consume('}')) break;
      const size_t key_at = pos_;
      const std::string key = parse_string();
      expect(':', "':' after a key");
      skip_space();
      if (key == "descr") {
        if (seen_descr) error_at(key_at, "duplicate key 'descr'");
        if (!at('\'') && !at('"'))
          error("'descr' is not a plain dtype string (structured dtypes are not supported)");
        header.descr = parse_string();
        seen_descr = true;
      } else if (key == "fortran_order") {
        if (seen_fortran) error_at(key_at, "duplicate key 'fortran_order'");
        header.fortran_order = parse_bool();
        seen_fortran = true;
      } else if (key == "shape") {
        if (seen_shape) error_at(key_at, "duplicate key 'shape'");
        header.shape = parse_shape();
        seen_shape = true;
      } else {
        error_at(key_at, "unexpected key '" + key + "'");
      }
      skip_space();
      if (consume(',')) continue;
      expect('}', "',' or '}' after a value");
      break;
    }
    skip_space();
    if (pos_ != text_.size()) error("unexpected text after the closing '}'");
    if (!seen_descr) error("the header has no 'descr'");
    if (!seen_fortran) error("the header has no 'fortran_order'");
    if (!seen_shape) error("the header has no 'shape'");
    return header;
  }

 private:
  [[noreturn]] void error_at(size_t at, const std::string& what) const {
    fail(path_, "malformed .npy header: " + what + " at offset " + std::to_string(at) + " in " +
                    quote_for_message(text_));
  }
  [[noreturn]] void error(const std::string& what) const { error_at(pos_, what); }

  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool consume(char c) {
    if (!at(c)) return false;
    ++pos_;
    return true;
  }
  void expect(char c, const char* what) {
    skip_space();
    if (!consume(c)) error(std::string("expected ") + what);
  }
  void skip_space() {
    while (pos_ < text_.size() && std::strchr(" \t\n\r\f\v", text_[pos_]) != nullptr &&
           text_[pos_] != '\0')
      ++pos_;
  }
  bool starts_with(const char* word) const {
    return text_.compare(pos_, std::strlen(word), word) == 0;
  }

  std::string parse_string() {
    skip_space();
    if (!at('\'') && !at('"')) error("expected a quoted string");
    const char quote = text_[pos_++];
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      // Nothing numpy writes for supported arrays needs escapes.
      if (text_[pos_] == '\\') error("escape sequences in strings are not supported");
      if (text_[pos_] == '\n') break;  // Python strings cannot span lines either
      ++pos_;
    }
    if (pos_ == text_.size() || text_[pos_] != quote) error_at(start - 1, "unterminated string");
    return text_.substr(start, pos_++ - start);
  }

  bool parse_bool() {
    if (starts_with("True")) {
      pos_ += 4;
      return true;
    }
    if (starts_with("False")) {
      pos_ += 5;
      return false;
    }
    error("'fortran_order' must be True or False");
  }

  int64_t parse_dim() {
    skip_space();
    const size_t start = pos_;
    if (at('-')) error("negative dimension in 'shape'");
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9')
      error("expected an integer dimension in 'shape'");
    int64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const int digit = text_[pos_] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10)
        error_at(start, "dimension in 'shape' does not fit in 64 bits");
      value = value * 10 + digit;
      ++pos_;
    }
    if (at('L') || at('l')) ++pos_;  // Python 2 long literal
    return value;
  }

  std::vector<int64_t> parse_shape() {
    if (!consume('(')) error("'shape' must be a tuple");
    std::vector<int64_t> dims;
    skip_space();
    if (consume(')')) return dims;
    bool saw_comma = false;
    while (true) {
      dims.push_back(parse_dim());
      skip_space();
      if (consume(',')) {
        saw_comma = true;
        skip_space();
        if (consume(')')) break;
        continue;
      }
      if (consume(')')) break;
      error("expected ',' or ')' in 'shape'");
    }
    // In Python "(3)" is the int 3, not a tuple; numpy rejects it too.
    if (dims.size() == 1 && !saw_comma) error("'shape' must be a tuple, e.g. (3,)");
    return dims;
  }

  const std::string& path_;
  const std::string& text_;
  size_t pos_ = 0;
};

// Elements in `shape`, or false if the count overflows int64.
bool count_elements(const std::vector<int64_t>& shape, int64_t* count) {
  int64_t n = 1;
  for (int64_t dim : shape) {
    if (dim < 0) return false;
    if (dim != 0 && n > std::numeric_limits<int64_t>::max() / dim) return false;
    n *= dim;
  }
  *count = n;
  return true;
}

uint32_t read_le(const std::vector<uint8_t>& bytes, size_t at, size_t width) {
  uint32_t value = 0;
  for (size_t i = 0; i < width; ++i) value |= static_cast<uint32_t>(bytes[at + i]) << (8 * i);
  return value;
}

std::string shape_repr(const std::vector<int64_t>& shape) {
  if (shape.empty()) return "()";
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

NpyArray read_npy(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) fail(path, "cannot open for reading: " + std::string(std::strerror(errno)));
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                                   std::istreambuf_iterator<char>());
  if (file.bad()) fail(path, "read error");
  return parse_npy(bytes, path);
}

NpyArray parse_npy(const std::vector<uint8_t>& bytes, const std::string& path) {
  if (bytes.size() < kMagicSize + 2 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0)
    fail(path, "not a .npy file (missing the \\x93NUMPY magic)");
  const int major = bytes[6], minor = bytes[7];
  if (minor != 0 || major < 1 || major > 3)
    fail(path, "unsupported .npy format version " + std::to_string(major) + "." +
                   std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  // 1.0 stores the header length in 2 bytes; 2.0 and 3.0 use 4.
  const size_t length_width = major == 1 ? 2 : 4;
  const size_t header_start = kMagicSize + 2 + length_width;
  if (bytes.size() < header_start) fail(path, "truncated: the file ends inside the header length");
  const size_t header_length = read_le(bytes, kMagicSize + 2, length_width);
  if (bytes.size() - header_start < header_length)
    fail(path, "truncated: header claims " + std::to_string(header_length) + " bytes but only " +
                   std::to_string(bytes.size() - header_start) + " follow");

  const std::string header_text(reinterpret_cast<const char*>(bytes.data()) + header_start,
                                header_length);
  const NpyHeader header = HeaderParser(path, header_text).parse();
  if (header.fortran_order)
    fail(path, "Fortran-ordered arrays are not supported; save np.ascontiguousarray(arr)");

  NpyArray array;
  array.dtype = dtype_from_descr(path, header.descr, &array.complex);
  array.shape = header.shape;
  if (array.complex) array.shape.push_back(2);
  int64_t element_count = 0;
  const size_t item_size = floe::dtype_size(array.dtype);
  if (!count_elements(array.shape, &element_count) ||
      static_cast<uint64_t>(element_count) > std::numeric_limits<uint64_t>::max() / item_size)
    fail(path, "shape " + shape_repr(array.shape) + " has too many elements");
  const uint64_t expected = static_cast<uint64_t>(element_count) * item_size;
  const uint64_t available = bytes.size() - header_start - header_length;
  if (available < expected)
    fail(path, "truncated: shape " + shape_repr(array.shape) + " of " + header.descr + " needs " +
                   std::to_string(expected) + " data bytes but the file has " +
                   std::to_string(available));
  if (available > expected)
    fail(path, std::to_string(available - expected) + " unexpected bytes after the " +
                   std::to_string(expected) + " data bytes of shape " + shape_repr(array.shape));
  array.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header_start + header_length),
                    bytes.end());
  return array;
}

void write_npy(const std::string& path, const floe::DType dtype, const std::vector<int64_t>& pairs_shape,
               const void* data, bool complex) {
  std::string descr = descr_for(path, dtype);
  std::vector<int64_t> shape = pairs_shape;
  if (complex) {
    if ((dtype != floe::DType::kFloat32 && dtype != floe::DType::kFloat64) || shape.empty() || shape.back() != 2) {
      fail(path, "cannot write shape " + shape_repr(shape) + " of " + descr +
                     " as complex: it needs float32 or float64 with a last dim of 2");
    }
    descr = dtype == floe::DType::kFloat32 ? "<c8" : "<c16";
    shape.pop_back();
  }
  int64_t element_count = 0;
  for (int64_t dim : shape)
    if (dim < 0) fail(path, "cannot write shape " + shape_repr(shape) + ": negative dimension");
  const size_t item_size = floe::dtype_size(dtype) * (complex ? 2 : 1);
  if (!count_elements(shape, &element_count) ||
      static_cast<uint64_t>(element_count) > std::numeric_limits<size_t>::max() / item_size)
    fail(path, "cannot write shape " + shape_repr(shape) + ": too many elements");
  const size_t data_bytes = static_cast<size_t>(element_count) * item_size;
  if (data == nullptr && data_bytes != 0) fail(path, "cannot write: data is null");

  // Same text, order and spare room as numpy's _write_array_header.
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " +
                       shape_repr(shape) + ", }";
  if (!shape.empty()) {
    const size_t first_dim_digits = std::to_string(shape[0]).size();
    header.append(kGrowthAxisMaxDigits - first_dim_digits, ' ');
  }
  // numpy's _wrap_header: pad with 1..64 spaces plus '\n' so data is 64-aligned.
  int major = 1;
  size_t length_width = 2;
  size_t padded_length = 0;
  for (;;) {
    const size_t prefix = kMagicSize + 2 + length_width;
    const size_t unpadded = header.size() + 1;  // + '\n'
    padded_length = unpadded + kDataAlignment - (prefix + unpadded) % kDataAlignment;
    if (major == 1 && padded_length > 0xffff) {  // does not fit 1.0's 2-byte length
      major = 2;
      length_width = 4;
      continue;
    }
    break;
  }
  if (padded_length > 0xffffffff) fail(path, "cannot write: shape has too many dimensions");
  header.append(padded_length - header.size() - 1, ' ');
  header += '\n';

  std::string prefix(kMagic, kMagicSize);
  prefix += static_cast<char>(major);
  prefix += '\0';
  for (size_t i = 0; i < length_width; ++i)
    prefix += static_cast<char>((padded_length >> (8 * i)) & 0xff);

  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) fail(path, "cannot open for writing: " + std::string(std::strerror(errno)));
  file.write(prefix.data(), static_cast<std::streamsize>(prefix.size()));
  file.write(header.data(), static_cast<std::streamsize>(header.size()));
  if (data_bytes != 0)
    file.write(static_cast<const char*>(data), static_cast<std::streamsize>(data_bytes));
  file.close();
  if (!file) {
    std::remove(path.c_str());  // never leave a half-written array behind
    fail(path, "write failed");
  }
}

}  // namespace floe::tools
