// SPDX-License-Identifier: Apache-2.0
// Scatter ops against TensorFlow.js (../shared/tools/peers/tfjs_oracle.js):
// ScatterNd and TensorScatterUpdate as TF.js runs them; TensorScatterAdd/Sub/Min/Max
// and the fetched variable updates (Scatter*, ScatterNd* on an Assign-initialized
// variable) against the TF.js ops that compute the same value. Each graph is built
// here in text form and written as a binary GraphDef for the oracle; the test skips
// visibly without node or the peers' node_modules. Without the oracle: fed
// out-of-range indices fail Invoke(), constant ones are refused at conversion.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "runtime/core/interpreter.h"
#include "runtime/tools/error_text.h"
#include "tests/converter/support/tf1_test_util.h"
#include "tests/converter/support/tfjs_oracle.h"
#include "tests/support/loaded_model.h"

namespace floe::testing {
namespace {

std::string dims_text(const std::vector<int64_t>& shape) {
  std::string text;
  for (int64_t d : shape) text += "dim { size: " + std::to_string(d) + " } ";
  return text;
}

std::string int_const(const std::string& name, const std::vector<int64_t>& shape, const std::vector<int>& values) {
  std::string vals;
  for (int v : values) vals += "int_val: " + std::to_string(v) + " ";
  return "node { name: '" + name + "' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: "
         "'value' value { tensor { dtype: DT_INT32 tensor_shape { " + dims_text(shape) + "} " + vals + "} } } }\n";
}

std::string input(const std::string& name, const std::string& dtype, const std::vector<int64_t>& shape) {
  return placeholder(name, dtype, dims_text(shape));
}

// A node with the inputs given and the type attrs given ("T: DT_FLOAT").
std::string op_node(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
                    const std::vector<std::pair<std::string, std::string>>& types) {
  std::string text = "node { name: '" + name + "' op: '" + op + "' ";
  for (const std::string& in : inputs) text += "input: '" + in + "' ";
  for (const auto& [attr, type] : types) text += "attr { key: '" + attr + "' value { type: " + type + " } } ";
  return text + "}\n";
}

// Converts `graph` for `output` and checks floe's output equals TF.js's for
// `oracle_graph` / `oracle_output` on the same inputs: bit for bit by default
// (these ops only move values or apply one operation per element), else within
// `tolerance` (an equivalent TF.js graph that adds duplicate rows first, where
// TF and floe add them to the tensor one by one: a rounding apart).
void expect_matches_oracle(const std::string& graph, const std::string& output, const std::string& oracle_graph,
                           const std::string& oracle_output, const std::map<std::string, HostTensor>& inputs,
                           float tolerance = 0.0f) {
  const ConvertOutcome r = try_convert(text_graph_options(graph, {output}));
  ASSERT_TRUE(r.error.empty()) << r.error;
  const std::vector<HostTensor> got = run_model(r.model, inputs);
  const std::vector<HostTensor> want = run_tfjs_oracle(oracle_graph, inputs, {oracle_output});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(want.size(), 1u);
  EXPECT_EQ(got[0].shape, want[0].shape) << output;
  EXPECT_EQ(got[0].dtype, want[0].dtype) << output;
  if (tolerance == 0.0f) {
    EXPECT_EQ(got[0].data, want[0].data) << output << "\n" << r.summary;
  } else {
    EXPECT_LE(max_abs_diff(as_floats(got[0]), as_floats(want[0])), tolerance) << output;
  }
}

const HostTensor kUpdates = random_f32({4, 3}, 7, -4.0f, 4.0f);

// A converted model loaded and initialised, for tests that feed it bytes by hand.
struct Initialized {
  std::unique_ptr<LoadedModel> loaded;
  tools::AlignedBytes arena;
  std::unique_ptr<Interpreter> interpreter;
  Status status = Status::kOk;  // Load's, else Init's
};
std::unique_ptr<Initialized> initialized(const std::vector<uint8_t>& model) {
  auto run = std::make_unique<Initialized>();
  run->loaded = load_model(model);
  run->status = run->loaded->status;
  if (run->status != Status::kOk) return run;
  const size_t arena_size = static_cast<size_t>(run->loaded->model.arena_size());
  run->arena = tools::aligned_bytes(arena_size);
  run->interpreter = std::make_unique<Interpreter>(run->loaded->model, run->arena.get(), arena_size);
  run->status = run->interpreter->Init();
  return run;
}

TEST(ScatterOracle, ScatterNdSumsDuplicateRowsLikeTfjs) {
  FLOE_REQUIRE_TFJS_ORACLE();
  const std::string graph = input("indices", "DT_INT32", {4, 1}) + input("updates", "DT_FLOAT", {4, 3}) +
                            int_const("shape", {2}, {5, 3}) +
                            op_node("scatter", "ScatterNd", {"indices", "updates", "shape"},
                                    {{"T", "DT_FLOAT"}, {"Tindices", "DT_INT32"}});
  expect_matches_oracle(graph, "scatter", graph, "scatter", {{"indices", make_i32({4, 1}, {3, 0, 3, 4})}, {"updates", kUpdates}});
}

TEST(ScatterOracle, ScatterNdIntegerUpdatesAtDepthTwo) {
  FLOE_REQUIRE_TFJS_ORACLE();
  const std::string graph = input("indices", "DT_INT32", {3, 2}) + input("updates", "DT_INT32", {3, 2}) +
                            int_const("shape", {3}, {4, 3, 2}) +
                            op_node("scatter", "ScatterNd", {"indices", "updates", "shape"},
                                    {{"T", "DT_INT32"}, {"Tindices", "DT_INT32"}});
  expect_matches_oracle(graph, "scatter", graph, "scatter",
                        {{"indices", make_i32({3, 2}, {0, 2, 3, 1, 0, 2})}, {"updates", make_i32({3, 2}, {5, -6, 7, 8, 100, 1})}});
}

TEST(ScatterOracle, TensorScatterUpdateLastDuplicateWinsLikeTfjs) {
  FLOE_REQUIRE_TFJS_ORACLE();
  const std::string graph = input("tensor", "DT_FLOAT", {5, 3}) + int_const("indices", {4, 1}, {1, 4, 1, 0}) +
                            input("updates", "DT_FLOAT", {4, 3}) +
                            op_node("scatter", "TensorScatterUpdate", {"tensor", "indices", "updates"},
                                    {{"T", "DT_FLOAT"}, {"Tindices", "DT_INT32"}});
  expect_matches_oracle(graph, "scatter", graph, "scatter",
                        {{"tensor", random_f32({5, 3}, 3)}, {"updates", kUpdates}});
}

// TensorScatterAdd/Sub(t, i, u) = t +/- ScatterNd(i, u, shape(t)), duplicates summed.
TEST(ScatterOracle, TensorScatterAddAndSubAgainstScatterNd) {
  FLOE_REQUIRE_TFJS_ORACLE();
  const std::string inputs = input("tensor", "DT_FLOAT", {5, 3}) + input("indices", "DT_INT32", {4, 1}) +
                             input("updates", "DT_FLOAT", {4, 3}) + int_const("shape", {2}, {5, 3});
  const std::map<std::string, HostTensor> feeds = {
      {"tensor", random_f32({5, 3}, 4)}, {"indices", make_i32({4, 1}, {2, 2, 0, 4})}, {"updates", kUpdates}};
  for (const char* tf_op : {"TensorScatterAdd", "TensorScatterSub"}) {
    const std::string graph = inputs + op_node("scatter", tf_op, {"tensor", "indices", "updates"},
                                               {{"T", "DT_FLOAT"}, {"Tindices", "DT_INT32"}});
    const std::string oracle =
        inputs + op_node("nd", "ScatterNd", {"indices", "updates", "shape"}, {{"T", "DT_FLOAT"}, {"Tindices", "DT_INT32"}}) +
        binary("scatter", std::string(tf_op) == "TensorScatterAdd" ? "AddV2" : "Sub", "tensor", "nd");
    SCOPED_TRACE(tf_op);
    expect_matches_oracle(graph, "scatter", oracle, "scatter", feeds, 1e-6f);
  }
}

// TensorScatterMin/Max(t, i, u) with distinct rows = TensorScatterUpdate(t, i, min/max(GatherNd(t, i), u)).
TEST(ScatterOracle, TensorScatterMinAndMaxAgainstGatherAndUpdate) {
  FLOE_REQUIRE_TFJS_ORACLE();
  const std::string inputs = input("tensor", "DT_FLOAT", {5, 3}) + input("indices", "DT_INT32", {4, 1}) +
                             input("updates", "DT_FLOAT", {4, 3});
  const std::map<std::string, HostTensor> feeds = {
      {"tensor", random_f32({5, 3}, 5, -4.0f, 4.0f)}, {"indices", make_i32({4, 1}, {4, 0, 2, 1})}, {"updates", kUpdates}};
  for (const char* tf_op : {"TensorScatterMin", "TensorScatterMax"}) {
    const std::string graph = inputs + op_node("scatter", tf_op, {"tensor", "indices", "updates"},
                                               {{"T", "DT_FLOAT"}, {"Tindices", "DT_INT32"}});
    const std::string oracle =
        inputs + op_node("old", "GatherNd", {"tensor", "indices"}, {{"Tparams", "DT_FLOAT"}, {"Tindices", "DT_INT32"}}) +
        binary("combined", std::string(tf_op) == "TensorScatterMin" ? "Minimum" : "Maximum", "old", "updates") +
        op_node("scatter", "TensorScatterUpdate", {"tensor", "indices", "combined"},
                {{"T", "DT_FLOAT"}, {"Tindices", "DT_INT32"}});
    SCOPED_TRACE(tf_op);
    expect_matches_oracle(graph, "scatter", oracle, "scatter", feeds);
  }
}

// A variable initialized by Assign and updated in the same Session.run: the
// fetched update is the initial value with the scatter applied.
std::string assigned_variable(const std::vector<int64_t>& shape) {
  return input("initial", "DT_FLOAT", shape) +
         "node { name: 'v' op: 'VariableV2' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' "
         "value { shape { " + dims_text(shape) + "} } } }\n" +
         op_node("init", "Assign", {"v", "initial"}, {{"T", "DT_FLOAT"}});
}

TEST(ScatterOracle, FetchedVariableUpdatesAgainstTensorScatterOps) {
  FLOE_REQUIRE_TFJS_ORACLE();
  const std::map<std::string, HostTensor> feeds = {
      {"initial", random_f32({5, 3}, 6)}, {"indices", make_i32({4, 1}, {3, 1, 3, 0})}, {"updates", kUpdates}};
  const std::string nd_inputs = input("indices", "DT_INT32", {4, 1}) + input("updates", "DT_FLOAT", {4, 3});
  const std::string oracle_inputs = input("initial", "DT_FLOAT", {5, 3}) + nd_inputs + int_const("shape", {2}, {5, 3});
  const auto types = std::vector<std::pair<std::string, std::string>>{{"T", "DT_FLOAT"}, {"Tindices", "DT_INT32"}};
  const std::string summed = op_node("nd", "ScatterNd", {"indices", "updates", "shape"}, types);
  struct Case {
    const char* tf_op;
    std::string oracle;
  };
  const Case cases[] = {
      {"ScatterNdUpdate", op_node("scatter", "TensorScatterUpdate", {"initial", "indices", "updates"}, types)},
      {"ScatterNdAdd", summed + binary("scatter", "AddV2", "initial", "nd")},
      {"ScatterNdSub", summed + binary("scatter", "Sub", "initial", "nd")},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.tf_op);
    const std::string graph = assigned_variable({5, 3}) + nd_inputs + op_node("scatter", c.tf_op, {"init", "indices", "updates"}, types);
    expect_matches_oracle(graph, "scatter", oracle_inputs + c.oracle, "scatter", feeds, 1e-6f);
  }
  // Scatter* index dim 0 with indices of any shape: [2, 2] here, as [2, 2, 1] in ScatterNd.
  const std::string first_dim_inputs = input("indices", "DT_INT32", {2, 2}) + input("updates", "DT_FLOAT", {2, 2, 3});
  const std::string graph = assigned_variable({5, 3}) + first_dim_inputs +
                            op_node("scatter", "ScatterAdd", {"init", "indices", "updates"}, types);
  const std::string oracle = input("initial", "DT_FLOAT", {5, 3}) + first_dim_inputs + int_const("nd_shape", {3}, {2, 2, 1}) +
                             int_const("shape", {2}, {5, 3}) +
                             op_node("nd_indices", "Reshape", {"indices", "nd_shape"}, {{"T", "DT_INT32"}, {"Tshape", "DT_INT32"}}) +
                             op_node("nd", "ScatterNd", {"nd_indices", "updates", "shape"}, types) +
                             binary("scatter", "AddV2", "initial", "nd");
  expect_matches_oracle(graph, "scatter", oracle, "scatter",
                        {{"initial", random_f32({5, 3}, 8)}, {"indices", make_i32({2, 2}, {4, 0, 4, 2})},
                         {"updates", random_f32({2, 2, 3}, 9)}},
                        1e-6f);
}

// Fed indices are checked by the kernel: out of range, Invoke() fails and says so.
TEST(Scatter, FedOutOfRangeIndexFailsInvoke) {
  const std::string graph = input("tensor", "DT_FLOAT", {5, 3}) + input("indices", "DT_INT32", {2, 1}) +
                            input("updates", "DT_FLOAT", {2, 3}) +
                            op_node("scatter", "TensorScatterUpdate", {"tensor", "indices", "updates"},
                                    {{"T", "DT_FLOAT"}, {"Tindices", "DT_INT32"}});
  const ConvertOutcome r = try_convert(text_graph_options(graph, {"scatter"}));
  ASSERT_TRUE(r.error.empty()) << r.error;
  const std::unique_ptr<Initialized> run = initialized(r.model);
  ASSERT_EQ(run->status, Status::kOk);
  Interpreter& interpreter = *run->interpreter;
  const TensorView indices = interpreter.input(static_cast<size_t>(interpreter.input_index("indices")));
  const TensorView tensor = interpreter.input(static_cast<size_t>(interpreter.input_index("tensor")));
  std::memset(tensor.data, 0, tensor.bytes);
  for (const int32_t bad : {5, -1, 1 << 30}) {
    const int32_t rows[2] = {1, bad};
    std::memcpy(indices.data, rows, sizeof rows);
    EXPECT_EQ(interpreter.Invoke(), Status::kIndexOutOfRange) << bad;
    const Error& e = interpreter.error();
    const IndexFault index = interpreter.index_fault();
    EXPECT_EQ(index.position, 1);
    EXPECT_EQ(index.value, bad);
    EXPECT_EQ(index.bound, 5);
    // As floe-run and the Python module print it, in TF's words.
    const std::string op = std::to_string(e.op);
    EXPECT_EQ(tools::error_text(e, &run->loaded->model, index), "index out of range: indices[1] = " + std::to_string(bad) +
                                                     " is not in [0, 5) (op " + op + ", SCATTER_ND_UPDATE)");
  }
  const int32_t good[2] = {1, 4};
  std::memcpy(indices.data, good, sizeof good);
  EXPECT_EQ(interpreter.Invoke(), Status::kOk) << interpreter.error().message;
}

TEST(Scatter, ConstantOutOfRangeIndexIsRefusedAtConversion) {
  const std::string graph = input("tensor", "DT_FLOAT", {5, 3}) + int_const("indices", {2, 1}, {1, 5}) +
                            input("updates", "DT_FLOAT", {2, 3}) +
                            op_node("scatter", "TensorScatterAdd", {"tensor", "indices", "updates"},
                                    {{"T", "DT_FLOAT"}, {"Tindices", "DT_INT32"}});
  const ConvertOutcome r = try_convert(text_graph_options(graph, {"scatter"}));
  EXPECT_TRUE(contains(r.error, "node 'scatter' (op TensorScatterAdd): index 5 (element 1 of indices) is out of range [0, 5)"))
      << r.error;
}

TEST(Scatter, UpdatesOfTheWrongShapeAndWrongIndexTypesAreRefused) {
  const std::string shapes = input("tensor", "DT_FLOAT", {5, 3}) + input("indices", "DT_INT32", {2, 1}) +
                             input("updates", "DT_FLOAT", {2, 2}) +
                             op_node("scatter", "TensorScatterUpdate", {"tensor", "indices", "updates"},
                                     {{"T", "DT_FLOAT"}, {"Tindices", "DT_INT32"}});
  EXPECT_TRUE(contains(try_convert(text_graph_options(shapes, {"scatter"})).error,
                       "updates have shape [2,2], expected [2,3]"));
  const std::string types = input("tensor", "DT_FLOAT", {5, 3}) + input("indices", "DT_FLOAT", {2, 1}) +
                            input("updates", "DT_FLOAT", {2, 3}) +
                            op_node("scatter", "TensorScatterUpdate", {"tensor", "indices", "updates"},
                                    {{"T", "DT_FLOAT"}, {"Tindices", "DT_FLOAT"}});
  EXPECT_TRUE(contains(try_convert(text_graph_options(types, {"scatter"})).error, "attr 'Tindices' allows"));
}

// A fed permutation is inverted at run time (y[x[i]] = i, checked here for
// random permutations); a value out of range fails Invoke().
TEST(Scatter, InvertPermutationOfAFedInput) {
  const std::string graph = input("perm", "DT_INT32", {7}) +
                            op_node("inverse", "InvertPermutation", {"perm"}, {{"T", "DT_INT32"}});
  const ConvertOutcome r = try_convert(text_graph_options(graph, {"inverse"}));
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(contains(r.summary, "SCATTER_ND_UPDATE")) << r.summary;
  std::mt19937 rng(3);
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<int32_t> perm = {0, 1, 2, 3, 4, 5, 6};
    std::shuffle(perm.begin(), perm.end(), rng);
    const auto out = run_model(r.model, {{"perm", make_i32({7}, perm)}});
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].num_elements(), 7);
    for (int32_t i = 0; i < 7; ++i) EXPECT_EQ(out[0].as<int32_t>()[perm[static_cast<size_t>(i)]], i);
  }
  const std::unique_ptr<Initialized> run = initialized(r.model);
  ASSERT_EQ(run->status, Status::kOk);
  Interpreter& interpreter = *run->interpreter;
  const int32_t bad[7] = {0, 1, 2, 3, 4, 5, 7};
  std::memcpy(interpreter.input(0).data, bad, sizeof bad);
  EXPECT_EQ(interpreter.Invoke(), Status::kIndexOutOfRange);
  EXPECT_EQ(interpreter.index_fault().position, 6);
  EXPECT_EQ(interpreter.index_fault().value, 7);
}

// An update reached only through a control edge stays dropped; the fetched one is computed.
TEST(Scatter, UnfetchedUpdatesStayDropped) {
  const std::string graph = assigned_variable({5, 3}) + input("indices", "DT_INT32", {1}) +
                            input("updates", "DT_FLOAT", {1, 3}) +
                            op_node("update", "ScatterUpdate", {"init", "indices", "updates"},
                                    {{"T", "DT_FLOAT"}, {"Tindices", "DT_INT32"}}) +
                            unary("out", "Relu", "initial", "input: '^update'");
  const ConvertOutcome r = try_convert(text_graph_options(graph, {"out"}));
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(contains(r.summary, "reached only by control edges, dropped")) << r.summary;
  EXPECT_FALSE(contains(r.summary, "SCATTER")) << r.summary;
  // Fetched, the same update is the assigned value with row 3 replaced; the
  // variable needs no checkpoint (the Assign gives its value).
  const ConvertOutcome fetched = try_convert(text_graph_options(graph, {"update"}));
  ASSERT_TRUE(fetched.error.empty()) << fetched.error;
  const HostTensor initial = random_f32({5, 3}, 12), row = random_f32({1, 3}, 13);
  const auto out = run_model(fetched.model, {{"initial", initial}, {"indices", make_i32({1}, {3})}, {"updates", row}});
  ASSERT_EQ(out.size(), 1u);
  std::vector<float> want = as_floats(initial);
  for (size_t j = 0; j < 3; ++j) want[9 + j] = as_floats(row)[j];
  EXPECT_EQ(as_floats(out[0]), want);
}

}  // namespace
}  // namespace floe::testing
