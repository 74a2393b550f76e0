// SPDX-License-Identifier: Apache-2.0
// XNNPACK backend selection and arena budget (see backend_xnnpack.h).
//
// The budget is an upper bound on what Debian's XNNPACK (git 2022-02-16)
// allocates while the runtime creates and sets up each operator, from the
// allocation pattern of that build (measured with a logging xnn_allocator on
// x86-64 and under qemu-aarch64): one operator object; packed weights
// round_up(oc, nr) x (k + 1) floats; a zero buffer of (channels + 4) floats
// when the window is padded; indirection buffers of pointers at setup. Each
// allocation is rounded up to the build's XNN_ALLOCATION_ALIGNMENT. Tile sizes
// (mr, nr, channel tiles) depend on the CPU XNNPACK detects at run time, so the
// bound takes the largest tiles any CPU of the target can select. The runtime
// enforces the bound (tests check used <= budget on both targets).
#include "converter/lower/backend_xnnpack.h"

#include <algorithm>
#include <vector>

#include "converter/ir/error.h"

namespace floe::conv {
namespace {

struct Geometry {
  uint64_t op_object;     // sizeof(struct xnn_operator) in Debian's build
  uint64_t alignment;     // XNN_ALLOCATION_ALIGNMENT
  uint64_t nr;            // widest f32 GEMM output-channel tile
  uint64_t k_round;       // input channels rounded to kr*sr (bound: 4)
  uint64_t mr;            // tallest f32 GEMM row tile (indirection rounding)
  uint64_t dw_tile;       // widest f32 depthwise channel tile
};

// x86-64: AVX-512 7x16, FMA3/AVX 5x16, SSE 4x8; depthwise up to 16 channels.
constexpr Geometry kX86_64{2112, 64, 16, 4, 7, 16};
// aarch64: 6x8 (generic, A53, A55, A73, A75 ...) or 4x8; depthwise 4 or 8 channels.
constexpr Geometry kAarch64{976, 16, 8, 4, 8, 8};

constexpr uint64_t kExtraBytes = 16;   // XNN_EXTRA_BYTES
constexpr uint64_t kRegionAlignment = 64;  // runtime/core/backend.h

uint64_t round_up(uint64_t v, uint64_t m) { return (v + m - 1) / m * m; }

uint64_t elements(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

class Budget {
 public:
  explicit Budget(const Geometry& g) : g_(g) {}
  void add(uint64_t bytes) {
    if (bytes > 0) total_ += round_up(bytes, g_.alignment);
  }
  void op() { add(g_.op_object); }
  void fully_connected(uint64_t in, uint64_t out) {
    op();
    add(round_up(out, g_.nr) * (round_up(in, g_.k_round) + 1) * 4);
  }
  // IGEMM convolution (groups x [group_out, kh*kw*group_in]).
  void igemm(uint64_t groups, uint64_t kh, uint64_t kw, uint64_t group_in, uint64_t group_out,
             uint64_t out_pixels) {
    op();
    add(groups * round_up(group_out, g_.nr) * (kh * kw * round_up(group_in, g_.k_round) + 1) * 4);
    add(round_up(groups * group_in, g_.k_round) * 4 + kExtraBytes);          // zero buffer
    add(8 * kh * kw * (out_pixels + g_.mr - 1));                             // indirection
  }
  void depthwise(uint64_t channels, uint64_t kh, uint64_t kw, uint64_t stride_w,
                 uint64_t dilation_w, uint64_t out_h, uint64_t out_w) {
    op();
    const uint64_t taps = kh * kw;
    add(round_up(channels, g_.dw_tile) * (taps + 1) * 4);
    add(channels * 4 + kExtraBytes);
    const uint64_t step_w = dilation_w == 1 ? std::min(stride_w, kw) : kw;
    const uint64_t step_h = taps + (out_w - 1) * step_w * kh;
    add(8 * (taps + out_h * step_h));
  }
  void pooling(uint64_t channels, uint64_t ph, uint64_t pw, uint64_t stride_w, uint64_t out_h,
               uint64_t out_w, bool average) {
    op();
    const uint64_t size = ph * pw;
    const uint64_t step_w = std::min(stride_w, pw);
    const uint64_t step_h = size + (out_w - 1) * step_w * ph;
    add(8 * (std::max<uint64_t>(size, 9) + 8 + out_h * step_h));  // indirection
    if (average) {
      add(channels * 4 + kExtraBytes);  // zero buffer
      add(out_h * out_w * 4);           // per-pixel divisors (padded windows)
      add(channels * 4 + kExtraBytes);  // multipass accumulator (windows > 9)
    }
  }
  uint64_t total() const { return total_; }

 private:
  Geometry g_;
  uint64_t total_ = 0;
};

bool all_f32(const LoweredModel& m, const LoweredOp& op) {
  for (int v : op.inputs) {
    if (v >= 0 && m.values[static_cast<size_t>(v)].dtype != DType::kFloat32) return false;
  }
  for (int v : op.outputs) {
    if (m.values[static_cast<size_t>(v)].dtype != DType::kFloat32) return false;
    if (elements(m.values[static_cast<size_t>(v)].shape) == 0) return false;
  }
  return true;
}

bool is_const(const LoweredModel& m, const LoweredOp& op, size_t i) {
  return i < op.inputs.size() && op.inputs[i] >= 0 && m.values[static_cast<size_t>(op.inputs[i])].is_constant();
}
bool absent_or_const(const LoweredModel& m, const LoweredOp& op, size_t i) {
  return i >= op.inputs.size() || op.inputs[i] < 0 || is_const(m, op, i);
}
const std::vector<int64_t>& shape_of(const LoweredModel& m, int v) {
  return m.values[static_cast<size_t>(v)].shape;
}

int64_t window_out(int64_t in, int64_t pad_a, int64_t pad_b, int64_t k, int64_t dilation,
                   int64_t stride) {
  const int64_t effective = (k - 1) * dilation + 1;
  const int64_t padded = in + pad_a + pad_b;
  return padded < effective ? 0 : (padded - effective) / stride + 1;
}

template <typename O>
bool window_ok(const O& o, const std::vector<int64_t>& in, const std::vector<int64_t>& out,
               int64_t kh, int64_t kw, int64_t dh, int64_t dw) {
  return in.size() == 4 && out.size() == 4 && o.pad_top >= 0 && o.pad_left >= 0 &&
         o.pad_bottom >= 0 && o.pad_right >= 0 &&
         window_out(in[1], o.pad_top, o.pad_bottom, kh, dh, o.stride_h) == out[1] &&
         window_out(in[2], o.pad_left, o.pad_right, kw, dw, o.stride_w) == out[2];
}

// Can XNNPACK run `op`? If so, adds its arena bytes to `budget` and its Init
// scratch to `scratch`.
bool take(const LoweredModel& m, const LoweredOp& op, Budget* budget, uint64_t* scratch) {
  using schema::OpCode;
  const OpTraits traits = op_traits(op.opcode);
  if (!runs_on(op.opcode, schema::Backend::XNNPACK)) return false;
  if (op.outputs.size() != 1 || !all_f32(m, op)) return false;
  const std::vector<int64_t>& out = shape_of(m, op.outputs[0]);
  if (traits.elementwise_binary()) {
    if (op.inputs.size() != 2 || shape_of(m, op.inputs[0]).size() > 6 ||
        shape_of(m, op.inputs[1]).size() > 6) {
      return false;
    }
    budget->op();
    return true;
  }
  if (traits.elementwise_unary()) {
    if (op.inputs.size() != 1) return false;
    budget->op();
    return true;
  }
  switch (op.opcode) {
    case OpCode::MATMUL: {
      const auto* o = op.options.AsMatMulOptions();
      if (o == nullptr || o->transpose_a || !is_const(m, op, 1) || !absent_or_const(m, op, 2)) return false;
      const auto& a = shape_of(m, op.inputs[0]);
      if (a.size() != 2 || out.size() != 2) return false;
      budget->fully_connected(static_cast<uint64_t>(a[1]), static_cast<uint64_t>(out[1]));
      return true;
    }
    case OpCode::CONV2D: {
      const auto* o = op.options.AsConv2DOptions();
      if (o == nullptr || !is_const(m, op, 1) || !absent_or_const(m, op, 2)) return false;
      const auto& x = shape_of(m, op.inputs[0]);
      const auto& w = shape_of(m, op.inputs[1]);
      if (w.size() != 4 || !window_ok(*o, x, out, w[0], w[1], o->dilation_h, o->dilation_w)) return false;
      const bool pointwise = w[0] == 1 && w[1] == 1 && o->stride_h == 1 && o->stride_w == 1 &&
                             o->pad_top == 0 && o->pad_left == 0 && o->pad_bottom == 0 && o->pad_right == 0;
      const uint64_t ci = static_cast<uint64_t>(w[2]), co = static_cast<uint64_t>(w[3]);
      if (pointwise) {
        budget->fully_connected(ci, co);
      } else {
        budget->igemm(1, static_cast<uint64_t>(w[0]), static_cast<uint64_t>(w[1]), ci, co,
                      static_cast<uint64_t>(out[1] * out[2]));
        if (ci == 1 && co == 1) {  // XNNPACK may pick its depthwise path instead
          budget->depthwise(1, static_cast<uint64_t>(w[0]), static_cast<uint64_t>(w[1]),
                            static_cast<uint64_t>(o->stride_w), static_cast<uint64_t>(o->dilation_w),
                            static_cast<uint64_t>(out[1]), static_cast<uint64_t>(out[2]));
        }
        *scratch = std::max(*scratch, elements(w) * 4);  // HWIO -> OHWI rewrite at Init
      }
      return true;
    }
    case OpCode::DEPTHWISE_CONV2D: {
      const auto* o = op.options.AsDepthwiseConv2DOptions();
      if (o == nullptr || !is_const(m, op, 1) || !absent_or_const(m, op, 2)) return false;
      const auto& x = shape_of(m, op.inputs[0]);
      const auto& w = shape_of(m, op.inputs[1]);
      if (w.size() != 4 || !window_ok(*o, x, out, w[0], w[1], o->dilation_h, o->dilation_w)) return false;
      const uint64_t kh = static_cast<uint64_t>(w[0]), kw = static_cast<uint64_t>(w[1]);
      const uint64_t c = static_cast<uint64_t>(w[2]), mult = static_cast<uint64_t>(w[3]);
      const uint64_t taps = kh * kw;
      const bool single_pass = mult == 1 && (taps == 4 || taps == 9 || taps == 25);
      if (single_pass) {  // XNNPACK's depthwise kernels (multiplier 1, 2x2 / 3x3 / 5x5)
        budget->depthwise(c, kh, kw, static_cast<uint64_t>(o->stride_w),
                          static_cast<uint64_t>(o->dilation_w), static_cast<uint64_t>(out[1]),
                          static_cast<uint64_t>(out[2]));
      } else {  // no depthwise kernel for it: XNNPACK runs a grouped IGEMM
        budget->igemm(c, kh, kw, 1, mult, static_cast<uint64_t>(out[1] * out[2]));
      }
      return true;
    }
    case OpCode::MAX_POOL2D:
    case OpCode::AVG_POOL2D: {
      const auto* o = op.options.AsPool2DOptions();
      if (o == nullptr || o->filter_h * o->filter_w < 2) return false;
      const auto& x = shape_of(m, op.inputs[0]);
      if (!window_ok(*o, x, out, o->filter_h, o->filter_w, 1, 1)) return false;
      budget->pooling(static_cast<uint64_t>(x[3]), static_cast<uint64_t>(o->filter_h),
                      static_cast<uint64_t>(o->filter_w), static_cast<uint64_t>(o->stride_w),
                      static_cast<uint64_t>(out[1]), static_cast<uint64_t>(out[2]),
                      op.opcode == OpCode::AVG_POOL2D);
      return true;
    }
    case OpCode::SOFTMAX: {
      const auto* o = op.options.AsSoftmaxOptions();
      if (o == nullptr || o->beta != 1.0f || out.empty()) return false;
      budget->op();
      return true;
    }
    case OpCode::MEAN: {
      const auto* o = op.options.AsReduceOptions();
      const auto& x = shape_of(m, op.inputs[0]);
      if (o == nullptr || x.size() != 4 || o->axes != std::vector<int32_t>{1, 2}) return false;
      budget->op();
      budget->add(static_cast<uint64_t>(x[3]) * 4 + kExtraBytes);
      return true;
    }
    default:
      return false;
  }
}

// Multiply-adds (GEMM-like ops) or elements touched (the rest) of `op`: what
// decides whether splitting it across threads pays.
uint64_t parallel_work(const LoweredModel& m, const LoweredOp& op) {
  auto elements = [&](int v) {
    uint64_t n = 1;
    for (int64_t d : shape_of(m, v)) n *= static_cast<uint64_t>(d);
    return n;
  };
  const uint64_t out = elements(op.outputs[0]);
  switch (op.opcode) {
    case schema::OpCode::MATMUL: {  // out = rows x N; K is A's last dim (no transpose_a here)
      const auto& a = shape_of(m, op.inputs[0]);
      return out * static_cast<uint64_t>(a.empty() ? 1 : a.back());
    }
    case schema::OpCode::CONV2D: {
      const auto& w = shape_of(m, op.inputs[1]);  // HWIO
      return out * static_cast<uint64_t>(w[0] * w[1] * w[2]);
    }
    case schema::OpCode::DEPTHWISE_CONV2D: {
      const auto& w = shape_of(m, op.inputs[1]);
      return out * static_cast<uint64_t>(w[0] * w[1]);
    }
    default: {
      uint64_t n = out;
      for (int v : op.inputs) n += v >= 0 ? elements(v) : 0;
      return n;
    }
  }
}

}  // namespace

std::string resolve_target(const std::string& name) {
  if (name == "host") {
#if defined(__aarch64__)
    return "aarch64";
#elif defined(__x86_64__)
    return "x86_64";
#else
    return "reference";
#endif
  }
  if (name == "reference" || name == "x86_64" || name == "aarch64") return name;
  throw ConvertError("--target '" + name + "': expected host, x86_64, aarch64 or reference");
}

BackendReport assign_backends(LoweredModel* model, const std::string& target) {
  BackendReport report;
  report.target = resolve_target(target);
  if (report.target == "reference") return report;
  const Geometry& geometry = report.target == "aarch64" ? kAarch64 : kX86_64;
  Budget budget(geometry);
  budget.add(16);                                      // BackendState
  budget.add(8 * std::max<size_t>(model->ops.size(), 1));  // one handle per op
  uint64_t scratch = 0;
  for (LoweredOp& op : model->ops) {
    if (take(*model, op, &budget, &scratch)) {
      op.backend = schema::Backend::XNNPACK;
      op.single_threaded = parallel_work(*model, op) < kParallelMinWork;
      report.single_threaded_ops += op.single_threaded;
      ++report.xnnpack_ops;
    }
  }
  model->target = report.target;
  if (report.xnnpack_ops > 0) {
    model->xnnpack_budget = kRegionAlignment + budget.total();
    model->xnnpack_scratch = scratch;
  }
  report.xnnpack_budget = model->xnnpack_budget;
  return report;
}

}  // namespace floe::conv
