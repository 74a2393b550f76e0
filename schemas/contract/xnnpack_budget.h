// SPDX-License-Identifier: Apache-2.0
// The XNNPACK region of the arena, as both halves see it. The runtime
// (runtime/kernels/xnnpack/) bump-allocates everything XNNPACK asks for from
// the region; the converter (converter/lower/backend_xnnpack.cc) sizes the
// region by replaying those requests here, op by op, through the same bump
// arithmetic, for every microkernel configuration XNNPACK may pick on the
// target, and keeps the largest. So Model::arena_size() is the bytes Init()
// uses on the most demanding CPU of the target, not a loose guess.
//
// Assumed XNNPACK: Debian's libxnnpack0 0.0~git20220216.ae108ef (kXnnpackVersion).
// The request sizes and the tile tables below come from that snapshot (its
// src/init.c and src/operators/*.c) and were checked by logging every request
// of the runtime's allocator on x86-64 (AVX-512) and aarch64 (Cortex-A53 under
// qemu). Another XNNPACK may ask for more: the runtime's region limit is the
// budget, so Init() then fails with kArenaTooSmall instead of overrunning.
// Freestanding: integer arithmetic only.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace floe::xnnpack_budget {

constexpr const char* kXnnpackVersion = "0.0~git20220216.ae108ef";

// Model.target names of the CPU classes a budget is computed for. "x86_64"
// bounds every x86-64 CPU; "x86_64-avx512" only CPUs with AVX-512F, where
// XNNPACK always picks its AVX-512 kernels, so the budget is exact there (on
// other CPUs such a model runs the reference kernels).
constexpr const char* kTargetX86_64 = "x86_64";
constexpr const char* kTargetX86_64Avx512 = "x86_64-avx512";
constexpr const char* kTargetAarch64 = "aarch64";
// aarch64 CPUs without the dot-product extension (ARMv8.0-A cores such as
// Cortex-A53/A57/A72/A73): exact there. int8 convolutions tile differently
// with the dot product, so "aarch64" bounds both and may be a few % above on
// either; on a CPU with the dot product such a model runs the reference kernels.
constexpr const char* kTargetAarch64NoDotprod = "aarch64-no-dotprod";

// The runtime's allocator hands out blocks at least this aligned (XNNPACK's
// plain allocate() gets exactly this), from a region whose base is
// kBackendRegionAlignment (64) aligned, so offsets align like addresses.
constexpr uint64_t kMinAlignment = 16;
// An Init-time weight rewrite that does not fit in the activations takes this
// many bytes rounded up from the top of the region.
constexpr uint64_t kScratchAlignment = 16;
// XNN_EXTRA_BYTES: zero buffers are this much longer than a row.
constexpr uint64_t kExtraBytes = 16;
// The runtime's own blocks at the start of the region: its BackendState
// {uint32_t, pointer} and one operator handle per model op (at least one).
constexpr uint64_t state_bytes(uint64_t pointer_bytes) { return 2 * pointer_bytes; }
constexpr uint64_t handle_bytes(uint64_t pointer_bytes, uint64_t op_count) {
  return pointer_bytes * (op_count == 0 ? 1 : op_count);
}

constexpr uint64_t align_up(uint64_t v, uint64_t alignment) {
  return (v + alignment - 1) / alignment * alignment;
}
// Where a block of `size` bytes ends when bump-allocated after `used` bytes.
constexpr uint64_t bump(uint64_t used, uint64_t alignment, uint64_t size) {
  return align_up(used, alignment < kMinAlignment ? kMinAlignment : alignment) + size;
}

// Depthwise (dwconv) primary tiles of that snapshot on x86-64 and aarch64: a
// depthwise window with exactly this many taps runs the dwconv path, any
// other window a grouped IGEMM.
constexpr uint32_t kDwconvTaps[4] = {3, 4, 9, 25};
// Max, average and pixelwise-average pooling kernels read 9 rows (9p8x).
constexpr uint64_t kPoolingRows = 9;

// Depthwise primary tiles of the int8 per-channel (QC8) kernels: 9 and 25 taps
// run dwconv, any other window a grouped IGEMM (there is no QC8 vmulcaddc).
constexpr uint32_t kQc8DwconvTaps[2] = {9, 25};

// What XNNPACK picks on one class of CPU: f32, and QC8 (int8 activations,
// per-channel int8 weights, fp32 requantization), which floe uses for every
// int8 convolution, depthwise convolution and fully connected op.
struct Microkernels {
  uint32_t gemm_mr;                     // GEMM / IGEMM row tile
  uint32_t gemm_nr;                     // GEMM / IGEMM output-channel tile
  uint32_t gemm_k_round;                // kr x sr: packing rounds (group) input channels to it
  uint32_t dwconv_channel_tile[4];      // per kDwconvTaps entry
  uint32_t vmulcaddc_channel_tile;      // 1x1 depthwise, stride 1, unpadded
  uint32_t qc8_gemm_mr;
  uint32_t qc8_gemm_nr;
  uint32_t qc8_gemm_k_round;
  uint32_t qc8_dwconv_channel_tile[2];  // per kQc8DwconvTaps entry
};

struct Target {
  uint64_t pointer_bytes;
  uint64_t operator_bytes;    // sizeof(struct xnn_operator) in that build
  uint64_t simd_alignment;    // XNN_ALLOCATION_ALIGNMENT in that build
  const Microkernels* kernels;
  size_t kernel_count;
};

// x86-64 f32: AVX-512F 7x16 (depthwise 16 channels); FMA3 on AMD Zen / Zen+
// and Hygon Dhyana 4x16s4, whose shuffled layout pads input channels to 4;
// other FMA3 and AVX 5x16 (depthwise 16, 25 taps 8); SSE 4x8 (depthwise 8).
// QC8 (logged with qemu-x86_64 -cpu Haswell/SandyBridge/Nehalem/qemu64 and on
// an AVX-512 host): AVX-512 4x16c8 (depthwise 32); AVX2 3x8c8; AVX 2x4c8;
// SSE2-SSE4.1 3x4c8 (depthwise 16 on all but AVX-512).
constexpr Microkernels kX86_64Kernels[] = {
    {7, 16, 1, {16, 16, 16, 16}, 4, 4, 16, 8, {32, 32}},
    {4, 16, 4, {16, 16, 16, 8}, 4, 3, 8, 8, {16, 16}},
    {5, 16, 1, {16, 16, 16, 8}, 4, 3, 8, 8, {16, 16}},
    {5, 16, 1, {16, 16, 16, 8}, 4, 2, 4, 8, {16, 16}},
    {4, 8, 1, {8, 8, 8, 8}, 4, 3, 4, 8, {16, 16}},
};
// aarch64 f32: 6x8 (generic, Cortex-A53/A55/A73/A75 ...) or 4x8 GEMM;
// depthwise 4 or 8 channels by core (8 bounds both). QC8 (logged under
// qemu-aarch64 -cpu cortex-a53, cortex-a72, max): 2x8c8 without the dot
// product extension, 4x16c4 with it; depthwise 16. Each f32 choice can meet
// each QC8 choice; the rows without the dot product come first.
constexpr Microkernels kAarch64Kernels[] = {
    {6, 8, 1, {8, 8, 8, 8}, 4, 2, 8, 8, {16, 16}},
    {4, 8, 1, {8, 8, 8, 8}, 4, 2, 8, 8, {16, 16}},
    {6, 8, 1, {8, 8, 8, 8}, 4, 4, 16, 4, {16, 16}},
    {4, 8, 1, {8, 8, 8, 8}, 4, 4, 16, 4, {16, 16}},
};
constexpr Target kX86_64{8, 2112, 64, kX86_64Kernels, 5};
constexpr Target kX86_64Avx512{8, 2112, 64, kX86_64Kernels, 1};
constexpr Target kAarch64{8, 976, 16, kAarch64Kernels, 4};
constexpr Target kAarch64NoDotprod{8, 976, 16, kAarch64Kernels, 2};

// ---- int8 (QC8 / QS8) operators: what XNNPACK accepts ----
// floe hands XNNPACK's QC8 convolution the reference kernels' own per-channel
// requantization as its kernel scale (input and output scale 1): the Q31
// multiplier m and shift s stand for m * 2^(s - 31). QC8 creation refuses a
// scale of 256 or more, and zero. A zero multiplier (a channel whose weights
// are all zero) makes the reference output the zero point; 2^-33 does the
// same in XNNPACK: |int32 acc| * 2^-33 <= 0.25 rounds to 0.
constexpr float kQc8ZeroChannelScale = 1.0f / 8589934592.0f;  // 2^-33
constexpr float qc8_channel_scale(int32_t multiplier, int32_t shift) {
  if (multiplier == 0) return kQc8ZeroChannelScale;
  float scale = static_cast<float>(multiplier);
  for (int32_t e = shift - 31; e < 0; ++e) scale *= 0.5f;
  for (int32_t e = shift - 31; e > 0; --e) scale *= 2.0f;
  return scale;
}
constexpr bool qc8_scale_supported(int32_t multiplier, int32_t shift) {
  return multiplier >= 0 && shift >= -31 && shift <= 30 && qc8_channel_scale(multiplier, shift) < 256.0f;
}
// QS8 add: each input-to-output scale ratio in [2^-10, 2^8).
constexpr bool qs8_add_ratio_supported(float ratio) {
  return ratio >= 1.0f / 1024.0f && ratio < 256.0f;
}
// QS8 global average pooling: the input-to-output scale ratio in [2^-8, 2^8).
constexpr bool qs8_average_ratio_supported(float ratio) {
  return ratio >= 1.0f / 256.0f && ratio < 256.0f;
}

// A 2-D convolution as XNNPACK sees it (NHWC, explicit padding).
struct Convolution {
  uint64_t groups, group_input_channels, group_output_channels;
  uint64_t kernel_h, kernel_w, stride_h, stride_w, dilation_w;
  bool padded;                  // any of the four paddings is non-zero
  uint64_t output_h, output_w;  // per image
};

// Replays, for one microkernel configuration, what the runtime's allocator
// hands out while Init() creates and sets up each operator, in Init()'s order.
class Replay {
 public:
  constexpr Replay(const Target& target, const Microkernels& kernels)
      : target_(target), kernels_(kernels) {}

  // The runtime's BackendState and handle array.
  constexpr void state(uint64_t op_count) {
    plain(state_bytes(target_.pointer_bytes));
    plain(handle_bytes(target_.pointer_bytes, op_count));
  }
  // Operators that allocate nothing but themselves (element-wise, softmax).
  constexpr void operator_only() { simd(target_.operator_bytes); }

  constexpr void fully_connected(uint64_t input_channels, uint64_t output_channels) {
    simd(target_.operator_bytes);
    simd(align_up(output_channels, kernels_.gemm_nr) *
         (align_up(input_channels, kernels_.gemm_k_round) + 1) * 4);
  }

  // Returns the bytes in use once the operator is created (before set-up):
  // what is allocated while a filter rewrite is still needed.
  constexpr uint64_t convolution(const Convolution& c) {
    simd(target_.operator_bytes);
    const uint64_t taps = c.kernel_h * c.kernel_w;
    const bool unit_stride = c.stride_h == 1 && c.stride_w == 1;
    const bool single_channel = c.group_input_channels == 1 && c.group_output_channels == 1;
    const uint32_t dwconv_tile = single_channel ? dwconv_channel_tile(taps) : 0;
    if (single_channel && taps == 1 && unit_stride && !c.padded) {  // per-channel multiply-add
      simd(align_up(c.groups, kernels_.vmulcaddc_channel_tile) * 2 * 4);
      return used_;
    }
    if (dwconv_tile != 0) {
      const uint64_t channels = align_up(c.groups, dwconv_tile);
      simd(channels * (taps + 1) * 4);
      if (c.padded) simd(channels * 4 + kExtraBytes);
      const uint64_t created = used_;
      // Indirection: one row of pointers per output row, stepping by the
      // stride (by the whole window when dilated).
      const uint64_t step_w = c.dilation_w == 1 ? c.stride_w : c.kernel_w;
      const uint64_t step_h = taps + (c.output_w - 1) * step_w * c.kernel_h;
      plain(target_.pointer_bytes * c.output_h * step_h);
      return created;
    }
    const uint64_t k_stride = align_up(c.group_input_channels, kernels_.gemm_k_round);
    simd(c.groups * align_up(c.group_output_channels, kernels_.gemm_nr) * (taps * k_stride + 1) * 4);
    if (taps == 1 && unit_stride && !c.padded) return used_;  // plain GEMM: no indirection
    if (c.padded) simd(k_stride * 4 + kExtraBytes);
    const uint64_t created = used_;
    // IGEMM indirection: every tap of every output pixel of one image, rows
    // rounded up to the row tile (a single pixel runs the 1-row kernel).
    const uint64_t pixels = c.output_h * c.output_w;
    plain(target_.pointer_bytes * taps * (pixels == 1 ? 1 : align_up(pixels, kernels_.gemm_mr)));
    return created;
  }

  // An int8 convolution (QC8: int8 weights, int32 bias and a float scale per
  // output channel). Returns the bytes in use once the operator is created.
  constexpr uint64_t qc8_convolution(const Convolution& c) {
    simd(target_.operator_bytes);
    const uint64_t taps = c.kernel_h * c.kernel_w;
    const bool single_channel = c.group_input_channels == 1 && c.group_output_channels == 1;
    const uint32_t dwconv_tile = single_channel ? qc8_dwconv_channel_tile(taps) : 0;
    constexpr uint64_t kPerChannel = 4 + 4;  // bias + scale
    if (dwconv_tile != 0) {
      const uint64_t channels = align_up(c.groups, dwconv_tile);
      simd(channels * (taps + kPerChannel));
      if (c.padded) simd(channels + kExtraBytes);
      const uint64_t created = used_;
      const uint64_t step_w = c.dilation_w == 1 ? c.stride_w : c.kernel_w;
      const uint64_t step_h = taps + (c.output_w - 1) * step_w * c.kernel_h;
      plain(target_.pointer_bytes * c.output_h * step_h);
      return created;
    }
    const uint64_t k_stride = align_up(c.group_input_channels, kernels_.qc8_gemm_k_round);
    simd(c.groups * align_up(c.group_output_channels, kernels_.qc8_gemm_nr) *
         (taps * k_stride + kPerChannel));
    if (taps == 1 && c.stride_h == 1 && c.stride_w == 1 && !c.padded) return used_;
    if (c.padded) simd(k_stride + kExtraBytes);
    const uint64_t created = used_;
    const uint64_t pixels = c.output_h * c.output_w;
    plain(target_.pointer_bytes * taps *
          (pixels == 1 ? 1 : align_up(pixels, kernels_.qc8_gemm_mr)));
    return created;
  }
  // QS8 global average pooling: the operator and a zero row of int8.
  constexpr void qs8_global_average_pooling(uint64_t channels) {
    simd(target_.operator_bytes);
    simd(channels + kExtraBytes);
  }

  constexpr void max_pooling(uint64_t pool_h, uint64_t pool_w, uint64_t stride_w,
                             uint64_t output_h, uint64_t output_w) {
    simd(target_.operator_bytes);
    pooling_indirection(pool_h, pool_w, stride_w, output_h, output_w);
  }
  constexpr void average_pooling(uint64_t channels, uint64_t pool_h, uint64_t pool_w,
                                 uint64_t stride_w, bool padded, uint64_t output_h,
                                 uint64_t output_w) {
    simd(target_.operator_bytes);
    simd(channels * 4 + kExtraBytes);
    pooling_indirection(pool_h, pool_w, stride_w, output_h, output_w);
    if (padded) plain(output_h * output_w * 4);  // per-pixel divisors
  }
  constexpr void global_average_pooling(uint64_t channels) {
    simd(target_.operator_bytes);
    simd(channels * 4 + kExtraBytes);
  }

  constexpr uint64_t used() const { return used_; }

 private:
  constexpr void simd(uint64_t size) { used_ = bump(used_, target_.simd_alignment, size); }
  constexpr void plain(uint64_t size) { used_ = bump(used_, kMinAlignment, size); }
  constexpr uint32_t dwconv_channel_tile(uint64_t taps) const {
    for (size_t i = 0; i < 4; ++i) {
      if (kDwconvTaps[i] == taps) return kernels_.dwconv_channel_tile[i];
    }
    return 0;
  }
  constexpr uint32_t qc8_dwconv_channel_tile(uint64_t taps) const {
    for (size_t i = 0; i < 2; ++i) {
      if (kQc8DwconvTaps[i] == taps) return kernels_.qc8_dwconv_channel_tile[i];
    }
    return 0;
  }
  // The kernels may read kPoolingRows - 1 pointers past the last window.
  constexpr void pooling_indirection(uint64_t pool_h, uint64_t pool_w, uint64_t stride_w,
                                     uint64_t output_h, uint64_t output_w) {
    const uint64_t step_w = stride_w < pool_w ? stride_w : pool_w;
    const uint64_t step_h = pool_h * pool_w + (output_w - 1) * step_w * pool_h;
    plain(target_.pointer_bytes * (kPoolingRows - 1 + output_h * step_h));
  }

  Target target_;
  Microkernels kernels_;
  uint64_t used_ = 0;
};

}  // namespace floe::xnnpack_budget
