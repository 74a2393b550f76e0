// SPDX-License-Identifier: Apache-2.0
// The one way the converter and its tools cut option and table text into items.
#pragma once

#include <string>
#include <vector>

namespace floe::conv {

// The non-empty pieces of `s` between `sep`s ("a,,b," -> {"a", "b"}).
inline std::vector<std::string> split_nonempty(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = s.find(sep, start);
    std::string item = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!item.empty()) out.push_back(std::move(item));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace floe::conv
