// SPDX-License-Identifier: Apache-2.0
// Converter harness for checkpoint .index tables: the bytes become
// model.ckpt.index beside the conv_seed example's data shard, then go through
// the checkpoint reader (open, verify_all, read every key) and the whole
// conversion of the conv_seed graph, as floe-convert would run them. Each input
// is tried twice: as is (exercising the CRC and framing checks) and with its
// block CRCs re-stamped (so mutations reach the block, entry and header
// decoding behind the CRCs). Only ConvertError is a clean outcome.
#include <cstdint>
#include <string>

#include "tests/fuzz/ckpt_fixture.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

const std::string& checkpoint_prefix() {
  static const std::string prefix = [] {
    const std::string p = floe::fuzz::scratch_dir() + "/model.ckpt";
    const std::string data =
        floe::fuzz::read_file(floe::fuzz::source_path("examples/conv_seed/model/model.ckpt.data-00000-of-00001"));
    floe::fuzz::write_file(p + ".data-00000-of-00001", reinterpret_cast<const uint8_t*>(data.data()),
                           data.size());
    return p;
  }();
  return prefix;
}

void run(const std::string& index) {
  const std::string& prefix = checkpoint_prefix();
  floe::fuzz::write_file(prefix + ".index", reinterpret_cast<const uint8_t*>(index.data()), index.size());
  floe::fuzz::convert_with_checkpoint(prefix);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string index(reinterpret_cast<const char*>(data), size);
  run(index);
  const std::string original = index;
  floe::fuzz::restamp_table_crcs(&index);
  if (index != original) run(index);
  return 0;
}
