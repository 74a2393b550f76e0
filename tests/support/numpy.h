// SPDX-License-Identifier: Apache-2.0
// Tests that compare with numpy run it as /usr/bin/python3 (Debian's
// python3-numpy); without it they skip with a visible message.
#pragma once

#include <cstdlib>

namespace floe::testing {

inline bool have_numpy() {
  static const bool available = std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
  return available;
}

#define FLOE_REQUIRE_NUMPY() \
  if (!::floe::testing::have_numpy()) GTEST_SKIP() << "SKIPPED: /usr/bin/python3 with numpy is needed for the numpy comparison"

}  // namespace floe::testing
