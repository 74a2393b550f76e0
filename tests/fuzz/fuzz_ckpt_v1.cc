// SPDX-License-Identifier: Apache-2.0
// Converter harness for V1 checkpoints (one tensor-slices table file): the
// bytes become model.ckpt (no .index, so the reader sniffs a V1 table), then go
// through the checkpoint reader (open, verify_all, read every key) and the whole
// conversion of the conv_seed graph, whose variable "kernel" the seeds hold. Each
// input is tried twice: as is (exercising the CRC and framing checks) and with
// its block CRCs re-stamped (so mutations reach the block, meta and slice
// decoding behind them). Only ConvertError is a clean outcome.
#include <sys/stat.h>

#include <cstdint>
#include <string>

#include "tests/fuzz/ckpt_fixture.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

void run(const std::string& table) {
  static const std::string path = floe::fuzz::scratch_dir() + "/v1/model.ckpt";
  static const bool made_dir = [] {
    const std::string dir = floe::fuzz::scratch_dir() + "/v1";
    return ::mkdir(dir.c_str(), 0700) == 0;
  }();
  (void)made_dir;
  floe::fuzz::write_file(path, reinterpret_cast<const uint8_t*>(table.data()), table.size());
  floe::fuzz::convert_with_checkpoint(path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string table(reinterpret_cast<const char*>(data), size);
  run(table);
  const std::string original = table;
  floe::fuzz::restamp_table_crcs(&table);
  if (table != original) run(table);
  return 0;
}
