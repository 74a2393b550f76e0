// SPDX-License-Identifier: Apache-2.0
// The Signal front end's spectrum ops (see signal_spectrum.h).
#include "runtime/kernels/reference/signal_spectrum.h"

#include <stddef.h>

#include "runtime/core/quantization.h"
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {

void signal_window(const int16_t* x, const int16_t* weights, int16_t* y, int64_t rows, int32_t n, int32_t shift) {
  for (int64_t r = 0; r < rows; ++r) {
    const ptrdiff_t base = static_cast<ptrdiff_t>(r) * n;
    for (int32_t i = 0; i < n; ++i) {
      const int32_t v = (int32_t{x[base + i]} * weights[i]) >> shift;
      y[base + i] = static_cast<int16_t>(v < INT16_MIN ? INT16_MIN : v > INT16_MAX ? INT16_MAX : v);
    }
  }
}

int32_t signal_fft_auto_scale(const int16_t* x, int16_t* y, int32_t n) {
  int16_t max = 0;
  for (int32_t i = 0; i < n; ++i) {
    if (x[i] > max) {
      max = x[i];
    } else if (-x[i] > max) {
      max = static_cast<int16_t>(-x[i]);
    }
  }
  int32_t bits = 16 - msb32(static_cast<uint32_t>(int32_t{max})) - 1;
  if (bits < 0) bits = 0;
  for (int32_t i = 0; i < n; ++i) y[i] = static_cast<int16_t>(int32_t{x[i]} * (int32_t{1} << bits));
  return bits;
}

namespace {

// kissfft's FIXED_POINT=16 arithmetic: Q15 products rounded half up, sums
// stored to int16 without saturation.
struct Complex16 {
  int16_t r, i;
};

// The product is formed in 64 bits: with well-formed twiddles it fits in 32
// as kissfft's does, and a hostile table cannot overflow it.
inline int16_t round_q15(int64_t x) { return static_cast<int16_t>((x + (1 << 14)) >> 15); }
inline int16_t q15_mul(int16_t a, int16_t b) { return round_q15(int64_t{a} * b); }
inline Complex16 complex_mul(Complex16 a, Complex16 b) {
  return {round_q15(int64_t{a.r} * b.r - int64_t{a.i} * b.i), round_q15(int64_t{a.r} * b.i + int64_t{a.i} * b.r)};
}
// C_FIXDIV: not a shift but a multiply by the Q15 value of 1/k.
inline Complex16 divide(Complex16 c, int16_t one_over_k) { return {q15_mul(c.r, one_over_k), q15_mul(c.i, one_over_k)}; }
inline Complex16 add(Complex16 a, Complex16 b) {
  return {static_cast<int16_t>(a.r + b.r), static_cast<int16_t>(a.i + b.i)};
}
inline Complex16 sub(Complex16 a, Complex16 b) {
  return {static_cast<int16_t>(a.r - b.r), static_cast<int16_t>(a.i - b.i)};
}

constexpr int16_t kHalf = 32767 / 2, kQuarter = 32767 / 4;

// kf_bfly2 / kf_bfly4 (forward) on one block of radix * m points.
void butterfly2(Complex16* f, const Complex16* tw, int32_t stride, int32_t m) {
  for (int32_t k = 0; k < m; ++k) {
    const Complex16 a = divide(f[k], kHalf), b = divide(f[k + m], kHalf);
    const Complex16 t = complex_mul(b, tw[static_cast<ptrdiff_t>(k) * stride]);
    f[k + m] = sub(a, t);
    f[k] = add(a, t);
  }
}

void butterfly4(Complex16* f, const Complex16* tw, int32_t stride, int32_t m) {
  for (int32_t k = 0; k < m; ++k) {
    Complex16 f0 = divide(f[k], kQuarter);
    const Complex16 f1 = divide(f[k + m], kQuarter), f2 = divide(f[k + 2 * m], kQuarter),
                    f3 = divide(f[k + 3 * m], kQuarter);
    const ptrdiff_t t = static_cast<ptrdiff_t>(k) * stride;
    const Complex16 s0 = complex_mul(f1, tw[t]), s1 = complex_mul(f2, tw[2 * t]), s2 = complex_mul(f3, tw[3 * t]);
    const Complex16 s5 = sub(f0, s1);
    f0 = add(f0, s1);
    const Complex16 s3 = add(s0, s2), s4 = sub(s0, s2);
    f[k + 2 * m] = sub(f0, s3);
    f[k] = add(f0, s3);
    f[k + m] = {static_cast<int16_t>(s5.r + s4.i), static_cast<int16_t>(s5.i - s4.r)};
    f[k + 3 * m] = {static_cast<int16_t>(s5.r - s4.i), static_cast<int16_t>(s5.i + s4.r)};
  }
}

// kissfft factors n = 2^k as radix 4 while 4 divides what is left, then 2.
int32_t factor(int32_t n, int32_t* radix) {
  int32_t stages = 0;
  for (int32_t rest = n; rest > 1; ++stages) {
    radix[stages] = rest % 4 == 0 ? 4 : 2;
    rest /= radix[stages];
  }
  return stages;
}

// kiss_fft's recursive decimation in time, unrolled: the leaves' copies are
// one digit-reversed gather (the samples zero-padded past `length`), then the
// stages' butterflies run innermost first over their disjoint blocks.
void complex_fft(const int16_t* samples, int32_t length, int32_t n, const Complex16* tw, Complex16* out) {
  int32_t radix[16];
  const int32_t stages = factor(n, radix);
  for (int32_t i = 0; i < n; ++i) {
    int32_t source = 0, span = n, stride = 1;
    for (int32_t s = 0; s < stages; ++s) {
      span /= radix[s];  // m of stage s
      source += (i / span) % radix[s] * stride;
      stride *= radix[s];
    }
    const int32_t re = 2 * source, im = re + 1;
    out[i] = {re < length ? samples[re] : int16_t{0}, im < length ? samples[im] : int16_t{0}};
  }
  for (int32_t s = stages - 1; s >= 0; --s) {
    int32_t stride = 1;  // blocks at stage s, and its twiddle stride
    for (int32_t k = 0; k < s; ++k) stride *= radix[k];
    const int32_t block = n / stride, m = block / radix[s];
    for (int32_t b = 0; b < stride; ++b) {
      Complex16* f = out + static_cast<ptrdiff_t>(b) * block;
      if (radix[s] == 4) {
        butterfly4(f, tw, stride, m);
      } else {
        butterfly2(f, tw, stride, m);
      }
    }
  }
}

}  // namespace

void signal_rfft(const RfftParams& p, const int16_t* x, const int16_t* twiddles, const int16_t* super_twiddles,
                 int16_t* out) {
  const int32_t n = p.fft_length / 2;
  const Complex16* tw = reinterpret_cast<const Complex16*>(twiddles);
  const Complex16* st = reinterpret_cast<const Complex16*>(super_twiddles);
  for (int32_t r = 0; r < p.rows; ++r) {
    // The complex FFT fills bins 0..n-1 of the row's output; the split then
    // works in place, pair (k, n - k) at a time, and adds bin n.
    Complex16* f = reinterpret_cast<Complex16*>(out + static_cast<ptrdiff_t>(r) * (p.fft_length + 2));
    complex_fft(x + static_cast<ptrdiff_t>(r) * p.input_length, p.input_length, n, tw, f);
    const Complex16 dc = divide(f[0], kHalf);
    f[0] = {static_cast<int16_t>(dc.r + dc.i), 0};
    f[n] = {static_cast<int16_t>(dc.r - dc.i), 0};
    for (int32_t k = 1; k <= n / 2; ++k) {
      const Complex16 fpk = divide(f[k], kHalf);
      const Complex16 fpnk = divide({f[n - k].r, static_cast<int16_t>(-f[n - k].i)}, kHalf);
      const Complex16 f1k = add(fpk, fpnk), f2k = sub(fpk, fpnk);
      const Complex16 t = complex_mul(f2k, st[k - 1]);
      f[k] = {static_cast<int16_t>((f1k.r + t.r) >> 1), static_cast<int16_t>((f1k.i + t.i) >> 1)};
      f[n - k] = {static_cast<int16_t>((f1k.r - t.r) >> 1), static_cast<int16_t>((t.i - f1k.i) >> 1)};
    }
  }
}

void signal_energy(const int16_t* spectrum, uint32_t* energy, int32_t bins, int32_t start, int32_t end) {
  for (int32_t i = 0; i < bins; ++i) {
    if (i < start || i >= end) {
      energy[i] = 0;
      continue;
    }
    const int32_t re = spectrum[2 * i], im = spectrum[2 * i + 1];
    // Two squares of -32768 pass 2^31: the sum's bits, as TFLM's wrap leaves them.
    energy[i] = static_cast<uint32_t>(re * re) + static_cast<uint32_t>(im * im);
  }
}

}  // namespace floe::ref

// ---- adapters: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {
namespace {

bool is_s16(const TensorView& v) { return v.dtype == DType::kInt16; }

struct WindowParams {
  int32_t shift;
  int32_t length;
  int64_t rows;
};
static_assert(sizeof(WindowParams) == 16, "no padding");

const char* prepare_signal_window(const OpContext& ctx) {
  const auto* o = ctx.op->options_as_SignalWindowOptions();
  if (!has_io(ctx, 2, 1) || o == nullptr) return FLOE_MSG("SIGNAL_WINDOW takes signal and weights, SignalWindowOptions");
  const TensorView &x = ctx.input(0), &w = ctx.input(1), &y = ctx.output(0);
  if (!is_s16(x) || !is_s16(w) || !is_s16(y) || x.shape.rank < 1 || w.shape.rank != 1 ||
      w.shape.dims[0] != x.shape.dims[x.shape.rank - 1] || !dims_equal(x.shape, y.shape)) {
    return FLOE_MSG("SIGNAL_WINDOW takes int16 [..., n] and int16 weights [n] to int16 [..., n]");
  }
  if (o->shift() < 0 || o->shift() > 31) return FLOE_MSG("SIGNAL_WINDOW shift must be in [0, 31]");
  WindowParams& p = ctx.params<WindowParams>();
  p.shift = o->shift();
  p.length = w.shape.dims[0];
  p.rows = x.shape.span(0, x.shape.rank - 1);
  return nullptr;
}

Status eval_signal_window(const PreparedOp& ctx) {
  const WindowParams& p = ctx.params_as<WindowParams>();
  ref::signal_window(data_as<const int16_t>(ctx.input(0)), data_as<const int16_t>(ctx.input(1)), data_as<int16_t>(ctx.output(0)),
                     p.rows, p.length, p.shift);
  return Status::kOk;
}

const char* prepare_signal_fft_auto_scale(const OpContext& ctx) {
  const TensorView &x = ctx.input(0), &y = ctx.output(0), &bits = ctx.output(1);
  if (!has_io(ctx, 1, 2) || !is_s16(x) || x.shape.rank != 1 || !is_s16(y) || !dims_equal(x.shape, y.shape) ||
      bits.dtype != DType::kInt32 || bits.shape.num_elements() != 1) {
    return FLOE_MSG("SIGNAL_FFT_AUTO_SCALE takes int16 [n] to int16 [n] and an int32 scalar");
  }
  return nullptr;
}

Status eval_signal_fft_auto_scale(const PreparedOp& ctx) {
  const TensorView& x = ctx.input(0);
  *data_as<int32_t>(ctx.output(1)) =
      ref::signal_fft_auto_scale(data_as<const int16_t>(x), data_as<int16_t>(ctx.output(0)), x.shape.dims[0]);
  return Status::kOk;
}

const char* prepare_signal_rfft(const OpContext& ctx) {
  const auto* o = ctx.op->options_as_SignalRfftOptions();
  if (!has_io(ctx, 3, 1) || o == nullptr) {
    return FLOE_MSG("SIGNAL_RFFT takes signal, twiddles and super-twiddles, SignalRfftOptions");
  }
  const int32_t length = o->fft_length();
  if (length < 4 || length > 32768 || (length & (length - 1)) != 0) {
    return FLOE_MSG("SIGNAL_RFFT fft_length must be a power of two in [4, 32768]");
  }
  const TensorView &x = ctx.input(0), &tw = ctx.input(1), &st = ctx.input(2), &y = ctx.output(0);
  if (!is_s16(x) || !is_s16(tw) || !is_s16(st) || !is_s16(y) || x.shape.rank < 1 || y.shape.rank != x.shape.rank ||
      tw.shape.num_elements() != length || st.shape.num_elements() != length / 2) {
    return FLOE_MSG("SIGNAL_RFFT takes int16 [..., n], twiddles [fft_length / 2, 2], super-twiddles "
                    "[fft_length / 4, 2] to int16");
  }
  const int last = x.shape.rank - 1;
  for (int d = 0; d < last; ++d) {
    if (x.shape.dims[d] != y.shape.dims[d]) return FLOE_MSG("SIGNAL_RFFT output rows differ from the input's");
  }
  if (x.shape.dims[last] < 1 || x.shape.dims[last] > length || y.shape.dims[last] != length + 2) {
    return FLOE_MSG("SIGNAL_RFFT rows must hold 1..fft_length samples and fft_length + 2 outputs");
  }
  ref::RfftParams& p = ctx.params<ref::RfftParams>();
  p.fft_length = length;
  p.input_length = x.shape.dims[last];
  const int64_t rows = x.shape.span(0, last);
  if (rows > INT32_MAX) return FLOE_MSG("SIGNAL_RFFT has too many rows");
  p.rows = static_cast<int32_t>(rows);
  return nullptr;
}

Status eval_signal_rfft(const PreparedOp& ctx) {
  ref::signal_rfft(ctx.params_as<ref::RfftParams>(), data_as<const int16_t>(ctx.input(0)),
                   data_as<const int16_t>(ctx.input(1)), data_as<const int16_t>(ctx.input(2)), data_as<int16_t>(ctx.output(0)));
  return Status::kOk;
}

struct EnergyParams {
  int32_t start, end;
};

const char* prepare_signal_energy(const OpContext& ctx) {
  const auto* o = ctx.op->options_as_SignalEnergyOptions();
  const TensorView &x = ctx.input(0), &y = ctx.output(0);
  if (!has_io(ctx, 1, 1) || o == nullptr || !is_s16(x) || x.shape.rank != 1 || y.dtype != DType::kUInt32 ||
      y.shape.rank != 1 || int64_t{x.shape.dims[0]} != 2 * int64_t{y.shape.dims[0]}) {
    return FLOE_MSG("SIGNAL_ENERGY takes int16 [2k] to uint32 [k], SignalEnergyOptions");
  }
  if (o->start_index() < 0 || o->start_index() > o->end_index() || o->end_index() > y.shape.dims[0]) {
    return FLOE_MSG("SIGNAL_ENERGY needs 0 <= start_index <= end_index <= bins");
  }
  EnergyParams& p = ctx.params<EnergyParams>();
  p.start = o->start_index();
  p.end = o->end_index();
  return nullptr;
}

Status eval_signal_energy(const PreparedOp& ctx) {
  const EnergyParams& p = ctx.params_as<EnergyParams>();
  const TensorView& y = ctx.output(0);
  ref::signal_energy(data_as<const int16_t>(ctx.input(0)), data_as<uint32_t>(y), y.shape.dims[0], p.start, p.end);
  return Status::kOk;
}

}  // namespace
}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, SIGNAL_WINDOW, ANY, ops::WindowParams, ops::prepare_signal_window, ops::eval_signal_window)
FLOE_KERNEL(REFERENCE, SIGNAL_FFT_AUTO_SCALE, ANY, NoParams, ops::prepare_signal_fft_auto_scale,
            ops::eval_signal_fft_auto_scale)
FLOE_KERNEL(REFERENCE, SIGNAL_RFFT, ANY, ref::RfftParams, ops::prepare_signal_rfft, ops::eval_signal_rfft)
FLOE_KERNEL(REFERENCE, SIGNAL_ENERGY, ANY, ops::EnergyParams, ops::prepare_signal_energy, ops::eval_signal_energy)
