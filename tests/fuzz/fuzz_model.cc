// SPDX-License-Identifier: Apache-2.0
// Runtime harness: bytes -> floe::Model::Load (checksum on, then off) ->
// Interpreter::Init -> Invoke on zeroed inputs, with the model buffer and the
// arena in guarded heap buffers. The invariant: a model that validates runs
// without touching memory outside the arena and the model buffer (ASan), with
// no undefined behaviour (UBSan) and in bounded time.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  floe::fuzz::run_model_bytes(data, size);
  return 0;
}
