// SPDX-License-Identifier: Apache-2.0
// The converter never writes a model the runtime refuses, and refuses user
// mistakes as TF would: input dtypes checked against each op's definition, the
// finished bytes loaded and initialised before they leave the converter, feeds
// that name no tensor refused, declared shapes kept.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "converter/pipeline/convert.h"
#include "converter/ir/error.h"
#include "converter/pipeline/convert.h"
#include "converter/pipeline/validate.h"
#include "runtime/core/interpreter.h"
#include "tests/support/model_runner.h"

namespace floe::conv {
namespace {

using floe::testing::make_temp_dir;
using floe::testing::run_command;
using floe::testing::tool_path;

std::string write_graph(const std::string& text) {
  static int counter = 0;
  const std::string path = make_temp_dir() + "/graph" + std::to_string(counter++) + ".pbtxt";
  std::ofstream(path) << text;
  return path;
}

// The ConvertError convert() throws, or "" when it converts.
std::string conversion_error(const std::string& graph, std::vector<std::string> outputs,
                             std::vector<std::string> inputs = {}) {
  ConvertOptions options;
  options.graph_path = write_graph(graph);
  options.outputs = std::move(outputs);
  options.inputs = std::move(inputs);
  try {
    (void)convert(options);
  } catch (const ConvertError& e) {
    return e.what();
  }
  return "";
}

std::string placeholder(const std::string& name, const std::string& dtype, const std::string& dims) {
  return "node { name: '" + name + "' op: 'Placeholder' attr { key: 'dtype' value { type: " + dtype +
         " } } attr { key: 'shape' value { shape { " + dims + " } } } }\n";
}

const char* kGatherOfUntypedIds = R"(
node { name: 'params' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } }
       attr { key: 'shape' value { shape { dim { size: 4 } dim { size: 3 } } } } }
node { name: 'ids' op: 'Placeholder' attr { key: 'shape' value { shape { dim { size: 5 } } } } }
node { name: 'axis' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }
       attr { key: 'value' value { tensor { dtype: DT_INT32 int_val: 0 } } } }
node { name: 'gathered' op: 'GatherV2' input: 'params' input: 'ids' input: 'axis'
       attr { key: 'Tparams' value { type: DT_FLOAT } } attr { key: 'Tindices' value { type: DT_INT32 } }
       attr { key: 'Taxis' value { type: DT_INT32 } } }
)";

TEST(InputTypes, PlaceholderWithoutDtypeIsRefusedNamingTheNodeAndAttr) {
  const std::string error = conversion_error(kGatherOfUntypedIds, {"gathered"});
  EXPECT_NE(error.find("node 'ids' (op Placeholder)"), std::string::npos) << error;
  EXPECT_NE(error.find("attr 'dtype' is missing"), std::string::npos) << error;
}

TEST(InputTypes, AttrDisagreeingWithTheArrivingTensorNamesAttrAndBothTypes) {
  const std::string graph = placeholder("params", "DT_FLOAT", "dim { size: 4 } dim { size: 3 }") +
                            placeholder("ids", "DT_FLOAT", "dim { size: 5 }") + R"(
node { name: 'axis' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }
       attr { key: 'value' value { tensor { dtype: DT_INT32 int_val: 0 } } } }
node { name: 'gathered' op: 'GatherV2' input: 'params' input: 'ids' input: 'axis'
       attr { key: 'Tparams' value { type: DT_FLOAT } } attr { key: 'Tindices' value { type: DT_INT32 } }
       attr { key: 'Taxis' value { type: DT_INT32 } } }
)";
  const std::string error = conversion_error(graph, {"gathered"});
  EXPECT_NE(error.find("node 'gathered' (op GatherV2)"), std::string::npos) << error;
  EXPECT_NE(error.find("attr 'Tindices' is DT_INT32 but input 1 ('ids:0') is float32"), std::string::npos) << error;
}

TEST(InputTypes, IndexAttrOutsideTheTypesTheOpAllowsIsRefused) {
  // Consistent attr and tensor, but GatherV2's Tindices allows only int32/int64.
  const std::string graph = placeholder("params", "DT_FLOAT", "dim { size: 4 } dim { size: 3 }") +
                            placeholder("ids", "DT_FLOAT", "dim { size: 5 }") + R"(
node { name: 'axis' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }
       attr { key: 'value' value { tensor { dtype: DT_INT32 int_val: 0 } } } }
node { name: 'gathered' op: 'GatherV2' input: 'params' input: 'ids' input: 'axis' }
)";
  const std::string error = conversion_error(graph, {"gathered"});
  EXPECT_NE(error.find("input 1 ('ids:0') is float32; attr 'Tindices' allows int32 or int64"), std::string::npos)
      << error;
}

TEST(InputTypes, InputsSharingAnAttrMustAgreeEvenWithoutTheAttr) {
  const std::string graph = placeholder("a", "DT_FLOAT", "dim { size: 3 }") +
                            placeholder("b", "DT_INT32", "dim { size: 3 }") +
                            "node { name: 'sum' op: 'AddV2' input: 'a' input: 'b' }\n";
  const std::string error = conversion_error(graph, {"sum"});
  EXPECT_NE(error.find("input 1 ('b:0') is int32 but input 0 ('a:0') is float32; both are attr 'T'"),
            std::string::npos)
      << error;
}

TEST(InputTypes, FixedTypeInputIsChecked) {
  const std::string graph = placeholder("x", "DT_FLOAT", "dim { size: 3 }") +
                            placeholder("y", "DT_FLOAT", "dim { size: 3 }") +
                            placeholder("c", "DT_FLOAT", "dim { size: 3 }") +
                            "node { name: 'pick' op: 'SelectV2' input: 'c' input: 'x' input: 'y' "
                            "attr { key: 'T' value { type: DT_FLOAT } } }\n";
  const std::string error = conversion_error(graph, {"pick"});
  EXPECT_NE(error.find("input 0 ('c:0') is float32; the op's definition requires bool"), std::string::npos) << error;
}

TEST(InputTypes, ConstWhoseValueDisagreesWithItsDtypeIsRefused) {
  const std::string graph = placeholder("x", "DT_FLOAT", "dim { size: 4 } dim { size: 3 }") + R"(
node { name: 'begin' op: 'Const' attr { key: 'dtype' value { type: DT_INT64 } }
       attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 0 int_val: 1 } } } }
node { name: 'size' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }
       attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 2 int_val: 2 } } } }
node { name: 'sliced' op: 'Slice' input: 'x' input: 'begin' input: 'size' }
)";
  const std::string error = conversion_error(graph, {"sliced"});
  EXPECT_NE(error.find("node 'begin' (op Const): attr 'dtype' is DT_INT64 but its value tensor is int32"),
            std::string::npos)
      << error;
}

TEST(InputTypes, MatchingTypesStillConvert) {
  const std::string graph = placeholder("params", "DT_FLOAT", "dim { size: 4 } dim { size: 3 }") +
                            placeholder("ids", "DT_INT64", "dim { size: 5 }") + R"(
node { name: 'axis' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }
       attr { key: 'value' value { tensor { dtype: DT_INT32 int_val: 0 } } } }
node { name: 'gathered' op: 'GatherV2' input: 'params' input: 'ids' input: 'axis'
       attr { key: 'Tparams' value { type: DT_FLOAT } } attr { key: 'Tindices' value { type: DT_INT64 } }
       attr { key: 'Taxis' value { type: DT_INT32 } } }
)";
  EXPECT_EQ(conversion_error(graph, {"gathered"}), "");
}

// A Placeholder without a dtype feeding Gather indices (the tests/fuzz/regress
// input), through the CLI: exit 2, the reason, and no file.
TEST(FuzzFinding, UntypedPlaceholderFeedingIndicesIsRefusedAtConversion) {
  const std::string dir = make_temp_dir();
  const std::string out = dir + "/m.floe";
  const auto r = run_command(tool_path("floe-convert") + " --graph " + FLOE_SOURCE_DIR +
                             "/tests/fuzz/regress/fuzz_graph/placeholder_without_dtype_feeds_indices.pbtxt"
                             " --outputs gathered -o " + out + " 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("node 'ids' (op Placeholder): attr 'dtype' is missing"), std::string::npos) << r.output;
  EXPECT_FALSE(floe::testing::file_exists(out));
}

// The same defect in the fuzzer's own output kept in ../shared/fuzz-findings,
// read in place (skips without ../shared): refused the same way.
TEST(FuzzFinding, SharedFindingIsRefusedAtConversion) {
  const std::string finding = std::string(FLOE_SHARED_DIR) + "/fuzz-findings/fuzz_graph-unset-placeholder-dtype.pbtxt";
  if (!floe::testing::file_exists(finding)) GTEST_SKIP() << "SKIPPED: " << finding << " absent (../shared)";
  const std::string dir = make_temp_dir();
  const std::string out = dir + "/m.floe";
  const auto r = run_command(tool_path("floe-convert") + " --graph " + finding + " --outputs topk,select -o " + out +
                             " 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("attr 'dtype' is missing"), std::string::npos) << r.output;
  EXPECT_FALSE(floe::testing::file_exists(out));
}

// ---- validate before write -------------------------------------------------

const char* kGather = R"(
node { name: 'params' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } }
       attr { key: 'shape' value { shape { dim { size: 4 } dim { size: 3 } } } } }
node { name: 'ids' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } }
       attr { key: 'shape' value { shape { dim { size: 5 } } } } }
node { name: 'axis' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }
       attr { key: 'value' value { tensor { dtype: DT_INT32 int_val: 0 } } } }
node { name: 'gathered' op: 'GatherV2' input: 'params' input: 'ids' input: 'axis' }
node { name: 'out' op: 'Relu' input: 'gathered' }
)";

TEST(ValidateBeforeWrite, ConvertedModelsPassLoadAndInit) {
  ConvertOptions options;
  options.graph_path = write_graph(kGather);
  options.outputs = {"out"};
  const ConvertResult result = convert(options);
  const ValidationReport report = validate_emitted_model(result.model, "g.pbtxt");
  EXPECT_TRUE(report.initialized);
  EXPECT_GT(report.arena_bytes, 0u);
}

// A converter bug planted in the lowered model (the indices typed float32,
// which the runtime refuses) is emitted as a real emitter would; the check
// names the op and category, and the CLI path would write nothing because
// convert() throws before returning bytes.
TEST(ValidateBeforeWrite, ModelTheRuntimeRefusesIsAnInternalErrorNamingTheOp) {
  ConvertOptions options;
  options.graph_path = write_graph(kGather);
  options.outputs = {"out"};
  options.optimize.enabled = false;
  (void)convert(options);  // the graph itself converts
  // Rebuild the lowered model by hand: one GATHER whose indices are float32.
  LoweredModel model;
  auto add = [&](const std::string& name, DType dtype, std::vector<int64_t> shape) {
    Value v;
    v.name = name;
    v.dtype = dtype;
    v.shape = std::move(shape);
    return model.add_value(std::move(v));
  };
  const int params = add("params:0", DType::kFloat32, {4, 3});
  const int ids = add("ids:0", DType::kFloat32, {5});  // the planted bug
  const int out = add("gathered:0", DType::kFloat32, {5, 3});
  model.inputs = {params, ids};
  model.outputs = {out};
  LoweredOp op;
  op.opcode = schema::OpCode::GATHER;
  op.inputs = {params, ids};
  op.outputs = {out};
  schema::GatherOptionsT gather;
  gather.axis = 0;
  op.options.Set(gather);
  op.node_name = "gathered";
  model.ops.push_back(std::move(op));
  const std::vector<uint8_t> bytes = plan_and_emit(model, "test");
  try {
    (void)validate_emitted_model(bytes, "g.pbtxt");
    FAIL() << "a model with float32 indices passed validation";
  } catch (const ConvertError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.category(), ErrorCategory::kInternal);
    EXPECT_NE(what.find("internal error"), std::string::npos) << what;
    EXPECT_NE(what.find("op 0 (GATHER, node 'gathered')"), std::string::npos) << what;
    EXPECT_NE(what.find("nothing was written"), std::string::npos) << what;
    EXPECT_EQ(e.where().node, "gathered");
  }
}

TEST(ValidateBeforeWrite, CorruptBytesAreRefusedAtLoad) {
  ConvertOptions options;
  options.graph_path = write_graph(kGather);
  options.outputs = {"out"};
  std::vector<uint8_t> bytes = convert(options).model;
  bytes[bytes.size() / 2] ^= 0x5a;  // the checksum no longer matches
  try {
    (void)validate_emitted_model(bytes, "g.pbtxt");
    FAIL() << "corrupt bytes passed validation";
  } catch (const ConvertError& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kInternal);
    EXPECT_NE(std::string(e.what()).find("refuses at Load"), std::string::npos) << e.what();
  }
}

// ---- user errors -------------------------------------------------------------

TEST(UserErrors, FeedingAPlaceholderOutputThatDoesNotExistIsRefusedNamingTheTensor) {
  const std::string dir = make_temp_dir();
  const std::string graph = write_graph(kGather);
  const auto r = run_command(tool_path("floe-convert") + " --graph " + graph +
                             " --inputs params:1,ids --outputs out -o " + dir + "/m.floe 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("input 'params:1': node 'params' (op Placeholder) has 1 output, 'params:0'"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(floe::testing::file_exists(dir + "/m.floe"));
}

TEST(UserErrors, FeedingAnOutputAnOpDoesNotHaveIsRefused) {
  // Relu has one output, TopKV2 two: 'out:3' and 'top:2' name no tensor.
  const std::string graph = std::string(kGather) + R"(
node { name: 'k' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }
       attr { key: 'value' value { tensor { dtype: DT_INT32 int_val: 2 } } } }
node { name: 'top' op: 'TopKV2' input: 'out' input: 'k' }
node { name: 'after' op: 'Neg' input: 'top:1' }
)";
  std::string error = conversion_error(graph, {"after"}, {"out:3"});
  EXPECT_NE(error.find("input 'out:3': node 'out' (op Relu) has 1 output, 'out:0'"), std::string::npos) << error;
  error = conversion_error(graph, {"after"}, {"top:2"});
  EXPECT_NE(error.find("input 'top:2': node 'top' (op TopKV2) has 2 outputs"), std::string::npos) << error;
  ConvertOptions options;  // an output it has may be fed
  options.graph_path = write_graph(graph);
  options.outputs = {"after"};
  options.inputs = {"top:1"};
  options.input_shapes["top:1"] = {5, 2};
  EXPECT_NE(convert(options).summary.find("top:1"), std::string::npos);
}

TEST(UserErrors, ScalarPlaceholderConvertsAsAScalarWithoutInputShape) {
  const std::string graph = "versions { producer: 27 }\n" + placeholder("s", "DT_FLOAT", "") +
                            placeholder("x", "DT_FLOAT", "dim { size: 3 }") +
                            "node { name: 'scaled' op: 'Mul' input: 'x' input: 's' "
                            "attr { key: 'T' value { type: DT_FLOAT } } }\n";
  ConvertOptions options;
  options.graph_path = write_graph(graph);
  options.outputs = {"scaled"};
  const ConvertResult result = convert(options);
  EXPECT_NE(result.summary.find("input   s:0  float32 []"), std::string::npos) << result.summary;
  const auto out = floe::testing::run_model(
      result.model, {{"s", floe::testing::make_f32({}, {2.0f})}, {"x", floe::testing::make_f32({3}, {1, 2, 3})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(floe::testing::as_floats(out[0]), (std::vector<float>{2, 4, 6}));
}

TEST(UserErrors, ScalarPlaceholderOfAnOldProducerIsAScalarWithANote) {
  // No versions: producer 0, where TF reads shape {} as unknown rank.
  const std::string graph = placeholder("s", "DT_FLOAT", "") + "node { name: 'neg' op: 'Neg' input: 's' }\n";
  ConvertOptions options;
  options.graph_path = write_graph(graph);
  options.outputs = {"neg"};
  const ConvertResult result = convert(options);
  EXPECT_NE(result.summary.find("input   s:0  float32 []"), std::string::npos) << result.summary;
  EXPECT_NE(result.summary.find("declares shape {} in a graph of producer 0"), std::string::npos) << result.summary;
  // --input-shape may still give it a rank, as TF would accept any.
  options.input_shapes["s"] = {2, 2};
  EXPECT_NE(convert(options).summary.find("input   s:0  float32 [2,2]"), std::string::npos);
}

TEST(UserErrors, ARefusalAfterAnOldProducersScalarSaysTFWouldReadUnknownRank) {
  // producer 0: `shape {}` is read as a scalar; a MatMul then refuses it, and
  // the refusal says what TF would have read instead.
  const std::string graph = placeholder("x", "DT_FLOAT", "") + R"(
node { name: 'w' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }
       attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } } float_val: 1 } } } }
node { name: 'mm' op: 'MatMul' input: 'x' input: 'w' }
)";
  const std::string error = conversion_error(graph, {"mm"});
  EXPECT_NE(error.find("must have rank 2"), std::string::npos) << error;
  EXPECT_NE(error.find("input 'x:0' declares shape {} in a graph of producer < 22, read as a scalar"),
            std::string::npos)
      << error;
}

TEST(UserErrors, DefaultedDimensionIsNamedOnTheSummaryInputLine) {
  const std::string graph = placeholder("x", "DT_FLOAT", "dim { size: -1 } dim { size: 3 }") +
                            "node { name: 'r' op: 'Relu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n";
  const std::string dir = make_temp_dir();
  const auto r = run_command(tool_path("floe-convert") + " --graph " + write_graph(graph) + " --outputs r -o " + dir +
                             "/m.floe 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("input   x:0  float32 [1,3]  (dim 0: -1 in the graph, set to 1; --input-shape sets it)"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace floe::conv
