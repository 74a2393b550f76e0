// SPDX-License-Identifier: Apache-2.0
// The optimization passes inside the whole conversion, on graphs that use them:
// each graph is converted with every pass, with each pass turned off in turn,
// and with none; every variant must compute the same outputs (max abs
// difference 1e-4 on random inputs; batch-norm folding reassociates float32
// products, measured up to 6e-5 on MobileNet), and each pass the graph exercises
// must report rewrites. Corpus graphs: MobileNet (unfused batch norm, Keras
// ReLU6), LeNet, DS-CNN (FusedBatchNorm), a channels_first conv, an unrolled GRU;
// hand-written: Pad -> Conv2D (no corpus graph has one) and an NCHW conv stack.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "converter/optimize/optimize.h"
#include "tests/converter/support/tf_graph_text.h"
#include "tests/support/corpus.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

using G = TfGraphText;

struct PipelineCase {
  std::string name;
  std::function<std::string()> graph;  // path of the graph (corpus or written on the fly)
  std::map<std::string, std::vector<int64_t>> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> exercised;  // passes that must rewrite something on this graph
};

std::string corpus_graph(const std::string& rel) { return corpus_path(rel); }

// Pad (spatial, zeros) -> Conv2D VALID -> BiasAdd -> Relu6; a second Pad that
// must stay (it pads with 1).
std::string pad_conv_graph() {
  G g;
  g.placeholder("x", "DT_FLOAT", {1, 6, 6, 2});
  g.constant("pads", "DT_INT32", {4, 2}, {0, 0, 1, 2, 2, 1, 0, 0});
  std::vector<double> w(3 * 3 * 2 * 4);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1 * static_cast<double>(static_cast<int>(i % 7) - 3);
  g.constant("w", "DT_FLOAT", {3, 3, 2, 4}, w);
  g.constant("b", "DT_FLOAT", {4}, {0.5, -0.25, 0.125, 1.0});
  g.node("pad", "Pad", {"x", "pads"}, {G::type("T", "DT_FLOAT"), G::type("Tpaddings", "DT_INT32")});
  g.node("conv", "Conv2D", {"pad", "w"},
         {G::type("T", "DT_FLOAT"), G::ints("strides", {1, 2, 2, 1}), G::str("padding", "VALID"),
          G::str("data_format", "NHWC"), G::ints("dilations", {1, 1, 1, 1})});
  g.node("bias", "BiasAdd", {"conv", "b"}, {G::type("T", "DT_FLOAT"), G::str("data_format", "NHWC")});
  g.node("y", "Relu6", {"bias"}, {G::type("T", "DT_FLOAT")});
  g.constant("one", "DT_FLOAT", {}, {1});
  g.node("pad1", "PadV2", {"y", "pads", "one"}, {G::type("T", "DT_FLOAT"), G::type("Tpaddings", "DT_INT32")});
  g.node("z", "Conv2D", {"pad1", "w2"},
         {G::type("T", "DT_FLOAT"), G::ints("strides", {1, 1, 1, 1}), G::str("padding", "VALID"),
          G::str("data_format", "NHWC"), G::ints("dilations", {1, 1, 1, 1})});
  std::vector<double> w2(3 * 3 * 4 * 2, 0.05);
  g.constant("w2", "DT_FLOAT", {3, 3, 4, 2}, w2);
  return g.write(make_temp_dir() + "/pad_conv.pbtxt");
}

// NCHW: Conv2D -> BiasAdd -> Relu -> Conv2D -> BiasAdd -> Relu -> Mean(H, W).
std::string nchw_graph() {
  G g;
  g.placeholder("x", "DT_FLOAT", {1, 3, 8, 8});
  auto conv = [&](const std::string& name, const std::string& in, int64_t cin, int64_t cout) {
    std::vector<double> w(static_cast<size_t>(3 * 3 * cin * cout)), b(static_cast<size_t>(cout));
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05 * static_cast<double>(static_cast<int>(i % 11) - 5);
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.1 * static_cast<double>(i) - 0.2;
    g.constant(name + "/w", "DT_FLOAT", {3, 3, cin, cout}, w);
    g.constant(name + "/b", "DT_FLOAT", {cout}, b);
    g.node(name + "/conv", "Conv2D", {in, name + "/w"},
           {G::type("T", "DT_FLOAT"), G::ints("strides", {1, 1, 1, 1}), G::str("padding", "SAME"),
            G::str("data_format", "NCHW"), G::ints("dilations", {1, 1, 1, 1})});
    g.node(name + "/bias", "BiasAdd", {name + "/conv", name + "/b"},
           {G::type("T", "DT_FLOAT"), G::str("data_format", "NCHW")});
    g.node(name + "/relu", "Relu", {name + "/bias"}, {G::type("T", "DT_FLOAT")});
  };
  conv("c1", "x", 3, 4);
  conv("c2", "c1/relu", 4, 6);
  g.constant("axes", "DT_INT32", {2}, {2, 3});
  g.node("y", "Mean", {"c2/relu", "axes"},
         {G::type("T", "DT_FLOAT"), G::type("Tidx", "DT_INT32"), G::boolean("keep_dims", false)});
  return g.write(make_temp_dir() + "/nchw.pbtxt");
}

const std::vector<PipelineCase>& pipeline_cases() {
  static const std::vector<PipelineCase> cases = {
      {"mnet", [] { return corpus_graph("ARM_ML-examples/yeah-world/mnet.pb"); }, {{"input_1", {1, 128, 128, 3}}},
       {"output_0"}, {"fold-batch-norms", "fuse-bias-activation", "dead-code"}},
      {"lenet", [] { return corpus_graph("dl4j_tf_graphs/lenet_frozen.pb"); }, {{"input", {1, 784}}},
       {"Lenet/fc9_1/Relu", "output"}, {"fuse-bias-activation", "dead-code"}},
      {"ds_cnn", [] { return corpus_graph("ML-KWS-for-MCU/Pretrained_models/DS_CNN/DS_CNN_S.pb"); },
       {{"Mfcc", {1, 49, 10}}}, {"labels_softmax"}, {"fold-batch-norms", "fuse-bias-activation", "dead-code"}},
      {"channels_first", [] {
         return corpus_graph("dl4j_tf_graphs/examples/cnn2d_layers/channels_first_b1_k2_s1_d1_SAME_relu6/frozen_model.pb");
       }, {{"in_0", {1, 2, 5, 5}}}, {"conv2d/Relu6"}, {"transposes", "fuse-bias-activation"}},
      {"gru", [] { return corpus_graph("ML-KWS-for-MCU/Pretrained_models/GRU/GRU_S.pb"); }, {{"Mfcc", {1, 25, 10}}},
       {"labels_softmax"}, {"fuse-bias-activation", "dead-code"}},
      {"pad_conv", pad_conv_graph, {{"x", {1, 6, 6, 2}}}, {"z"}, {"fold-pads", "fuse-bias-activation"}},
      {"nchw", nchw_graph, {{"x", {1, 3, 8, 8}}}, {"y"}, {"transposes", "fuse-bias-activation"}},
  };
  return cases;
}

conv::ConvertResult convert_with(const PipelineCase& c, const std::string& graph, const conv::OptimizeOptions& o) {
  conv::ConvertOptions options;
  options.graph_path = graph;
  options.outputs = c.outputs;
  for (const auto& [name, shape] : c.inputs) {
    options.inputs.push_back(name);
    options.input_shapes[name] = shape;
  }
  options.optimize = o;
  return conv::convert(options);
}

std::vector<std::vector<double>> outputs_of(const PipelineCase& c, const std::vector<uint8_t>& model, uint32_t seed) {
  std::map<std::string, HostTensor> inputs;
  for (const auto& [name, shape] : c.inputs) inputs[name] = random_f32(shape, seed, -1.0f, 1.0f);
  std::vector<std::vector<double>> out;
  for (const HostTensor& t : run_model(model, inputs)) {
    std::vector<double> v;
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      v.push_back(t.dtype == DType::kFloat32 ? t.as<float>()[i]
                  : t.dtype == DType::kInt64 ? static_cast<double>(t.as<int64_t>()[i])
                                             : t.as<int32_t>()[i]);
    }
    out.push_back(v);
  }
  return out;
}

double max_difference(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return INFINITY;
    for (size_t k = 0; k < a[i].size(); ++k) worst = std::max(worst, std::fabs(a[i][k] - b[i][k]));
  }
  return worst;
}

class Pipeline : public ::testing::TestWithParam<size_t> {};

TEST_P(Pipeline, SameOutputsWithAndWithoutEachPass) {
  const PipelineCase& c = pipeline_cases()[GetParam()];
  const std::string graph = c.graph();
  if (!path_exists(graph)) GTEST_SKIP() << "SKIPPED: ../shared/corpus not available (" << graph << ")";
  const conv::ConvertResult all = convert_with(c, graph, conv::OptimizeOptions());
  for (const std::string& pass : c.exercised) {
    const conv::PassReport* p = all.optimization.find(pass);
    ASSERT_NE(p, nullptr);
    EXPECT_GT(p->rewrites, 0) << pass << " did nothing on " << c.name << "\n" << all.summary;
  }
  std::vector<std::pair<std::string, conv::OptimizeOptions>> variants;
  conv::OptimizeOptions none;
  none.enabled = false;
  variants.emplace_back("--no-optimize", none);
  for (const std::string& pass : conv::optimization_pass_names()) {
    conv::OptimizeOptions without;
    without.disabled = {pass};
    variants.emplace_back("--disable-pass " + pass, without);
  }
  conv::OptimizeOptions pass_folds_alone;  // lower_graph folds nothing; the pass folds it all
  pass_folds_alone.fold_while_lowering = false;
  variants.emplace_back("fold-constants pass alone", pass_folds_alone);
  for (uint32_t seed : {11u, 12u}) {
    const auto expected = outputs_of(c, all.model, seed);
    ASSERT_FALSE(expected.empty());
    for (const auto& [label, options] : variants) {
      const conv::ConvertResult r = convert_with(c, graph, options);
      EXPECT_LE(max_difference(outputs_of(c, r.model, seed), expected), 1e-4) << c.name << " " << label;
      if (label == "fold-constants pass alone") {
        EXPECT_EQ(r.optimization.ops_after, all.optimization.ops_after) << c.name << "\n" << r.summary;
      }
      if (label == "--disable-pass fold-constants" && c.name == "mnet") {
        EXPECT_EQ(r.optimization.ops_after, 324u) << r.summary;  // Rsqrt, Cast, ... computed at run time
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Graphs, Pipeline, ::testing::Range<size_t>(0, 7),
                         [](const ::testing::TestParamInfo<size_t>& info) { return pipeline_cases()[info.param].name; });

TEST(PipelineReport, NchwStackKeepsOnlyTheInputTranspose) {
  const PipelineCase& c = pipeline_cases()[6];
  const conv::ConvertResult r = convert_with(c, c.graph(), conv::OptimizeOptions());
  EXPECT_EQ(r.optimization.transposes_before, 4u) << r.summary;
  EXPECT_EQ(r.optimization.transposes_after, 1u) << r.summary;  // the NCHW input's; the mean absorbs the last
  EXPECT_EQ(r.optimization.ops_after, 4u) << r.summary;       // TRANSPOSE, CONV2D x2 (bias+relu), MEAN
}

TEST(PipelineReport, PadFoldsIntoTheConvolutionOnly) {
  const PipelineCase& c = pipeline_cases()[5];
  const conv::ConvertResult r = convert_with(c, c.graph(), conv::OptimizeOptions());
  EXPECT_EQ(r.optimization.find("fold-pads")->rewrites, 1) << r.summary;
  EXPECT_NE(r.summary.find("CONV2D 'conv' <- PAD 'pad' [1,2,2,1]"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("PAD x1"), std::string::npos) << r.summary;  // the pad with ones stays
}

// floe-convert's switches: --no-optimize, --disable-pass (repeatable or
// comma-separated), and one clear error for an unknown pass name.
TEST(PipelineCli, OptimizationSwitches) {
  const std::string graph = pipeline_cases()[5].graph();
  const std::string dir = make_temp_dir();
  const std::string base = tool_path("floe-convert") + " --graph " + graph + " --outputs z --target reference -o " + dir;
  const CommandResult all = run_command(base + "/all.floe");
  EXPECT_EQ(all.exit_code, 0) << all.output;
  EXPECT_NE(all.output.find("fold-pads: 1 rewrite\n      CONV2D 'conv' <- PAD 'pad' [1,2,2,1]"), std::string::npos)
      << all.output;
  const CommandResult none = run_command(base + "/none.floe --no-optimize");
  EXPECT_EQ(none.exit_code, 0) << none.output;
  EXPECT_NE(none.output.find("optimized: 6 -> 6 ops"), std::string::npos) << none.output;
  EXPECT_NE(none.output.find("fold-pads: disabled"), std::string::npos) << none.output;
  const CommandResult some = run_command(base + "/some.floe --disable-pass fold-pads,dead-code --disable-pass transposes");
  EXPECT_EQ(some.exit_code, 0) << some.output;
  for (const char* pass : {"fold-pads", "dead-code", "transposes"}) {
    EXPECT_NE(some.output.find(std::string(pass) + ": disabled"), std::string::npos) << some.output;
  }
  const CommandResult bad = run_command(base + "/bad.floe --disable-pass fold-everything");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("--disable-pass: unknown pass 'fold-everything' (passes: fold-constants, transposes, "
                            "fold-pads, fold-batch-norms, fuse-bias-activation, dead-code)"),
            std::string::npos)
      << bad.output;
  EXPECT_FALSE(file_exists(dir + "/bad.floe"));
}

}  // namespace
}  // namespace floe::testing
