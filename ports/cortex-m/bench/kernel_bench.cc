// SPDX-License-Identifier: Apache-2.0
// Kernel bench firmware: one kernel, reference or Cortex-M, on a fixed layer
// shape, run "reps" times; the command line says which ("op=conv2d_cortexm
// reps=4"), floe_bench counts the instructions (ports/cortex-m/tools/bench.cmake).
// Shapes are typical of small CNNs and MLPs and sized for the M55's 512 KiB
// data RAM. Prints "macs: N" for the per-MAC figure.
//
// Helium builds (FLOE_CORTEXM_S8_MVE) add the int8 inner kernels on every
// int8 layer shape of KWS and person_detect ("op=s8_<layer>"; "op=s8_list"
// prints the layer names for bench.cmake).
#include <stdint.h>

#include "runtime/kernels/cortexm/conv2d.h"
#include "runtime/kernels/cortexm/depthwise_conv2d.h"
#include "runtime/kernels/cortexm/matmul.h"
#include "runtime/platform.h"

#if defined(FLOE_CORTEXM_S8_MVE)
#include "runtime/kernels/cortexm/s8_microkernels.h"
#endif

namespace {

constexpr uint32_t kPool = 24576;
float g_pool[kPool];  // every operand of the chosen kernel, carved in order

// matmul [1,256] x [256,64]; conv2d 16x16x16 -> 16, 3x3 SAME; depthwise 16x16x32, 3x3 SAME.
const int32_t kA[2] = {1, 256}, kB[2] = {256, 64}, kMmOut[2] = {1, 64}, kMmBias[1] = {64};
const int32_t kConvIn[4] = {1, 16, 16, 16}, kConvF[4] = {3, 3, 16, 16}, kConvOut[4] = {1, 16, 16, 16};
const int32_t kConvBias[1] = {16};
const int32_t kDwIn[4] = {1, 16, 16, 32}, kDwF[4] = {3, 3, 32, 1}, kDwOut[4] = {1, 16, 16, 32};
const int32_t kDwBias[1] = {32};

bool starts(const char* s, const char* prefix) {
  while (*prefix != '\0') {
    if (*s++ != *prefix++) return false;
  }
  return true;
}

// "key=value" in the command line; value up to the next space.
const char* arg(const char* key) {
  for (const char* s = floe::platform::command_line(); *s != '\0'; ++s) {
    if ((s == floe::platform::command_line() || s[-1] == ' ') && starts(s, key)) {
      const char* v = s;
      while (*key != '\0') ++key, ++v;
      return v;
    }
  }
  return nullptr;
}

void print_number(const char* label, uint32_t v) {
  char digits[12];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  char text[40];
  int t = 0;
  for (const char* l = label; *l != '\0'; ++l) text[t++] = *l;
  while (n > 0) text[t++] = digits[--n];
  text[t++] = '\n';
  text[t] = '\0';
  floe::platform::log(text);
}

#if defined(FLOE_CORTEXM_S8_MVE)

// One int8 layer as the inner kernels see it: a GEMM (rows x k -> channels;
// convolutions other than 1x1 as their im2col rows) or a multiplier-1
// depthwise (square input, 3x3, SAME padding).
struct S8Layer {
  const char* name;
  bool depthwise;
  int32_t rows_or_side, k_size, channels, stride;
};

// KWS (kws_ref_model.tflite, DS-CNN) and person_detect (MobileNet v1 0.25,
// 96x96x1). Repeated person_detect layers of one shape appear once.
constexpr S8Layer kS8Layers[] = {
    {"kws_conv1_im2col", false, 125, 40, 64, 1},  // 10x4 stride 2, 1 -> 64 (once)
    {"kws_dw", true, 0, 0, 64, 1},                // 25x5x64, 3x3 stride 1 (4x)
    {"kws_pw", false, 125, 64, 64, 1},            // 1x1 64 -> 64 (4x)
    {"kws_fc", false, 1, 64, 12, 1},              // FULLY_CONNECTED 64 -> 12
    {"pd_conv0_im2col", false, 2304, 9, 8, 1},    // 3x3 stride 2, 1 -> 8 (depthwise x8 of 1 channel)
    {"pd_dw1", true, 48, 9, 8, 1},
    {"pd_pw2", false, 2304, 8, 16, 1},
    {"pd_dw3", true, 48, 9, 16, 2},
    {"pd_pw4", false, 576, 16, 32, 1},
    {"pd_dw5", true, 24, 9, 32, 1},
    {"pd_pw6", false, 576, 32, 32, 1},
    {"pd_dw7", true, 24, 9, 32, 2},
    {"pd_pw8", false, 144, 32, 64, 1},
    {"pd_dw9", true, 12, 9, 64, 1},
    {"pd_pw10", false, 144, 64, 64, 1},
    {"pd_dw11", true, 12, 9, 64, 2},
    {"pd_pw12", false, 36, 64, 128, 1},
    {"pd_dw13", true, 6, 9, 128, 1},     // 5x
    {"pd_pw14", false, 36, 128, 128, 1},  // 5x
    {"pd_dw23", true, 6, 9, 128, 2},
    {"pd_pw24", false, 9, 128, 256, 1},
    {"pd_dw25", true, 3, 9, 256, 1},
    {"pd_pw26", false, 9, 256, 256, 1},
    {"pd_fc", false, 1, 256, 2, 1},
};

constexpr uint32_t kS8Pool = 72 * 1024;
int8_t g_s8_pool[kS8Pool];
int32_t g_s8_bias[256], g_s8_multiplier[256], g_s8_shift[256];

bool same(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b && (*a == '\0');
}

// "op=s8_<name>" (the name ends at a space or the end of the line).
const S8Layer* find_s8_layer(const char* op) {
  if (!starts(op, "s8_")) return nullptr;
  op += 3;
  char name[32];
  int n = 0;
  while (op[n] != '\0' && op[n] != ' ' && n < 31) name[n] = op[n], ++n;
  name[n] = '\0';
  for (const S8Layer& layer : kS8Layers) {
    if (same(name, layer.name)) return &layer;
  }
  return nullptr;
}

int run_s8(const S8Layer& layer, uint32_t reps) {
  for (uint32_t i = 0; i < kS8Pool; ++i) g_s8_pool[i] = static_cast<int8_t>((i * 37u) % 251u);
  for (int32_t c = 0; c < 256; ++c) {
    g_s8_bias[c] = (c * 997) % 4001 - 2000;
    g_s8_multiplier[c] = 1300000000 + c * 1000;
    g_s8_shift[c] = -7 - c % 3;
  }
  const floe::cortexm::S8Requant rq{g_s8_bias, g_s8_multiplier, g_s8_shift, -128, -128, 127};
  int8_t* p = g_s8_pool;
  if (!layer.depthwise) {
    const int32_t rows = layer.rows_or_side, k = layer.k_size, n = layer.channels;
    print_number("macs: ", static_cast<uint32_t>(rows * k * n));
    const int8_t* a = p;
    const int8_t* w = a + rows * k;
    int8_t* out = p + rows * k + n * k;
    for (uint32_t r = 0; r < reps; ++r) floe::cortexm::s8_gemm(a, k, rows, w, n, k, rq, out, n);
    return 0;
  }
  floe::cortexm::DepthwiseS8Shape s{};
  s.batches = 1;
  s.in_h = layer.rows_or_side == 0 ? 25 : layer.rows_or_side;  // KWS: 25x5
  s.in_w = layer.rows_or_side == 0 ? 5 : layer.rows_or_side;
  s.channels = layer.channels;
  s.k_h = s.k_w = 3;
  s.stride_h = s.stride_w = layer.stride;
  s.dil_h = s.dil_w = 1;
  s.out_h = (s.in_h + layer.stride - 1) / layer.stride;
  s.out_w = (s.in_w + layer.stride - 1) / layer.stride;
  // SAME: the total padding (out - 1) * stride + 3 - in, the smaller half on top/left.
  const int32_t pad_h = (s.out_h - 1) * s.stride_h + 3 - s.in_h;
  const int32_t pad_w = (s.out_w - 1) * s.stride_w + 3 - s.in_w;
  s.pad_top = pad_h > 0 ? pad_h / 2 : 0;
  s.pad_left = pad_w > 0 ? pad_w / 2 : 0;
  s.input_offset = 128;
  print_number("macs: ", static_cast<uint32_t>(s.out_h * s.out_w * s.channels * 9));
  const int8_t* input = p;
  const int8_t* filter = input + s.in_h * s.in_w * s.channels;
  int8_t* out = p + s.in_h * s.in_w * s.channels + 9 * s.channels;
  for (uint32_t r = 0; r < reps; ++r) floe::cortexm::s8_depthwise(s, input, filter, rq, out);
  return 0;
}

#endif  // FLOE_CORTEXM_S8_MVE

}  // namespace

int main() {
  floe::platform::init();
  for (uint32_t i = 0; i < kPool; ++i) g_pool[i] = static_cast<float>((i * 37u) % 101u) * 0.01f - 0.5f;
  const char* op = arg("op=");
  uint32_t reps = 0;
  if (const char* r = arg("reps=")) {
    for (; *r >= '0' && *r <= '9'; ++r) reps = reps * 10 + static_cast<uint32_t>(*r - '0');
  }
  if (op == nullptr) {
    floe::platform::log(
        "usage: op=<matmul|conv2d|depthwise>_<reference|cortexm>, s8_list or s8_<layer>; reps=N\n");
    return 0;
  }
  if (starts(op, "s8_list")) {  // none without the int8 kernels of this board
    floe::platform::log("s8 layers:");
#if defined(FLOE_CORTEXM_S8_MVE)
    for (const S8Layer& layer : kS8Layers) {
      floe::platform::log(" ");
      floe::platform::log(layer.name);
    }
#endif
    floe::platform::log("\n");
    return 0;
  }
#if defined(FLOE_CORTEXM_S8_MVE)
  if (const S8Layer* layer = find_s8_layer(op)) return run_s8(*layer, reps);
#endif
  const bool cortexm = starts(op, "matmul_cortexm") || starts(op, "conv2d_cortexm") ||
                       starts(op, "depthwise_cortexm");
  float* p = g_pool;
  if (starts(op, "matmul_")) {
    floe::ref::MatMulParams params;
    params.activation = floe::Activation::kRelu;
    const floe::ref::MatMulOperands ops{{p, {kA, 2}}, {p + 256, {kB, 2}}, {p + 16640, {kMmBias, 1}},
                                        {p + 16704, {kMmOut, 2}}};
    print_number("macs: ", 256u * 64u);
    for (uint32_t r = 0; r < reps; ++r) {
      if (cortexm) floe::cortexm::matmul_f32(params, ops);
      else floe::ref::matmul_f32(params, ops);
    }
  } else if (starts(op, "conv2d_")) {
    floe::ref::Conv2DParams params;
    params.pad_top = params.pad_left = 1;
    params.activation = floe::Activation::kRelu6;
    const floe::ref::Conv2DOperands ops{{p, {kConvIn, 4}}, {p + 4096, {kConvF, 4}}, {p + 6400, {kConvBias, 1}},
                                        {p + 6416, {kConvOut, 4}}};
    print_number("macs: ", 16u * 16u * 16u * 3u * 3u * 16u);
    for (uint32_t r = 0; r < reps; ++r) {
      if (cortexm) floe::cortexm::conv2d_f32(params, ops);
      else floe::ref::conv2d_f32(params, ops);
    }
  } else if (starts(op, "depthwise_")) {
    floe::ref::DepthwiseConv2DParams params;
    params.pad_top = params.pad_left = 1;
    params.activation = floe::Activation::kRelu6;
    const floe::ref::DepthwiseConv2DOperands ops{{p, {kDwIn, 4}}, {p + 8192, {kDwF, 4}},
                                                 {p + 8480, {kDwBias, 1}}, {p + 8512, {kDwOut, 4}}};
    print_number("macs: ", 16u * 16u * 32u * 3u * 3u);
    for (uint32_t r = 0; r < reps; ++r) {
      if (cortexm) floe::cortexm::depthwise_conv2d_f32(params, ops);
      else floe::ref::depthwise_conv2d_f32(params, ops);
    }
  } else {
    floe::platform::log("unknown op\n");
    return 2;
  }
  return 0;
}
