// SPDX-License-Identifier: Apache-2.0
// Kernel bench firmware: one kernel, reference or Cortex-M, on a fixed layer
// shape, run "reps" times; the command line says which ("op=conv2d_cortexm
// reps=4"), floe_bench counts the instructions (ports/cortex-m/tools/bench.cmake).
// Shapes are typical of small CNNs and MLPs and sized for the M55's 512 KiB
// data RAM. Prints "macs: N" for the per-MAC figure.
#include <stdint.h>

#include "runtime/kernels/cortexm/conv2d.h"
#include "runtime/kernels/cortexm/depthwise_conv2d.h"
#include "runtime/kernels/cortexm/matmul.h"
#include "runtime/platform.h"

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
    floe::platform::log("usage: op=<matmul|conv2d|depthwise>_<reference|cortexm> reps=N\n");
    return 0;
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
