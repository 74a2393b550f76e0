// SPDX-License-Identifier: Apache-2.0
// floe-convert --selftest-input: the finished model run once on the host's
// reference kernels, its inputs, outputs and per-operator digests appended as
// constant tensors no operator reads (schemas/contract/selftest.h), for
// floe::SelfTest to check a device against.
#pragma once

#include <map>
#include <string>

#include "converter/ir/lowered.h"

namespace floe::conv {

// `input_files`: model input name ("images" or "images:0") -> .npy path, one
// for every input, each of the input's dtype and element count. Returns a
// line for the summary.
std::string attach_selftest(const std::map<std::string, std::string>& input_files, LoweredModel* model);

}  // namespace floe::conv
