// SPDX-License-Identifier: Apache-2.0
// fuzz_model's structured mutator: random bytes rarely survive the FlatBuffers
// verifier and the checksum, so byte-level fuzzing mostly tests the first
// checks. This one unpacks a valid model, changes one to three fields the
// prepares and kernels read (shapes, dtypes, offsets, operand indices,
// opcodes, backends, requantization words, window options, constant bytes,
// arena sizes) to values near the edges, packs it and seals the checksum, so
// Model::Load's later checks, Init()'s prepares and Invoke() see the change.
#pragma once

#include <cstddef>
#include <cstdint>

namespace floe::fuzz {

// Rewrites data[0, size) in place (at most max_size bytes); returns the new
// size, or 0 when the input is not a valid model (the caller falls back to
// byte-level mutation).
size_t mutate_model(uint8_t* data, size_t size, size_t max_size, unsigned int seed);

}  // namespace floe::fuzz
