// SPDX-License-Identifier: Apache-2.0
// Loading real TF-written graph files: binary and text twins of the same graph
// must agree node for node and value for value (and agree with the values TF
// printed); a text file named .pb is sniffed as text; .meta, SavedModel
// directories and SavedModel files load with their MetaGraphDef parts.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "converter/ir/attrs.h"
#include "converter/frontend/graphdef/graph_loader.h"
#include "converter/ir/error.h"
#include "tests/support/corpus.h"

namespace floe::conv {
namespace {

using floe::testing::corpus_path;

const NodeDef* find_node(const GraphDef& graph, const std::string& name) {
  for (const auto& node : graph.node()) {
    if (node.name() == name) return &node;
  }
  return nullptr;
}

std::vector<double> read_csv_values(const std::string& path) {
  std::ifstream in(path);
  std::vector<double> out;
  for (double v; in >> v;) out.push_back(v);
  return out;
}

TEST(GraphLoader, Mnist00BinaryAndTextAgree) {
  FLOE_REQUIRE_CORPUS("dl4j_tf_graphs/examples/mnist_00/frozen_model.pb");
  const LoadedGraph binary = load_graph(corpus_path("dl4j_tf_graphs/examples/mnist_00/frozen_model.pb"));
  const LoadedGraph text = load_graph(corpus_path("dl4j_tf_graphs/examples/mnist_00/frozen_graph.pbtxt"));
  EXPECT_EQ(binary.kind, GraphFileKind::kGraphDef);
  EXPECT_EQ(binary.encoding, GraphEncoding::kBinary);
  EXPECT_EQ(text.kind, GraphFileKind::kGraphDef);
  EXPECT_EQ(text.encoding, GraphEncoding::kText);
  EXPECT_FALSE(binary.meta.has_value());

  ASSERT_EQ(binary.graph.node_size(), text.graph.node_size());
  ASSERT_GT(binary.graph.node_size(), 3);
  int consts = 0;
  for (int i = 0; i < binary.graph.node_size(); ++i) {
    const NodeDef& b = binary.graph.node(i);
    const NodeDef& t = text.graph.node(i);
    EXPECT_EQ(b.name(), t.name());
    EXPECT_EQ(b.op(), t.op()) << b.name();
    EXPECT_EQ(std::vector<std::string>(b.input().begin(), b.input().end()),
              std::vector<std::string>(t.input().begin(), t.input().end()))
        << b.name();
    if (b.op() == "Const") {
      const HostTensor bv = attr_tensor(b, "value");
      const HostTensor tv = attr_tensor(t, "value");
      EXPECT_EQ(bv.dtype, tv.dtype) << b.name();
      EXPECT_EQ(bv.shape, tv.shape) << b.name();
      EXPECT_EQ(bv.data, tv.data) << b.name();  // bit-identical
      ++consts;
    }
  }
  EXPECT_GE(consts, 2);
  // Stronger: the two parses are the same message.
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(binary.graph, text.graph));
}

TEST(GraphLoader, Mnist00WeightsMatchTheValuesTfPrinted) {
  FLOE_REQUIRE_CORPUS("dl4j_tf_graphs/examples/mnist_00/Variable.0.prediction_inbw.csv");
  const LoadedGraph loaded = load_graph(corpus_path("dl4j_tf_graphs/examples/mnist_00/frozen_model.pb"));
  for (const char* name : {"Variable", "Variable_1"}) {
    const NodeDef* node = find_node(loaded.graph, name);
    ASSERT_NE(node, nullptr) << name;
    const HostTensor value = attr_tensor(*node, "value");
    ASSERT_EQ(value.dtype, DType::kFloat32);
    const std::vector<double> expected = read_csv_values(
        corpus_path(std::string("dl4j_tf_graphs/examples/mnist_00/") + name + ".0.prediction_inbw.csv"));
    ASSERT_EQ(static_cast<int64_t>(expected.size()), value.num_elements()) << name;
    for (size_t i = 0; i < expected.size(); ++i) {
      // The CSV has 8 decimals.
      ASSERT_NEAR(value.as<float>()[i], expected[i], 1e-8 + 1e-7 * std::fabs(expected[i])) << name << "[" << i << "]";
    }
  }
}

TEST(GraphLoader, TextFileWithPbNameIsSniffedAsText) {
  FLOE_REQUIRE_CORPUS("dl4j_tf_graphs/train_iris.pb");
  const LoadedGraph misnamed = load_graph(corpus_path("dl4j_tf_graphs/train_iris.pb"));
  EXPECT_EQ(misnamed.encoding, GraphEncoding::kText);
  EXPECT_EQ(misnamed.kind, GraphFileKind::kGraphDef);
  const LoadedGraph twin = load_graph(corpus_path("dl4j_tf_graphs/train_iris.pbtxt"));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(misnamed.graph, twin.graph));
  EXPECT_GT(misnamed.graph.node_size(), 100);
}

TEST(GraphLoader, MetaGraphDefWithSaverDef) {
  FLOE_REQUIRE_CORPUS("tf2onnx/models/regression/checkpoint/model.meta");
  const LoadedGraph loaded = load_graph(corpus_path("tf2onnx/models/regression/checkpoint/model.meta"));
  EXPECT_EQ(loaded.kind, GraphFileKind::kMetaGraphDef);
  EXPECT_EQ(loaded.encoding, GraphEncoding::kBinary);
  ASSERT_TRUE(loaded.meta.has_value());
  EXPECT_FALSE(loaded.meta->has_graph_def());  // moved into `graph`
  EXPECT_GT(loaded.graph.node_size(), 10);
  const auto& saver = loaded.meta->saver_def();
  EXPECT_EQ(saver.filename_tensor_name(), "save/Const:0");
  EXPECT_EQ(saver.restore_op_name(), "save/restore_all");
  EXPECT_EQ(saver.version(), floe::tfproto::SaverDef::V2);
  EXPECT_FLOAT_EQ(saver.keep_checkpoint_every_n_hours(), 10000.0f);
  EXPECT_NE(find_node(loaded.graph, "save/restore_all"), nullptr);
  EXPECT_GT(loaded.meta->meta_info_def().stripped_op_list().op_size(), 0);
  ASSERT_TRUE(loaded.meta->collection_def().count("variables"));
  EXPECT_EQ(loaded.meta->collection_def().at("variables").kind_case(), floe::tfproto::CollectionDef::kBytesList);
  floe::tfproto::VariableDef variable;
  ASSERT_TRUE(variable.ParseFromString(loaded.meta->collection_def().at("variables").bytes_list().value(0)));
  EXPECT_EQ(variable.variable_name(), "W:0");
  EXPECT_EQ(variable.snapshot_name(), "W/read:0");
}

TEST(GraphLoader, SavedModelDirectory) {
  FLOE_REQUIRE_CORPUS("tf2onnx/models/regression/saved_model/saved_model.pb");
  const std::string dir = corpus_path("tf2onnx/models/regression/saved_model");
  const LoadedGraph loaded = load_graph(dir);
  EXPECT_EQ(loaded.kind, GraphFileKind::kSavedModel);
  EXPECT_EQ(loaded.path, dir + "/saved_model.pb");
  EXPECT_EQ(loaded.saved_model_dir, dir);
  ASSERT_TRUE(loaded.meta.has_value());
  EXPECT_EQ(format_tag_set(*loaded.meta), "{serve}");
  EXPECT_GT(loaded.graph.node_size(), 0);
  EXPECT_TRUE(floe::testing::path_exists(loaded.saved_model_dir + "/variables/variables.index"));
}

TEST(GraphLoader, SavedModelHalfPlusTwoHasServingDefault) {
  const char* rel = "tensorflow_serving/servables/tensorflow/testdata/saved_model_half_plus_two_cpu/00000123";
  FLOE_REQUIRE_CORPUS(std::string(rel) + "/saved_model.pb");
  const LoadedGraph loaded = load_graph(corpus_path(rel));
  ASSERT_TRUE(loaded.meta.has_value());
  const auto& signatures = loaded.meta->signature_def();
  ASSERT_TRUE(signatures.count("serving_default"));
  const auto& serving = signatures.at("serving_default");
  EXPECT_EQ(serving.method_name(), "tensorflow/serving/predict");
  ASSERT_TRUE(serving.inputs().count("x"));
  EXPECT_EQ(serving.inputs().at("x").name(), "x:0");
  EXPECT_EQ(serving.inputs().at("x").dtype(), floe::tfproto::DT_FLOAT);
  ASSERT_TRUE(serving.outputs().count("y"));
  EXPECT_EQ(serving.outputs().at("y").name(), "y:0");
  EXPECT_NE(find_node(loaded.graph, "x"), nullptr);
  EXPECT_NE(find_node(loaded.graph, "y"), nullptr);
  EXPECT_EQ(loaded.meta->meta_info_def().tensorflow_version(), "1.14.0");
}

TEST(GraphLoader, SavedModelTagMismatchListsAvailableSets) {
  FLOE_REQUIRE_CORPUS("tf2onnx/models/regression/saved_model/saved_model.pb");
  LoadOptions options;
  options.tags = {"train", "gpu"};
  try {
    load_graph(corpus_path("tf2onnx/models/regression/saved_model"), options);
    FAIL() << "expected ConvertError";
  } catch (const ConvertError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("saved_model.pb"), std::string::npos) << message;
    EXPECT_NE(message.find("{gpu, train}"), std::string::npos) << message;
    EXPECT_NE(message.find("available tag sets: {serve}"), std::string::npos) << message;
  }
}

TEST(GraphLoader, StrippedOpListDefaultsAreFilledOnLoad) {
  FLOE_REQUIRE_CORPUS("mlperf_tiny_qualcomm/KWS/trained_models/kws.ckpt.meta");
  const LoadedGraph loaded = load_graph(corpus_path("mlperf_tiny_qualcomm/KWS/trained_models/kws.ckpt.meta"));
  int batch_norms = 0;
  for (const auto& node : loaded.graph.node()) {
    if (node.op() != "FusedBatchNormV3") continue;
    ++batch_norms;
    ASSERT_NE(find_attr(node, "is_training"), nullptr) << node.name();
    ASSERT_NE(find_attr(node, "epsilon"), nullptr) << node.name();
  }
  EXPECT_GT(batch_norms, 0);
  std::printf("kws.ckpt.meta: %d FusedBatchNormV3 nodes, %zu default attrs filled\n", batch_norms,
              loaded.default_attrs_added);
}

// Sniffing on synthetic binaries covering each identifying rule of format_sniff.cc.
TEST(GraphLoader, SniffsEveryBinaryShape) {
  namespace tfp = floe::tfproto;
  auto kind_of = [](const google::protobuf::Message& message) {
    return load_graph_from_bytes(message.SerializeAsString(), "synthetic.pb").kind;
  };
  tfp::GraphDef with_nodes;
  auto* node = with_nodes.add_node();
  node->set_name("x");
  node->set_op("Placeholder");
  EXPECT_EQ(kind_of(with_nodes), GraphFileKind::kGraphDef);

  tfp::GraphDef versions_only;
  versions_only.mutable_versions()->set_producer(24);
  EXPECT_EQ(kind_of(versions_only), GraphFileKind::kGraphDef);

  tfp::GraphDef library_only;
  library_only.mutable_library()->add_function()->mutable_signature()->set_name("f");
  EXPECT_EQ(kind_of(library_only), GraphFileKind::kGraphDef);

  tfp::MetaGraphDef tags_only;
  tags_only.mutable_meta_info_def()->add_tags("serve");
  *tags_only.mutable_graph_def() = with_nodes;
  EXPECT_EQ(kind_of(tags_only), GraphFileKind::kMetaGraphDef);

  tfp::MetaGraphDef graph_only;
  *graph_only.mutable_graph_def() = with_nodes;
  EXPECT_EQ(kind_of(graph_only), GraphFileKind::kMetaGraphDef);

  tfp::MetaGraphDef with_ops;
  with_ops.mutable_meta_info_def()->mutable_stripped_op_list()->add_op()->set_name("Placeholder");
  *with_ops.mutable_graph_def() = with_nodes;
  with_ops.mutable_saver_def()->set_restore_op_name("save/restore_all");
  EXPECT_EQ(kind_of(with_ops), GraphFileKind::kMetaGraphDef);

  tfp::SavedModel saved_model;
  saved_model.set_saved_model_schema_version(1);
  *saved_model.add_meta_graphs() = tags_only;
  EXPECT_EQ(kind_of(saved_model), GraphFileKind::kSavedModel);
}

TEST(GraphLoader, TextSavedModelAndMetaGraphDef) {
  const std::filesystem::path dir = std::filesystem::path(FLOE_BINARY_DIR) / "test_tmp" / "graphdef" / "text_sm";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "saved_model.pbtxt") << R"(saved_model_schema_version: 1
meta_graphs {
  meta_info_def { tags: "train" }
  graph_def { node { name: "t" op: "NoOp" } }
}
meta_graphs {
  meta_info_def { tags: "serve" stripped_default_attrs: true
    stripped_op_list { op { name: "MatMul"
      attr { name: "transpose_a" type: "bool" default_value { b: false } } } } }
  graph_def {
    node { name: "a" op: "Placeholder" }
    node { name: "m" op: "MatMul" input: "a" input: "a" }
  }
  signature_def { key: "serving_default" value { method_name: "tensorflow/serving/predict" } }
}
)";
  const LoadedGraph loaded = load_graph(dir.string());
  EXPECT_EQ(loaded.kind, GraphFileKind::kSavedModel);
  EXPECT_EQ(loaded.encoding, GraphEncoding::kText);
  EXPECT_EQ(loaded.saved_model_dir, dir.string());
  ASSERT_EQ(loaded.graph.node_size(), 2);
  EXPECT_EQ(loaded.default_attrs_added, 1u);
  ASSERT_NE(find_attr(loaded.graph.node(1), "transpose_a"), nullptr);
  EXPECT_TRUE(loaded.meta->signature_def().count("serving_default"));

  std::ofstream(dir / "graph.meta.txt") << "# a comment first\nmeta_info_def { tags: \"x\" }\n"
                                           "graph_def { node { name: \"n\" op: \"NoOp\" } }\n"
                                           "saver_def { version: V2 }\n";
  const LoadedGraph meta = load_graph((dir / "graph.meta.txt").string());
  EXPECT_EQ(meta.kind, GraphFileKind::kMetaGraphDef);
  EXPECT_EQ(meta.meta->saver_def().version(), floe::tfproto::SaverDef::V2);
}

}  // namespace
}  // namespace floe::conv
