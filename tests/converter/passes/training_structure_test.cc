// SPDX-License-Identifier: Apache-2.0
// Training-only structure: tf.cond Switch/Merge on a constant, a defaulted
// (keras_learning_phase) or a user-fixed predicate collapses to the taken branch;
// what cannot run for inference (random, string, update ops, unknown ops,
// unresolved control flow) is refused with every offender listed at once.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include "converter/ir/graph.h"
#include "converter/passes/training_structure.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "tests/converter/support/tf1_test_util.h"
#include "tests/support/loaded_model.h"

namespace floe::testing {
namespace {

// tf.cond(pred, lambda: x * 2 * random_uniform(), lambda: x + 3) as TF1 builds it:
// the branch constants hang off switch_t / switch_f by control edges, so they die
// with their branch. `pred_nodes` defines a bool tensor named "pred";
// `random_attrs` adds attrs to the RandomUniform (a seed).
std::string cond_graph(const std::string& pred_nodes, const std::string& random_attrs = "") {
  auto bool_node = [](const std::string& name, const std::string& op, const std::string& inputs) {
    return "node { name: '" + name + "' op: '" + op + "' " + inputs + " attr { key: 'T' value { type: DT_BOOL } } }\n";
  };
  return placeholder("x", "DT_FLOAT", "dim { size: 2 }") + pred_nodes +
         bool_node("cond/Switch", "Switch", "input: 'pred' input: 'pred'") +
         bool_node("cond/switch_t", "Identity", "input: 'cond/Switch:1'") +
         bool_node("cond/switch_f", "Identity", "input: 'cond/Switch'") +
         bool_node("cond/pred_id", "Identity", "input: 'pred'") +
         binary("cond/Mul/Switch", "Switch", "x", "cond/pred_id") +
         float_const("cond/Mul/y", "", "float_val: 2", "input: '^cond/switch_t'") +
         binary("cond/Mul", "Mul", "cond/Mul/Switch:1", "cond/Mul/y") +
         "node { name: 'cond/shape' op: 'Const' input: '^cond/switch_t' attr { key: 'dtype' value { type: "
         "DT_INT32 } } attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } "
         "int_val: 2 } } } }\n"
         "node { name: 'cond/random' op: 'RandomUniform' input: 'cond/shape' attr { key: 'dtype' value { "
         "type: DT_FLOAT } } attr { key: 'T' value { type: DT_INT32 } } " + random_attrs + " }\n" +
         binary("cond/Mul2", "Mul", "cond/Mul", "cond/random") +
         binary("cond/Add/Switch", "Switch", "x", "cond/pred_id") +
         float_const("cond/Add/y", "", "float_val: 3", "input: '^cond/switch_f'") +
         binary("cond/Add", "Add", "cond/Add/Switch", "cond/Add/y") +
         binary("cond/Merge", "Merge", "cond/Add", "cond/Mul2", "attr { key: 'N' value { i: 2 } }") +
         unary("out", "Identity", "cond/Merge");
}

std::vector<float> run_x_plus(const ConvertOutcome& outcome) {
  EXPECT_TRUE(outcome.error.empty()) << outcome.error;
  if (outcome.model.empty()) return {};
  const auto outputs = run_model(outcome.model, {{"x", make_f32({2}, {1.0f, 2.0f})}});
  return outputs.size() == 1 ? as_floats(outputs[0]) : std::vector<float>{};
}

TEST(StaticControlFlow, ConstantFalsePredicateTakesTheFalseBranch) {
  const ConvertOutcome r = try_convert(text_graph_options(cond_graph(bool_const("pred", false)), {"out"}));
  EXPECT_EQ(run_x_plus(r), (std::vector<float>{4.0f, 5.0f}));
  EXPECT_TRUE(contains(r.summary, "resolved 3 Switch and 1 Merge")) << r.summary;
}

TEST(StaticControlFlow, ConstantTruePredicateKeepsTheRandomBranchAndIsRefused) {
  const ConvertOutcome r = try_convert(text_graph_options(cond_graph(bool_const("pred", true)), {"out"}));
  EXPECT_TRUE(contains(r.error, "random ops on the inference path")) << r.error;
  EXPECT_TRUE(contains(r.error, "RandomUniform x1: cond/random")) << r.error;
  EXPECT_FALSE(contains(r.error, "Switch")) << "every Switch was resolved: " << r.error;
}

// A seeded RandomUniform in a branch of a cond on a fed predicate: the cond
// runs as an IF, so the random op draws only when its branch is taken, as in
// TF: two runs with pred false leave the generator where it was, and the first
// run with pred true multiplies by TF's first draw for seed 1, seed2 14 (the
// values of ../shared's dropout cases, tests/converter/ops/random_ops_test.cc).
TEST(StaticControlFlow, ASeededRandomBranchRunsAsAnIfAndDrawsOnlyWhenTaken) {
  conv::ConvertOptions options = text_graph_options(
      cond_graph(placeholder("pred", "DT_BOOL", ""),
                 "attr { key: 'seed' value { i: 1 } } attr { key: 'seed2' value { i: 14 } }"),
      {"out"});
  options.inputs = {"x", "pred"};
  const ConvertOutcome r = try_convert(options);
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(contains(r.summary, "IF")) << r.summary;
  const std::unique_ptr<LoadedModel> loaded = load_model(r.model);
  ASSERT_EQ(loaded->status, Status::kOk) << loaded->model.error().message;
  tools::AlignedBytes arena = tools::aligned_bytes(loaded->model.arena_size());
  Interpreter interpreter(loaded->model, arena.get(), loaded->model.arena_size());
  ASSERT_EQ(interpreter.Init(), Status::kOk) << interpreter.error().message;
  float* x = interpreter.input(interpreter.input_index("x")).as<float>();
  x[0] = 1.0f;
  x[1] = 2.0f;
  bool* pred = interpreter.input(interpreter.input_index("pred")).as<bool>();
  auto run = [&](bool p) {
    *pred = p;
    EXPECT_EQ(interpreter.Invoke(), Status::kOk) << interpreter.error().message;
    const float* out = interpreter.output(0).as<float>();
    return std::vector<float>{out[0], out[1]};
  };
  EXPECT_EQ(run(false), (std::vector<float>{4.0f, 5.0f}));
  EXPECT_EQ(run(false), (std::vector<float>{4.0f, 5.0f}));
  const std::vector<float> taken = run(true);
  EXPECT_NEAR(taken[0], 1.0f * 2.0f * 0.86016917f, 1e-6f);
  EXPECT_NEAR(taken[1], 2.0f * 2.0f * 0.44673419f, 1e-6f);
}

// keras_learning_phase: PlaceholderWithDefault(false) takes its default unless fed.
std::string learning_phase_pred() {
  return bool_const("pred/input", false) +
         "node { name: 'pred' op: 'PlaceholderWithDefault' input: 'pred/input' attr { key: 'dtype' value { "
         "type: DT_BOOL } } attr { key: 'shape' value { shape { } } } }\n";
}

TEST(StaticControlFlow, PlaceholderWithDefaultTakesItsDefault) {
  const ConvertOutcome r = try_convert(text_graph_options(cond_graph(learning_phase_pred()), {"out"}));
  EXPECT_EQ(run_x_plus(r), (std::vector<float>{4.0f, 5.0f}));
}

TEST(StaticControlFlow, FedPlaceholderWithDefaultIsNotConstant) {
  conv::ConvertOptions options = text_graph_options(cond_graph(learning_phase_pred()), {"out"});
  options.inputs = {"x", "pred"};
  const ConvertOutcome r = try_convert(options);
  EXPECT_TRUE(contains(r.error, "control flow whose predicate is not known at conversion time")) << r.error;
  EXPECT_TRUE(contains(r.error, "depends on fed tensor 'pred:0'")) << r.error;
}

TEST(StaticControlFlow, PlainPlaceholderPredicateNeedsFreezeInput) {
  const std::string graph = cond_graph(placeholder("pred", "DT_BOOL", ""));
  ConvertOutcome r = try_convert(text_graph_options(graph, {"out"}));
  EXPECT_TRUE(contains(r.error, "Switch x2")) << r.error;
  EXPECT_TRUE(contains(r.error, "--freeze-input pred=")) << r.error;
  EXPECT_TRUE(contains(r.error, "Merge x1: cond/Merge")) << r.error;

  conv::ConvertOptions fixed = text_graph_options(graph, {"out"});
  fixed.frozen_inputs = {{"pred", "False"}};
  EXPECT_EQ(run_x_plus(try_convert(fixed)), (std::vector<float>{4.0f, 5.0f}));
}

TEST(StaticControlFlow, FetchOnTheUntakenBranchIsNamed) {
  const ConvertOutcome r = try_convert(text_graph_options(cond_graph(bool_const("pred", false)), {"cond/Mul"}));
  EXPECT_TRUE(contains(r.error, "'cond/Mul:0' is on a branch of a cond that is never taken")) << r.error;
}

TEST(StaticControlFlow, GraphRewriteMarksDeadNodesAndRewiresMerge) {
  tfproto::GraphDef def;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(cond_graph(bool_const("pred", false)), &def));
  conv::Graph graph(def, "cond.pbtxt");
  std::vector<conv::TensorRef> fetches = {graph.resolve_tensor("out")};
  const conv::ControlFlowReport report = conv::resolve_static_control_flow(graph, fetches, {});
  EXPECT_EQ(report.switches_resolved, 3);
  EXPECT_EQ(report.merges_resolved, 1);
  EXPECT_TRUE(report.unresolved.empty());
  for (const char* dead : {"cond/Mul", "cond/Mul/y", "cond/random", "cond/shape", "cond/Mul2", "cond/switch_t"}) {
    EXPECT_TRUE(graph.node(graph.find(dead)).removed) << dead;
  }
  const conv::Node& merge = graph.node(graph.find("cond/Merge"));
  EXPECT_EQ(merge.op(), "Identity");
  ASSERT_EQ(merge.inputs.size(), 1u);
  EXPECT_EQ(graph.node(merge.inputs[0].node).name(), "cond/Add");
  const conv::Node& add = graph.node(graph.find("cond/Add"));
  EXPECT_EQ(graph.tensor_name(add.inputs[0]), "cond/Add/Switch:0");
  EXPECT_EQ(graph.node(graph.find("cond/Add/Switch")).op(), "Identity");
}

TEST(FreezeInput, ValuesAreCheckedAgainstDtypeAndShape) {
  const std::string graph = placeholder("k", "DT_FLOAT", "dim { size: 3 }") + unary("out", "Relu", "k");
  conv::ConvertOptions options = text_graph_options(graph, {"out"});
  options.frozen_inputs = {{"k", "1,2"}};
  EXPECT_TRUE(contains(try_convert(options).error, "needs 3 value(s), got 2"));
  options.frozen_inputs = {{"k", "1,x,3"}};
  EXPECT_TRUE(contains(try_convert(options).error, "'x' is not a float32 value"));
  options.frozen_inputs = {{"nope", "1"}};
  EXPECT_TRUE(contains(try_convert(options).error, "no node named 'nope'"));
  options.frozen_inputs = {{"k", "-1,0,2.5"}};
  const ConvertOutcome r = try_convert(options);
  ASSERT_TRUE(r.error.empty()) << r.error;
  const auto out = run_model(r.model, {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(as_floats(out[0]), (std::vector<float>{0.0f, 0.0f, 2.5f}));
}

TEST(InferenceCheck, EveryOffenderIsListedAtOnceWithCounts) {
  const std::string graph =
      placeholder("x", "DT_FLOAT", "dim { size: 4 }") + placeholder("wav", "DT_STRING", "") +
      "node { name: 'shape' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' "
      "value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 4 } } } }\n"
      "node { name: 'noise' op: 'RandomStandardNormal' input: 'shape' attr { key: 'dtype' value { type: "
      "DT_FLOAT } } attr { key: 'T' value { type: DT_INT32 } } }\n"
      "node { name: 'decoded' op: 'DecodeWav' input: 'wav' }\n" +
      unary("f1", "Frobnicate", "x") + unary("f2", "Frobnicate", "f1") + binary("sum", "Add", "f2", "noise");
  const ConvertOutcome r = try_convert(text_graph_options(graph, {"sum", "decoded"}));
  EXPECT_TRUE(contains(r.error, "g.pbtxt: cannot convert: 5 node(s)")) << r.error;
  EXPECT_TRUE(contains(r.error, "RandomStandardNormal x1: noise")) << r.error;
  EXPECT_TRUE(contains(r.error, "DecodeWav x1: decoded")) << r.error;
  EXPECT_TRUE(contains(r.error, "Placeholder x1: wav")) << r.error;
  EXPECT_TRUE(contains(r.error, "Frobnicate x2: f1, f2")) << r.error;
}

// A Saver-less update wired by a control edge is dropped; fetching the update is refused.
TEST(InferenceCheck, UpdateOpsAreDroppedUnlessFetched) {
  const std::string graph =
      placeholder("x", "DT_FLOAT", "dim { size: 2 }") +
      "node { name: 'v' op: 'VariableV2' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' "
      "value { shape { dim { size: 2 } } } } }\n" +
      float_const("decay", "dim { size: 2 }", "float_val: 0.5") +
      "node { name: 'AssignMovingAvg' op: 'AssignSub' input: 'v' input: 'decay' attr { key: 'T' value { type: "
      "DT_FLOAT } } }\n" +
      unary("out", "Relu", "x", "input: '^AssignMovingAvg'");
  const ConvertOutcome ok = try_convert(text_graph_options(graph, {"out"}));
  ASSERT_TRUE(ok.error.empty()) << ok.error;
  EXPECT_TRUE(contains(ok.summary, "reached only by control edges, dropped")) << ok.summary;
  const ConvertOutcome refused = try_convert(text_graph_options(graph, {"AssignMovingAvg"}));
  EXPECT_TRUE(contains(refused.error, "training / variable-update ops")) << refused.error;
  EXPECT_TRUE(contains(refused.error, "AssignSub x1: AssignMovingAvg")) << refused.error;
}

// Graph semantics from the seed articles: `name:k` outputs of a multi-output op,
// auto-uniquified names, Identity chains and gradient/debug wrappers vanish.
TEST(GraphSemantics, IdentityLikeOpsAndMultiOutputNames) {
  const std::string graph =
      placeholder("x", "DT_FLOAT", "dim { size: 2 }") + placeholder("x_1", "DT_FLOAT", "dim { size: 2 }") +
      "node { name: 'pair' op: 'IdentityN' input: 'x' input: 'x_1' attr { key: 'T' value { list { type: DT_FLOAT "
      "type: DT_FLOAT } } } }\n" +
      unary("sg", "StopGradient", "pair:1") +
      unary("cn", "CheckNumerics", "sg", "attr { key: 'message' value { s: 'bad' } }") +
      unary("pg", "PreventGradient", "cn") + unary("Identity", "Identity", "pg") +
      unary("Identity_1", "Identity", "Identity") +
      float_const("Const_1", "dim { size: 2 }", "float_val: 10") + binary("out", "Add", "Identity_1", "Const_1");
  const ConvertOutcome r = try_convert(text_graph_options(graph, {"out", "pair:0"}));
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(contains(r.summary, "ADD x1")) << r.summary;
  const auto out = run_model(r.model, {{"x", make_f32({2}, {1, 2})}, {"x_1", make_f32({2}, {3, 4})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(as_floats(out[0]), (std::vector<float>{13.0f, 14.0f}));
  EXPECT_EQ(as_floats(out[1]), (std::vector<float>{1.0f, 2.0f}));
}

TEST(InferenceCheck, ClassifiesOps) {
  using conv::OpClass;
  EXPECT_EQ(conv::classify_op("TruncatedNormal"), OpClass::kRandom);
  EXPECT_EQ(conv::classify_op("FIFOQueueV2"), OpClass::kIo);
  EXPECT_EQ(conv::classify_op("TFRecordReaderV2"), OpClass::kIo);
  EXPECT_EQ(conv::classify_op("PyFunc"), OpClass::kIo);
  EXPECT_EQ(conv::classify_op("ParseExample"), OpClass::kIo);
  EXPECT_EQ(conv::classify_op("ResourceApplyAdam"), OpClass::kTrainingOnly);
  EXPECT_EQ(conv::classify_op("RefSwitch"), OpClass::kControlFlow);
  EXPECT_EQ(conv::classify_op("NextIteration"), OpClass::kWhileLoop);
  EXPECT_EQ(conv::classify_op("StatefulPartitionedCall"), OpClass::kFunctionCall);
  EXPECT_EQ(conv::classify_op("Conv2D"), OpClass::kSupported);
  EXPECT_EQ(conv::classify_op("FusedBatchNormV3"), OpClass::kSupported);
  EXPECT_EQ(conv::classify_op("NoSuchOp"), OpClass::kUnsupported);
  // The families nobody lowers, each with its own reason.
  EXPECT_EQ(conv::classify_op("StringToHashBucketFast"), OpClass::kString);
  EXPECT_EQ(conv::classify_op("StaticRegexReplace"), OpClass::kString);
  EXPECT_EQ(conv::classify_op("HashTableV2"), OpClass::kHashTable);
  EXPECT_EQ(conv::classify_op("LookupTableImportV2"), OpClass::kHashTable);
  EXPECT_EQ(conv::classify_op("InitializeTable"), OpClass::kHashTable);
  EXPECT_EQ(conv::classify_op("RaggedTensorToTensor"), OpClass::kRagged);
  EXPECT_EQ(conv::classify_op("SparseToDense"), OpClass::kSparse);
  EXPECT_EQ(conv::classify_op("SparseApplyAdagrad"), OpClass::kTrainingOnly);  // not a sparse tensor op
  EXPECT_EQ(conv::classify_op("TensorListReserve"), OpClass::kTensorList);
  EXPECT_EQ(conv::classify_op("EmptyTensorList"), OpClass::kTensorList);
  EXPECT_EQ(conv::classify_op("StatelessWhile"), OpClass::kFunctionalControlFlow);
  EXPECT_EQ(conv::classify_op("If"), OpClass::kFunctionalControlFlow);
  EXPECT_EQ(conv::classify_op("SimpleMLInferenceOpWithHandle"), OpClass::kDecisionForest);
  EXPECT_EQ(conv::classify_op("_FusedBatchNormEx"), OpClass::kOptimizerInternal);
  EXPECT_EQ(conv::classify_op("_MklFusedConv2D"), OpClass::kOptimizerInternal);
  EXPECT_EQ(conv::classify_op("Conv2DBackpropInput"), OpClass::kSupported);
  // Fetched variable updates are computed; ScatterNd is no update at all.
  EXPECT_EQ(conv::classify_op("ScatterUpdate"), OpClass::kSupported);
  EXPECT_EQ(conv::classify_op("ScatterNdAdd"), OpClass::kSupported);
  EXPECT_EQ(conv::classify_op("ScatterNd"), OpClass::kSupported);
  EXPECT_FALSE(conv::is_training_only_op("ScatterNd"));
  EXPECT_EQ(conv::classify_op("ResourceScatterAdd"), OpClass::kTrainingOnly);
  EXPECT_EQ(conv::classify_op("AssignAdd"), OpClass::kTrainingOnly);
}

// Each refused family names what the user can do, in the error the conversion throws.
TEST(InferenceCheck, FamiliesNobodyLowersAreRefusedWithTheirReason) {
  const std::string graph =
      placeholder("text", "DT_STRING", "dim { size: 2 }") + placeholder("x", "DT_FLOAT", "dim { size: 2 }") +
      "node { name: 'bucket' op: 'StringToHashBucketFast' input: 'text' attr { key: 'num_buckets' value { i: 8 } } }\n"
      "node { name: 'list' op: 'TensorListFromTensor' input: 'x' input: 'x' }\n"
      "node { name: 'loop' op: 'StatelessWhile' input: 'x' }\n";
  const ConvertOutcome r = try_convert(text_graph_options(graph, {"bucket", "list", "loop"}));
  EXPECT_TRUE(contains(r.error, "string ops (floe tensors hold numbers")) << r.error;
  EXPECT_TRUE(contains(r.error, "StringToHashBucketFast x1: bucket")) << r.error;
  EXPECT_TRUE(contains(r.error, "TF2 tensor lists (control flow v2 loop state): build the graph after "
                                "tf.compat.v1.disable_control_flow_v2()")) << r.error;
  EXPECT_TRUE(contains(r.error, "TensorListFromTensor x1: list")) << r.error;
  EXPECT_TRUE(contains(r.error, "functional While / If")) << r.error;
  EXPECT_TRUE(contains(r.error, "StatelessWhile x1: loop")) << r.error;
}

}  // namespace
}  // namespace floe::testing
