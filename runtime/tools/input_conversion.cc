// SPDX-License-Identifier: Apache-2.0
// Host-only tool code (never built for a device): it may use the heap, the
// standard library and exceptions; the arena-only rule binds runtime/core and kernels.
#include "runtime/tools/input_conversion.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "runtime/kernels/reference/half.h"

namespace floe::tools {
namespace {

bool is_float(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16 || t == DType::kBFloat16;
}
bool is_integer(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64 ||
         t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32 || t == DType::kBool;
}

int64_t integer_at(const void* p, DType t, size_t i) {
  switch (t) {
    case DType::kInt8: return static_cast<const int8_t*>(p)[i];
    case DType::kInt16: return static_cast<const int16_t*>(p)[i];
    case DType::kInt32: return static_cast<const int32_t*>(p)[i];
    case DType::kInt64: return static_cast<const int64_t*>(p)[i];
    case DType::kUInt8: return static_cast<const uint8_t*>(p)[i];
    case DType::kUInt16: return static_cast<const uint16_t*>(p)[i];
    case DType::kUInt32: return static_cast<const uint32_t*>(p)[i];
    case DType::kBool: return static_cast<const uint8_t*>(p)[i] != 0 ? 1 : 0;
    default: return 0;
  }
}

double float_at(const void* p, DType t, size_t i) {
  switch (t) {
    case DType::kFloat32: return static_cast<const float*>(p)[i];
    case DType::kFloat64: return static_cast<const double*>(p)[i];
    case DType::kFloat16: return ref::half_to_float(static_cast<const uint16_t*>(p)[i]);
    case DType::kBFloat16: return ref::bfloat16_to_float(static_cast<const uint16_t*>(p)[i]);
    default: return static_cast<double>(integer_at(p, t, i));
  }
}

void integer_range(DType t, int64_t* lo, int64_t* hi) {
  switch (t) {
    case DType::kInt8: *lo = INT8_MIN; *hi = INT8_MAX; return;
    case DType::kInt16: *lo = INT16_MIN; *hi = INT16_MAX; return;
    case DType::kInt32: *lo = INT32_MIN; *hi = INT32_MAX; return;
    case DType::kUInt8: *lo = 0; *hi = UINT8_MAX; return;
    case DType::kUInt16: *lo = 0; *hi = UINT16_MAX; return;
    case DType::kUInt32: *lo = 0; *hi = UINT32_MAX; return;
    case DType::kBool: *lo = 0; *hi = 1; return;
    default: *lo = INT64_MIN; *hi = INT64_MAX; return;
  }
}

void store_integer(void* p, DType t, size_t i, int64_t v) {
  switch (t) {
    case DType::kInt8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); return;
    case DType::kInt16: static_cast<int16_t*>(p)[i] = static_cast<int16_t>(v); return;
    case DType::kInt32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); return;
    case DType::kInt64: static_cast<int64_t*>(p)[i] = v; return;
    case DType::kUInt8:
    case DType::kBool: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); return;
    case DType::kUInt16: static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(v); return;
    case DType::kUInt32: static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v); return;
    default: return;
  }
}

// The float `t` holds for `v`, rounded to nearest.
double stored_float(DType t, double v) {
  if (t == DType::kFloat32) return static_cast<double>(static_cast<float>(v));
  if (t == DType::kFloat16) return ref::half_to_float(ref::float_to_half(static_cast<float>(v)));
  if (t == DType::kBFloat16) return ref::bfloat16_to_float(ref::float_to_bfloat16(static_cast<float>(v)));
  return v;
}

void store_float(void* p, DType t, size_t i, double v) {
  switch (t) {
    case DType::kFloat32: static_cast<float*>(p)[i] = static_cast<float>(v); return;
    case DType::kFloat64: static_cast<double*>(p)[i] = v; return;
    case DType::kFloat16: static_cast<uint16_t*>(p)[i] = ref::float_to_half(static_cast<float>(v)); return;
    case DType::kBFloat16: static_cast<uint16_t*>(p)[i] = ref::float_to_bfloat16(static_cast<float>(v)); return;
    default: return;
  }
}

std::string number(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Complex values are float pairs in a last dim of 2: named and shaped as numpy
// and TF name them.
std::string type_name(DType t, bool complex) {
  if (!complex) return dtype_name(t);
  return t == DType::kFloat64 ? "complex128" : "complex64";
}
std::vector<int64_t> user_shape(std::vector<int64_t> shape, bool complex) {
  if (complex && !shape.empty()) shape.pop_back();
  return shape;
}

}  // namespace

std::string input_shape_argument(const std::vector<int64_t>& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s;
}

std::string convert_input(const void* values, DType dtype, const std::vector<int64_t>& shape,
                          const std::string& what, const InputTarget& target, bool complex) {
  const std::string input = "input '" + target.name + "'";
  const std::string values_type = type_name(dtype, complex), target_type = type_name(target.dtype, target.complex);
  const std::vector<int64_t> values_shape = user_shape(shape, complex),
                             target_shape = user_shape(target.shape, target.complex);
  const std::string needs = input + " is " + target_type + " " + shape_text(target_shape);
  if (complex != target.complex) {
    throw std::runtime_error(what + ": holds " + values_type + " " + shape_text(values_shape) + "; " + needs +
                             (target.complex ? ": pass complex values, e.g. np.save(path, x.astype(np.complex64))"
                                             : " and floe-run does not drop imaginary parts: pass real values"));
  }
  const int64_t n = element_count(shape);
  if (n != element_count(target.shape)) {
    std::string base = target.name;
    if (base.size() > 2 && base.compare(base.size() - 2, 2, ":0") == 0) base.resize(base.size() - 2);
    throw std::runtime_error(what + ": holds " + values_type + " " + shape_text(values_shape) + " (" +
                             std::to_string(element_count(values_shape)) + " values); " + needs + " (" +
                             std::to_string(element_count(target_shape)) +
                             " values): convert the model with --input-shape " + base + "=" +
                             input_shape_argument(values_shape) + " to run this shape");
  }
  if (dtype == target.dtype) {
    std::memcpy(target.data, values, static_cast<size_t>(n) * dtype_size(dtype));
    return "";
  }
  if (target.quantized) {
    throw std::runtime_error(what + ": holds " + dtype_name(dtype) + "; " + input +
                             " is int8 with a scale and zero point: pass float32 real values with --quantize "
                             "(floe-run then quantizes them with the input's scale) or int8 values already "
                             "quantized");
  }
  const bool from_float = is_float(dtype), to_float = is_float(target.dtype);
  if ((!from_float && !is_integer(dtype)) || (!to_float && !is_integer(target.dtype))) {
    throw std::runtime_error(what + ": holds " + dtype_name(dtype) + "; " + needs + " and floe-run cannot convert " +
                             dtype_name(dtype) + " to it");
  }
  auto refuse = [&](size_t i, double v, const std::string& why) {
    const std::string at = complex ? std::to_string(i / 2) + (i % 2 == 0 ? " (real part)" : " (imaginary part)")
                                   : std::to_string(i);
    throw std::runtime_error(what + ": value " + number(v) + " at flat index " + at + " " + why + "; " + needs +
                             ": pass values that fit, e.g. saved as " + target_type);
  };
  for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
    if (to_float) {
      if (from_float) {
        const double v = float_at(values, dtype, i);
        // Rounding is what Session.run does too; only an overflow changes the value's kind.
        if (std::isfinite(v) && !std::isfinite(stored_float(target.dtype, v))) {
          refuse(i, v, std::string("overflows ") + dtype_name(target.dtype));
        }
        store_float(target.data, target.dtype, i, v);
      } else {
        const int64_t v = integer_at(values, dtype, i);
        const double as_float = static_cast<double>(v);
        if (as_float >= 9223372036854775808.0 || static_cast<int64_t>(as_float) != v ||
            stored_float(target.dtype, as_float) != as_float) {
          refuse(i, as_float, std::string("is not exactly representable in ") + dtype_name(target.dtype));
        }
        store_float(target.data, target.dtype, i, as_float);
      }
    } else {
      int64_t lo = 0, hi = 0;
      integer_range(target.dtype, &lo, &hi);
      int64_t v = 0;
      if (from_float) {
        const double f = float_at(values, dtype, i);
        if (!std::isfinite(f) || f != std::floor(f)) refuse(i, f, "is not an integer");
        // 2^63 and above do not fit any target; below that the cast is exact.
        if (f < -9223372036854775808.0 || f >= 9223372036854775808.0) {
          refuse(i, f, std::string("is outside the range of ") + dtype_name(target.dtype));
        }
        v = static_cast<int64_t>(f);
      } else {
        v = integer_at(values, dtype, i);
      }
      if (v < lo || v > hi) {
        refuse(i, static_cast<double>(v), std::string("is outside the range of ") + dtype_name(target.dtype) + " [" +
                                              std::to_string(lo) + ", " + std::to_string(hi) + "]");
      }
      store_integer(target.data, target.dtype, i, v);
    }
  }
  std::string note = what + ": " + values_type + " converted to " + target_type + " for " + input;
  if (target.source_dtype == dtype) {
    note += " (the TF graph's " + values_type + "; floe computes it in " + target_type + ")";
  } else if (!to_float || !from_float) {
    note += " (every value unchanged)";
  }
  return note;
}

}  // namespace floe::tools
