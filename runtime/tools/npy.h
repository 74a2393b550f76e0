// SPDX-License-Identifier: Apache-2.0
// Host-only tool code (never built for a device): it may use the heap, the
// standard library and exceptions; the arena-only rule binds runtime/core and kernels.
// NumPy .npy files for the host tools (floe-run inputs/outputs, test fixtures).
// Only plain little-endian, C-ordered arrays of the dtypes floe::DType can hold
// are accepted; anything else is rejected with an exception, never guessed at.
// Array bytes are kept exactly as stored: little-endian, row-major, which is
// also the byte order the floe runtime uses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/tensor.h"

namespace floe::tools {

struct NpyArray {
  floe::DType dtype = floe::DType::kInvalid;
  std::vector<int64_t> shape;  // [] = 0-d (scalar); dims may be 0 (empty array)
  std::vector<uint8_t> data;   // product(shape) * dtype_size(dtype) bytes, row-major, little-endian
  // '<c8' / '<c16': dtype float32 / float64 and shape ends in a pair dim of 2,
  // (real, imaginary) interleaved as numpy stores them.
  bool complex = false;
};

// Reads a .npy file (format versions 1.0, 2.0, 3.0). Accepted descrs:
// '<f4' '<f8' '<f2' '<i8' '<i4' '<i2' '<u2' '|i1' '|u1' '|b1' (one-byte types
// also with '<' or '>'), and complex '<c8' '<c16' (NpyArray::complex).
// Throws std::runtime_error("<path>: <reason>") for a missing/unreadable file, bad magic, unknown version, a header that is not
// numpy's dict literal with exactly 'descr', 'fortran_order' and 'shape',
// fortran_order True, big-endian or unsupported dtypes, negative or overflowing
// dims, and data that is shorter or longer than the header promises.
NpyArray read_npy(const std::string& path);

// The same checks on a .npy already in memory (e.g. one member of an .npz);
// `path` only names it in messages.
NpyArray parse_npy(const std::vector<uint8_t>& bytes, const std::string& path);

// Writes `data` (product(shape) * dtype_size(dtype) bytes, row-major,
// little-endian) as a format 1.0 .npy file laid out exactly as numpy 1.24's
// np.save does: header dict "{'descr': ..., 'fortran_order': False, 'shape':
// (3,), }", spaces reserved for growing the first dim, padding so the data
// starts at a multiple of 64 bytes. (Falls back to 2.0, as numpy does, only if
// the header exceeds 64 KiB, i.e. thousands of dims.) `data` may be null only
// when the array has no elements. Throws std::runtime_error for kInvalid or
// kBFloat16 (no .npy descr), negative dims, or an I/O failure. `complex`:
// float32 / float64 pairs in a last dim of 2 are written as '<c8' / '<c16' of
// the shape without that dim.
void write_npy(const std::string& path, const floe::DType dtype, const std::vector<int64_t>& shape,
               const void* data, bool complex = false);

}  // namespace floe::tools
