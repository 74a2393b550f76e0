// SPDX-License-Identifier: Apache-2.0
// CropAndResize, NonMaxSuppressionV4/V5, Dilation2D, MaxPool3D/AvgPool3D,
// MaxPoolWithArgmax and ImageProjectiveTransformV3 against the TensorFlow.js
// oracle (../shared/tools/peers/tfjs_oracle.js, run live): each graph is
// written here in text form, converted by floe and, as a binary GraphDef, run
// by TF.js on the same inputs. Skipped visibly without node or the peers'
// node_modules. Where TF.js departs from TensorFlow the test follows TF and
// says so next to the case.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>

#include <google/protobuf/text_format.h>

#include "converter/ir/error.h"
#include "converter/proto/tf_subset.pb.h"
#include "runtime/tools/npy.h"
#include "tests/converter/support/tf_graph_text.h"
#include "tests/support/corpus.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

using G = TfGraphText;

std::string peers_dir() { return shared_dir() + "/tools/peers"; }

// Empty when the oracle can run, else why not.
std::string oracle_unavailable() {
  if (!path_exists(peers_dir() + "/tfjs_oracle.js")) return "../shared/tools/peers/tfjs_oracle.js not available";
  if (!path_exists(peers_dir() + "/node_modules/@tensorflow/tfjs-converter")) {
    return "../shared/tools/peers/node_modules not installed (npm ci there)";
  }
  if (run_command("node --version").exit_code != 0) return "node not installed";
  return "";
}

#define FLOE_REQUIRE_ORACLE()                                                         \
  do {                                                                                \
    const std::string why = oracle_unavailable();                                     \
    if (!why.empty()) GTEST_SKIP() << "SKIPPED: TF.js oracle unavailable: " << why;   \
  } while (0)

std::string file_name(std::string tensor) {
  for (char& c : tensor) {
    if (c == '/' || c == ':') c = '_';
  }
  return tensor;
}

std::vector<double> as_doubles(DType dtype, const void* data, int64_t n) {
  std::vector<double> out;
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
      case DType::kFloat32: out.push_back(static_cast<const float*>(data)[i]); break;
      case DType::kInt32: out.push_back(static_cast<const int32_t*>(data)[i]); break;
      case DType::kInt64: out.push_back(static_cast<double>(static_cast<const int64_t*>(data)[i])); break;
      default: ADD_FAILURE() << "unexpected dtype " << dtype_name(dtype); return out;
    }
  }
  return out;
}

struct Result {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

// The graph `text` (a .pbtxt file) as a binary GraphDef for tfjs_oracle.js.
std::string write_binary_graph(const std::string& text_path, const std::string& pb_path) {
  std::ifstream in(text_path);
  std::stringstream text;
  text << in.rdbuf();
  tfproto::GraphDef graph;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text.str(), &graph)) << text_path;
  std::ofstream(pb_path, std::ios::binary) << graph.SerializeAsString();
  return pb_path;
}

// Runs the oracle on the graph; one Result per output.
// TF.js's MaxPoolWithArgmax returns its indices as an int32 tensor holding a
// Float32Array, which tfjs_oracle.js writes as '<i4': `float_bits` outputs are
// read back as the float32 values they hold.
std::vector<Result> run_oracle(const std::string& dir, const std::string& graph_text,
                               const std::map<std::string, HostTensor>& feeds, const std::vector<std::string>& outputs,
                               const std::vector<std::string>& float_bits = {}) {
  const std::string pb = write_binary_graph(graph_text, dir + "/graph.pb");
  std::string cmd = "node " + peers_dir() + "/tfjs_oracle.js " + pb;
  for (const auto& [name, t] : feeds) {
    const std::string path = dir + "/in_" + file_name(name) + ".npy";
    tools::write_npy(path, t.dtype, t.shape, t.data.data());
    cmd += " -i " + name + ":0=" + path;
  }
  for (const std::string& out : outputs) cmd += " -o " + out + "=" + dir + "/out_" + file_name(out) + ".npy";
  const CommandResult r = run_command(cmd + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << cmd << "\n" << r.output;
  std::vector<Result> results;
  if (r.exit_code != 0) return results;
  for (const std::string& out : outputs) {
    const tools::NpyArray a = tools::read_npy(dir + "/out_" + file_name(out) + ".npy");
    int64_t n = 1;
    for (int64_t d : a.shape) n *= d;
    const bool bits = std::find(float_bits.begin(), float_bits.end(), out) != float_bits.end();
    results.push_back({a.shape, as_doubles(bits && a.dtype == DType::kInt32 ? DType::kFloat32 : a.dtype, a.data.data(), n)});
  }
  return results;
}

std::vector<Result> run_floe(const std::string& graph_text, const std::map<std::string, HostTensor>& feeds,
                             const std::vector<std::string>& outputs) {
  conv::ConvertOptions options;
  options.target = "reference";
  options.graph_path = graph_text;
  options.outputs = outputs;
  for (const auto& [name, t] : feeds) options.inputs.push_back(name);
  const conv::ConvertResult converted = conv::convert(options);
  std::vector<Result> results;
  for (const HostTensor& t : run_model(converted.model, feeds)) {
    results.push_back({t.shape, as_doubles(t.dtype, t.data.data(), t.num_elements())});
  }
  return results;
}

struct OracleCase {
  std::string name;
  std::function<void(G&)> graph;
  std::map<std::string, HostTensor> feeds;
  std::vector<std::string> outputs;
  double tolerance = 1e-5;
  std::vector<std::string> oracle_float_bits = {};
  // Outputs asked of TF.js when it has fewer than floe (default: all).
  std::vector<std::string> oracle_outputs = {};
};

double worst(const Result& a, const Result& b) {
  if (a.values.size() != b.values.size()) return INFINITY;
  double w = 0.0;
  for (size_t i = 0; i < a.values.size(); ++i) {
    if (std::isnan(a.values[i]) != std::isnan(b.values[i])) return INFINITY;
    if (!std::isnan(a.values[i])) w = std::max(w, std::fabs(a.values[i] - b.values[i]));
  }
  return w;
}

// Where `a` and `b` differ most, for failure messages.
std::string first_difference(const Result& a, const Result& b) {
  size_t at = 0;
  double most = -1.0;
  for (size_t i = 0; i < a.values.size() && i < b.values.size(); ++i) {
    const double d = std::fabs(a.values[i] - b.values[i]);
    if (d > most || (std::isnan(d) && most >= 0.0)) {
      most = std::isnan(d) ? INFINITY : d;
      at = i;
    }
  }
  if (most <= 0.0) return "";
  return "; largest difference at " + std::to_string(at) + ": floe " + std::to_string(a.values[at]) + ", TF.js " +
         std::to_string(b.values[at]);
}

// Converts and runs `c` both ways; returns (floe, oracle) outputs.
std::pair<std::vector<Result>, std::vector<Result>> run_both(const OracleCase& c) {
  const std::string dir = make_temp_dir();
  G g;
  c.graph(g);
  const std::string text = g.write(dir + "/" + c.name + ".pbtxt");
  return {run_floe(text, c.feeds, c.outputs),
          run_oracle(dir, text, c.feeds, c.oracle_outputs.empty() ? c.outputs : c.oracle_outputs, c.oracle_float_bits)};
}

void expect_matches(const OracleCase& c) {
  const auto [floe, oracle] = run_both(c);
  ASSERT_EQ(floe.size(), c.outputs.size()) << c.name;
  ASSERT_EQ(oracle.size(), c.outputs.size()) << c.name;
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    EXPECT_EQ(floe[i].shape, oracle[i].shape) << c.name << " " << c.outputs[i];
    EXPECT_LE(worst(floe[i], oracle[i]), c.tolerance) << c.name << " " << c.outputs[i] << first_difference(floe[i], oracle[i]);
  }
}

std::string f(const char* key) { return G::type(key, "DT_FLOAT"); }

// ---- CropAndResize ----------------------------------------------------------------------

TEST(ImageOpsOracle, CropAndResizeBilinearWithExtrapolation) {
  FLOE_REQUIRE_ORACLE();
  // Box 1 reaches outside the image (extrapolation_value), box 2 is flipped
  // (y1 > y2: an upside-down crop), box 3 is one pixel tall.
  expect_matches({"crop_bilinear",
                  [](G& g) {
                    g.placeholder("image", "DT_FLOAT", {2, 6, 7, 3});
                    g.constant("boxes", "DT_FLOAT", {4, 4},
                               {0.1, 0.2, 0.8, 0.9, -0.25, -0.1, 1.2, 0.5, 0.9, 0.7, 0.2, 0.1, 0.5, 0.0, 0.5, 1.0});
                    g.constant("box_ind", "DT_INT32", {4}, {0, 1, 1, 0});
                    g.constant("crop_size", "DT_INT32", {2}, {3, 5});
                    g.node("crop", "CropAndResize", {"image", "boxes", "box_ind", "crop_size"},
                           {f("T"), G::str("method", "bilinear"), "attr { key: \"extrapolation_value\" value { f: 0.5 } }"});
                  },
                  {{"image", random_f32({2, 6, 7, 3}, 11)}},
                  {"crop:0"}});
}

TEST(ImageOpsOracle, CropAndResizeNearestWithFedBoxes) {
  FLOE_REQUIRE_ORACLE();
  // Boxes and box indices are fed at run time; crop width 1 samples the box's centre.
  expect_matches({"crop_nearest",
                  [](G& g) {
                    g.placeholder("image", "DT_FLOAT", {3, 5, 4, 2});
                    g.placeholder("boxes", "DT_FLOAT", {3, 4});
                    g.placeholder("box_ind", "DT_INT32", {3});
                    g.constant("crop_size", "DT_INT32", {2}, {4, 1});
                    g.node("crop", "CropAndResize", {"image", "boxes", "box_ind", "crop_size"},
                           {f("T"), G::str("method", "nearest")});
                  },
                  {{"image", random_f32({3, 5, 4, 2}, 12)},
                   {"boxes", make_f32({3, 4}, {0.0f, 0.0f, 1.0f, 1.0f, 0.3f, 0.1f, 0.9f, 0.6f, 1.1f, 0.2f, -0.3f, 0.8f})},
                   {"box_ind", make_i32({3}, {2, 0, 1})}},
                  {"crop:0"}});
}

// A fed box index outside [0, batch) fails the Invoke (TF fails the op too).
TEST(ImageOps, CropAndResizeRefusesFedBoxIndexOutOfRange) {
  const std::string dir = make_temp_dir();
  G g;
  g.placeholder("image", "DT_FLOAT", {2, 4, 4, 1});
  g.placeholder("box_ind", "DT_INT32", {1});
  g.constant("boxes", "DT_FLOAT", {1, 4}, {0, 0, 1, 1});
  g.constant("crop_size", "DT_INT32", {2}, {2, 2});
  g.node("crop", "CropAndResize", {"image", "boxes", "box_ind", "crop_size"}, {f("T")});
  conv::ConvertOptions options;
  options.target = "reference";
  options.graph_path = g.write(dir + "/crop.pbtxt");
  options.outputs = {"crop"};
  options.inputs = {"image", "box_ind"};
  const conv::ConvertResult r = conv::convert(options);
  const HostTensor image = random_f32({2, 4, 4, 1}, 3);
  EXPECT_EQ(run_model(r.model, {{"image", image}, {"box_ind", make_i32({1}, {1})}}).size(), 1u);
  for (int32_t bad : {2, -1}) {
    ::testing::TestPartResultArray failures;
    {
      ::testing::ScopedFakeTestPartResultReporter reporter(::testing::ScopedFakeTestPartResultReporter::
                                                                INTERCEPT_ONLY_CURRENT_THREAD,
                                                            &failures);
      EXPECT_TRUE(run_model(r.model, {{"image", image}, {"box_ind", make_i32({1}, {bad})}}).empty());
    }
    ASSERT_GE(failures.size(), 1) << "box index " << bad << " ran";
    EXPECT_NE(std::string(failures.GetTestPartResult(0).message()).find("kernel"), std::string::npos)
        << failures.GetTestPartResult(0).message();
  }
}

// ---- NonMaxSuppression -------------------------------------------------------------------

HostTensor nms_boxes(int n, uint32_t seed) {
  // Clustered boxes so that suppression happens: centres in [0.2, 0.8], sides 0.2..0.5.
  const HostTensor u = random_f32({n, 4}, seed, 0.0f, 1.0f);
  std::vector<float> v;
  for (int i = 0; i < n; ++i) {
    const float* r = u.as<float>() + 4 * i;
    const float cy = 0.2f + 0.6f * r[0], cx = 0.2f + 0.6f * r[1], h = 0.2f + 0.3f * r[2], w = 0.2f + 0.3f * r[3];
    // Odd boxes give their corners in the other order (TF accepts either).
    if (i % 2) {
      v.insert(v.end(), {cy + h / 2, cx + w / 2, cy - h / 2, cx - w / 2});
    } else {
      v.insert(v.end(), {cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2});
    }
  }
  return make_f32({n, 4}, v);
}

std::function<void(G&)> nms_graph(const std::string& op, int n, int max_out, double iou, bool fed_score_threshold,
                                   double sigma) {
  return [=](G& g) {
    g.placeholder("boxes", "DT_FLOAT", {n, 4});
    g.placeholder("scores", "DT_FLOAT", {n});
    g.constant("max_out", "DT_INT32", {}, {static_cast<double>(max_out)});
    g.constant("iou", "DT_FLOAT", {}, {iou});
    if (fed_score_threshold) {
      g.placeholder("score_threshold", "DT_FLOAT", {});
    } else {
      g.constant("score_threshold", "DT_FLOAT", {}, {0.1});
    }
    if (op == "NonMaxSuppressionV5") {
      g.constant("sigma", "DT_FLOAT", {}, {sigma});
      g.node("nms", op, {"boxes", "scores", "max_out", "iou", "score_threshold", "sigma"},
             {f("T"), G::boolean("pad_to_max_output_size", true)});
    } else {
      g.node("nms", op, {"boxes", "scores", "max_out", "iou", "score_threshold"},
             {f("T"), f("T_threshold"), G::boolean("pad_to_max_output_size", true)});
    }
  };
}

// TF pads the selected indices (and V5's scores) with 0 to max_output_size.
// TF.js does not: its V4 pads only to min(max_output_size, boxes) and its V5
// ignores pad_to_max_output_size and returns the selected entries alone (and
// no valid count). floe follows TF: every entry TF.js returns must match, the
// rest be 0, and the valid count equal TF.js's selection.
void expect_padded_nms_matches(const OracleCase& c, bool v5) {
  const auto [floe, oracle] = run_both(c);
  ASSERT_EQ(floe.size(), v5 ? 3u : 2u) << c.name;
  ASSERT_EQ(oracle.size(), 2u) << c.name;
  const size_t max_out = static_cast<size_t>(floe[0].shape.at(0));
  const size_t valid = static_cast<size_t>(floe.back().values.at(0));
  if (v5) {
    EXPECT_EQ(valid, oracle[0].values.size()) << c.name;
  } else {
    EXPECT_EQ(valid, static_cast<size_t>(oracle[1].values.at(0))) << c.name;
  }
  for (int k = 0; k < (v5 ? 2 : 1); ++k) {
    ASSERT_EQ(floe[k].values.size(), max_out) << c.name;
    ASSERT_LE(oracle[k].values.size(), max_out) << c.name;
    for (size_t i = 0; i < max_out; ++i) {
      const double want = i < oracle[k].values.size() ? oracle[k].values[i] : 0.0;
      EXPECT_NEAR(floe[k].values[i], i < valid ? want : 0.0, k == 0 ? 0.0 : 1e-6)
          << c.name << " output " << k << " entry " << i;
    }
  }
}

TEST(ImageOpsOracle, NonMaxSuppressionV4PaddedWithFedScoreThreshold) {
  FLOE_REQUIRE_ORACLE();
  for (uint32_t seed : {1u, 2u, 3u}) {
    // max_output_size 12 > the 10 boxes: TF's padding beyond the box count is exercised.
    expect_padded_nms_matches({"nms_v4_" + std::to_string(seed), nms_graph("NonMaxSuppressionV4", 10, 12, 0.4, true, 0.0),
                               {{"boxes", nms_boxes(10, seed)},
                                {"scores", random_f32({10}, seed + 100, 0.0f, 1.0f)},
                                {"score_threshold", make_f32({}, {0.15f})}},
                               {"nms:0", "nms:1"}},
                              false);
  }
}

TEST(ImageOpsOracle, NonMaxSuppressionV5HardAndSoft) {
  FLOE_REQUIRE_ORACLE();
  // Soft NMS with iou_threshold 1: TF.js hard-suppresses any overlap >= the
  // threshold even in soft mode, where TF only decays it (see the next test);
  // at 1 the two agree.
  for (uint32_t seed : {4u, 5u}) {
    for (double sigma : {0.0, 0.5}) {
      OracleCase c{"nms_v5_" + std::to_string(seed) + (sigma > 0 ? "_soft" : "_hard"),
                   nms_graph("NonMaxSuppressionV5", 12, 8, sigma > 0 ? 1.0 : 0.5, false, sigma),
                   {{"boxes", nms_boxes(12, seed)}, {"scores", random_f32({12}, seed + 100, 0.0f, 1.0f)}},
                   {"nms:0", "nms:1", "nms:2"}};
      c.oracle_outputs = {"nms:0", "nms:1"};
      expect_padded_nms_matches(c, true);
    }
  }
}

// TF's soft NMS decays a candidate whatever its overlap and selects it once
// its decayed score is the highest left; TF.js drops it when the overlap
// reaches iou_threshold. floe follows TF: box B overlaps the selected box A
// with IoU 0.6 > 0.5, so its score 0.8 becomes 0.8 * exp(-0.5 * 0.6^2 / 0.5)
// and it is selected second.
TEST(ImageOps, SoftNonMaxSuppressionDecaysOverlapsBeyondTheThresholdAsTf) {
  const std::string dir = make_temp_dir();
  G g;
  nms_graph("NonMaxSuppressionV5", 2, 3, 0.5, false, 0.5)(g);
  // A = [0, 0, 1, 1]; B = [0, 0.25, 1, 1.25]: intersection 0.75, union 1.25.
  const std::vector<Result> out =
      run_floe(g.write(dir + "/soft.pbtxt"),
               {{"boxes", make_f32({2, 4}, {0, 0, 1, 1, 0, 0.25f, 1, 1.25f})}, {"scores", make_f32({2}, {0.9f, 0.8f})}},
               {"nms:0", "nms:1", "nms:2"});
  ASSERT_EQ(out.size(), 3u);
  const float iou = 0.75f / 1.25f;
  EXPECT_EQ(out[0].values, (std::vector<double>{0, 1, 0}));
  ASSERT_EQ(out[1].values.size(), 3u);
  EXPECT_FLOAT_EQ(static_cast<float>(out[1].values[0]), 0.9f);
  EXPECT_FLOAT_EQ(static_cast<float>(out[1].values[1]), 0.8f * std::exp(-0.5f * iou * iou / 0.5f));
  EXPECT_EQ(out[1].values[2], 0.0);
  EXPECT_EQ(out[2].values, (std::vector<double>{2}));
}

// The forms whose output length depends on the data are refused, naming the
// node, the bound and the export that floe can run.
TEST(ImageOps, DataDependentNonMaxSuppressionIsRefusedWithItsBound) {
  const std::string dir = make_temp_dir();
  for (const std::string op : {"NonMaxSuppressionV2", "NonMaxSuppressionV3", "NonMaxSuppressionV4", "NonMaxSuppressionV5"}) {
    G g;
    g.placeholder("boxes", "DT_FLOAT", {6, 4});
    g.placeholder("scores", "DT_FLOAT", {6});
    g.constant("max_out", "DT_INT32", {}, {4});
    g.constant("t", "DT_FLOAT", {}, {0.5});
    std::initializer_list<std::string> v2 = {"boxes", "scores", "max_out", "t"};
    std::initializer_list<std::string> v3 = {"boxes", "scores", "max_out", "t", "t"};
    std::initializer_list<std::string> v5 = {"boxes", "scores", "max_out", "t", "t", "t"};
    g.node("select", op, op == "NonMaxSuppressionV2" ? v2 : op == "NonMaxSuppressionV5" ? v5 : v3, {f("T")});
    conv::ConvertOptions options;
    options.target = "reference";
    options.graph_path = g.write(dir + "/" + op + ".pbtxt");
    options.outputs = {"select:0"};
    try {
      conv::convert(options);
      ADD_FAILURE() << op << " was converted";
    } catch (const conv::ConvertError& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.category(), conv::ErrorCategory::kUnsupported) << what;
      EXPECT_NE(what.find("node 'select' (op " + op + "): output length depends on the data"), std::string::npos) << what;
      EXPECT_NE(what.find("max_output_size = 4"), std::string::npos) << what;
      EXPECT_NE(what.find("pad_to_max_output_size=True"), std::string::npos) << what;
    }
  }
}

// ---- Dilation2D, 3-D pooling, MaxPoolWithArgmax --------------------------------------------

TEST(ImageOpsOracle, Dilation2DSameAndValid) {
  FLOE_REQUIRE_ORACLE();
  struct Variant {
    const char* padding;
    int64_t stride, rate;
  };
  for (const Variant v : {Variant{"SAME", 2, 2}, Variant{"VALID", 1, 1}, Variant{"SAME", 1, 3}}) {
    expect_matches({std::string("dilation_") + v.padding + std::to_string(v.stride) + std::to_string(v.rate),
                    [v](G& g) {
                      g.placeholder("x", "DT_FLOAT", {2, 7, 6, 3});
                      g.placeholder("k", "DT_FLOAT", {3, 2, 3});
                      g.node("dilate", "Dilation2D", {"x", "k"},
                             {f("T"), G::ints("strides", {1, v.stride, v.stride, 1}),
                              G::ints("rates", {1, v.rate, v.rate, 1}), G::str("padding", v.padding)});
                    },
                    {{"x", random_f32({2, 7, 6, 3}, 21)}, {"k", random_f32({3, 2, 3}, 22)}},
                    {"dilate:0"}});
  }
}

std::function<void(G&)> pool3d_graph(const std::string& op, const std::string& padding, std::vector<int64_t> k,
                                     std::vector<int64_t> s) {
  return [=](G& g) {
    g.placeholder("x", "DT_FLOAT", {2, 5, 6, 4, 3});
    g.node("pool", op, {"x"},
           {f("T"), G::ints("ksize", {1, k[0], k[1], k[2], 1}), G::ints("strides", {1, s[0], s[1], s[2], 1}),
            G::str("padding", padding)});
  };
}

TEST(ImageOpsOracle, MaxAndAvgPool3D) {
  FLOE_REQUIRE_ORACLE();
  for (const char* op : {"MaxPool3D", "AvgPool3D"}) {
    for (const char* padding : {"SAME", "VALID"}) {
      expect_matches({std::string(op) + padding, pool3d_graph(op, padding, {2, 3, 2}, {2, 2, 1}),
                      {{"x", random_f32({2, 5, 6, 4, 3}, 31)}},
                      {"pool:0"}});
    }
  }
}

// NCDHW (not run by TF.js's converter) equals NDHWC between transposes.
TEST(ImageOps, Pool3DInNcdhwEqualsNdhwc) {
  const HostTensor x = random_f32({1, 3, 5, 6, 4}, 32);  // NCDHW
  std::vector<float> ndhwc(x.num_elements());
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 5 * 6 * 4; ++i) ndhwc[static_cast<size_t>(i * 3 + c)] = x.as<float>()[c * 120 + i];
  }
  for (const char* op : {"MaxPool3D", "AvgPool3D"}) {
    const std::string dir = make_temp_dir();
    G a, b;
    a.placeholder("x", "DT_FLOAT", {1, 3, 5, 6, 4});
    a.node("pool", op, {"x"},
           {f("T"), G::ints("ksize", {1, 1, 2, 3, 2}), G::ints("strides", {1, 1, 2, 2, 1}), G::str("padding", "SAME"),
            G::str("data_format", "NCDHW")});
    b.placeholder("x", "DT_FLOAT", {1, 5, 6, 4, 3});
    b.node("pool", op, {"x"},
           {f("T"), G::ints("ksize", {1, 2, 3, 2, 1}), G::ints("strides", {1, 2, 2, 1, 1}), G::str("padding", "SAME")});
    const auto nc = run_floe(a.write(dir + "/a.pbtxt"), {{"x", x}}, {"pool:0"});
    const auto nd = run_floe(b.write(dir + "/b.pbtxt"), {{"x", make_f32({1, 5, 6, 4, 3}, ndhwc)}}, {"pool:0"});
    ASSERT_EQ(nc.size(), 1u);
    ASSERT_EQ(nd.size(), 1u);
    ASSERT_EQ(nc[0].shape, (std::vector<int64_t>{1, 3, 3, 3, 4}));
    ASSERT_EQ(nd[0].shape, (std::vector<int64_t>{1, 3, 3, 4, 3}));
    for (int c = 0; c < 3; ++c) {
      for (int i = 0; i < 36; ++i) EXPECT_EQ(nc[0].values[static_cast<size_t>(c * 36 + i)], nd[0].values[static_cast<size_t>(i * 3 + c)]);
    }
  }
}

TEST(ImageOpsOracle, MaxPoolWithArgmaxWithAndWithoutBatchInIndex) {
  FLOE_REQUIRE_ORACLE();
  for (bool batch : {false, true}) {
    for (const char* padding : {"SAME", "VALID"}) {
      expect_matches({std::string("argmax_") + padding + (batch ? "_batch" : ""),
                      [=](G& g) {
                        g.placeholder("x", "DT_FLOAT", {2, 5, 7, 3});
                        g.node("pool", "MaxPoolWithArgmax", {"x"},
                               {f("T"), G::type("Targmax", "DT_INT64"), G::ints("ksize", {1, 2, 3, 1}),
                                G::ints("strides", {1, 2, 2, 1}), G::str("padding", padding),
                                G::boolean("include_batch_in_index", batch)});
                      },
                      {{"x", random_f32({2, 5, 7, 3}, 41)}},
                      {"pool:0", "pool:1"},
                      0.0,
                      {"pool:1"}});
    }
  }
}

// TF's flat index without TF.js: batch 1's maximum of a 2x2 window over a
// [2, 2, 2, 1] input sits at (y, x) = (1, 0), flat (1 * 2 + 0) * 1 = 2 within
// its image, 4 + 2 = 6 with the batch term; ties go to the first in window order.
TEST(ImageOps, MaxPoolWithArgmaxFlatIndicesAsTf) {
  for (bool batch : {false, true}) {
    const std::string dir = make_temp_dir();
    G g;
    g.placeholder("x", "DT_FLOAT", {2, 2, 2, 1});
    g.node("pool", "MaxPoolWithArgmax", {"x"},
           {f("T"), G::ints("ksize", {1, 2, 2, 1}), G::ints("strides", {1, 1, 1, 1}), G::str("padding", "VALID"),
            G::boolean("include_batch_in_index", batch)});
    const std::vector<Result> out = run_floe(g.write(dir + "/argmax.pbtxt"),
                                             {{"x", make_f32({2, 2, 2, 1}, {5, 5, 1, 2, 0, 1, 7, 3})}},
                                             {"pool:0", "pool:1"});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].values, (std::vector<double>{5, 7}));
    EXPECT_EQ(out[1].values, (std::vector<double>{0, batch ? 6.0 : 2.0})) << "include_batch_in_index " << batch;
  }
}

// ---- ImageProjectiveTransformV3 ------------------------------------------------------------

std::function<void(G&)> transform_graph(int64_t batch, const std::string& fill, const std::string& interpolation) {
  return [=](G& g) {
    g.placeholder("images", "DT_FLOAT", {batch, 6, 5, 2});
    g.placeholder("transforms", "DT_FLOAT", {batch, 8});
    g.constant("shape", "DT_INT32", {2}, {7, 4});
    g.constant("fill", "DT_FLOAT", {}, {0.25});
    g.node("warp", "ImageProjectiveTransformV3", {"images", "transforms", "shape", "fill"},
           {G::type("dtype", "DT_FLOAT"), G::str("interpolation", interpolation), G::str("fill_mode", fill)});
  };
}

HostTensor slice0(const HostTensor& t, int64_t index) {
  HostTensor s = t;
  s.shape[0] = 1;
  const size_t bytes = t.data.size() / static_cast<size_t>(t.shape[0]);
  s.data.assign(t.data.begin() + static_cast<ptrdiff_t>(bytes * static_cast<size_t>(index)),
                t.data.begin() + static_cast<ptrdiff_t>(bytes * static_cast<size_t>(index + 1)));
  return s;
}

// TF.js's Transform kernel returns after the first image (a `return` inside
// its batch loop), leaving the others at fill_value; TF transforms every image
// with its own row of transforms. So floe runs the batch of 2 and TF.js each
// image alone. Per image: rotation + shear + translation with a perspective
// term, and a zoom-out that reads far outside the image (every fill mode's
// folding). The values avoid points exactly between pixels, where TF's
// std::round and TF.js's Math.round differ (negative halves) and float32 vs
// float64 arithmetic could fall on either side.
TEST(ImageOpsOracle, ImageProjectiveTransformEveryFillModeAndInterpolation) {
  FLOE_REQUIRE_ORACLE();
  const HostTensor images = random_f32({2, 6, 5, 2}, 51);
  const HostTensor transforms = make_f32({2, 8}, {0.93f, -0.31f, 1.37f, 0.27f, 1.13f, -1.91f, 0.011f, -0.017f,  //
                                                  2.47f, 0.03f, -3.93f, 0.02f, 2.53f, -3.41f, 0.0f, 0.0f});
  for (const char* fill : {"CONSTANT", "REFLECT", "WRAP", "NEAREST"}) {
    for (const char* interpolation : {"NEAREST", "BILINEAR"}) {
      const std::string name = std::string("transform_") + fill + "_" + interpolation;
      const std::string dir = make_temp_dir();
      G batch2;
      transform_graph(2, fill, interpolation)(batch2);
      const std::vector<Result> floe =
          run_floe(batch2.write(dir + "/batch2.pbtxt"), {{"images", images}, {"transforms", transforms}}, {"warp:0"});
      ASSERT_EQ(floe.size(), 1u) << name;
      ASSERT_EQ(floe[0].shape, (std::vector<int64_t>{2, 7, 4, 2})) << name;
      for (int64_t b = 0; b < 2; ++b) {
        G single;
        transform_graph(1, fill, interpolation)(single);
        const std::string image_dir = make_temp_dir();
        const std::vector<Result> oracle =
            run_oracle(image_dir, single.write(image_dir + "/single.pbtxt"),
                       {{"images", slice0(images, b)}, {"transforms", slice0(transforms, b)}}, {"warp:0"});
        ASSERT_EQ(oracle.size(), 1u) << name;
        Result mine;
        mine.shape = {1, 7, 4, 2};
        mine.values.assign(floe[0].values.begin() + b * 56, floe[0].values.begin() + (b + 1) * 56);
        EXPECT_EQ(mine.shape, oracle[0].shape) << name;
        EXPECT_LE(worst(mine, oracle[0]), 1e-5) << name << " image " << b << first_difference(mine, oracle[0]);
      }
    }
  }
}

}  // namespace
}  // namespace floe::testing
