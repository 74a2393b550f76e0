// SPDX-License-Identifier: Apache-2.0
// Converter errors. Host code may throw: every failure becomes one ConvertError
// whose message names the file, node, op and (for binary formats) byte offset.
// floe-convert catches it, prints it, removes partial output and exits 2.
#pragma once

#include <stdexcept>
#include <string>

namespace floe::conv {

class ConvertError : public std::runtime_error {
 public:
  explicit ConvertError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace floe::conv
