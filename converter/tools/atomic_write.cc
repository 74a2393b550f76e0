// SPDX-License-Identifier: Apache-2.0
// Writing the converter's output atomically (see atomic_write.h).
#include "converter/tools/atomic_write.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "converter/ir/error.h"

namespace floe::conv {
namespace {

// The temporary file being written, for the signal handler (which may only
// make async-signal-safe calls: unlink, signal, raise).
char g_pending_tmp[4096] = "";

extern "C" void remove_pending_output(int signal_number) {
  if (g_pending_tmp[0] != '\0') ::unlink(g_pending_tmp);
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

// Writes every byte to `fd` (short writes and EINTR retried); false on an error.
bool write_all(int fd, const std::vector<uint8_t>& bytes, const WriteOptions& options) {
  size_t done = 0;
  while (done < bytes.size()) {
    size_t chunk = bytes.size() - done;
    if (options.max_chunk > 0 && chunk > options.max_chunk) chunk = options.max_chunk;
    const ssize_t n = ::write(fd, bytes.data() + done, chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
    if (options.after_chunk != nullptr) options.after_chunk(done);
  }
  return true;
}

}  // namespace

void write_atomically(const std::string& path, const std::vector<uint8_t>& bytes, const WriteOptions& options) {
  struct stat existing;
  if (::stat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode) && !S_ISDIR(existing.st_mode)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw ConvertError(path + ": cannot open the output: " + std::strerror(errno));
    const bool written = write_all(fd, bytes, options);
    const int error = errno;
    if (::close(fd) != 0 || !written) {
      throw ConvertError(path + ": cannot write the output: " + std::strerror(written ? errno : error));
    }
    return;
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  if (tmp.size() >= sizeof(g_pending_tmp)) throw ConvertError(path + ": output path is too long");
  std::memcpy(g_pending_tmp, tmp.c_str(), tmp.size() + 1);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) std::signal(s, remove_pending_output);
  std::signal(SIGXFSZ, SIG_IGN);
  auto fail = [&](const std::string& what) {
    const int error = errno;
    ::unlink(tmp.c_str());
    g_pending_tmp[0] = '\0';
    throw ConvertError(path + ": " + what + ": " + std::strerror(error));
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    g_pending_tmp[0] = '\0';
    throw ConvertError(path + ": cannot create the output file: " + std::strerror(errno));
  }
  if (!write_all(fd, bytes, options)) {
    ::close(fd);
    fail("cannot write the output file");
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("cannot write the output file (fsync)");
  }
  if (::close(fd) != 0) fail("cannot write the output file (close)");
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("cannot rename the output file into place");
  g_pending_tmp[0] = '\0';
}

}  // namespace floe::conv
