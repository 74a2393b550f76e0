// SPDX-License-Identifier: Apache-2.0
// Decoding of V1 checkpoint values. Field numbers come from TF's
// saved_tensor_slice.proto (SavedTensorSlices, SavedTensorSliceMeta,
// SavedSliceMeta, SavedSlice) and tensor.proto (TensorProto). TF's V1 writer
// stores a slice's values in the typed repeated field of its dtype (small
// integers widened into int_val, half and bfloat16 bits in half_val).
#include "converter/frontend/checkpoint/tensor_slices.h"

#include <limits>

#include "converter/ir/tf_dtype.h"
#include "converter/ir/error.h"

namespace floe::conv::ckpt {
namespace {

enum class ValueEncoding { kVarint, kFixed32, kFixed64, kBytes };

// Where a dtype's values live in a TensorProto and how wide each stored value is.
struct ValueField {
  uint32_t field = 0;  // 0: the dtype has no V1 representation
  ValueEncoding encoding = ValueEncoding::kVarint;
  size_t values_per_element = 1;  // complex: real and imaginary parts
  size_t value_bytes = 0;         // bytes each value takes in memory
};

ValueField value_field(int tf_dtype) {
  switch (tf_dtype) {
    case kTfFloat:
      return {5, ValueEncoding::kFixed32, 1, 4};
    case kTfDouble:
      return {6, ValueEncoding::kFixed64, 1, 8};
    case kTfInt32:
    case kTfQInt32:
      return {7, ValueEncoding::kVarint, 1, 4};
    case kTfUInt8:
    case kTfInt8:
    case kTfQInt8:
    case kTfQUInt8:
      return {7, ValueEncoding::kVarint, 1, 1};
    case kTfInt16:
    case kTfUInt16:
    case kTfQInt16:
    case kTfQUInt16:
      return {7, ValueEncoding::kVarint, 1, 2};
    case kTfString:
      return {8, ValueEncoding::kBytes, 1, 0};
    case kTfComplex64:
      return {9, ValueEncoding::kFixed32, 2, 4};
    case kTfInt64:
      return {10, ValueEncoding::kVarint, 1, 8};
    case kTfBool:
      return {11, ValueEncoding::kVarint, 1, 1};
    case kTfComplex128:
      return {12, ValueEncoding::kFixed64, 2, 8};
    case kTfHalf:
    case kTfBFloat16:
      return {13, ValueEncoding::kVarint, 1, 2};
    case kTfUInt32:
      return {16, ValueEncoding::kVarint, 1, 4};
    case kTfUInt64:
      return {17, ValueEncoding::kVarint, 1, 8};
    default:
      return {};
  }
}

// Smallest number of encoded bytes one value can take (packed).
size_t min_encoded_bytes(ValueEncoding encoding) {
  switch (encoding) {
    case ValueEncoding::kFixed32:
      return 4;
    case ValueEncoding::kFixed64:
      return 8;
    default:
      return 1;
  }
}

void append_le(std::vector<uint8_t>& out, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

uint64_t load_le(const char* p, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i) value |= uint64_t(static_cast<uint8_t>(p[i])) << (8 * i);
  return value;
}

// A packed repeated field: untagged varints or little-endian fixed values back to back.
template <typename Take>
void decode_packed_run(std::string_view run, ValueEncoding encoding, Take&& take, const std::string& where) {
  if (encoding == ValueEncoding::kBytes) throw ConvertError(where + ": strings cannot be packed");
  if (encoding != ValueEncoding::kVarint) {
    const size_t width = encoding == ValueEncoding::kFixed32 ? 4 : 8;
    if (run.size() % width != 0) {
      throw ConvertError(where + ": packed run of " + std::to_string(run.size()) + " bytes is not a multiple of " +
                         std::to_string(width));
    }
    for (size_t pos = 0; pos < run.size(); pos += width) take(load_le(run.data() + pos, width));
    return;
  }
  size_t pos = 0;
  while (pos < run.size()) {
    const size_t value_start = pos;
    uint64_t value = 0;
    for (int shift = 0;; shift += 7) {
      if (pos >= run.size() || shift > 63) {
        throw ConvertError(where + ": malformed varint at byte " + std::to_string(value_start) + " of the run");
      }
      const uint8_t byte = static_cast<uint8_t>(run[pos++]);
      value |= uint64_t(byte & 0x7Fu) << shift;
      if ((byte & 0x80u) == 0) break;
    }
    take(value);
  }
}

void merge_saved_slice_meta(std::string_view bytes, const std::string& context, SavedSliceMeta& meta) {
  WireReader r(bytes, context);
  while (r.next_field()) {
    switch (r.field_number()) {
      case 1:
        meta.name = std::string(r.read_bytes());
        break;
      case 2:
        merge_tensor_shape(r.read_bytes(), r.context(), meta.shape);
        break;
      case 3:
        meta.dtype = r.read_int32();
        break;
      case 4:
        meta.slices.push_back(decode_tensor_slice(r.read_bytes(), r.context()));
        break;
      default:
        r.skip_field();
    }
  }
}

void merge_meta(std::string_view bytes, const std::string& context, SavedTensorSliceMeta& meta) {
  WireReader r(bytes, context + ": SavedTensorSliceMeta");
  while (r.next_field()) {
    switch (r.field_number()) {
      case 1: {
        SavedSliceMeta tensor;
        merge_saved_slice_meta(r.read_bytes(),
                               r.context() + ".tensor[" + std::to_string(meta.tensors.size()) + "]", tensor);
        meta.tensors.push_back(std::move(tensor));
        break;
      }
      case 2: {
        WireReader v(r.read_bytes(), r.context() + ".versions");
        while (v.next_field()) {
          if (v.field_number() == 1) {
            meta.versions.producer = v.read_int32();
          } else if (v.field_number() == 2) {
            meta.versions.min_consumer = v.read_int32();
          } else if (v.field_number() == 3) {
            v.read_repeated_int64(meta.versions.bad_consumers);
          } else {
            v.skip_field();
          }
        }
        break;
      }
      default:
        r.skip_field();
    }
  }
}

void merge_saved_slice(std::string_view bytes, const std::string& context, SavedSlice& slice) {
  WireReader r(bytes, context + ": SavedSlice");
  while (r.next_field()) {
    switch (r.field_number()) {
      case 1:
        slice.name = std::string(r.read_bytes());
        break;
      case 2:
        slice.slice = decode_tensor_slice(r.read_bytes(), r.context());
        slice.has_slice = true;
        break;
      case 3:
        // Sub-messages split over several occurrences would have to be merged;
        // TF's writer never splits one, so a second occurrence is refused.
        if (slice.has_data) r.fail("SavedSlice holds its data field twice");
        slice.data = r.read_bytes();
        slice.has_data = true;
        break;
      default:
        r.skip_field();
    }
  }
}

}  // namespace

SavedTensorSliceMeta decode_saved_tensor_slice_meta(std::string_view value, const std::string& context) {
  SavedTensorSliceMeta meta;
  bool has_meta = false;
  WireReader r(value, context + ": SavedTensorSlices");
  while (r.next_field()) {
    if (r.field_number() == 1) {
      merge_meta(r.read_bytes(), r.context(), meta);
      has_meta = true;
    } else {
      r.skip_field();
    }
  }
  if (!has_meta) throw ConvertError(context + ": SavedTensorSlices has no meta field");
  return meta;
}

SavedSlice decode_saved_slice(std::string_view value, const std::string& context) {
  SavedSlice slice;
  WireReader r(value, context + ": SavedTensorSlices");
  while (r.next_field()) {
    if (r.field_number() == 2) {
      merge_saved_slice(r.read_bytes(), r.context(), slice);
    } else {
      r.skip_field();
    }
  }
  if (!slice.has_data) throw ConvertError(context + ": SavedTensorSlices holds no slice data");
  return slice;
}

std::vector<uint8_t> decode_slice_values(std::string_view tensor_proto, int tf_dtype, uint64_t count,
                                         const std::string& context) {
  const ValueField f = value_field(tf_dtype);
  if (f.field == 0) {
    throw ConvertError(context + ": dtype " + tf_dtype_name(tf_dtype) + " has no value field in a V1 checkpoint");
  }
  // Every stored value takes at least one encoded byte: a count the message
  // cannot hold is refused before anything is sized by it.
  const uint64_t max_values = tensor_proto.size() / min_encoded_bytes(f.encoding);
  if (count > max_values / f.values_per_element) {
    throw ConvertError(context + ": " + std::to_string(count) + " elements of " + tf_dtype_name(tf_dtype) +
                       " cannot fit in a TensorProto of " + std::to_string(tensor_proto.size()) + " bytes");
  }
  const uint64_t expected_values = count * f.values_per_element;
  std::vector<uint8_t> out;
  out.reserve(static_cast<size_t>(expected_values * f.value_bytes));
  uint64_t values = 0;
  bool has_content = false;
  std::string_view content;
  WireReader r(tensor_proto, context + ": TensorProto");
  // Bools are one byte holding 0 or 1, whatever the varint said.
  const bool is_bool = tf_dtype == kTfBool;
  auto take = [&](uint64_t v) {
    if (is_bool) v = v != 0;
    if (++values <= expected_values && f.encoding != ValueEncoding::kBytes) append_le(out, v, f.value_bytes);
  };
  while (r.next_field()) {
    const uint32_t field = r.field_number();
    if (field == 1) {
      const int32_t stored = r.read_int32();
      if (stored != 0 && stored != tf_dtype) {
        r.fail("TensorProto dtype " + tf_dtype_name(stored) + " differs from the meta's " + tf_dtype_name(tf_dtype));
      }
    } else if (field == 4) {
      content = r.read_bytes();
      has_content = true;
    } else if (field != f.field) {
      r.skip_field();
    } else if (f.encoding == ValueEncoding::kBytes) {
      r.read_bytes();
      take(0);
    } else if (r.wire_type() == WireType::kLengthDelimited) {
      const size_t run_offset = r.offset();
      decode_packed_run(r.read_bytes(), f.encoding, take,
                        context + ": TensorProto packed field " + std::to_string(field) + " at byte " +
                            std::to_string(run_offset));
    } else if (f.encoding == ValueEncoding::kVarint) {
      take(r.read_varint());
    } else if (f.encoding == ValueEncoding::kFixed32) {
      take(r.read_fixed32());
    } else {
      take(r.read_fixed64());
    }
  }
  const uint64_t expected_bytes = expected_values * f.value_bytes;
  if (has_content && !content.empty() && f.encoding != ValueEncoding::kBytes) {
    if (values != 0) throw ConvertError(context + ": TensorProto holds both tensor_content and typed values");
    if (content.size() != expected_bytes) {
      throw ConvertError(context + ": tensor_content of " + std::to_string(content.size()) + " bytes for " +
                         std::to_string(count) + " elements of " + tf_dtype_name(tf_dtype));
    }
    out.assign(content.begin(), content.end());
    if (is_bool)
      for (uint8_t& b : out) b = b != 0;
    return out;
  }
  if (values != expected_values) {
    throw ConvertError(context + ": TensorProto holds " + std::to_string(values) + " values, the slice needs " +
                       std::to_string(expected_values) + " (" + std::to_string(count) + " elements of " +
                       tf_dtype_name(tf_dtype) + ")");
  }
  return out;
}

}  // namespace floe::conv::ckpt
