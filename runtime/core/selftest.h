// SPDX-License-Identifier: Apache-2.0
// floe::SelfTest: proof on the device that it computes what the host did.
// A model converted with `floe-convert --selftest-input NAME=x.npy` carries
// that input, the outputs the host's reference kernels computed and a digest
// of every operator's outputs (schemas/contract/selftest.h). SelfTest runs
// the model on the embedded input in the caller's arena and checks each
// operator as it finishes: integer outputs (int8 included) must be exact,
// float32 ones within the stored tolerance. The first operator that is off is
// named, so a corrupted weight or a wrong kernel points at itself rather than
// at the last layer. No allocation; the arena is the model's usual one.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "runtime/core/model.h"
#include "runtime/core/status.h"

namespace floe {

struct SelfTestResult {
  // kOk: every op and every output matched. kNotFound: the model carries no
  // self-test. kKernelError: op `op` (or, with op == -1, output `output`)
  // left its tolerance. Others: Interpreter::Init/Invoke's status.
  Status status = Status::kOk;
  int32_t op = -1;
  const char* op_name = "";  // the TensorFlow node the op came from
  int32_t output = -1;
  const char* message = "";
  float tolerance = 0.0f;    // the float32 tolerance the model states
  size_t ops_checked = 0;
};

SelfTestResult SelfTest(const Model& model, void* arena, size_t arena_bytes);

}  // namespace floe
