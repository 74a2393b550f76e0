// SPDX-License-Identifier: Apache-2.0
// SignatureDef selection (serving_default, the only one, or an error listing
// them), SavedModel tag sets, and the --info / --list-ops descriptions that let a
// user pick inputs and outputs without TensorBoard; --list-ops --all, every op
// floe knows with its treatment, read from the code that does it.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "converter/frontend/graphdef/graph_loader.h"
#include "converter/ir/error.h"
#include "converter/ops/op_registry.h"
#include "converter/passes/training_structure.h"
#include "converter/pipeline/info.h"
#include "converter/pipeline/signature.h"
#include "tests/converter/support/tf1_test_util.h"
#include "tests/support/corpus.h"

namespace floe::testing {
namespace {

tfproto::MetaGraphDef meta_with_signatures(const std::vector<std::string>& names) {
  tfproto::MetaGraphDef meta;
  for (const std::string& name : names) {
    tfproto::SignatureDef& def = (*meta.mutable_signature_def())[name];
    def.set_method_name("tensorflow/serving/predict");
    tfproto::TensorInfo& in = (*def.mutable_inputs())["x"];
    in.set_name(name + "_x:0");
    in.set_dtype(tfproto::DT_FLOAT);
    (*def.mutable_outputs())["y"].set_name(name + "_y:0");
  }
  (*meta.mutable_signature_def())["__saved_model_init_op"].mutable_outputs()->operator[]("init").set_name("NoOp");
  return meta;
}

TEST(Signature, ServingDefaultThenTheOnlyOneThenAnErrorListingAll) {
  auto chosen = conv::choose_signature(meta_with_signatures({"predict", "serving_default"}), "", "m");
  ASSERT_TRUE(chosen.has_value());
  EXPECT_EQ(chosen->name, "serving_default");
  EXPECT_EQ(chosen->outputs.at(0).tensor, "serving_default_y:0");

  chosen = conv::choose_signature(meta_with_signatures({"predict"}), "", "m");
  ASSERT_TRUE(chosen.has_value());
  EXPECT_EQ(chosen->inputs.at(0).tensor, "predict_x:0");

  std::string error = conv_error([] { conv::choose_signature(meta_with_signatures({"b", "a"}), "", "m.pb"); });
  EXPECT_TRUE(contains(error, "m.pb: 2 signatures and none is serving_default; choose one with --signature: a, b"))
      << error;
  error = conv_error([] { conv::choose_signature(meta_with_signatures({"b", "a"}), "zzz", "m.pb"); });
  EXPECT_TRUE(contains(error, "no signature 'zzz'; available: a, b")) << error;
  EXPECT_FALSE(conv::choose_signature(tfproto::MetaGraphDef(), "", "m").has_value());
  EXPECT_EQ(conv::format_signature(conv::list_signatures(meta_with_signatures({"a"})).at(0)),
            "a(x=a_x:0 DT_FLOAT ? -> y=a_y:0 DT_INVALID ?)");
}

const char* kHalfPlusTwo = "tensorflow_serving/servables/tensorflow/testdata/saved_model_half_plus_two_cpu/00000123";

TEST(Signature, SavedModelConvertsWithNoOtherFlags) {
  FLOE_REQUIRE_CORPUS(kHalfPlusTwo);
  conv::ConvertOptions options;
  options.graph_path = corpus_path(kHalfPlusTwo);
  const ConvertOutcome r = try_convert(options);
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(contains(r.summary, "signature serving_default")) << r.summary;
  options.signature = "regress_x2_to_y3";
  options.input_shapes = {{"x2", {3, 1}}};
  const ConvertOutcome y3 = try_convert(options);
  ASSERT_TRUE(y3.error.empty()) << y3.error;
  const auto out = run_model(y3.model, {{"x2", make_f32({3, 1}, {1, 2, 5})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(as_floats(out[0]), (std::vector<float>{3.5f, 4.0f, 5.5f}));  // y3 = 0.5 * x2 + 3
  options.signature = "nope";
  EXPECT_TRUE(contains(try_convert(options).error, "available: classify_x_to_y, regress_x2_to_y3"));
}

TEST(Signature, TagSetSelectsTheMetaGraph) {
  const char* rel = "ngraph_bridge/test/python/sample_graph";
  FLOE_REQUIRE_CORPUS(std::string(rel) + "/saved_model.pb");
  conv::ConvertOptions options;
  options.graph_path = corpus_path(rel);
  options.outputs = {"out_node"};
  options.tags = {"gpu"};
  EXPECT_TRUE(contains(try_convert(options).error, "no MetaGraphDef with tags {gpu}; available tag sets: {train}, {serve}"));
  options.tags = {"train"};
  const ConvertOutcome r = try_convert(options);
  EXPECT_TRUE(r.error.empty()) << r.error;
}

TEST(Info, DescribesSavedModelSignaturesVariablesAndCheckpoint) {
  FLOE_REQUIRE_CORPUS(kHalfPlusTwo);
  conv::InfoOptions options;
  options.graph_path = corpus_path(kHalfPlusTwo);
  const std::string text = conv::describe_graph(options);
  EXPECT_TRUE(contains(text, "serving_default(x=x:0 DT_FLOAT [-1,1] -> y=y:0 DT_FLOAT [-1,1])  [default]")) << text;
  EXPECT_TRUE(contains(text, "tf_example  DT_STRING ?")) << text;
  EXPECT_TRUE(contains(text, "candidate outputs (3): y, y2, y3")) << text;
  EXPECT_TRUE(contains(text, "a  VariableV2 DT_FLOAT []  in checkpoint")) << text;
  EXPECT_TRUE(contains(text, "saver: restore op save/restore_all, checkpoint format V2")) << text;
  const std::string ops = conv::describe_ops(options);
  EXPECT_TRUE(contains(ops, "ParseExample")) << ops;
  EXPECT_TRUE(contains(ops, "refused on the inference path: string / queue / reader / py_func ops")) << ops;
}

TEST(Info, CandidateOutputsSkipTrainingStructure) {
  const char* rel = "mlperf_tiny_qualcomm/KWS/trained_models/kws.ckpt.meta";
  FLOE_REQUIRE_CORPUS(rel);
  const conv::LoadedGraph loaded = conv::load_graph(corpus_path(rel));
  const conv::Graph graph(loaded.graph, loaded.path);
  EXPECT_EQ(conv::candidate_outputs(graph), std::vector<std::string>{"dense/Softmax"});
  EXPECT_EQ(conv::default_checkpoint_for(loaded), corpus_path("mlperf_tiny_qualcomm/KWS/trained_models"));
}

TEST(Info, CheckpointAloneIsListedWithVerifiedCrcs) {
  const char* rel = "tensor2tensor/transformer_test_ckpt";
  FLOE_REQUIRE_CORPUS(std::string(rel) + "/model.ckpt-1.index");
  const std::string text = conv::describe_checkpoint(corpus_path(rel));
  EXPECT_TRUE(contains(text, "(V2, 2 shard(s), 250 tensors)")) << text.substr(0, 300);
  EXPECT_TRUE(contains(text, "global_step  DT_INT64 []")) << text.substr(0, 300);
  EXPECT_TRUE(contains(text, "CRC32C verified for 250 stored tensor(s)")) << text.substr(text.size() - 200);
}

// "  Name  kind: detail" rows of describe_all_ops(): name -> "kind: detail".
std::map<std::string, std::string> all_ops_rows(const std::string& text) {
  std::map<std::string, std::string> rows;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("  ", 0) != 0) continue;
    const size_t name_end = line.find(' ', 2);
    rows[line.substr(2, name_end - 2)] = line.substr(line.find_first_not_of(' ', name_end));
  }
  return rows;
}

TEST(Info, AllOpsComeFromTheRegistryThePassesAndTheRefusalRules) {
  const std::string text = conv::describe_all_ops();
  const auto rows = all_ops_rows(text);
  auto starts = [&](const std::string& name, const std::string& prefix) {
    const auto it = rows.find(name);
    return it != rows.end() && it->second.rfind(prefix, 0) == 0;
  };
  for (const conv::OpHandler* h : conv::registered_handlers()) {
    if (conv::classify_op(h->tf_op) != conv::OpClass::kSupported) continue;
    // A handler that refuses every use (its output length would depend on the data) says so.
    EXPECT_TRUE(starts(h->tf_op, h->refuses_every_use ? "refused" : "lowered")) << h->tf_op;
  }
  EXPECT_TRUE(starts("Conv2D", "lowered")) << text;
  EXPECT_TRUE(starts("ScatterUpdate", "lowered: a fetched variable update")) << text;
  EXPECT_TRUE(starts("NonMaxSuppressionV3", "refused: its output length depends on the data")) << text;
  EXPECT_TRUE(starts("Shape", "lowered: folded")) << text;
  EXPECT_TRUE(starts("TensorArrayGatherV3", "handled: TensorArray resolved")) << text;
  EXPECT_TRUE(starts("LoopCond", "handled: TF1 while loop unrolled")) << text;
  EXPECT_TRUE(starts("Merge", "handled: resolved at conversion time when the predicate folds")) << text;
  EXPECT_TRUE(starts("NoOp", "handled: training / saver structure")) << text;
  EXPECT_TRUE(starts("Multinomial", "refused: random ops")) << text;
  EXPECT_TRUE(starts("While", "refused: functional While / If")) << text;
  EXPECT_TRUE(starts("EmptyTensorList", "refused: TF2 tensor lists")) << text;
  EXPECT_TRUE(starts("_FusedBatchNormEx", "refused: TF graph-optimizer rewrites")) << text;
  // Families are listed by the patterns the rules match on.
  EXPECT_TRUE(starts("String*", "refused: string ops")) << text;
  EXPECT_TRUE(starts("HashTable*", "refused: hash tables")) << text;
  EXPECT_TRUE(starts("LookupTable*", "refused: hash tables")) << text;
  EXPECT_TRUE(starts("Ragged*", "refused: ragged tensors")) << text;
  EXPECT_TRUE(starts("Sparse*", "refused: sparse tensors")) << text;
  EXPECT_TRUE(starts("SimpleML*", "refused: TensorFlow Decision Forests")) << text;
  EXPECT_TRUE(starts("*Grad", "handled: training / saver structure")) << text;
  // Every exact row agrees with what the inference check decides for the op.
  int lowered = 0, handled = 0, refused = 0;
  for (const auto& [name, how] : rows) {
    if (name.find('*') != std::string::npos) continue;
    const conv::OpTreatment t = conv::op_treatment(name);
    EXPECT_EQ(how.substr(0, how.find(':')), conv::op_treatment_kind_name(t.kind)) << name;
    EXPECT_NE(t.kind, conv::OpTreatment::Kind::kUnknown) << name;
    if (t.kind == conv::OpTreatment::Kind::kLowered) {
      ++lowered;
      EXPECT_EQ(conv::classify_op(name), conv::OpClass::kSupported) << name;
    }
    handled += t.kind == conv::OpTreatment::Kind::kHandled;
    refused += t.kind == conv::OpTreatment::Kind::kRefused;
  }
  EXPECT_TRUE(contains(text, std::to_string(lowered) + " lowered, " + std::to_string(handled) +
                                 " handled by a pass, " + std::to_string(refused) + " refused with a reason"))
      << text;
  EXPECT_EQ(conv::op_treatment("Frobnicate").kind, conv::OpTreatment::Kind::kUnknown);
}

}  // namespace
}  // namespace floe::testing
