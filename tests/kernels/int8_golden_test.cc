// SPDX-License-Identifier: Apache-2.0
// floe's int8 reference kernels against ../shared/corpus/int8_kernels: 119
// cases whose expected outputs TensorFlow Lite's reference kernels computed
// (the arithmetic TFLM and CMSIS-NN reproduce bit for bit). Every case is
// either run, every output byte compared (zero differences allowed), or listed
// with the reason floe has no kernel for it; an unknown case fails the test.
//
// Reading the cases (layouts are TFLite's; see the corpus README; conv
// weights are transposed from TFLite's OHWI to floe's HWIO, as the converter
// does):
// - `*_INPUT_OFFSET` is minus the input zero point, `*_OUTPUT_OFFSET` the
//   output zero point, `FILTER_OFFSET` is added to the weights as the input
//   offset is to the input; shifts are positive for a left shift.
// - `fully_connected` and `fully_connected_mve_0` also hold arrays of other
//   tests (`_output_mult` of 1,001 values, `_output`): the requantization is
//   the config's OUTPUT_MULTIPLIER / OUTPUT_SHIFT and the expectation
//   `_output_ref`.
// - Pooling `PADDING_H/W` are the top/left padding; the batch is BATCH_SIZE
//   (`avgpooling_4` says INPUT_N 1 but holds 3 batches).
// - `*null_bias*` cases store all-zero biases: they run with no bias (and the
//   test checks the stored ones are zero). A conv case with CH_MULT is a
//   depthwise one; grouped convs get their group count from the weight size.
// - DS-CNN configs give FC / SOFTMAX sizes that are not the layer's (OUT_CH 64
//   on a 64 -> 12 layer): those come from the arrays.
#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/kernels/reference/binary.h"
#include "runtime/kernels/reference/conv2d.h"
#include "runtime/kernels/reference/depthwise_conv2d.h"
#include "runtime/kernels/reference/matmul.h"
#include "runtime/kernels/reference/pad.h"
#include "runtime/kernels/reference/pool2d.h"
#include "runtime/kernels/reference/softmax.h"
#include "runtime/tools/npy.h"
#include "tests/support/corpus.h"

namespace floe::ref {
namespace {

const char kCorpus[] = "int8_kernels";

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
  return s;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// One case folder: its config lines and its arrays.
class Case {
 public:
  explicit Case(std::string name) : name_(std::move(name)) {
    dir_ = testing::corpus_path(std::string(kCorpus) + "/" + name_);
    std::ifstream in(dir_ + "/config.txt");
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string key, value;
      if (words >> key >> value) config_[key] = value;
    }
  }

  const std::string& name() const { return name_; }
  bool has(const std::string& key) const { return config_.count(key) != 0; }
  // A config value by its full key.
  int32_t value(const std::string& key) const {
    auto it = config_.find(key);
    if (it == config_.end()) {
      ADD_FAILURE() << name_ << ": config has no " << key;
      return 0;
    }
    return static_cast<int32_t>(std::stol(it->second));
  }
  int32_t value_or(const std::string& key, int32_t fallback) const {
    return has(key) ? value(key) : fallback;
  }
  std::string text(const std::string& key) const {
    auto it = config_.find(key);
    return it == config_.end() ? std::string() : it->second;
  }
  // The config keys of one layer (prefix) of a network case.
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& kv : config_) out.push_back(kv.first);
    return out;
  }

  bool has_array(const std::string& suffix) const {
    return testing::path_exists(dir_ + "/" + name_ + suffix + ".npy");
  }
  template <typename T>
  std::vector<T> array(const std::string& suffix) const {
    const std::string path = dir_ + "/" + name_ + suffix + ".npy";
    const tools::NpyArray a = tools::read_npy(path);
    EXPECT_EQ(a.data.size() % sizeof(T), 0u) << path;
    EXPECT_EQ(dtype_size(a.dtype), sizeof(T)) << path << ": unexpected element type";
    std::vector<T> out(a.data.size() / sizeof(T));
    if (!out.empty()) memcpy(out.data(), a.data.data(), a.data.size());
    return out;
  }
  // The first of several names an array goes by in different cases.
  std::string pick(std::initializer_list<const char*> suffixes) const {
    for (const char* s : suffixes) {
      if (has_array(s)) return s;
    }
    return std::string();
  }

 private:
  std::string name_;
  std::string dir_;
  std::map<std::string, std::string> config_;
};

struct Outcome {
  std::string family;
  int64_t bytes = 0;
  int64_t differences = 0;
};

// Compares kernel output with the expected bytes; records and reports.
Outcome compare(const std::string& family, const std::string& what, const std::vector<int8_t>& got,
                const std::vector<int8_t>& expected) {
  Outcome o{family, static_cast<int64_t>(expected.size()), 0};
  EXPECT_EQ(got.size(), expected.size()) << what << ": output size";
  const size_t n = std::min(got.size(), expected.size());
  int reported = 0;
  for (size_t i = 0; i < n; ++i) {
    if (got[i] != expected[i]) {
      ++o.differences;
      if (reported++ < 5) {
        ADD_FAILURE() << what << ": byte " << i << " is " << int(got[i]) << ", TFLite gives "
                      << int(expected[i]);
      }
    }
  }
  if (got.size() != expected.size()) o.differences += 1;
  return o;
}

Shape shape_of(const std::vector<int32_t>& dims) {
  return Shape{dims.data(), static_cast<int32_t>(dims.size())};
}

// Biases stored as all zeros stand for "no bias" in the null-bias cases.
const int32_t* bias_or_null(const Case& c, const std::vector<int32_t>& bias) {
  if (c.name().find("null_bias") == std::string::npos) return bias.empty() ? nullptr : bias.data();
  for (int32_t b : bias) EXPECT_EQ(b, 0) << c.name() << ": a null-bias case with a bias";
  return nullptr;
}

// ---- per-family runners: each returns the kernel's output bytes ----

struct ConvLayer {
  int32_t batches, in_h, in_w, in_c, out_h, out_w, out_c, k_h, k_w;
  Conv2DS8Params params;
};

ConvLayer conv_geometry(const Case& c, const std::string& p, int64_t weight_count, int32_t out_c) {
  ConvLayer l{};
  l.batches = c.value_or(p + "INPUT_BATCHES", 1);
  l.in_h = c.value(p + "INPUT_H");
  l.in_w = c.value(p + "INPUT_W");
  l.in_c = c.value(p + "IN_CH");
  l.out_h = c.value(p + "OUTPUT_H");
  l.out_w = c.value(p + "OUTPUT_W");
  l.out_c = out_c;
  l.k_h = c.value(p + "FILTER_Y");
  l.k_w = c.value(p + "FILTER_X");
  (void)weight_count;
  Conv2DS8Params& q = l.params;
  q.stride_h = c.value(p + "STRIDE_Y");
  q.stride_w = c.value(p + "STRIDE_X");
  q.dilation_h = c.value_or(p + "DILATION_Y", 1);
  q.dilation_w = c.value_or(p + "DILATION_X", 1);
  q.pad_top = c.value(p + "PAD_Y");
  q.pad_left = c.value(p + "PAD_X");
  q.input_offset = c.value(p + "INPUT_OFFSET");
  q.output_offset = c.value(p + "OUTPUT_OFFSET");
  q.act_min = c.value(p + "OUT_ACTIVATION_MIN");
  q.act_max = c.value(p + "OUT_ACTIVATION_MAX");
  return l;
}

std::vector<int8_t> run_conv(const Case& c, const std::string& p, const std::string& arrays,
                             const std::vector<int8_t>& input) {
  const auto weights = c.array<int8_t>(arrays + "_weights");
  const auto bias = c.array<int32_t>(c.pick({(arrays + "_biases").c_str(), (arrays + "_bias").c_str()}));
  const auto mult = c.array<int32_t>(arrays + "_output_mult");
  const auto shift = c.array<int32_t>(arrays + "_output_shift");
  const int32_t out_c = static_cast<int32_t>(mult.size());
  ConvLayer l = conv_geometry(c, p, static_cast<int64_t>(weights.size()), out_c);
  const int32_t f_in_c = static_cast<int32_t>(weights.size()) / (out_c * l.k_h * l.k_w);
  EXPECT_EQ(static_cast<size_t>(out_c * l.k_h * l.k_w * f_in_c), weights.size()) << c.name();
  EXPECT_EQ(l.in_c % f_in_c, 0) << c.name() << ": groups";
  // OHWI -> HWIO.
  std::vector<int8_t> hwio(weights.size());
  for (int32_t o = 0; o < out_c; ++o)
    for (int32_t t = 0; t < l.k_h * l.k_w; ++t)
      for (int32_t i = 0; i < f_in_c; ++i)
        hwio[(static_cast<size_t>(t) * f_in_c + i) * out_c + o] =
            weights[(static_cast<size_t>(o) * l.k_h * l.k_w + t) * f_in_c + i];
  std::vector<int32_t> in_dims{l.batches, l.in_h, l.in_w, l.in_c};
  std::vector<int32_t> f_dims{l.k_h, l.k_w, f_in_c, out_c};
  std::vector<int32_t> b_dims{out_c};
  std::vector<int32_t> out_dims{l.batches, l.out_h, l.out_w, out_c};
  EXPECT_EQ(input.size(), static_cast<size_t>(l.batches * l.in_h * l.in_w * l.in_c)) << c.name();
  std::vector<int8_t> out(static_cast<size_t>(l.batches * l.out_h * l.out_w * out_c));
  Conv2DS8Operands ops{{input.data(), shape_of(in_dims)},
                       {hwio.data(), shape_of(f_dims)},
                       {bias_or_null(c, bias), shape_of(b_dims)},
                       mult.data(),
                       shift.data(),
                       {out.data(), shape_of(out_dims)}};
  conv2d_s8(l.params, ops);
  return out;
}

std::vector<int8_t> run_depthwise(const Case& c, const std::string& p, const std::string& arrays,
                                  const std::vector<int8_t>& input) {
  const auto weights = c.array<int8_t>(arrays + "_weights");
  const auto bias = c.array<int32_t>(c.pick({(arrays + "_biases").c_str(), (arrays + "_bias").c_str()}));
  const auto mult = c.array<int32_t>(arrays + "_output_mult");
  const auto shift = c.array<int32_t>(arrays + "_output_shift");
  const int32_t out_c = static_cast<int32_t>(mult.size());
  const ConvLayer l = conv_geometry(c, p, static_cast<int64_t>(weights.size()), out_c);
  const int32_t depth_multiplier = c.value_or(p + "CH_MULT", out_c / l.in_c);
  EXPECT_EQ(out_c, l.in_c * depth_multiplier) << c.name();
  EXPECT_EQ(weights.size(), static_cast<size_t>(l.k_h * l.k_w * out_c)) << c.name();
  DepthwiseConv2DS8Params q{};
  q.stride_h = l.params.stride_h;
  q.stride_w = l.params.stride_w;
  q.dilation_h = l.params.dilation_h;
  q.dilation_w = l.params.dilation_w;
  q.pad_top = l.params.pad_top;
  q.pad_left = l.params.pad_left;
  q.depth_multiplier = depth_multiplier;
  q.input_offset = l.params.input_offset;
  q.output_offset = l.params.output_offset;
  q.act_min = l.params.act_min;
  q.act_max = l.params.act_max;
  std::vector<int32_t> in_dims{l.batches, l.in_h, l.in_w, l.in_c};
  // The case's [1, kh, kw, out_c] weights are floe's [kh, kw, in_c, multiplier]: the same bytes.
  std::vector<int32_t> f_dims{l.k_h, l.k_w, out_c / depth_multiplier, depth_multiplier};
  std::vector<int32_t> b_dims{out_c};
  std::vector<int32_t> out_dims{l.batches, l.out_h, l.out_w, out_c};
  EXPECT_EQ(input.size(), static_cast<size_t>(l.batches * l.in_h * l.in_w * l.in_c)) << c.name();
  std::vector<int8_t> out(static_cast<size_t>(l.batches * l.out_h * l.out_w * out_c));
  DepthwiseConv2DS8Operands ops{{input.data(), shape_of(in_dims)},
                                {weights.data(), shape_of(f_dims)},
                                {bias_or_null(c, bias), shape_of(b_dims)},
                                mult.data(),
                                shift.data(),
                                {out.data(), shape_of(out_dims)}};
  depthwise_conv2d_s8(q, ops);
  return out;
}

// Sizes from the arrays: N = bias length (or OUT_CH), K = weights / N.
std::vector<int8_t> run_fully_connected(const Case& c, const std::string& p,
                                        const std::string& arrays,
                                        const std::vector<int8_t>& input) {
  const auto weights = c.array<int8_t>(arrays + "_weights");
  const std::string bias_name = c.pick({(arrays + "_biases").c_str(), (arrays + "_bias").c_str()});
  const auto bias = bias_name.empty() ? std::vector<int32_t>() : c.array<int32_t>(bias_name);
  const bool per_channel = c.text(p + "PER_CHANNEL_QUANT") == "true";
  std::vector<int32_t> mult, shift;
  if (per_channel) {
    mult = c.array<int32_t>(arrays + "_output_multiplier");
    shift = c.array<int32_t>(arrays + "_output_shift");
  }
  const int32_t out_n = !bias.empty() ? static_cast<int32_t>(bias.size()) : c.value(p + "OUT_CH");
  const int32_t depth = static_cast<int32_t>(weights.size()) / out_n;
  EXPECT_EQ(static_cast<size_t>(out_n * depth), weights.size()) << c.name();
  EXPECT_EQ(input.size() % static_cast<size_t>(depth), 0u) << c.name();
  const int32_t batches = static_cast<int32_t>(input.size()) / depth;
  if (per_channel) {
    EXPECT_EQ(mult.size(), static_cast<size_t>(out_n)) << c.name();
  }
  FullyConnectedS8Params q{};
  q.input_offset = c.value(p + "INPUT_OFFSET");
  q.filter_offset = c.value_or(p + "FILTER_OFFSET", 0);
  q.output_offset = c.value(p + "OUTPUT_OFFSET");
  if (!per_channel) {
    q.output_multiplier = c.value(p + "OUTPUT_MULTIPLIER");
    q.output_shift = c.value(p + "OUTPUT_SHIFT");
  }
  q.act_min = c.value(p + "OUT_ACTIVATION_MIN");
  q.act_max = c.value(p + "OUT_ACTIVATION_MAX");
  std::vector<int32_t> in_dims{batches, depth};
  std::vector<int32_t> f_dims{out_n, depth};
  std::vector<int32_t> b_dims{out_n};
  std::vector<int32_t> out_dims{batches, out_n};
  std::vector<int8_t> out(static_cast<size_t>(batches * out_n));
  FullyConnectedS8Operands ops{{input.data(), shape_of(in_dims)},
                               {weights.data(), shape_of(f_dims)},
                               {bias_or_null(c, bias), shape_of(b_dims)},
                               per_channel ? mult.data() : nullptr,
                               per_channel ? shift.data() : nullptr,
                               {out.data(), shape_of(out_dims)}};
  fully_connected_s8(q, ops);
  return out;
}

// Pooling geometry in the stand-alone cases' naming.
std::vector<int8_t> run_pool(const Case& c, const std::string& p, bool is_max) {
  const auto input = c.array<int8_t>("_input_tensor");
  const int32_t batches = c.value(p + "BATCH_SIZE");
  const int32_t in_h = c.value(p + "INPUT_H"), in_w = c.value(p + "INPUT_W");
  const int32_t ch = c.value(p + "INPUT_C");
  const int32_t out_h = c.value(p + "OUTPUT_H"), out_w = c.value(p + "OUTPUT_W");
  Pool2DS8Params q{c.value(p + "FILTER_H"),   c.value(p + "FILTER_W"),
                   c.value(p + "STRIDE_H"),   c.value(p + "STRIDE_W"),
                   c.value(p + "PADDING_H"),  c.value(p + "PADDING_W"),
                   c.value(p + "ACTIVATION_MIN"), c.value(p + "ACTIVATION_MAX")};
  std::vector<int32_t> in_dims{batches, in_h, in_w, ch};
  std::vector<int32_t> out_dims{batches, out_h, out_w, ch};
  EXPECT_EQ(input.size(), static_cast<size_t>(batches * in_h * in_w * ch)) << c.name();
  std::vector<int8_t> out(static_cast<size_t>(batches * out_h * out_w * ch));
  Pool2DS8Operands ops{{input.data(), shape_of(in_dims)}, {out.data(), shape_of(out_dims)}};
  (is_max ? max_pool2d_s8 : avg_pool2d_s8)(q, ops);
  return out;
}

// DS-CNN's pooling layer, in the network cases' conv-like naming.
std::vector<int8_t> run_network_pool(const Case& c, const std::string& p,
                                     const std::vector<int8_t>& input) {
  const int32_t in_h = c.value(p + "INPUT_H"), in_w = c.value(p + "INPUT_W");
  const int32_t ch = c.value(p + "IN_CH");
  const int32_t out_h = c.value(p + "OUTPUT_H"), out_w = c.value(p + "OUTPUT_W");
  Pool2DS8Params q{c.value(p + "FILTER_Y"),  c.value(p + "FILTER_X"),
                   c.value(p + "STRIDE_Y"),  c.value(p + "STRIDE_X"),
                   c.value(p + "PAD_Y"),     c.value(p + "PAD_X"),
                   c.value(p + "OUT_ACTIVATION_MIN"), c.value(p + "OUT_ACTIVATION_MAX")};
  std::vector<int32_t> in_dims{1, in_h, in_w, ch};
  std::vector<int32_t> out_dims{1, out_h, out_w, ch};
  EXPECT_EQ(input.size(), static_cast<size_t>(in_h * in_w * ch)) << c.name();
  std::vector<int8_t> out(static_cast<size_t>(out_h * out_w * ch));
  avg_pool2d_s8(q, {{input.data(), shape_of(in_dims)}, {out.data(), shape_of(out_dims)}});
  return out;
}

std::vector<int8_t> run_softmax(const std::vector<int8_t>& input, int32_t rows,
                                const SoftmaxS8Params& q) {
  const int32_t depth = static_cast<int32_t>(input.size()) / rows;
  std::vector<int32_t> dims{rows, depth};
  std::vector<int8_t> out(input.size());
  softmax_s8(q, {{input.data(), shape_of(dims)}, {out.data(), shape_of(dims)}});
  return out;
}

std::vector<int32_t> dims4(const Case& c, const std::string& p, const char* n, const char* h,
                           const char* w, const char* ch) {
  return {c.value(p + n), c.value(p + h), c.value(p + w), c.value(p + ch)};
}

// ---- the case table ----

// Families floe has no int8 kernel for (yet), with the reason.
struct Skip {
  const char* prefix;
  const char* reason;
};
const Skip kSkips[] = {
    {"batch_matmul", "BATCH_MATMUL int8: no floe int8 kernel"},
    {"lstm", "UNIDIRECTIONAL_SEQUENCE_LSTM int8/int16: no floe int8 kernel"},
    {"svdf", "SVDF: no floe int8 kernel"},
    {"transpose_conv", "TRANSPOSE_CONV int8: no floe int8 kernel"},
    {"reverse_transpose_conv", "TRANSPOSE_CONV int8: no floe int8 kernel"},
    {"transpose_", "TRANSPOSE: the config lost its shapes and permutation"},
};

std::string upper_prefix(const std::string& name) { return upper(name) + "_"; }

// Runs one network case (DS-CNN) layer by layer, each layer's output the next
// one's input; only the network's output is stored, so that is compared.
Outcome run_network(const Case& c, const std::string& family) {
  std::map<int, std::string> layers;  // index -> config prefix (e.g. "CONV_2D_3_")
  for (const std::string& key : c.keys()) {
    static const char* kKinds[] = {"CONV_2D_", "DEPTHWISE_CONV_2D_", "AVERAGE_POOL_2D_",
                                   "FULLY_CONNECTED_", "SOFTMAX_"};
    for (const char* kind : kKinds) {
      if (!starts_with(key, kind)) continue;
      const std::string rest = key.substr(strlen(kind));
      const size_t end = rest.find('_');
      if (end == std::string::npos || end == 0 ||
          rest.find_first_not_of("0123456789") != end) {
        continue;
      }
      layers[std::stoi(rest.substr(0, end))] = kind + rest.substr(0, end + 1);
    }
  }
  std::vector<int8_t> x = c.array<int8_t>("_input");
  for (const auto& [index, prefix] : layers) {
    const std::string arrays = "_layer_" + std::to_string(index) + "_";
    if (starts_with(prefix, "CONV_2D_")) {
      x = run_conv(c, prefix, arrays + "conv_2d", x);
    } else if (starts_with(prefix, "DEPTHWISE_CONV_2D_")) {
      x = run_depthwise(c, prefix, arrays + "depthwise_conv_2d", x);
    } else if (starts_with(prefix, "AVERAGE_POOL_2D_")) {
      x = run_network_pool(c, prefix, x);
    } else if (starts_with(prefix, "FULLY_CONNECTED_")) {
      x = run_fully_connected(c, prefix, arrays + "fully_connected", x);
    } else {
      const SoftmaxS8Params q{c.value(prefix + "MULT"), c.value(prefix + "SHIFT"),
                              c.value(prefix + "DIFF_MIN")};
      x = run_softmax(x, 1, q);
    }
  }
  printf("  %s: %zu layers run in sequence:", c.name().c_str(), layers.size());
  for (const auto& [index, prefix] : layers) printf(" %d", index);
  printf("\n");
  return compare(family, c.name(), x, c.array<int8_t>("_output_ref"));
}

// `requantize_s64` is an int16 convolution (int64 bias and accumulator): floe
// has no int16 kernel, but the case pins multiply_by_quantized_multiplier_64,
// so the test runs the convolution loop itself around that helper.
Outcome run_requantize_s64(const Case& c, const std::string& p) {
  const auto input = c.array<int16_t>("_input");
  const auto weights = c.array<int8_t>("_weights");
  const auto bias = c.array<int64_t>("_bias");
  const auto mult = c.array<int32_t>("_output_multiplier");
  const auto shift = c.array<int32_t>("_output_shift");
  const auto expected = c.array<int16_t>("_output");
  const int32_t in_h = c.value(p + "INPUT_H"), in_w = c.value(p + "INPUT_W");
  const int32_t in_c = c.value(p + "IN_CH"), out_c = c.value(p + "OUT_CH");
  const int32_t k_h = c.value(p + "FILTER_Y"), k_w = c.value(p + "FILTER_X");
  const int32_t out_h = c.value(p + "OUTPUT_H"), out_w = c.value(p + "OUTPUT_W");
  const int32_t stride_h = c.value(p + "STRIDE_Y"), stride_w = c.value(p + "STRIDE_X");
  const int32_t pad_top = c.value(p + "PAD_Y"), pad_left = c.value(p + "PAD_X");
  const int32_t act_min = c.value(p + "OUT_ACTIVATION_MIN"), act_max = c.value(p + "OUT_ACTIVATION_MAX");
  EXPECT_EQ(c.value(p + "INPUT_OFFSET"), 0);
  EXPECT_EQ(c.value(p + "OUTPUT_OFFSET"), 0);
  std::vector<int8_t> got_bytes, expected_bytes;
  Outcome o{"requantize_s64", 0, 0};
  for (int32_t oy = 0; oy < out_h; ++oy) {
    for (int32_t ox = 0; ox < out_w; ++ox) {
      for (int32_t oc = 0; oc < out_c; ++oc) {
        int64_t acc = bias[oc];
        for (int32_t ky = 0; ky < k_h; ++ky) {
          for (int32_t kx = 0; kx < k_w; ++kx) {
            const int32_t iy = oy * stride_h - pad_top + ky, ix = ox * stride_w - pad_left + kx;
            if (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w) continue;
            for (int32_t ic = 0; ic < in_c; ++ic) {
              acc += int64_t{weights[((oc * k_h + ky) * k_w + kx) * in_c + ic]} *
                     input[(iy * in_w + ix) * in_c + ic];
            }
          }
        }
        const int32_t v = clamp_to(multiply_by_quantized_multiplier_64(acc, mult[oc], shift[oc]),
                                   act_min, act_max);
        const size_t i = static_cast<size_t>((oy * out_w + ox) * out_c + oc);
        o.bytes += 2;
        if (i >= expected.size() || expected[i] != v) {
          ++o.differences;
          ADD_FAILURE() << c.name() << ": output " << i << " is " << v;
        }
      }
    }
  }
  EXPECT_EQ(expected.size(), static_cast<size_t>(out_h * out_w * out_c)) << c.name();
  return o;
}

// Runs the case if floe has a kernel for it. Sets `skip_reason` otherwise.
bool run_case(const Case& c, Outcome* outcome, std::string* skip_reason) {
  const std::string& n = c.name();
  const std::string p = upper_prefix(n);
  for (const Skip& s : kSkips) {
    if (starts_with(n, s.prefix)) {
      *skip_reason = s.reason;
      return false;
    }
  }
  if (n == "requantize_s64") {
    *outcome = run_requantize_s64(c, p);
    return true;
  }
  if (starts_with(n, "ds_cnn")) {
    *outcome = run_network(c, "ds_cnn");
    return true;
  }
  const std::string ref = c.pick({"_output_ref", "_output"});
  if (starts_with(n, "fully_connected") || starts_with(n, "fc_per_ch")) {
    *outcome = compare("fully_connected", n, run_fully_connected(c, p, "", c.array<int8_t>("_input")),
                       c.array<int8_t>(ref));
    return true;
  }
  if (starts_with(n, "avgpooling") || starts_with(n, "maxpooling")) {
    const bool is_max = starts_with(n, "max");
    *outcome = compare(is_max ? "max_pool" : "avg_pool", n, run_pool(c, p, is_max),
                       c.array<int8_t>(ref));
    return true;
  }
  if (n == "softmax") {
    const SoftmaxS8Params q{c.value(p + "INPUT_MULT"), c.value(p + "INPUT_LEFT_SHIFT"),
                            c.value(p + "DIFF_MIN")};
    *outcome = compare("softmax", n, run_softmax(c.array<int8_t>("_input"), c.value(p + "NUM_ROWS"), q),
                       c.array<int8_t>(ref));
    return true;
  }
  if (n == "add") {
    const auto a = c.array<int8_t>("_input1"), b = c.array<int8_t>("_input2");
    AddS8Params q{c.value(p + "INPUT1_OFFSET"), c.value(p + "INPUT2_OFFSET"),
                  c.value(p + "OUTPUT_OFFSET"), c.value(p + "LEFT_SHIFT"),
                  c.value(p + "INPUT1_MULT"),   c.value(p + "INPUT1_SHIFT"),
                  c.value(p + "INPUT2_MULT"),   c.value(p + "INPUT2_SHIFT"),
                  c.value(p + "OUTPUT_MULT"),   c.value(p + "OUTPUT_SHIFT"),
                  c.value(p + "OUT_ACTIVATION_MIN"), c.value(p + "OUT_ACTIVATION_MAX")};
    std::vector<int32_t> dims{static_cast<int32_t>(a.size())};
    std::vector<int8_t> out(a.size());
    add_s8(q, {{a.data(), shape_of(dims)}, {b.data(), shape_of(dims)}, {out.data(), shape_of(dims)}});
    *outcome = compare("add", n, out, c.array<int8_t>(ref));
    return true;
  }
  if (n == "mul") {
    const auto a = c.array<int8_t>("_input1"), b = c.array<int8_t>("_input2");
    MulS8Params q{c.value(p + "INPUT1_OFFSET"), c.value(p + "INPUT2_OFFSET"),
                  c.value(p + "OUTPUT_OFFSET"), c.value(p + "OUTPUT_MULT"),
                  c.value(p + "OUTPUT_SHIFT"),  c.value(p + "OUT_ACTIVATION_MIN"),
                  c.value(p + "OUT_ACTIVATION_MAX")};
    std::vector<int32_t> dims{static_cast<int32_t>(a.size())};
    std::vector<int8_t> out(a.size());
    mul_s8(q, {{a.data(), shape_of(dims)}, {b.data(), shape_of(dims)}, {out.data(), shape_of(dims)}});
    *outcome = compare("mul", n, out, c.array<int8_t>(ref));
    return true;
  }
  if (starts_with(n, "maximum") || starts_with(n, "minimum")) {
    const bool is_max = starts_with(n, "max");
    const auto a = c.array<int8_t>("_input_tensor_1"), b = c.array<int8_t>("_input_tensor_2");
    const auto da = dims4(c, p, "BATCH_1", "HEIGHT_1", "WIDTH_1", "CHANNEL_1");
    const auto db = dims4(c, p, "BATCH_2", "HEIGHT_2", "WIDTH_2", "CHANNEL_2");
    const auto dout = dims4(c, p, "OUTPUT_BATCH", "OUTPUT_HEIGHT", "OUTPUT_WIDTH", "OUTPUT_CHANNEL");
    std::vector<int8_t> out(static_cast<size_t>(shape_of(dout).num_elements()));
    const BinaryS8Operands ops{{a.data(), shape_of(da)}, {b.data(), shape_of(db)},
                               {out.data(), shape_of(dout)}};
    (is_max ? quantized_extremum<true, BinaryS8Operands> : quantized_extremum<false, BinaryS8Operands>)(ops);
    *outcome = compare(is_max ? "maximum" : "minimum", n, out, c.array<int8_t>(ref));
    return true;
  }
  if (starts_with(n, "pad_int8")) {
    const auto input = c.array<int8_t>("_input_tensor");
    const auto din = dims4(c, p, "INPUT_N", "INPUT_H", "INPUT_W", "INPUT_C");
    PadS8Params q{};
    const char* axes[] = {"N", "H", "W", "C"};
    std::vector<int32_t> dout(4);
    for (int d = 0; d < 4; ++d) {
      q.paddings[2 * d] = c.value(p + "PRE_PAD_" + axes[d]);
      q.paddings[2 * d + 1] = c.value(p + "POST_PAD_" + axes[d]);
      dout[d] = din[d] + q.paddings[2 * d] + q.paddings[2 * d + 1];
    }
    q.pad_value = c.value(p + "PAD_VALUE");
    std::vector<int8_t> out(static_cast<size_t>(shape_of(dout).num_elements()));
    pad_s8(q, {input.data(), shape_of(din)}, {out.data(), shape_of(dout)});
    *outcome = compare("pad", n, out, c.array<int8_t>(ref));
    return true;
  }
  // Convolutions: everything left with weights and per-channel multipliers.
  if (c.has_array("_weights") && c.has_array("_output_mult")) {
    const bool depthwise = c.has(p + "CH_MULT");
    const auto input = c.array<int8_t>("_input");
    *outcome = depthwise ? compare("depthwise_conv", n, run_depthwise(c, p, "", input),
                                   c.array<int8_t>(ref))
                         : compare("conv", n, run_conv(c, p, "", input), c.array<int8_t>(ref));
    return true;
  }
  return false;
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  const std::string root = testing::corpus_path(kCorpus);
  DIR* dir = opendir(root.c_str());
  if (dir == nullptr) return names;
  while (dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (name[0] == '.') continue;
    if (testing::path_exists(root + "/" + name + "/config.txt")) names.push_back(name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

TEST(Int8Golden, EveryCaseBitExactOrListed) {
  FLOE_REQUIRE_CORPUS("int8_kernels/README.md");
  const std::vector<std::string> names = case_names();
  ASSERT_FALSE(names.empty());

  struct Tally {
    int run = 0, exact = 0;
    int64_t bytes = 0, differences = 0;
  };
  std::map<std::string, Tally> families;
  std::vector<std::pair<std::string, std::string>> skipped;
  std::vector<std::string> unknown;
  for (const std::string& name : names) {
    const Case c(name);
    Outcome o;
    std::string reason;
    if (!run_case(c, &o, &reason)) {
      if (reason.empty()) {
        unknown.push_back(name);
      } else {
        skipped.emplace_back(name, reason);
      }
      continue;
    }
    Tally& t = families[o.family];
    ++t.run;
    t.exact += o.differences == 0 ? 1 : 0;
    t.bytes += o.bytes;
    t.differences += o.differences;
  }

  Tally total;
  printf("int8 golden cases (TFLite reference kernels) against floe::ref:\n");
  printf("  %-16s %8s %10s %12s\n", "family", "exact/run", "bytes", "differences");
  for (const auto& [family, t] : families) {
    printf("  %-16s %4d/%-4d %10lld %12lld\n", family.c_str(), t.exact, t.run,
           static_cast<long long>(t.bytes), static_cast<long long>(t.differences));
    total.run += t.run;
    total.exact += t.exact;
    total.bytes += t.bytes;
    total.differences += t.differences;
  }
  printf("  %-16s %4d/%-4d %10lld %12lld\n", "total", total.exact, total.run,
         static_cast<long long>(total.bytes), static_cast<long long>(total.differences));
  printf("not run (%zu), no floe kernel:\n", skipped.size());
  for (const auto& [name, reason] : skipped) printf("  %-40s %s\n", name.c_str(), reason.c_str());
  printf("%d of %zu cases run\n", total.run, names.size());

  EXPECT_TRUE(unknown.empty()) << "cases no runner recognises: " << ::testing::PrintToString(unknown);
  EXPECT_EQ(total.differences, 0);
  EXPECT_EQ(total.exact, total.run);
  // The corpus as shipped: 119 cases, all but the listed families run.
  EXPECT_EQ(names.size(), 119u);
  EXPECT_GE(total.run, 85);
}

}  // namespace
}  // namespace floe::ref
