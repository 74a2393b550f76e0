// SPDX-License-Identifier: Apache-2.0
// Locating ../shared/corpus from tests. Tests that need it skip with a visible
// message when it is absent, so a fresh clone without ../shared still passes.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <sys/stat.h>

namespace floe::testing {

inline std::string shared_dir() { return FLOE_SHARED_DIR; }
inline std::string corpus_path(const std::string& relative) {
  return shared_dir() + "/corpus/" + relative;
}
inline bool path_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace floe::testing

// Skip the current test (visibly) when a corpus file is missing.
#define FLOE_REQUIRE_CORPUS(relative)                                            \
  do {                                                                           \
    if (!::floe::testing::path_exists(::floe::testing::corpus_path(relative)))   \
      GTEST_SKIP() << "SKIPPED: ../shared/corpus not available ("                \
                   << ::floe::testing::corpus_path(relative) << ")";             \
  } while (0)
