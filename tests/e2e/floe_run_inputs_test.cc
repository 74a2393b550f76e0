// SPDX-License-Identifier: Apache-2.0
// floe-run takes inputs as users hold them: a float64 .npy for a placeholder
// the TF graph declared float64 (floe computes it in float32; the model
// records the graph's dtype as Tensor.source_dtype), numpy's default int64 for
// an int32 input, float64 for a float32 one; each with a note on stderr. A
// conversion that would change a value is refused naming the value, and an
// array of another element count names the --input-shape to convert with.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>

#include "runtime/tools/input_conversion.h"
#include "runtime/tools/npy.h"
#include "tests/converter/support/tf_graph_text.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

using G = TfGraphText;

struct Fixture {
  std::string dir, model;
};

// y = x * 2 (float64 in the graph), k = n + 1 (int32), f = z * 3 (float32).
Fixture convert_model() {
  G g;
  g.placeholder("x", "DT_DOUBLE", {2, 3});
  g.placeholder("n", "DT_INT32", {3});
  g.placeholder("z", "DT_FLOAT", {2});
  g.node("two", "Const", {}, {G::type("dtype", "DT_DOUBLE"), "attr { key: \"value\" value { tensor { dtype: DT_DOUBLE tensor_shape {} double_val: 2 } } }"});
  g.constant("one", "DT_INT32", {}, {1});
  g.constant("three", "DT_FLOAT", {}, {3});
  g.node("y", "Mul", {"x", "two"}, {G::type("T", "DT_DOUBLE")});
  g.node("k", "AddV2", {"n", "one"}, {G::type("T", "DT_INT32")});
  g.node("f", "Mul", {"z", "three"}, {G::type("T", "DT_FLOAT")});
  Fixture fx;
  fx.dir = make_temp_dir();
  fx.model = fx.dir + "/m.floe";
  const CommandResult r = run_command(tool_path("floe-convert") + " --graph " + g.write(fx.dir + "/g.pbtxt") +
                                      " --outputs y,k,f -o " + fx.model);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return fx;
}

template <typename T>
std::string save(const Fixture& fx, const std::string& name, DType dtype, std::vector<int64_t> shape,
                 const std::vector<T>& values) {
  const std::string path = fx.dir + "/" + name + ".npy";
  tools::write_npy(path, dtype, shape, values.data());
  return path;
}

CommandResult run(const Fixture& fx, const std::string& x, const std::string& n, const std::string& z) {
  return run_command(tool_path("floe-run") + " " + fx.model + " --input x=" + x + " --input n=" + n +
                     " --input z=" + z + " --output-dir " + fx.dir);
}

TEST(FloeRunInputs, ConvertsWhatNumpyHoldsWithANote) {
  const Fixture fx = convert_model();
  const std::string x = save<double>(fx, "x64", DType::kFloat64, {2, 3}, {0.5, -1.25, 3, 4, 1e-3, 6});
  const std::string n = save<int64_t>(fx, "n64", DType::kInt64, {3}, {-2147483648LL, 0, 2147483646LL});
  const std::string z = save<double>(fx, "z64", DType::kFloat64, {2}, {1.5, -2});
  const CommandResult r = run(fx, x, n, z);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("x64.npy: float64 converted to float32 for input 'x:0' (the TF graph's float64; "
                          "floe computes it in float32)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("n64.npy: int64 converted to int32 for input 'n:0' (every value unchanged)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("z64.npy: float64 converted to float32 for input 'z:0'\n"), std::string::npos)
      << r.output;

  const tools::NpyArray y = tools::read_npy(fx.dir + "/y.npy");
  ASSERT_EQ(y.dtype, DType::kFloat32);
  const float* yv = reinterpret_cast<const float*>(y.data.data());
  EXPECT_EQ(std::vector<float>(yv, yv + 6), (std::vector<float>{1, -2.5f, 6, 8, 2e-3f, 12}));
  const tools::NpyArray k = tools::read_npy(fx.dir + "/k.npy");
  ASSERT_EQ(k.dtype, DType::kInt32);
  const int32_t* kv = reinterpret_cast<const int32_t*>(k.data.data());
  EXPECT_EQ(std::vector<int32_t>(kv, kv + 3), (std::vector<int32_t>{-2147483647, 1, 2147483647}));
  const tools::NpyArray f = tools::read_npy(fx.dir + "/f.npy");
  const float* fv = reinterpret_cast<const float*>(f.data.data());
  EXPECT_EQ(std::vector<float>(fv, fv + 2), (std::vector<float>{4.5f, -6}));
}

TEST(FloeRunInputs, RefusesConversionsThatChangeAValue) {
  const Fixture fx = convert_model();
  const std::string x = save<double>(fx, "x", DType::kFloat64, {2, 3}, {1, 2, 3, 4, 5, 6});
  const std::string z = save<float>(fx, "z", DType::kFloat32, {2}, {1, 2});
  {
    const std::string n = save<int64_t>(fx, "n_big", DType::kInt64, {3}, {1, 1LL << 40, 3});
    const CommandResult r = run(fx, x, n, z);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("n_big.npy: value 1099511627776 at flat index 1 is outside the range of int32 "
                            "[-2147483648, 2147483647]; input 'n:0' is int32 [3]"),
              std::string::npos)
        << r.output;
  }
  {
    const std::string n = save<double>(fx, "n_frac", DType::kFloat64, {3}, {1, 2, 2.5});
    const CommandResult r = run(fx, x, n, z);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("n_frac.npy: value 2.5 at flat index 2 is not an integer"), std::string::npos)
        << r.output;
  }
  {
    const std::string zi = save<int32_t>(fx, "z_int", DType::kInt32, {2}, {16777217, 0});
    const std::string n = save<int32_t>(fx, "n", DType::kInt32, {3}, {1, 2, 3});
    const CommandResult r = run(fx, x, n, zi);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("z_int.npy: value 16777217 at flat index 0 is not exactly representable in float32"),
              std::string::npos)
        << r.output;
  }
}

TEST(FloeRunInputs, WrongShapeNamesTheInputShapeToConvertWith) {
  const Fixture fx = convert_model();
  const std::string x = save<double>(fx, "x33", DType::kFloat64, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const std::string n = save<int32_t>(fx, "n", DType::kInt32, {3}, {1, 2, 3});
  const std::string z = save<float>(fx, "z", DType::kFloat32, {2}, {1, 2});
  const CommandResult r = run(fx, x, n, z);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("x33.npy: holds float64 [3,3] (9 values); input 'x:0' is float32 [2,3] (6 values): "
                          "convert the model with --input-shape x=3,3 to run this shape"),
            std::string::npos)
      << r.output;
}

// The int8 inputs of a quantized model take int8, or float32 reals with
// --quantize (floe-run quantizes them); other dtypes are refused.
TEST(FloeRunInputs, QuantizedInputsAndBooleansAreNotGuessed) {
  int8_t q[2] = {0, 0};
  tools::InputTarget target;
  target.name = "images";
  target.dtype = DType::kInt8;
  target.shape = {2};
  target.quantized = true;
  target.data = q;
  const double reals[2] = {0.25, -0.5};
  try {
    tools::convert_input(reals, DType::kFloat64, {2}, "reals.npy", target);
    ADD_FAILURE() << "float64 into a quantized int8 input was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("pass float32 real values with --quantize (floe-run then quantizes them"), std::string::npos)
        << e.what();
  }
  const int8_t ready[2] = {-3, 7};
  EXPECT_EQ(tools::convert_input(ready, DType::kInt8, {1, 2}, "q.npy", target), "");
  EXPECT_EQ(q[0], -3);
  EXPECT_EQ(q[1], 7);

  uint8_t flags[3] = {0, 0, 0};
  target = tools::InputTarget{};
  target.name = "mask";
  target.dtype = DType::kBool;
  target.shape = {3};
  target.data = flags;
  const int64_t ones[3] = {1, 0, 1};
  EXPECT_NE(tools::convert_input(ones, DType::kInt64, {3}, "m.npy", target), "");
  EXPECT_EQ(flags[0] + 2 * flags[1] + 4 * flags[2], 5);
  const int64_t two[3] = {1, 2, 0};
  EXPECT_THROW(tools::convert_input(two, DType::kInt64, {3}, "m.npy", target), std::runtime_error);
}

}  // namespace
}  // namespace floe::testing
