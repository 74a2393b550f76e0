// SPDX-License-Identifier: Apache-2.0
// Complex graph inputs and outputs: a complex64 placeholder fed from a
// complex64 .npy, complex fetches (FFT of a fed spectrum, RFFT of a real
// signal) written by floe-run as complex64 .npy, both marked Tensor.complex
// (TensorView::complex), against numpy.fft in double precision; a complex128
// placeholder computed in complex64, fed with a note; the refusals of real
// values for a complex input and complex values for a real one.
//
// Tolerance: as for the spectral ops, a float32 DFT of length n is within
// 1e-6 * (n + 1) * max|input| of numpy's value.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/core/model.h"
#include "runtime/tools/model_file.h"
#include "runtime/tools/npy.h"
#include "tests/converter/support/tf_graph_text.h"
#include "tests/support/model_runner.h"
#include "tests/support/numpy.h"

namespace floe::testing {
namespace {

using G = TfGraphText;

constexpr int kLength = 8;

// x (complex64 [2, 8]) -> spectrum = FFT(x), signal = IFFT(x), magnitude = |FFT(x)|;
// r (float32 [2, 8]) -> half = RFFT(r, 8).
std::string write_graph(const std::string& dir, const std::string& complex_type) {
  G g;
  g.placeholder("x", complex_type, {2, kLength});
  g.placeholder("r", "DT_FLOAT", {2, kLength});
  g.node("spectrum", "FFT", {"x"}, {G::type("Tcomplex", complex_type)});
  g.node("signal", "IFFT", {"x"}, {G::type("Tcomplex", complex_type)});
  g.node("magnitude", "ComplexAbs", {"spectrum"}, {G::type("T", complex_type), G::type("Tout", "DT_FLOAT")});
  g.constant("length", "DT_INT32", {1}, {kLength});
  g.node("half", "RFFT", {"r", "length"}, {G::type("Treal", "DT_FLOAT"), G::type("Tcomplex", "DT_COMPLEX64")});
  return g.write(dir + "/complex_io.pbtxt");
}

struct Converted {
  std::string dir, model;
  CommandResult result;
};

Converted convert(const std::string& complex_type) {
  Converted c;
  c.dir = make_temp_dir();
  c.model = c.dir + "/complex_io.floe";
  c.result = run_command(tool_path("floe-convert") + " --graph " + write_graph(c.dir, complex_type) +
                         " --outputs spectrum,signal,magnitude,half -o " + c.model);
  return c;
}

// Inputs as numpy holds them and numpy.fft's results (complex128 / float64).
void write_numpy_fixtures(const std::string& dir, const std::string& x_dtype) {
  const std::string script = "import numpy as np\n"
                             "d = '" + dir + "'\n"
                             "rng = np.random.default_rng(7)\n"
                             "x = (rng.uniform(-1, 1, (2, 8)) + 1j * rng.uniform(-1, 1, (2, 8))).astype('" +
                             x_dtype + "')\n"
                             "r = rng.uniform(-1, 1, (2, 8)).astype(np.float32)\n"
                             "np.save(d + '/x.npy', x)\n"
                             "np.save(d + '/r.npy', r)\n"
                             "x = x.astype(np.complex128)\n"
                             "np.save(d + '/want_spectrum.npy', np.fft.fft(x))\n"
                             "np.save(d + '/want_signal.npy', np.fft.ifft(x))\n"
                             "np.save(d + '/want_magnitude.npy', np.abs(np.fft.fft(x)))\n"
                             "np.save(d + '/want_half.npy', np.fft.rfft(r.astype(np.float64)))\n";
  const std::string path = dir + "/fixtures.py";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(script.c_str(), f);
  std::fclose(f);
  const CommandResult r = run_command("/usr/bin/python3 " + path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

std::vector<double> as_doubles(const tools::NpyArray& a) {
  std::vector<double> v;
  const size_t n = a.data.size() / dtype_size(a.dtype);
  for (size_t i = 0; i < n; ++i) {
    v.push_back(a.dtype == DType::kFloat64 ? reinterpret_cast<const double*>(a.data.data())[i]
                                           : reinterpret_cast<const float*>(a.data.data())[i]);
  }
  return v;
}

// floe-run's output `name` is complex (or not) like numpy's and within the tolerance of it.
void expect_output(const std::string& dir, const std::string& name, bool complex, std::vector<int64_t> shape) {
  SCOPED_TRACE(name);
  const tools::NpyArray got = tools::read_npy(dir + "/" + name + ".npy");
  const tools::NpyArray want = tools::read_npy(dir + "/want_" + name + ".npy");
  EXPECT_EQ(got.complex, complex);
  EXPECT_EQ(got.dtype, DType::kFloat32);
  EXPECT_EQ(got.shape, want.shape);
  if (complex) shape.push_back(2);
  EXPECT_EQ(got.shape, shape);
  const std::vector<double> g = as_doubles(got), w = as_doubles(want);
  ASSERT_EQ(g.size(), w.size());
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], 1e-6 * (kLength + 1) * 2) << "at " << i;
}

TEST(ComplexIo, ConvertsAComplexPlaceholderAndComplexFetches) {
  const Converted c = convert("DT_COMPLEX64");
  ASSERT_EQ(c.result.exit_code, 0) << c.result.output;
  EXPECT_NE(c.result.output.find("input   x:0  complex64 [2,8]\n"), std::string::npos) << c.result.output;
  EXPECT_NE(c.result.output.find("output  spectrum:0  complex64 [2,8]\n"), std::string::npos) << c.result.output;
  EXPECT_NE(c.result.output.find("output  half:0  complex64 [2,5]\n"), std::string::npos) << c.result.output;
  EXPECT_NE(c.result.output.find("output  magnitude:0  float32 [2,8]\n"), std::string::npos) << c.result.output;

  // The runtime's API says which tensors are complex: float32 pairs, last dim 2.
  const tools::ModelFile file = tools::read_model_file(c.model);
  Model model;
  ASSERT_EQ(model.Load(file.data.get(), file.size), Status::kOk);
  const TensorView x = model.tensor(static_cast<size_t>(model.schema()->inputs()->Get(0)));
  EXPECT_STREQ(x.name, "x:0");
  EXPECT_TRUE(x.complex);
  EXPECT_EQ(x.dtype, DType::kFloat32);
  ASSERT_EQ(x.shape.rank, 3);
  EXPECT_EQ(x.shape.dim(2), 2);
  const TensorView r = model.tensor(static_cast<size_t>(model.schema()->inputs()->Get(1)));
  EXPECT_FALSE(r.complex);
  const bool want_complex[] = {true, true, false, true};  // spectrum, signal, magnitude, half
  ASSERT_EQ(model.schema()->outputs()->size(), 4u);
  for (uint32_t i = 0; i < 4; ++i) {
    const TensorView out = model.tensor(static_cast<size_t>(model.schema()->outputs()->Get(i)));
    EXPECT_EQ(out.complex, want_complex[i]) << out.name;
  }
  const CommandResult inspect = run_command(tool_path("floe-inspect") + " " + c.model);
  EXPECT_NE(inspect.output.find("x:0 float32 (complex64 pairs) [2,8,2]"), std::string::npos) << inspect.output;
}

TEST(ComplexIo, FloeRunFeedsAndWritesComplex64AsNumpyDoes) {
  FLOE_REQUIRE_NUMPY();
  const Converted c = convert("DT_COMPLEX64");
  ASSERT_EQ(c.result.exit_code, 0) << c.result.output;
  write_numpy_fixtures(c.dir, "complex64");
  const CommandResult r = run_command(tool_path("floe-run") + " " + c.model + " --input x=" + c.dir +
                                      "/x.npy --input r=" + c.dir + "/r.npy --output-dir " + c.dir + " --print");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("note:"), std::string::npos) << r.output;  // complex64 is fed as its bytes
  EXPECT_NE(r.output.find("spectrum:0 complex64 [2,8]\n  ("), std::string::npos) << r.output;
  expect_output(c.dir, "spectrum", true, {2, kLength});
  expect_output(c.dir, "signal", true, {2, kLength});
  expect_output(c.dir, "magnitude", false, {2, kLength});
  expect_output(c.dir, "half", true, {2, kLength / 2 + 1});
}

TEST(ComplexIo, Complex128IsComputedInComplex64WithANote) {
  FLOE_REQUIRE_NUMPY();
  const Converted c = convert("DT_COMPLEX128");
  ASSERT_EQ(c.result.exit_code, 0) << c.result.output;
  EXPECT_NE(c.result.output.find("input   x:0  complex64 [2,8] (complex128 in the graph)"), std::string::npos)
      << c.result.output;
  EXPECT_NE(c.result.output.find("the graph feeds complex128; floe computes it in complex64"), std::string::npos)
      << c.result.output;
  write_numpy_fixtures(c.dir, "complex128");
  const CommandResult r = run_command(tool_path("floe-run") + " " + c.model + " --input x=" + c.dir +
                                      "/x.npy --input r=" + c.dir + "/r.npy --output-dir " + c.dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("x.npy: complex128 converted to complex64 for input 'x:0' (the TF graph's complex128; "
                          "floe computes it in complex64)"),
            std::string::npos)
      << r.output;
  expect_output(c.dir, "spectrum", true, {2, kLength});
  expect_output(c.dir, "half", true, {2, kLength / 2 + 1});
}

TEST(ComplexIo, RefusesRealValuesForAComplexInputAndTheReverse) {
  const Converted c = convert("DT_COMPLEX64");
  ASSERT_EQ(c.result.exit_code, 0) << c.result.output;
  const std::vector<float> pairs(2 * kLength * 2, 0.5f);
  tools::write_npy(c.dir + "/real_x.npy", DType::kFloat32, {2, kLength, 2}, pairs.data());
  tools::write_npy(c.dir + "/complex_r.npy", DType::kFloat32, {2, kLength, 2}, pairs.data(), /*complex=*/true);
  tools::write_npy(c.dir + "/x.npy", DType::kFloat32, {2, kLength, 2}, pairs.data(), /*complex=*/true);
  tools::write_npy(c.dir + "/r.npy", DType::kFloat32, {2, kLength}, pairs.data());
  const std::string run = tool_path("floe-run") + " " + c.model + " --output-dir " + c.dir;
  const CommandResult real_x = run_command(run + " --input x=" + c.dir + "/real_x.npy --input r=" + c.dir + "/r.npy");
  EXPECT_EQ(real_x.exit_code, 2);
  EXPECT_NE(real_x.output.find("real_x.npy: holds float32 [2,8,2]; input 'x:0' is complex64 [2,8]: pass complex "
                               "values, e.g. np.save(path, x.astype(np.complex64))"),
            std::string::npos)
      << real_x.output;
  const CommandResult complex_r =
      run_command(run + " --input x=" + c.dir + "/x.npy --input r=" + c.dir + "/complex_r.npy");
  EXPECT_EQ(complex_r.exit_code, 2);
  EXPECT_NE(complex_r.output.find("complex_r.npy: holds complex64 [2,8]; input 'r:0' is float32 [2,8] and floe-run "
                                  "does not drop imaginary parts: pass real values"),
            std::string::npos)
      << complex_r.output;
  const CommandResult missing = run_command(run + " --input r=" + c.dir + "/r.npy");
  EXPECT_NE(missing.output.find("input 'x:0' (complex64 [2,8]) was not given"), std::string::npos) << missing.output;
}

}  // namespace
}  // namespace floe::testing
