// SPDX-License-Identifier: Apache-2.0
// FFT, IFFT, RFFT, IRFFT over the innermost dim, and the complex helpers
// Complex, Real, Imag, ComplexAbs.
//
// floe has no complex dtype. A complex64 tensor is carried as float32 with a
// last dim of 2, (real, imaginary) interleaved — complex64's own byte layout —
// and TensorInfo::complex marks it, so only the ops of this file read it (the
// driver refuses any other reader). The model holds float32 tensors only; the
// runtime needs no complex kernel. A complex graph input or output is that
// float32 tensor marked Tensor.complex, fed and fetched as complex64 bytes.
//
// Each transform is a DFT written as one matrix product: the converter computes
// the [in, out] matrix of cosines and sines (in double, angles reduced modulo
// the length first) and the device runs MATMUL, the kernel every backend
// already optimises. It costs in*out weights: RFFT of length n takes
// n x (n+2) floats (n = 512: 1.05 MB), FFT 4 n^2. RFFT's zero padding or
// cropping to fft_length, and IRFFT's Hermitian extension, are rows of the
// matrix. Against numpy.fft in double, errors stay below 1e-5 of the input's
// L1 norm per output (float32 dot products of length n).
#include <cmath>

#include "converter/ir/tf_dtype.h"
#include "converter/ir/attrs.h"
#include "converter/ir/limits.h"
#include "converter/ops/evaluate.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

void expect_complex(const NodeContext& ctx, int i) {
  if (!ctx.input(i).complex) {
    ctx.fail("input " + std::to_string(i) + " must be complex64, got " + dtype_name(ctx.input(i).dtype));
  }
}
void expect_real(const NodeContext& ctx, int i) {
  if (ctx.input(i).complex || ctx.input(i).dtype != DType::kFloat32) {
    ctx.fail("input " + std::to_string(i) + " must be float32 (or float64), got " +
             (ctx.input(i).complex ? std::string("complex64") : std::string(dtype_name(ctx.input(i).dtype))));
  }
}

TensorInfo complex_info(std::vector<int64_t> tf_shape) {
  tf_shape.push_back(2);
  TensorInfo info{DType::kFloat32, std::move(tf_shape), nullptr};
  info.complex = true;
  return info;
}
// TF's shape of a complex tensor (the pair dim dropped).
std::vector<int64_t> tf_shape(const TensorInfo& info) {
  std::vector<int64_t> s = info.shape;
  if (info.complex) s.pop_back();
  return s;
}

int64_t fft_length(const NodeContext& ctx) {
  const std::vector<int64_t> v = ctx.constant_ints(1, "fft_length");
  if (v.size() != 1) ctx.fail("fft_length must hold one value (a 1-D transform), has " + std::to_string(v.size()));
  if (v[0] < 1) ctx.fail("fft_length must be positive, got " + std::to_string(v[0]));
  return v[0];
}

// The inner dim the transform reads; leading dims may be anything non-empty.
int64_t inner_dim(const NodeContext& ctx) {
  const std::vector<int64_t> s = tf_shape(ctx.input(0));
  if (s.empty()) ctx.fail("input must have rank >= 1 (the transform runs over its innermost dim)");
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  if (n == 0) ctx.fail("input " + shape_to_string(s) + " is empty");
  return s.back();
}

// The [rows, cols] float32 DFT matrix must fit one constant tensor; checked at
// inference, before anything is allocated.
void check_matrix(const NodeContext& ctx, int64_t rows, int64_t cols) {
  const double bytes = static_cast<double>(rows) * static_cast<double>(cols) * sizeof(float);
  if (bytes > static_cast<double>(kMaxTensorBytes)) {
    ctx.fail("its DFT matrix [" + std::to_string(rows) + ", " + std::to_string(cols) + "] would take " +
             byte_count(bytes) + " bytes, over the " + std::to_string(kMaxTensorBytes) +
             "-byte limit of one constant");
  }
}

// cos and sin of 2 pi k t / n, exact for the multiples of a quarter turn.
void twiddle(int64_t k, int64_t t, int64_t n, double* c, double* s) {
  const int64_t r = (k % n) * (t % n) % n;
  if (4 * r % n == 0) {
    static const double kCos[4] = {1, 0, -1, 0};
    static const double kSin[4] = {0, 1, 0, -1};
    *c = kCos[4 * r / n];
    *s = kSin[4 * r / n];
    return;
  }
  const double a = kTwoPi * static_cast<double>(r) / static_cast<double>(n);
  *c = std::cos(a);
  *s = std::sin(a);
}

HostTensor matrix(int64_t rows, int64_t cols, const std::vector<double>& values) {
  HostTensor t;
  t.dtype = DType::kFloat32;
  t.shape = {rows, cols};
  t.data.resize(values.size() * sizeof(float));
  for (size_t i = 0; i < values.size(); ++i) t.as<float>()[i] = static_cast<float>(values[i]);
  return t;
}

// Output 0 = input 0 (its inner `rows` numbers per row) times `m` [rows, cols].
void lower_as_matmul(LowerContext& ctx, const HostTensor& m) {
  const int64_t rows = m.shape[0], cols = m.shape[1];
  int64_t total = 1;
  for (int64_t d : ctx.input(0).shape) total *= d;
  const int64_t batch = total / rows;
  const int flat = ctx.reshaped_value(ctx.input_value(0), {batch, rows}, "rows");
  const int weights = ctx.constant_value("dft_matrix", m);
  const int product = ctx.new_value(DType::kFloat32, {batch, cols}, "dft");
  ctx.add_op(schema::OpCode::MATMUL, {flat, weights}, {product}, LowerContext::options(schema::MatMulOptionsT{}));
  ctx.add_op(schema::OpCode::RESHAPE, {product}, {ctx.output_value(0)});
}

// ---- FFT / IFFT: complex [.., n] -> complex [.., n] --------------------------
std::vector<TensorInfo> infer_fft(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  expect_complex(ctx, 0);
  const int64_t n = inner_dim(ctx);
  check_matrix(ctx, 2 * n, 2 * n);
  return {complex_info(tf_shape(ctx.input(0)))};
}

template <bool kInverse>
void lower_fft(LowerContext& ctx) {
  const int64_t n = inner_dim(ctx);
  // out_k = sum_t x_t e^{-+i 2 pi k t / n} (IFFT: + and a 1/n scale).
  const double sign = kInverse ? -1.0 : 1.0, scale = kInverse ? 1.0 / static_cast<double>(n) : 1.0;
  std::vector<double> m(static_cast<size_t>(4 * n * n));
  const auto at = [&](int64_t row, int64_t col) -> double& { return m[static_cast<size_t>(row * 2 * n + col)]; };
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t k = 0; k < n; ++k) {
      double c, s;
      twiddle(k, t, n, &c, &s);
      s *= sign;
      at(2 * t, 2 * k) = c * scale;        // re_t -> re_k
      at(2 * t + 1, 2 * k) = s * scale;    // im_t -> re_k
      at(2 * t, 2 * k + 1) = -s * scale;   // re_t -> im_k
      at(2 * t + 1, 2 * k + 1) = c * scale;
    }
  }
  lower_as_matmul(ctx, matrix(2 * n, 2 * n, m));
}

// ---- RFFT: float [.., L] -> complex [.., n/2+1], input cropped/padded to n ----
std::vector<TensorInfo> infer_rfft(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  expect_real(ctx, 0);
  check_matrix(ctx, inner_dim(ctx), 2 * (fft_length(ctx) / 2 + 1));
  std::vector<int64_t> s = tf_shape(ctx.input(0));
  s.back() = fft_length(ctx) / 2 + 1;
  return {complex_info(s)};
}

void lower_rfft(LowerContext& ctx) {
  const int64_t in = inner_dim(ctx), n = fft_length(ctx), bins = n / 2 + 1;
  std::vector<double> m(static_cast<size_t>(in * 2 * bins), 0.0);
  for (int64_t t = 0; t < std::min(in, n); ++t) {  // samples past n are cropped: zero rows
    for (int64_t k = 0; k < bins; ++k) {
      double c, s;
      twiddle(k, t, n, &c, &s);
      m[static_cast<size_t>(t * 2 * bins + 2 * k)] = c;
      m[static_cast<size_t>(t * 2 * bins + 2 * k + 1)] = -s;
    }
  }
  lower_as_matmul(ctx, matrix(in, 2 * bins, m));
}

// ---- IRFFT: complex [.., m] -> float [.., n], m cropped/padded to n/2+1 -------
std::vector<TensorInfo> infer_irfft(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  expect_complex(ctx, 0);
  check_matrix(ctx, 2 * inner_dim(ctx), fft_length(ctx));
  std::vector<int64_t> s = tf_shape(ctx.input(0));
  s.back() = fft_length(ctx);
  return {TensorInfo{DType::kFloat32, s, nullptr}};
}

void lower_irfft(LowerContext& ctx) {
  const int64_t bins_in = inner_dim(ctx), n = fft_length(ctx), bins = n / 2 + 1;
  // x_t = (1/n) sum_k w_k (re_k cos - im_k sin), the bins above n/2 being the
  // conjugates of those below: w = 2, except 1 for bin 0 and (n even) bin n/2,
  // whose imaginary parts meet sin = 0 and are ignored, as TF and numpy do.
  std::vector<double> m(static_cast<size_t>(2 * bins_in * n), 0.0);
  for (int64_t k = 0; k < std::min(bins_in, bins); ++k) {
    const double w = (k == 0 || 2 * k == n) ? 1.0 : 2.0;
    for (int64_t t = 0; t < n; ++t) {
      double c, s;
      twiddle(k, t, n, &c, &s);
      m[static_cast<size_t>(2 * k * n + t)] = w * c / static_cast<double>(n);
      m[static_cast<size_t>((2 * k + 1) * n + t)] = -w * s / static_cast<double>(n);
    }
  }
  lower_as_matmul(ctx, matrix(2 * bins_in, n, m));
}

// ---- Complex(real, imag), broadcasting like TF's binary ops --------------------
std::vector<TensorInfo> infer_complex(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  expect_real(ctx, 0);
  expect_real(ctx, 1);
  return {complex_info(broadcast_shapes(ctx, ctx.input(0).shape, ctx.input(1).shape))};
}

void lower_complex(LowerContext& ctx) {
  const std::vector<int64_t> out = tf_shape(ctx.output_info(0));
  std::vector<int64_t> column = out;
  column.push_back(1);
  std::vector<int> parts;
  for (int i = 0; i < 2; ++i) {
    int v = ctx.input_value(i);
    if (ctx.input(i).shape != out) {  // broadcast by adding zeros of the output's shape
      HostTensor zeros;
      zeros.dtype = DType::kFloat32;
      zeros.shape = out;
      zeros.data.assign(static_cast<size_t>(zeros.num_elements()) * sizeof(float), 0);
      const int z = ctx.constant_value(i == 0 ? "real_zeros" : "imag_zeros", std::move(zeros));
      const int b = ctx.new_value(DType::kFloat32, out, i == 0 ? "real_broadcast" : "imag_broadcast");
      ctx.add_op(schema::OpCode::ADD, {v, z}, {b});
      v = b;
    }
    parts.push_back(ctx.reshaped_value(v, column, i == 0 ? "real" : "imag"));
  }
  schema::ConcatOptionsT o;
  o.axis = static_cast<int32_t>(out.size());
  ctx.add_op(schema::OpCode::CONCAT, parts, {ctx.output_value(0)}, LowerContext::options(o));
}

// ---- Real, Imag: one half of each pair ----------------------------------------
std::vector<TensorInfo> infer_part(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  expect_complex(ctx, 0);
  return {TensorInfo{DType::kFloat32, tf_shape(ctx.input(0)), nullptr}};
}

template <int kPart>
void lower_part(LowerContext& ctx) {
  HostTensor index;
  index.dtype = DType::kInt32;
  index.data.resize(sizeof(int32_t));
  index.as<int32_t>()[0] = kPart;
  schema::GatherOptionsT o;
  o.axis = static_cast<int32_t>(ctx.input(0).shape.size() - 1);
  ctx.add_op(schema::OpCode::GATHER, {ctx.input_value(0), ctx.constant_value("part", std::move(index))},
             {ctx.output_value(0)}, LowerContext::options(o));
}

// ---- ComplexAbs: sqrt(re^2 + im^2) ---------------------------------------------
void lower_complex_abs(LowerContext& ctx) {
  const int squares = ctx.new_value(DType::kFloat32, ctx.input(0).shape, "squares");
  ctx.add_op(schema::OpCode::SQUARE, {ctx.input_value(0)}, {squares});
  const int sum = ctx.new_value(DType::kFloat32, tf_shape(ctx.input(0)), "sum_of_squares");
  schema::ReduceOptionsT o;
  o.axes = {static_cast<int32_t>(ctx.input(0).shape.size() - 1)};
  ctx.add_op(schema::OpCode::SUM, {squares}, {sum}, LowerContext::options(o));
  ctx.add_op(schema::OpCode::SQRT, {sum}, {ctx.output_value(0)});
}

}  // namespace

bool reads_complex(const std::string& tf_op) {
  // The Identity-like ops forward the input's TensorInfo, the mark included.
  return tf_op == "FFT" || tf_op == "IFFT" || tf_op == "IRFFT" || tf_op == "Real" || tf_op == "Imag" ||
         tf_op == "ComplexAbs" || tf_op == "Identity" || tf_op == "Snapshot" || tf_op == "StopGradient" ||
         tf_op == "Print";
}

const std::vector<OpHandler>& spectral_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"FFT", infer_fft, lower_fft<false>},
      {"IFFT", infer_fft, lower_fft<true>},
      {"RFFT", infer_rfft, lower_rfft},
      {"IRFFT", infer_irfft, lower_irfft},
      {"Complex", infer_complex, lower_complex},
      {"Real", infer_part, lower_part<0>},
      {"Imag", infer_part, lower_part<1>},
      {"ComplexAbs", infer_part, lower_complex_abs},
  };
  return handlers;
}

}  // namespace floe::conv
