// SPDX-License-Identifier: Apache-2.0
// Limits and alignments the converter must respect and the runtime relies on.
// One definition for both halves (the converter refuses what the runtime
// could not run; the runtime re-checks at Model::Load / Init).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace floe {

// Largest rank any floe op handles.
constexpr int kMaxRank = 8;
// Most inputs of one CONCAT (the runtime gathers them on the stack), and so
// the most tensors one Concat / Pack / DynamicStitch lowers to in one op.
constexpr int kMaxConcatInputs = 64;
// Constants and arena offsets are aligned to this (SIMD loads, XNNPACK); the
// model buffer and the arena must be too.
constexpr size_t kTensorAlignment = 16;
// What every kernel needs of an arena tensor's offset: word loads (LDRD/VLDRW
// and the like take 4-byte-aligned addresses; the SIMD paths load unaligned).
// The converter places activations in 16-byte slots, and in 4-byte ones only
// when 16-byte slots would cost more than 2 % over the live bytes (a graph of
// a few scalars: 32 B of slots for 8 B of data).
constexpr size_t kActivationOffsetAlignment = 4;
// The XNNPACK region starts at the first multiple of this at or after the
// planned activations; the converter's budget includes the worst-case gap.
constexpr size_t kBackendRegionAlignment = 64;
// Most memory regions (floe-convert --memory-regions) one model may use: the
// interpreter keeps one arena pointer per region.
constexpr size_t kMaxMemoryRegions = 4;
// Most WHILE ops nested inside one another: Invoke keeps one frame per level
// on its stack (runtime/core/interpreter.cc); Model::Load refuses deeper nesting.
constexpr uint32_t kMaxLoopNesting = 8;
// The Cortex-M convolution kernels index rows and columns in int32 (y * stride
// + tap * dilation, y0 + k_h). With the window's fields inside int16, output
// positions times the stride up to this keep every index below 2^31: the
// converter keeps larger convolutions off those kernels, their prepare refuses them.
constexpr int64_t kMaxCortexmStridedOutput = int64_t{1} << 29;

}  // namespace floe
