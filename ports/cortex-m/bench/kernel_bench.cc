// SPDX-License-Identifier: Apache-2.0
// Kernel bench firmware: one kernel, reference or Cortex-M, on a fixed layer
// shape, run "reps" times; the command line says which ("op=conv2d_cortexm
// reps=4"), floe_bench counts the instructions (ports/cortex-m/tools/bench.cmake).
// Shapes are typical of small CNNs and MLPs and sized for the M55's 512 KiB
// data RAM. Prints "macs: N" for the per-MAC figure.
// int8: "op=s8_<layer>" runs one layer shape of KWS (DS-CNN) or person_detect
// (MobileNetV1-0.25) through the int8 Cortex-M kernels (conv2d_s8 over
// s8_gemm, s8_depthwise) as the CORTEX_M backend runs it; "op=s8_list"
// prints the layer names for bench.cmake.
// int16x8: "op=s16_<layer>_<cortexm|reference>" runs one CONV_2D of TFLM's
// SEANet integration tests through conv2d_s16 (the CORTEX_M backend's
// S16_IM2COL_GEMM, as the converter plans it) or the reference kernel;
// "op=s16_list" prints the layer names.
#include <stddef.h>
#include <stdint.h>

#include "runtime/kernels/cortexm/conv2d.h"
#include "runtime/kernels/cortexm/depthwise_conv2d.h"
#include "runtime/kernels/cortexm/matmul.h"
#include "runtime/kernels/cortexm/s16_microkernels.h"
#include "runtime/kernels/cortexm/s8_microkernels.h"
#include "runtime/kernels/reference/conv2d.h"
#include "runtime/kernels/reference/depthwise_conv2d.h"
#include "runtime/kernels/reference/matmul.h"
#include "runtime/platform.h"
#include "schemas/floe_generated.h"

namespace {

// ---- int8 layers -------------------------------------------------------------
struct S8Layer {
  const char* name;
  char kind;  // 'c' convolution (1x1: GEMM on the pixels, else im2col), 'd' depthwise, 'f' fully connected
  int16_t in_h, in_w, in_c, out_c, k_h, k_w, stride, pad_top, pad_left, out_h, out_w;
};

// Every distinct int8 layer shape of the two models (SAME padding as the
// models have it; the .tflite files give the shapes).
constexpr S8Layer kS8Layers[] = {
    {"kws_conv_10x4_s2", 'c', 49, 10, 1, 64, 10, 4, 2, 4, 1, 25, 5},
    {"kws_dw_3x3", 'd', 25, 5, 64, 64, 3, 3, 1, 1, 1, 25, 5},
    {"kws_pw_64_64", 'c', 25, 5, 64, 64, 1, 1, 1, 0, 0, 25, 5},
    {"kws_fc_64_12", 'f', 1, 1, 64, 12, 1, 1, 1, 0, 0, 1, 1},
    {"pd_conv_3x3_s2_1_8", 'c', 96, 96, 1, 8, 3, 3, 2, 0, 0, 48, 48},
    {"pd_dw_48x48x8", 'd', 48, 48, 8, 8, 3, 3, 1, 1, 1, 48, 48},
    {"pd_pw_48x48_8_16", 'c', 48, 48, 8, 16, 1, 1, 1, 0, 0, 48, 48},
    {"pd_dw_48x48x16_s2", 'd', 48, 48, 16, 16, 3, 3, 2, 0, 0, 24, 24},
    {"pd_pw_24x24_16_32", 'c', 24, 24, 16, 32, 1, 1, 1, 0, 0, 24, 24},
    {"pd_dw_24x24x32", 'd', 24, 24, 32, 32, 3, 3, 1, 1, 1, 24, 24},
    {"pd_pw_24x24_32_32", 'c', 24, 24, 32, 32, 1, 1, 1, 0, 0, 24, 24},
    {"pd_dw_24x24x32_s2", 'd', 24, 24, 32, 32, 3, 3, 2, 0, 0, 12, 12},
    {"pd_pw_12x12_32_64", 'c', 12, 12, 32, 64, 1, 1, 1, 0, 0, 12, 12},
    {"pd_dw_12x12x64", 'd', 12, 12, 64, 64, 3, 3, 1, 1, 1, 12, 12},
    {"pd_pw_12x12_64_64", 'c', 12, 12, 64, 64, 1, 1, 1, 0, 0, 12, 12},
    {"pd_dw_12x12x64_s2", 'd', 12, 12, 64, 64, 3, 3, 2, 0, 0, 6, 6},
    {"pd_pw_6x6_64_128", 'c', 6, 6, 64, 128, 1, 1, 1, 0, 0, 6, 6},
    {"pd_dw_6x6x128", 'd', 6, 6, 128, 128, 3, 3, 1, 1, 1, 6, 6},
    {"pd_pw_6x6_128_128", 'c', 6, 6, 128, 128, 1, 1, 1, 0, 0, 6, 6},
    {"pd_dw_6x6x128_s2", 'd', 6, 6, 128, 128, 3, 3, 2, 0, 0, 3, 3},
    {"pd_pw_3x3_128_256", 'c', 3, 3, 128, 256, 1, 1, 1, 0, 0, 3, 3},
    {"pd_dw_3x3x256", 'd', 3, 3, 256, 256, 3, 3, 1, 1, 1, 3, 3},
    {"pd_pw_3x3_256_256", 'c', 3, 3, 256, 256, 1, 1, 1, 0, 0, 3, 3},
    {"pd_classifier_256_2", 'c', 1, 1, 256, 2, 1, 1, 1, 0, 0, 1, 1},
};

constexpr uint32_t kS8Pool = 98304;
int8_t g_s8_pool[kS8Pool];
int32_t g_s8_bias[256], g_s8_mult[256], g_s8_shift[256];
#if !defined(FLOE_CORTEXM_S8_MVE)
int32_t g_s8_packed[256 / 2 * (floe::cortexm::kPackedGemmMaxK + 8)];  // up to 256 channels
#endif
constexpr int32_t kScratchBytes = 2048;  // the converter's im2col budget (backend_cortexm.cc)

bool same(const char* a, const char* b) {
  while (*a != '\0' && *a != ' ' && *a == *b) ++a, ++b;
  return (*a == '\0' || *a == ' ') && *b == '\0';
}

// Runs layer `l` reps times; returns its MACs.
uint32_t run_s8_layer(const S8Layer& l, uint32_t reps) {
  for (uint32_t i = 0; i < kS8Pool; ++i) g_s8_pool[i] = static_cast<int8_t>((i * 37u) % 251u);
  for (int i = 0; i < 256; ++i) {
    g_s8_bias[i] = (i * 97) % 2001 - 1000;
    g_s8_mult[i] = 1518500250 + i * 1000;
    g_s8_shift[i] = -8 - i % 3;
  }
#if defined(FLOE_CORTEXM_S8_MVE)
  const bool short_path = false;
#else
  // M4/M33: what the converter picks for KWS's and person_detect's layers
  // (every one passes the bound), the bias doubled as it writes it.
  const bool short_path = true;
  for (int i = 0; i < 256; ++i) g_s8_bias[i] *= 2;
#endif
  const floe::cortexm::S8Requant rq = {g_s8_bias, g_s8_mult, g_s8_shift, -5, -128, 127, short_path};
  const int32_t in_bytes = l.in_h * l.in_w * l.in_c;
  int8_t* input = g_s8_pool;
  int8_t* output = input + in_bytes;
  int8_t* filter = output + l.out_h * l.out_w * l.out_c;
  if (l.kind == 'd') {
    const floe::cortexm::DepthwiseS8Shape shape = {1, l.in_h, l.in_w, l.in_c, l.k_h, l.k_w, l.out_h, l.out_w,
                                                   l.stride, l.stride, 1, 1, l.pad_top, l.pad_left, 12};
    for (uint32_t r = 0; r < reps; ++r) floe::cortexm::s8_depthwise(shape, input, filter, rq, output);
    return static_cast<uint32_t>(l.out_h * l.out_w * l.out_c * l.k_h * l.k_w);
  }
  const int32_t k = l.k_h * l.k_w * l.in_c;
  if (l.kind == 'f') {
    for (uint32_t r = 0; r < reps; ++r) floe::cortexm::s8_gemm(input, k, 1, filter, l.out_c, k, rq, output, l.out_c);
    return static_cast<uint32_t>(k * l.out_c);
  }
  floe::cortexm::Conv2DS8Plan p{};
  p.batches = 1;
  p.in_h = l.in_h;
  p.in_w = l.in_w;
  p.in_c = l.in_c;
  p.out_h = l.out_h;
  p.out_w = l.out_w;
  p.out_c = l.out_c;
  p.k_size = k;
  p.k_h = l.k_h;
  p.k_w = l.k_w;
  p.stride_h = p.stride_w = l.stride;
  p.dil_h = p.dil_w = 1;
  p.pad_top = l.pad_top;
  p.pad_left = l.pad_left;
  p.input_zero_point = -12;
  p.output_offset = -5;
  p.act_min = -128;
  p.act_max = 127;
  p.short_requant = short_path;  // as the converter writes the plan
  const bool pointwise = l.k_h == 1 && l.k_w == 1 && l.stride == 1;
#if !defined(FLOE_CORTEXM_S8_MVE)
  // The 1x1 layers the converter packs (S8_GEMM_PACKED_SHORT_REQUANT): the
  // filter packed as it writes it, then the packed-pair GEMM on the pixels.
  if (pointwise && k % 8 == 0 && k <= floe::cortexm::kPackedGemmMaxK && l.out_c % 2 == 0) {
    for (int32_t c = 0; c < l.out_c; c += 2) {
      floe::cortexm::s8_pack_gemm_pair(filter + c * k, filter + (c + 1) * k, k, g_s8_bias + c, g_s8_mult + c,
                                       g_s8_shift + c, -5, g_s8_packed + c / 2 * (k + 8));
    }
    const int32_t pixels = l.out_h * l.out_w;
    for (uint32_t r = 0; r < reps; ++r) {
      floe::cortexm::s8_gemm_packed(input, k, pixels, g_s8_packed, l.out_c, k, -128, 127, output);
    }
    return static_cast<uint32_t>(pixels * l.out_c * k);
  }
#endif
  p.kernel = static_cast<uint8_t>(pointwise ? floe::schema::CortexMKernel::S8_GEMM
                                            : floe::schema::CortexMKernel::S8_IM2COL_GEMM);
  const int32_t rows = l.out_h * l.out_w;
  p.chunk_rows = kScratchBytes / k / 2 * 2 < rows ? (kScratchBytes / k / 2 * 2 > 2 ? kScratchBytes / k / 2 * 2 : 2)
                                                 : rows;
  floe::cortexm::plan_im2col(p);
  int8_t* scratch = filter + k * l.out_c;
  for (uint32_t r = 0; r < reps; ++r) floe::cortexm::conv2d_s8(p, input, filter, rq, scratch, output);
  return static_cast<uint32_t>(rows * l.out_c * k);
}

// ---- int16x8 layers ------------------------------------------------------------
struct S16Layer {
  const char* name;
  int16_t in_h, in_w, in_c, out_c, k_h, k_w, stride_h, stride_w, out_h, out_w;
};

// The eight CONV_2D layers of ../shared/corpus/tflm/integration_tests/seanet/conv
// (conv0..conv7: VALID padding, the .tflite files give the shapes).
constexpr S16Layer kS16Layers[] = {
    {"seanet_conv0_7x7", 8, 166, 2, 8, 7, 7, 1, 1, 2, 160},
    {"seanet_conv1_3x3", 4, 162, 8, 8, 3, 3, 1, 1, 2, 160},
    {"seanet_conv2_3x4_s2", 4, 162, 8, 16, 3, 4, 1, 2, 2, 80},
    {"seanet_conv3_3x3", 4, 82, 16, 16, 3, 3, 1, 1, 2, 80},
    {"seanet_conv4_4x4_s2", 4, 82, 16, 32, 4, 4, 2, 2, 1, 40},
    {"seanet_conv5_3x3", 3, 42, 32, 32, 3, 3, 1, 1, 1, 40},
    {"seanet_conv6_3x4_s2", 3, 42, 32, 32, 3, 4, 1, 2, 1, 20},
    {"seanet_conv7_3x3", 3, 22, 32, 32, 3, 3, 1, 1, 1, 20},
};

int16_t g_s16_input[8 * 166 * 2 > 4 * 162 * 8 ? 8 * 166 * 2 : 4 * 162 * 8];
int16_t g_s16_output[2 * 160 * 16];
int16_t g_s16_scratch[1024];
int8_t g_s16_filter[32 * 3 * 4 * 32];
int64_t g_s16_bias[32], g_s16_offset[32];
int32_t g_s16_mult[32], g_s16_shift[32], g_s16_q15[32], g_s16_right[32];

// Runs layer `l` reps times on the Cortex-M kernel or the reference; returns its MACs.
uint32_t run_s16_layer(const S16Layer& l, bool cortexm, uint32_t reps) {
  for (uint32_t i = 0; i < sizeof g_s16_input / sizeof g_s16_input[0]; ++i) {
    g_s16_input[i] = static_cast<int16_t>((i * 7919u) % 65536u - 32768u);
  }
  for (uint32_t i = 0; i < sizeof g_s16_filter; ++i) g_s16_filter[i] = static_cast<int8_t>((i * 37u) % 251u);
  for (int i = 0; i < 32; ++i) {
    g_s16_bias[i] = (i * 977) % 20001 - 10000;
    g_s16_mult[i] = 1518500250 + i * 1000;
    g_s16_shift[i] = -7 - i % 2;
    floe::cortexm::s16_channel_requantization(g_s16_bias[i], g_s16_mult[i], g_s16_shift[i], &g_s16_offset[i],
                                              &g_s16_q15[i], &g_s16_right[i]);
  }
  const int32_t k = l.k_h * l.k_w * l.in_c;
  const uint32_t macs = static_cast<uint32_t>(l.out_h * l.out_w * l.out_c * k);
  if (!cortexm) {
    const int32_t in_dims[4] = {1, l.in_h, l.in_w, l.in_c}, f_dims[4] = {l.k_h, l.k_w, l.in_c, l.out_c};
    const int32_t o_dims[4] = {1, l.out_h, l.out_w, l.out_c}, b_dims[1] = {l.out_c};
    const floe::ref::Conv2DS8Params params = {l.stride_h, l.stride_w, 1, 1, 0, 0, 0, 0, 0, 0, -32768, 32767};
    for (uint32_t r = 0; r < reps; ++r) {
      floe::ref::conv2d_s16(params, {{g_s16_input, {in_dims, 4}}, {g_s16_filter, {f_dims, 4}},
                                     {g_s16_bias, {b_dims, 1}}, g_s16_mult, g_s16_shift, {g_s16_output, {o_dims, 4}}});
    }
    return macs;
  }
  floe::cortexm::Conv2DS16Plan p{};
  p.batches = 1;
  p.in_h = l.in_h;
  p.in_w = l.in_w;
  p.in_c = l.in_c;
  p.out_h = l.out_h;
  p.out_w = l.out_w;
  p.out_c = l.out_c;
  p.k_size = k;
  p.k_h = l.k_h;
  p.k_w = l.k_w;
  p.stride_h = l.stride_h;
  p.stride_w = l.stride_w;
  p.dil_h = p.dil_w = 1;
  p.act_min = -32768;
  p.act_max = 32767;
  p.chunk_rows = floe::cortexm::s16_im2col_rows(k, l.out_h * l.out_w);  // as the converter sizes it
  const floe::cortexm::S16Requant rq = {g_s16_offset, g_s16_q15, g_s16_right, -32768, 32767};
  for (uint32_t r = 0; r < reps; ++r) {
    floe::cortexm::conv2d_s16(p, g_s16_input, g_s16_filter, rq, g_s16_scratch, g_s16_output);
  }
  return macs;
}

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

// "layer <name>" per line, for bench.cmake; returns the exit status 0.
template <typename Layer, size_t N>
int print_layer_names(const Layer (&layers)[N]) {
  for (const Layer& l : layers) {
    floe::platform::log("layer ");
    floe::platform::log(l.name);
    floe::platform::log("\n");
  }
  return 0;
}

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
        "usage: op=<matmul|conv2d|depthwise>_<reference|cortexm> reps=N, op=s8_<layer>, op=s8_list, "
        "op=s16_<layer>_<cortexm|reference>, op=s16_list\n");
    return 0;
  }
  if (starts(op, "s8_list")) return print_layer_names(kS8Layers);
  if (starts(op, "s16_list")) return print_layer_names(kS16Layers);
  if (starts(op, "s16_")) {
    // "s16_<layer>_cortexm" or "s16_<layer>_reference"
    for (const S16Layer& l : kS16Layers) {
      const char* rest = op + 4;
      const char* n = l.name;
      while (*n != '\0' && *rest == *n) ++rest, ++n;
      if (*n != '\0' || *rest != '_') continue;
      ++rest;
      if (!same(rest, "cortexm") && !same(rest, "reference")) break;
      print_number("macs: ", run_s16_layer(l, same(rest, "cortexm"), reps));
      return 0;
    }
    floe::platform::log("unknown int16 layer\n");
    return 2;
  }
  if (starts(op, "s8_")) {
    for (const S8Layer& l : kS8Layers) {
      if (same(op + 3, l.name)) {
        print_number("macs: ", run_s8_layer(l, reps));
        return 0;
      }
    }
    floe::platform::log("unknown int8 layer\n");
    return 2;
  }
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
