// SPDX-License-Identifier: Apache-2.0
// Calibration data for post-training quantization, as NumPy users write it:
// an .npz (np.savez or np.savez_compressed: a zip of .npy members, one per
// input name, or arr_0, arr_1, ... by position), a directory
// of <input name>.npy files, or one .npy (for a one-input model, any name). Arrays are
// returned as stored; matching them to the model's inputs (names, shapes,
// dtypes, batches) is the quantizer's job, which knows the model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "converter/ir/host_tensor.h"

namespace floe::conv {

struct CalibrationArray {
  std::string name;    // the member or file name without ".npy"
  bool named = true;   // false for a lone .npy: it feeds a one-input model whatever its file name
  std::string source;  // "<path>" or "<path>: member <name>.npy", for messages
  HostTensor tensor;
};

// Throws ConvertError (kInvalidInput, naming `path` and the member) for a
// missing path, a directory without .npy files, a malformed zip or .npy, a
// member compressed other than by deflate, corrupt deflate data, a CRC
// mismatch, or the same name twice.
std::vector<CalibrationArray> read_calibration(const std::string& path);

// The .npz reader on bytes already in memory (`path` names it in messages).
std::vector<CalibrationArray> parse_npz(const std::vector<uint8_t>& bytes, const std::string& path);

}  // namespace floe::conv
