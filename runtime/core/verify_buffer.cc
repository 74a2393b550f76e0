// SPDX-License-Identifier: Apache-2.0
// Table-driven structure check of a .floe buffer (see verify_buffer.h). The
// rules mirror flatbuffers::Verifier 2.x exactly (same bounds formula, same
// alignment and offset-sign checks), so the generated accessors stay in
// bounds on anything accepted here. The descriptors are bound to the generated
// vtable offsets by static_asserts; verify_buffer_test.cc checks them against
// the schema itself, so a field appended to floe.fbs cannot go unverified.
#include "runtime/core/verify_buffer.h"

#include "schemas/floe_generated.h"

namespace floe {
namespace verify_layout {
namespace {

constexpr uint8_t kU8 = kScalar | 1, kU16 = kScalar | 2, kU32 = kScalar | 4, kU64 = kScalar | 8;
constexpr uint8_t kVec8 = kVector | 1, kVec32 = kVector | 4;

// Every table's slots, back to back, in table-id order; kStart[id] is where
// table id begins (kStart[id + 1] where it ends).
constexpr uint8_t kSlots[] = {
    // 0 Model: version, tensors, operators, inputs, outputs, arena_size,
    // constants, producer, payload_crc32c, target, xnnpack_arena_size,
    // persistent_size_ptr32, persistent_size_ptr64, region_sizes, region_names,
    // persistent_region
    kU32, kTableVector | 1, kTableVector | 2, kVec32, kVec32, kU64, kVec8, kString, kU32, kString,
    kU64, kU64, kU64, kVector | 8, kString, kU32,
    // 1 Tensor: name, dtype, shape, is_constant, offset, size, live_first_op, live_last_op,
    // quantization, region, source_dtype, complex, variable
    kString, kU8, kVec32, kU8, kU64, kU64, kU32, kU32, kTable | 0, kU8, kU8, kU8, kU8,
    // 2 Operator: opcode, inputs, outputs, options_type, options, name, backend,
    // single_threaded, requantization, cortexm_kernel
    kU16, kVec32, kVec32, kUnionType, kUnionValue, kString, kU8, kU8, kTable | 1, kU8,
    // 3 MatMulOptions
    kU8, kU8, kU8,
    // 4 Conv2DOptions: 8 ints, activation
    kU32, kU32, kU32, kU32, kU32, kU32, kU32, kU32, kU8,
    // 5 DepthwiseConv2DOptions: 9 ints, activation
    kU32, kU32, kU32, kU32, kU32, kU32, kU32, kU32, kU32, kU8,
    // 6 Pool2DOptions: 8 ints, activation, include_batch_in_index
    kU32, kU32, kU32, kU32, kU32, kU32, kU32, kU32, kU8, kU8,
    // 7 ConcatOptions
    kU32,
    // 8 ReduceOptions: axes, keep_dims
    kVec32, kU8,
    // 9 SoftmaxOptions
    kU32,
    // 10 TransposeOptions
    kVec32,
    // 11 PadOptions: paddings, mode, constant_value
    kVec32, kU8, kU32,
    // 12 LeakyReluOptions
    kU32,
    // 13 ArgOptions
    kU32,
    // 14 StridedSliceOptions: begin, stride
    kVec32, kVec32,
    // 15 GatherOptions
    kU32, kU32,
    // 16 OneHotOptions
    kU32,
    // 17 BatchMatMulOptions
    kU8, kU8,
    // 18 Conv3DOptions: 9 ints
    kU32, kU32, kU32, kU32, kU32, kU32, kU32, kU32, kU32,
    // 19 ResizeOptions
    kU8, kU8,
    // 20 TopKOptions
    kU8,
    // 21 CumulativeOptions: axis, exclusive, reverse
    kU32, kU8, kU8,
    // 22 FakeQuantOptions: num_bits, narrow_range
    kU32, kU8,
    // 23 LrnOptions: depth_radius, bias, alpha, beta
    kU32, kU32, kU32, kU32,
    // 24 ExtractPatchesOptions: 8 ints
    kU32, kU32, kU32, kU32, kU32, kU32, kU32, kU32,
    // 25 AudioSpectrogramOptions: window_size, stride, fft_length, magnitude_squared
    kU32, kU32, kU32, kU8,
    // 26 MfccOptions: first_bin, sample_rate
    kU32, kU32,
    // 27 WhileOptions: cond_end, body_end, max_iterations
    kU32, kU32, kU32,
    // 28 Pool3DOptions: 9 ints
    kU32, kU32, kU32, kU32, kU32, kU32, kU32, kU32, kU32,
    // 29 CropAndResizeOptions: nearest, extrapolation_value
    kU8, kU32,
    // 30 ImageTransformOptions: nearest, fill_mode
    kU8, kU8,
    // 31 IfOptions: then_end, else_end
    kU32, kU32,
    // 32 SvdfOptions: rank, activation
    kU32, kU8,
    // 33 LstmOptions: cell_clip, projection_clip, time_major, cell_scale_log2,
    // quantized_cell_clip
    kU32, kU32, kU8, kU32, kU32,
    // 34 SignalWindowOptions: shift
    kU32,
    // 35 SignalRfftOptions: fft_length
    kU32,
    // 36 SignalEnergyOptions: start_index, end_index
    kU32, kU32,
    // 37 SpectralSubtractionOptions: 7 uints, clamping
    kU32, kU32, kU32, kU32, kU32, kU32, kU32, kU8,
    // 38 PcanOptions: snr_shift
    kU32,
    // 39 FilterBankLogOptions: input_correction_bits, output_scale
    kU32, kU32,
    // 40 RandomUniformOptions: seed, seed2, float64_draws
    kU64, kU64, kU8,
    // 41 TensorQuantization: scale, zero_point, quantized_dimension
    kVec32, kVector | 8, kU32,
    // 42 Requantization: input_offsets, output_offset, output_multiplier,
    // output_shift, input_multipliers, input_shifts, left_shift,
    // activation_min, activation_max, diff_min, input_range_radius
    kVec32, kU32, kU32, kU32, kVec32, kVec32, kU32, kU32, kU32, kU32, kU32,
};

constexpr uint8_t kStart[kTableCount + 1] = {0, 16, 29, 39, 42, 51, 61, 71, 72, 74, 75, 76, 79, 80, 81, 83, 85, 86, 88, 97, 99, 100, 103, 105, 109, 117, 121, 123, 126, 135, 137, 139, 141, 143, 148, 149, 150, 152, 160, 161, 163, 166, 169, 180};
static_assert(sizeof(kSlots) == kStart[kTableCount], "kStart must cover kSlots");

// The last slot of each table sits where the generated code says.
constexpr uint32_t slot_voffset(uint32_t id, uint32_t end) {
  return 4 + 2 * (kStart[id + 1] - kStart[id] - end);
}
using namespace schema;  // NOLINT: the VT_ constants below
static_assert(slot_voffset(0, 1) == Model::VT_PERSISTENT_REGION, "Model slots");
static_assert(slot_voffset(1, 1) == Tensor::VT_VARIABLE, "Tensor slots");
static_assert(slot_voffset(1, 2) == Tensor::VT_COMPLEX, "Tensor slots");
static_assert(slot_voffset(1, 3) == Tensor::VT_SOURCE_DTYPE, "Tensor slots");
static_assert(slot_voffset(1, 4) == Tensor::VT_REGION, "Tensor slots");
static_assert(slot_voffset(1, 5) == Tensor::VT_QUANTIZATION, "Tensor slots");
static_assert(slot_voffset(2, 1) == Operator::VT_CORTEXM_KERNEL, "Operator slots");
static_assert(slot_voffset(2, 2) == Operator::VT_REQUANTIZATION, "Operator slots");
static_assert(slot_voffset(2, 3) == Operator::VT_SINGLE_THREADED, "Operator slots");
static_assert(slot_voffset(2, 6) == Operator::VT_OPTIONS, "Operator union slot");
static_assert(slot_voffset(3, 1) == MatMulOptions::VT_ACTIVATION, "MatMulOptions");
static_assert(slot_voffset(4, 1) == Conv2DOptions::VT_ACTIVATION, "Conv2DOptions");
static_assert(slot_voffset(5, 1) == DepthwiseConv2DOptions::VT_ACTIVATION, "Depthwise");
static_assert(slot_voffset(6, 1) == Pool2DOptions::VT_INCLUDE_BATCH_IN_INDEX, "Pool2DOptions");
static_assert(slot_voffset(6, 2) == Pool2DOptions::VT_ACTIVATION, "Pool2DOptions");
static_assert(slot_voffset(7, 1) == ConcatOptions::VT_AXIS, "ConcatOptions");
static_assert(slot_voffset(8, 1) == ReduceOptions::VT_KEEP_DIMS, "ReduceOptions");
static_assert(slot_voffset(9, 1) == SoftmaxOptions::VT_BETA, "SoftmaxOptions");
static_assert(slot_voffset(10, 1) == TransposeOptions::VT_PERM, "TransposeOptions");
static_assert(slot_voffset(11, 1) == PadOptions::VT_CONSTANT_VALUE, "PadOptions");
static_assert(slot_voffset(12, 1) == LeakyReluOptions::VT_ALPHA, "LeakyReluOptions");
static_assert(slot_voffset(13, 1) == ArgOptions::VT_AXIS, "ArgOptions");
static_assert(slot_voffset(14, 1) == StridedSliceOptions::VT_STRIDE, "StridedSliceOptions");
static_assert(slot_voffset(15, 1) == GatherOptions::VT_BATCH_DIMS, "GatherOptions");
static_assert(slot_voffset(16, 1) == OneHotOptions::VT_AXIS, "OneHotOptions");
static_assert(slot_voffset(17, 1) == BatchMatMulOptions::VT_ADJ_Y, "BatchMatMulOptions");
static_assert(slot_voffset(18, 1) == Conv3DOptions::VT_PAD_LEFT, "Conv3DOptions");
static_assert(slot_voffset(19, 1) == ResizeOptions::VT_HALF_PIXEL_CENTERS, "ResizeOptions");
static_assert(slot_voffset(20, 1) == TopKOptions::VT_SORTED, "TopKOptions");
static_assert(slot_voffset(21, 1) == CumulativeOptions::VT_REVERSE, "CumulativeOptions");
static_assert(slot_voffset(22, 1) == FakeQuantOptions::VT_NARROW_RANGE, "FakeQuantOptions");
static_assert(slot_voffset(23, 1) == LrnOptions::VT_BETA, "LrnOptions");
static_assert(slot_voffset(24, 1) == ExtractPatchesOptions::VT_PAD_LEFT, "ExtractPatches");
static_assert(slot_voffset(25, 1) == AudioSpectrogramOptions::VT_MAGNITUDE_SQUARED, "AudioSpectrogramOptions");
static_assert(slot_voffset(26, 1) == MfccOptions::VT_SAMPLE_RATE, "MfccOptions");
static_assert(slot_voffset(27, 1) == WhileOptions::VT_MAX_ITERATIONS, "WhileOptions");
static_assert(slot_voffset(28, 1) == Pool3DOptions::VT_PAD_LEFT, "Pool3DOptions");
static_assert(slot_voffset(29, 1) == CropAndResizeOptions::VT_EXTRAPOLATION_VALUE, "CropAndResizeOptions");
static_assert(slot_voffset(30, 1) == ImageTransformOptions::VT_FILL_MODE, "ImageTransformOptions");
static_assert(slot_voffset(31, 1) == IfOptions::VT_ELSE_END, "IfOptions");
static_assert(slot_voffset(32, 1) == SvdfOptions::VT_ACTIVATION, "SvdfOptions");
static_assert(slot_voffset(33, 1) == LstmOptions::VT_QUANTIZED_CELL_CLIP, "LstmOptions");
static_assert(slot_voffset(34, 1) == SignalWindowOptions::VT_SHIFT, "SignalWindowOptions");
static_assert(slot_voffset(35, 1) == SignalRfftOptions::VT_FFT_LENGTH, "SignalRfftOptions");
static_assert(slot_voffset(36, 1) == SignalEnergyOptions::VT_END_INDEX, "SignalEnergyOptions");
static_assert(slot_voffset(37, 1) == SpectralSubtractionOptions::VT_CLAMPING, "SpectralSubtractionOptions");
static_assert(slot_voffset(38, 1) == PcanOptions::VT_SNR_SHIFT, "PcanOptions");
static_assert(slot_voffset(39, 1) == FilterBankLogOptions::VT_OUTPUT_SCALE, "FilterBankLogOptions");
static_assert(slot_voffset(40, 1) == RandomUniformOptions::VT_FLOAT64_DRAWS, "RandomUniformOptions");
static_assert(slot_voffset(41, 1) == TensorQuantization::VT_QUANTIZED_DIMENSION, "TensorQuantization");
static_assert(slot_voffset(42, 1) == Requantization::VT_INPUT_RANGE_RADIUS, "Requantization");
static_assert(static_cast<uint32_t>(OpOptions::MAX) == kUnionMembers, "OpOptions members");
static_assert(static_cast<uint32_t>(OpOptions::RandomUniformOptions) + 2 == kFirstFieldTable - 1,
              "union member k is table 2 + k");

}  // namespace

uint32_t table_slots(uint32_t id, const uint8_t** codes) {
  *codes = kSlots + kStart[id];
  return static_cast<uint32_t>(kStart[id + 1] - kStart[id]);
}

}  // namespace verify_layout

namespace {

using namespace verify_layout;  // NOLINT: slot kinds

// flatbuffers' FLATBUFFERS_MAX_BUFFER_SIZE: offsets are signed 32-bit.
constexpr uint32_t kMaxBufferSize = 0x7FFFFFFFu;

class Walker {
 public:
  Walker(const uint8_t* buffer, uint32_t size) : buf_(buffer), size_(size) {}

  // flatbuffers::Verifier::Verify: [pos, pos + len) inside the buffer.
  bool fits(uint32_t pos, uint32_t len) const { return len < size_ && pos <= size_ - len; }
  bool aligned_fits(uint32_t pos, uint32_t len) const {
    return (pos & (len - 1)) == 0 && fits(pos, len);
  }
  // Only called at positions aligned_fits() has accepted for the size (the
  // buffer itself is 16-byte aligned): plain little-endian loads.
  uint32_t u16(uint32_t pos) const { return flatbuffers::ReadScalar<uint16_t>(buf_ + pos); }
  uint32_t u32(uint32_t pos) const { return flatbuffers::ReadScalar<uint32_t>(buf_ + pos); }

  // The target of the uoffset at pos (VerifyOffset), or 0 when invalid (a
  // target is never 0: it lies after a nonzero forward offset).
  uint32_t follow(uint32_t pos) const {
    if (!aligned_fits(pos, 4)) return 0;
    const uint32_t offset = u32(pos);
    if (offset == 0 || offset > kMaxBufferSize) return 0;
    const uint32_t target = pos + offset;  // both < 2^31: no wrap
    return fits(target, 1) ? target : 0;
  }

  // VerifyVectorOrString: length word, then count * elem bytes, no overflow.
  bool vector(uint32_t pos, uint32_t elem, uint32_t* count) const {
    if (!aligned_fits(pos, 4)) return false;
    *count = u32(pos);
    if (*count >= kMaxBufferSize / elem) return false;
    return fits(pos, 4 + elem * *count);
  }

  bool table(uint32_t pos, uint32_t id) {
    if (!aligned_fits(pos, 4) || ++tables_ > kMaxVerifiedTables) return false;
    // The vtable sits at pos - soffset (either direction).
    const int64_t vtable = static_cast<int64_t>(pos) - static_cast<int32_t>(u32(pos));
    if (vtable < 0 || vtable > size_) return false;
    const uint32_t vt = static_cast<uint32_t>(vtable);
    if (!aligned_fits(vt, 2)) return false;
    const uint32_t vsize = u16(vt);
    if ((vsize & 1) != 0 || !fits(vt, vsize)) return false;
    const uint8_t* codes = kSlots + kStart[id];
    const uint32_t slots = static_cast<uint32_t>(kStart[id + 1] - kStart[id]);
    uint32_t union_type = 0;
    for (uint32_t i = 0; i < slots; ++i) {
      const uint32_t slot = 4 + 2 * i;
      const uint32_t field_offset = slot < vsize ? u16(vt + slot) : 0;
      if (field_offset == 0) continue;  // absent: the accessor returns the default
      const uint32_t field = pos + field_offset;
      const uint32_t code = codes[i], kind = code & 0xF0, arg = code & 0x0F;
      if (kind == kScalar || kind == kUnionType) {
        const uint32_t bytes = kind == kScalar ? arg : 1;
        if (!aligned_fits(field, bytes)) return false;
        if (kind == kUnionType) union_type = buf_[field];
        continue;
      }
      const uint32_t target = follow(field);
      if (target == 0) return false;
      uint32_t count;
      if (kind == kVector) {
        if (!vector(target, arg, &count)) return false;
      } else if (kind == kString) {
        if (!vector(target, 1, &count)) return false;
        const uint32_t end = target + 4 + count;
        if (!fits(end, 1) || buf_[end] != 0) return false;
      } else if (kind == kTableVector) {
        if (!vector(target, 4, &count)) return false;
        for (uint32_t k = 0; k < count; ++k) {
          const uint32_t element = target + 4 + 4 * k;
          const uint64_t at = static_cast<uint64_t>(element) + u32(element);
          if (at >= size_ || !table(static_cast<uint32_t>(at), arg)) return false;
        }
      } else if (kind == kTable) {
        if (!table(target, kFirstFieldTable + arg)) return false;
      } else if (union_type >= 1 && union_type <= kUnionMembers) {  // kUnionValue
        // NONE and values this runtime does not know carry nothing it reads.
        if (!table(target, 2 + union_type)) return false;
      }
    }
    return true;
  }

 private:
  const uint8_t* buf_;
  uint32_t size_;
  uint32_t tables_ = 0;
};

}  // namespace

bool verify_model_buffer(const uint8_t* buffer, size_t size) {
  // FLATBUFFERS_MIN_BUFFER_SIZE: root offset, soffset, vtable size, table size.
  if (buffer == nullptr || reinterpret_cast<uintptr_t>(buffer) % 16 != 0 || size < 12 ||
      size >= kMaxBufferSize) {
    return false;
  }
  Walker walker(buffer, static_cast<uint32_t>(size));
  const uint32_t root = walker.follow(0);
  return root != 0 && walker.table(root, 0);
}

}  // namespace floe
