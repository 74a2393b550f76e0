// SPDX-License-Identifier: Apache-2.0
// Thrown by unroll_control_flow (passes/control_flow.h) when a loop that
// LoopMode::kAuto chose to run at run time turns out not to convert that way
// (an op of its body needs a conversion-time value from the loop counter):
// convert() then converts again with those loops unrolled.
#pragma once

#include <string>
#include <vector>

namespace floe::conv {

struct RuntimeLoopsFailed {
  std::vector<std::string> loops;  // loop names, as LoopPolicy::unroll keys them
  std::string reason;              // the conversion error, its first line
};

}  // namespace floe::conv
