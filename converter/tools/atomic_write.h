// SPDX-License-Identifier: Apache-2.0
// Writes `bytes` to `path` atomically: a temporary file in the same directory
// (so rename() is atomic), every byte written (short writes and EINTR retried),
// fsync'ed, then renamed over `path`. On any failure, and on SIGINT / SIGTERM /
// SIGHUP / SIGQUIT while writing, the temporary file is removed and `path` is
// left as it was. SIGXFSZ is ignored so a file-size limit is an error, not a
// kill. An existing `path` that is not a regular file (/dev/null, /dev/stdout,
// a pipe) is written in place instead: renaming over it would replace the
// device or pipe with a file. Throws ConvertError naming the path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace floe::conv {

struct WriteOptions {
  size_t max_chunk = 0;                       // bytes per write() call; 0 = as many as possible
  void (*after_chunk)(size_t written) = nullptr;  // called after each write() (progress)
};

void write_atomically(const std::string& path, const std::vector<uint8_t>& bytes,
                      const WriteOptions& options = WriteOptions());

}  // namespace floe::conv
