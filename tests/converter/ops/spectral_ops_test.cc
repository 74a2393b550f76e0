// SPDX-License-Identifier: Apache-2.0
// FFT, IFFT, RFFT, IRFFT, Complex, Real, Imag, ComplexAbs
// (converter/ops/spectral_ops.cc): against numpy.fft in double precision for
// lengths that are and are not powers of two, RFFT's cropping and padding to
// fft_length, IRFFT's Hermitian bins; against the TF.js oracle; and the
// refusal of complex tensors floe does not compute (a non-spectral reader).
//
// Tolerance: floe computes each transform as a float32 dot product of length
// n (a DFT matrix the converter writes); every output is within
// 1e-6 * (n + 1) * max|input| of numpy's double-precision value.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "converter/ir/error.h"
#include "tests/converter/ops/convert_graph.h"
#include "tests/converter/support/tfjs_oracle.h"
#include "tests/support/numpy.h"

namespace floe::testing {
namespace {

using G = TfGraphText;

std::string complex_attr(const std::string& key) { return G::type(key, "DT_COMPLEX64"); }

void add_rfft(G& g, const std::string& name, const std::string& input, int64_t n) {
  g.constant(name + "_length", "DT_INT32", {1}, {static_cast<double>(n)});
  g.node(name, "RFFT", {input, name + "_length"}, {G::type("Treal", "DT_FLOAT"), complex_attr("Tcomplex")});
}
void add_irfft(G& g, const std::string& name, const std::string& input, int64_t n) {
  g.constant(name + "_length", "DT_INT32", {1}, {static_cast<double>(n)});
  g.node(name, "IRFFT", {input, name + "_length"}, {G::type("Treal", "DT_FLOAT"), complex_attr("Tcomplex")});
}
void add_complex(G& g, const std::string& name, const std::string& re, const std::string& im) {
  g.node(name, "Complex", {re, im}, {G::type("T", "DT_FLOAT"), complex_attr("Tout")});
}
void add_part(G& g, const std::string& name, const std::string& op, const std::string& input) {
  g.node(name, op, {input}, {complex_attr("T"), G::type("Tout", "DT_FLOAT")});
}

// numpy's result of `op` over the inner dim, as {real, imag} (imag empty for irfft).
std::vector<std::vector<double>> numpy_transform(const std::string& op, int64_t n, const HostTensor& re,
                                                 const HostTensor& im) {
  const std::string dir = make_temp_dir();
  tools::write_npy(dir + "/re.npy", re.dtype, re.shape, re.data.data());
  tools::write_npy(dir + "/im.npy", im.dtype, im.shape, im.data.data());
  const std::string command = "/usr/bin/python3 " FLOE_SOURCE_DIR "/tests/converter/ops/spectral_numpy.py " + op + " " +
                              std::to_string(n) + " " + dir + "/re.npy " + dir + "/im.npy " + dir + "/out";
  const CommandResult r = run_command(command);
  if (r.exit_code != 0) {
    ADD_FAILURE() << command << "\n" << r.output;
    return {};
  }
  std::vector<std::vector<double>> out;
  for (const char* part : {"_re.npy", "_im.npy"}) {
    const std::string path = dir + "/out" + part;
    if (!path_exists(path)) continue;
    const HostTensor t = tensor_of(tools::read_npy(path));
    out.emplace_back(t.as<double>(), t.as<double>() + t.num_elements());
  }
  return out;
}

double max_abs(const HostTensor& t) {
  double m = 0;
  for (float v : as_floats(t)) m = std::max(m, static_cast<double>(std::fabs(v)));
  return m;
}

void expect_close(const HostTensor& got, const std::vector<double>& want, double tolerance, const std::string& what) {
  const std::vector<float> g = as_floats(got);
  ASSERT_EQ(g.size(), want.size()) << what;
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::fabs(g[i] - want[i]));
  EXPECT_LE(worst, tolerance) << what << ": max |floe - numpy| " << worst;
}

TEST(Spectral, RfftMatchesNumpyIncludingCropAndPad) {
  FLOE_REQUIRE_NUMPY();
  // (input length, fft_length): powers of two, odd and even non-powers, crop, pad.
  const std::vector<std::pair<int64_t, int64_t>> cases = {{8, 8},  {16, 16}, {12, 12}, {15, 15}, {7, 7},
                                                          {1, 1},  {10, 6},  {6, 10},  {9, 12},  {48, 48}};
  uint32_t seed = 1;
  for (const auto& [length, n] : cases) {
    SCOPED_TRACE("input length " + std::to_string(length) + ", fft_length " + std::to_string(n));
    G g;
    g.placeholder("x", "DT_FLOAT", {3, length});
    add_rfft(g, "spectrum", "x", n);
    add_part(g, "re", "Real", "spectrum");
    add_part(g, "im", "Imag", "spectrum");
    add_part(g, "magnitude", "ComplexAbs", "spectrum");
    const HostTensor x = random_f32({3, length}, seed++);
    conv::ConvertOptions options;
    options.graph_path = g.write(make_temp_dir() + "/rfft.pbtxt");
    options.outputs = {"re", "im", "magnitude"};
    const auto out = run_model(conv::convert(options).model, {{"x", x}});
    ASSERT_EQ(out.size(), 3u);
    const std::vector<int64_t> bins = {3, n / 2 + 1};
    EXPECT_EQ(out[0].shape, bins);
    EXPECT_EQ(out[2].shape, bins);
    const auto want = numpy_transform("rfft", n, x, x);
    ASSERT_EQ(want.size(), 2u);
    const double tolerance = 1e-6 * static_cast<double>(n + 1) * max_abs(x);
    expect_close(out[0], want[0], tolerance, "real part");
    expect_close(out[1], want[1], tolerance, "imaginary part");
    std::vector<double> magnitude;
    for (size_t i = 0; i < want[0].size(); ++i) magnitude.push_back(std::hypot(want[0][i], want[1][i]));
    expect_close(out[2], magnitude, tolerance, "magnitude");
  }
}

TEST(Spectral, FftAndIfftMatchNumpy) {
  FLOE_REQUIRE_NUMPY();
  uint32_t seed = 100;
  for (int64_t n : {1, 2, 3, 5, 8, 12, 16, 33}) {
    for (const char* op : {"FFT", "IFFT"}) {
      SCOPED_TRACE(std::string(op) + " of length " + std::to_string(n));
      G g;
      g.placeholder("re", "DT_FLOAT", {2, n});
      g.placeholder("im", "DT_FLOAT", {2, n});
      add_complex(g, "z", "re", "im");
      g.node("transform", op, {"z"}, {complex_attr("Tcomplex")});
      add_part(g, "out_re", "Real", "transform");
      add_part(g, "out_im", "Imag", "transform");
      const HostTensor re = random_f32({2, n}, seed++), im = random_f32({2, n}, seed++);
      conv::ConvertOptions options;
      options.graph_path = g.write(make_temp_dir() + "/fft.pbtxt");
      options.outputs = {"out_re", "out_im"};
      const auto out = run_model(conv::convert(options).model, {{"re", re}, {"im", im}});
      ASSERT_EQ(out.size(), 2u);
      EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, n}));
      const auto want = numpy_transform(std::string(op) == "FFT" ? "fft" : "ifft", n, re, im);
      ASSERT_EQ(want.size(), 2u);
      const double tolerance = 1e-6 * static_cast<double>(n + 1) * std::max(max_abs(re), max_abs(im));
      expect_close(out[0], want[0], tolerance, "real part");
      expect_close(out[1], want[1], tolerance, "imaginary part");
    }
  }
}

TEST(Spectral, IrfftMatchesNumpyWithHermitianBins) {
  FLOE_REQUIRE_NUMPY();
  // (bins given, fft_length): n/2+1 bins for even and odd n, fewer (padded), more (cropped).
  const std::vector<std::pair<int64_t, int64_t>> cases = {{5, 8}, {7, 12}, {8, 15}, {4, 7}, {3, 8}, {9, 8}, {1, 1}, {17, 32}};
  uint32_t seed = 200;
  for (const auto& [bins, n] : cases) {
    SCOPED_TRACE(std::to_string(bins) + " bins, fft_length " + std::to_string(n));
    G g;
    g.placeholder("re", "DT_FLOAT", {2, bins});
    g.placeholder("im", "DT_FLOAT", {2, bins});
    add_complex(g, "z", "re", "im");
    add_irfft(g, "signal", "z", n);
    const HostTensor re = random_f32({2, bins}, seed++), im = random_f32({2, bins}, seed++);
    conv::ConvertOptions options;
    options.graph_path = g.write(make_temp_dir() + "/irfft.pbtxt");
    options.outputs = {"signal"};
    const auto out = run_model(conv::convert(options).model, {{"re", re}, {"im", im}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, n}));
    const auto want = numpy_transform("irfft", n, re, im);
    ASSERT_EQ(want.size(), 1u);
    expect_close(out[0], want[0], 1e-6 * static_cast<double>(n + 1) * std::max(max_abs(re), max_abs(im)),
                 "signal");
  }
}

// An audio front end: frames -> RFFT(512) -> ComplexAbs, the magnitude spectrogram.
TEST(Spectral, MagnitudeSpectrogramOfFramesMatchesNumpy) {
  FLOE_REQUIRE_NUMPY();
  G g;
  g.placeholder("frames", "DT_FLOAT", {4, 400});
  add_rfft(g, "spectrum", "frames", 512);
  add_part(g, "magnitude", "ComplexAbs", "spectrum");
  const HostTensor frames = random_f32({4, 400}, 7);
  conv::ConvertOptions options;
  options.graph_path = g.write(make_temp_dir() + "/spectrogram.pbtxt");
  options.outputs = {"magnitude"};
  const conv::ConvertResult converted = conv::convert(options);
  const auto out = run_model(converted.model, {{"frames", frames}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{4, 257}));
  const auto want = numpy_transform("rfft", 512, frames, frames);
  ASSERT_EQ(want.size(), 2u);
  std::vector<double> magnitude;
  for (size_t i = 0; i < want[0].size(); ++i) magnitude.push_back(std::hypot(want[0][i], want[1][i]));
  expect_close(out[0], magnitude, 1e-6 * 513 * max_abs(frames), "magnitude");
}

TEST(Spectral, RfftThenIrfftGivesTheSignalBack) {
  for (int64_t n : {6, 7, 16}) {
    G g;
    g.placeholder("x", "DT_FLOAT", {2, n});
    add_rfft(g, "spectrum", "x", n);
    add_irfft(g, "back", "spectrum", n);
    const HostTensor x = random_f32({2, n}, 11);
    conv::ConvertOptions options;
    options.graph_path = g.write(make_temp_dir() + "/roundtrip.pbtxt");
    options.outputs = {"back"};
    const auto out = run_model(conv::convert(options).model, {{"x", x}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_LE(max_abs_diff(as_floats(out[0]), as_floats(x)), 1e-5f) << "n = " << n;
  }
}

// Complex broadcasts its operands like TF's binary ops; constants fold.
TEST(Spectral, ComplexBroadcastsAndFoldsConstants) {
  G g;
  g.placeholder("re", "DT_FLOAT", {2, 3});
  g.constant("im", "DT_FLOAT", {3}, {1, 2, 3});
  add_complex(g, "z", "re", "im");
  add_part(g, "out_re", "Real", "z");
  add_part(g, "out_im", "Imag", "z");
  add_part(g, "abs", "ComplexAbs", "z");
  g.constant("c_re", "DT_FLOAT", {2}, {3, 0});
  g.constant("c_im", "DT_FLOAT", {2}, {4, -2});
  add_complex(g, "c", "c_re", "c_im");
  add_part(g, "c_abs", "ComplexAbs", "c");
  conv::ConvertOptions options;
  options.graph_path = g.write(make_temp_dir() + "/complex.pbtxt");
  options.outputs = {"out_re", "out_im", "abs", "c_abs"};
  const auto out = run_model(conv::convert(options).model, {{"re", make_f32({2, 3}, {0, 1, -2, 4, 0, 3})}});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(as_floats(out[0]), (std::vector<float>{0, 1, -2, 4, 0, 3}));
  EXPECT_EQ(as_floats(out[1]), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  EXPECT_LE(max_abs_diff(as_floats(out[2]), {1, std::sqrt(5.0f), std::sqrt(13.0f), std::sqrt(17.0f), 2,
                                              std::sqrt(18.0f)}),
            1e-6f);
  EXPECT_EQ(as_floats(out[3]), (std::vector<float>{5, 2}));
}

// A complex fetch is a complex model output (tests/e2e/complex_io_test.cc);
// other ops reading complex values are refused.
TEST(Spectral, FetchesComplexAndRefusesOtherReaders) {
  G g;
  g.placeholder("x", "DT_FLOAT", {8});
  add_rfft(g, "spectrum", "x", 8);
  g.node("doubled", "Add", {"spectrum", "spectrum"}, {complex_attr("T")});
  EXPECT_EQ(conversion_error(g, "fetched", {"spectrum"}), "(no error)");
  const std::string add = conversion_error(g, "refused", {"doubled"});
  EXPECT_NE(add.find("node 'doubled' (op Add): input 0 ('spectrum:0') is complex64, which floe computes only inside "
                     "FFT, IFFT, RFFT, IRFFT, Real, Imag and ComplexAbs"),
            std::string::npos)
      << add;
}

TEST(Spectral, RefusesWrongOperands) {
  {
    G g;
    g.placeholder("x", "DT_FLOAT", {8});
    add_part(g, "re", "Real", "x");
    const std::string e = conversion_error(g, "refused", {"re"});
    EXPECT_NE(e.find("node 're' (op Real): input 0 must be complex64, got float32"), std::string::npos) << e;
  }
  {
    G g;
    g.placeholder("x", "DT_FLOAT", {8});
    g.placeholder("n", "DT_INT32", {1});
    g.node("spectrum", "RFFT", {"x", "n"}, {G::type("Treal", "DT_FLOAT"), complex_attr("Tcomplex")});
    add_part(g, "abs", "ComplexAbs", "spectrum");
    const std::string e = conversion_error(g, "refused", {"abs"});
    EXPECT_NE(e.find("fft_length (input 1, 'n:0') must be known at conversion time"), std::string::npos) << e;
  }
  {
    G g;
    g.placeholder("x", "DT_FLOAT", {8});
    add_rfft(g, "spectrum", "x", 0);
    add_part(g, "abs", "ComplexAbs", "spectrum");
    const std::string e = conversion_error(g, "refused", {"abs"});
    EXPECT_NE(e.find("fft_length must be positive, got 0"), std::string::npos) << e;
  }
  {
    G g;
    g.placeholder("x", "DT_FLOAT", {1, 1 << 20});
    add_rfft(g, "spectrum", "x", 1 << 20);
    add_part(g, "abs", "ComplexAbs", "spectrum");
    const std::string e = conversion_error(g, "refused", {"abs"});
    EXPECT_NE(e.find("node 'spectrum' (op RFFT): its DFT matrix [1048576, 1048578] would take 4398054899712 bytes"),
              std::string::npos)
        << e;
  }
}

// TF.js's GraphModel runs the same graph (its RFFT takes the input's length as
// fft_length, so the oracle graphs do too).
TEST(Spectral, MatchesTfjsOracle) {
  FLOE_REQUIRE_TFJS_ORACLE();
  OracleGraph c;
  c.graph.placeholder("x", "DT_FLOAT", {3, 12});
  c.graph.placeholder("re", "DT_FLOAT", {2, 6});
  c.graph.placeholder("im", "DT_FLOAT", {2, 6});
  add_rfft(c.graph, "spectrum", "x", 12);
  add_part(c.graph, "magnitude", "ComplexAbs", "spectrum");
  add_part(c.graph, "spectrum_re", "Real", "spectrum");
  add_part(c.graph, "spectrum_im", "Imag", "spectrum");
  add_irfft(c.graph, "back", "spectrum", 12);
  add_complex(c.graph, "z", "re", "im");
  c.graph.node("forward", "FFT", {"z"}, {complex_attr("Tcomplex")});
  c.graph.node("inverse", "IFFT", {"z"}, {complex_attr("Tcomplex")});
  add_part(c.graph, "forward_re", "Real", "forward");
  add_part(c.graph, "forward_im", "Imag", "forward");
  add_part(c.graph, "inverse_re", "Real", "inverse");
  add_part(c.graph, "inverse_im", "Imag", "inverse");
  c.inputs = {{"x", random_f32({3, 12}, 21)}, {"re", random_f32({2, 6}, 22)}, {"im", random_f32({2, 6}, 23)}};
  c.outputs = {"magnitude", "spectrum_re", "spectrum_im", "back", "forward_re", "forward_im", "inverse_re",
               "inverse_im"};
  expect_matches_tfjs(c, 2e-5);
}

}  // namespace
}  // namespace floe::testing
