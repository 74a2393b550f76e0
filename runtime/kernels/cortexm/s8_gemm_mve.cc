// SPDX-License-Identifier: Apache-2.0
// Helium (MVE, Cortex-M55) s8_gemm (s8_microkernels.h), built only when
// CMake defines FLOE_CORTEXM_S8_MVE (a Helium core); the DSP and portable one
// is s8_gemm.cc.
//
// 3 rows x 2 channels per pass over k, one VMLADAVA.S8 (16 MACs) per row and
// channel, in a tail-predicated low-overhead loop (WLSTP/LETP), so k % 16
// costs nothing extra: 5 loads + 6 VMLADAVA + LETP per 96 MACs. Two passes in
// one inline-assembly block give 3 rows x 4 channels as three vectors,
// requantized 4 channels per instruction (s8_mve_requant.h). Assembly because
// GCC 12 emits no tail-predicated loop and, left to itself, spills the twelve
// sums between passes. k <= 16 keeps 4 channels' weights in registers instead.
#if defined(FLOE_CORTEXM_S8_MVE)

#include <arm_mve.h>

#include "runtime/kernels/cortexm/s8_microkernels.h"
#include "runtime/kernels/cortexm/s8_mve_requant.h"

namespace floe::cortexm {
using namespace s8_detail;  // NOLINT(build/namespaces): the Helium kernels' shared requantization
namespace {

// True when every live lane's shift is negative (scale4<true> applies);
// dead lanes are loaded as 0 and ignored.
inline bool right_shifts_only(int32x4_t shift, mve_pred16_t live) {
  return vmaxvq_p_s32(INT32_MIN, shift, live) < 0;
}

// A vector from four scalars: two VMOVs (GCC 12 uses one per lane). In
// "vmov qd[2], qd[0], rt, rt2", rt goes to the lower lane.
inline int32x4_t make_lanes(int32_t l0, int32_t l1, int32_t l2, int32_t l3) {
  int32x4_t v;
  __asm__("vmov %q0[2], %q0[0], %1, %3\n\t"
          "vmov %q0[3], %q0[1], %2, %4"
          : "=&w"(v)
          : "r"(l0), "r"(l1), "r"(l2), "r"(l3));
  return v;
}

// The second pass of dot_3x4, read from the stack: by then all 13 free core
// registers are taken.
struct SecondPass {
  int32_t k_size;
  const int8_t* w1;
  const int8_t* w3;
  int32_t bias1, bias3;
};

// rows[r] = {bias[c] + sum over k < k_size of a_r[k] * w_c[k]} for rows
// a0..a2 and channels c = 0..3 (w0, w2 and bias0, bias2 as arguments, w1, w3
// and bias1, bias3 in `second`). Two tail-predicated passes over k, channels
// 0 and 2 then 1 and 3, so that each pass's two sums per row fill lanes
// (0, 2) and then (1, 3) with one VMOV. VMLADAVA's accumulator must be an
// even register ("Te").
struct Rows3 {
  int32x4_t row0, row1, row2;
};

inline Rows3 dot_3x4(const int8_t* a0, const int8_t* a1, const int8_t* a2, const int8_t* w0,
                     const int8_t* w2, int32_t bias0, int32_t bias2, const SecondPass& second) {
  int32_t s0a = bias0, s0b = bias2, s1a = bias0, s1b = bias2, s2a = bias0, s2b = bias2;
  Rows3 rows;
  __asm__ volatile(
      "ldr lr, %[k]\n\t"
      "wlstp.8 lr, lr, 2f\n"
      "1:\n\t"
      "vldrb.u8 q0, [%[wa]], #16\n\t"
      "vldrb.u8 q1, [%[wb]], #16\n\t"
      "vldrb.u8 q2, [%[a0]], #16\n\t"
      "vmladava.s8 %[s0a], q2, q0\n\t"
      "vmladava.s8 %[s0b], q2, q1\n\t"
      "vldrb.u8 q3, [%[a1]], #16\n\t"
      "vmladava.s8 %[s1a], q3, q0\n\t"
      "vmladava.s8 %[s1b], q3, q1\n\t"
      "vldrb.u8 q2, [%[a2]], #16\n\t"
      "vmladava.s8 %[s2a], q2, q0\n\t"
      "vmladava.s8 %[s2b], q2, q1\n\t"
      "letp lr, 1b\n"
      "2:\n\t"
      "vmov %q[v0][2], %q[v0][0], %[s0a], %[s0b]\n\t"
      "vmov %q[v1][2], %q[v1][0], %[s1a], %[s1b]\n\t"
      "vmov %q[v2][2], %q[v2][0], %[s2a], %[s2b]\n\t"
      "ldr lr, %[k]\n\t"  // the rows moved k rounded up to 16
      "add lr, lr, #15\n\t"
      "bic lr, lr, #15\n\t"
      "sub %[a0], %[a0], lr\n\t"
      "sub %[a1], %[a1], lr\n\t"
      "sub %[a2], %[a2], lr\n\t"
      "ldr %[wa], %[w1]\n\t"
      "ldr %[wb], %[w3]\n\t"
      "ldr %[s0a], %[b1]\n\t"
      "mov %[s1a], %[s0a]\n\t"
      "mov %[s2a], %[s0a]\n\t"
      "ldr %[s0b], %[b3]\n\t"
      "mov %[s1b], %[s0b]\n\t"
      "mov %[s2b], %[s0b]\n\t"
      "ldr lr, %[k]\n\t"
      "wlstp.8 lr, lr, 4f\n"
      "3:\n\t"
      "vldrb.u8 q0, [%[wa]], #16\n\t"
      "vldrb.u8 q1, [%[wb]], #16\n\t"
      "vldrb.u8 q2, [%[a0]], #16\n\t"
      "vmladava.s8 %[s0a], q2, q0\n\t"
      "vmladava.s8 %[s0b], q2, q1\n\t"
      "vldrb.u8 q3, [%[a1]], #16\n\t"
      "vmladava.s8 %[s1a], q3, q0\n\t"
      "vmladava.s8 %[s1b], q3, q1\n\t"
      "vldrb.u8 q2, [%[a2]], #16\n\t"
      "vmladava.s8 %[s2a], q2, q0\n\t"
      "vmladava.s8 %[s2b], q2, q1\n\t"
      "letp lr, 3b\n"
      "4:\n\t"
      "vmov %q[v0][3], %q[v0][1], %[s0a], %[s0b]\n\t"
      "vmov %q[v1][3], %q[v1][1], %[s1a], %[s1b]\n\t"
      "vmov %q[v2][3], %q[v2][1], %[s2a], %[s2b]\n\t"
      : [v0] "=&w"(rows.row0), [v1] "=&w"(rows.row1), [v2] "=&w"(rows.row2), [s0a] "+Te"(s0a),
        [s0b] "+Te"(s0b), [s1a] "+Te"(s1a), [s1b] "+Te"(s1b), [s2a] "+Te"(s2a), [s2b] "+Te"(s2b),
        [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [wa] "+r"(w0), [wb] "+r"(w2)
      : [k] "m"(second.k_size), [w1] "m"(second.w1),
        [w3] "m"(second.w3), [b1] "m"(second.bias1), [b3] "m"(second.bias3)
      : "q0", "q1", "q2", "q3", "lr", "memory");
  return rows;
}

// One row against 4 channels: {bias[c] + sum over k of a[k] * w_c[k]} in
// one tail-predicated pass (a fully connected layer's single row, a GEMM's
// last row): 1 + 4 loads and 4 VMLADAVA per 64 MACs, where dot_3x4 on a
// repeated row would do three times the work.
inline int32x4_t dot_1x4(const int8_t* a, const int8_t* w0, const int8_t* w1, const int8_t* w2,
                         const int8_t* w3, const int32_t bias[4], int32_t k_size) {
  int32_t s0 = bias[0], s1 = bias[1], s2 = bias[2], s3 = bias[3];
  __asm__ volatile(
      "wlstp.8 lr, %[k], 2f\n"
      "1:\n\t"
      "vldrb.u8 q0, [%[a]], #16\n\t"
      "vldrb.u8 q1, [%[w0]], #16\n\t"
      "vmladava.s8 %[s0], q0, q1\n\t"
      "vldrb.u8 q2, [%[w1]], #16\n\t"
      "vmladava.s8 %[s1], q0, q2\n\t"
      "vldrb.u8 q1, [%[w2]], #16\n\t"
      "vmladava.s8 %[s2], q0, q1\n\t"
      "vldrb.u8 q2, [%[w3]], #16\n\t"
      "vmladava.s8 %[s3], q0, q2\n\t"
      "letp lr, 1b\n"
      "2:\n"
      : [s0] "+Te"(s0), [s1] "+Te"(s1), [s2] "+Te"(s2), [s3] "+Te"(s3), [a] "+r"(a),
        [w0] "+r"(w0), [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3)
      : [k] "r"(k_size)
      : "q0", "q1", "q2", "lr", "memory");
  return make_lanes(s0, s1, s2, s3);
}

// The output zero point and clamp, held in registers across a block: the
// kernels write int8, which may alias S8Requant, so its fields would
// otherwise be reloaded after every store.
struct OutputStage {
  int32_t offset;
  int32x4_t act_min, act_max;
};

inline OutputStage make_output_stage(const S8Requant& rq) {
  return {rq.output_offset, vdupq_n_s32(rq.act_min), vdupq_n_s32(rq.act_max)};
}

// Clamp and store of one row's 4 channels.
inline void store4(int8_t* out, int32x4_t x, const OutputStage& o, bool full, mve_pred16_t pred) {
  x = vaddq_n_s32(x, o.offset);  // wraps like the reference's int32 add
  x = vminq_s32(vmaxq_s32(x, o.act_min), o.act_max);
  if (full) {
    vstrbq_s32(out, x);
  } else {
    vstrbq_p_s32(out, x, pred);
  }
}


// Everything gemm_blocks_3x4 reads, at fixed offsets from one pointer (the
// loop needs every core register but one for the sums and row pointers).
struct GemmBlocks {
  const int8_t* a;        // 0: the current block's first row (advanced)
  int8_t* out;            // 4: its output (advanced)
  int32_t blocks;         // 8: blocks left (counted down, >= 1)
  int32_t a_stride;       // 12
  int32_t out_stride;     // 16
  int32_t k_size;         // 20
  const int8_t* w[4];     // 24: the 4 channels' weight rows
  int32_t bias[4];        // 40
  int32_t output_offset;  // 56
  int32_t unused;         // 60
  int32x4_t multiplier;   // 64
  int32x4_t right_shift;  // 80: min(shift, 0), all negative
  int32x4_t act_min;      // 96
  int32x4_t act_max;      // 112
};

#define FLOE_GEMM_PASS(wa_offset, wb_offset, bias_a, bias_b, loop, done) \
  "ldr %[a0], [%[t]]\n\t"                                                 \
  "ldr %[a2], [%[t], #12]\n\t"                                            \
  "add %[a1], %[a0], %[a2]\n\t"                                           \
  "add %[a2], %[a1], %[a2]\n\t"                                           \
  "ldr %[wa], [%[t], #" #wa_offset "]\n\t"                                \
  "ldr %[wb], [%[t], #" #wb_offset "]\n\t"                                \
  "ldr %[s0a], [%[t], #" #bias_a "]\n\t"                                  \
  "mov %[s1a], %[s0a]\n\t"                                                \
  "mov %[s2a], %[s0a]\n\t"                                                \
  "ldr %[s0b], [%[t], #" #bias_b "]\n\t"                                  \
  "mov %[s1b], %[s0b]\n\t"                                                \
  "mov %[s2b], %[s0b]\n\t"                                                \
  "ldr lr, [%[t], #20]\n\t"                                               \
  "wlstp.8 lr, lr, " #done "f\n"                                          \
  #loop ":\n\t"                                                           \
  "vldrb.u8 q0, [%[wa]], #16\n\t"                                         \
  "vldrb.u8 q1, [%[wb]], #16\n\t"                                         \
  "vldrb.u8 q2, [%[a0]], #16\n\t"                                         \
  "vmladava.s8 %[s0a], q2, q0\n\t"                                        \
  "vmladava.s8 %[s0b], q2, q1\n\t"                                        \
  "vldrb.u8 q3, [%[a1]], #16\n\t"                                         \
  "vmladava.s8 %[s1a], q3, q0\n\t"                                        \
  "vmladava.s8 %[s1b], q3, q1\n\t"                                        \
  "vldrb.u8 q2, [%[a2]], #16\n\t"                                         \
  "vmladava.s8 %[s2a], q2, q0\n\t"                                        \
  "vmladava.s8 %[s2b], q2, q1\n\t"                                        \
  "letp lr, " #loop "b\n"                                                 \
  #done ":\n\t"

// `blocks` blocks of 3 rows x 4 channels (a full channel block, every shift
// negative): dot_3x4's two passes per block, then scale4<true>, the output
// offset, the clamp and the stores, all in one assembly loop, where the C
// loop around dot_3x4 spends ~50 instructions per block on spills.
__attribute__((noinline)) void gemm_blocks_3x4(GemmBlocks& g) {
  GemmBlocks* context = &g;
  int32_t s0a, s0b, s1a, s1b, s2a, s2b;
  const int8_t* a0;
  const int8_t* a1;
  const int8_t* a2;
  const int8_t* wa;
  const int8_t* wb;
  __asm__ volatile(
      "1:\n\t"
      FLOE_GEMM_PASS(24, 32, 40, 48, 2, 3)
      "vmov q4[2], q4[0], %[s0a], %[s0b]\n\t"
      "vmov q5[2], q5[0], %[s1a], %[s1b]\n\t"
      "vmov q6[2], q6[0], %[s2a], %[s2b]\n\t"
      FLOE_GEMM_PASS(28, 36, 44, 52, 4, 5)
      "vmov q4[3], q4[1], %[s0a], %[s0b]\n\t"
      "vmov q5[3], q5[1], %[s1a], %[s1b]\n\t"
      "vmov q6[3], q6[1], %[s2a], %[s2b]\n\t"
      "vldrw.u32 q0, [%[t], #64]\n\t"
      "vqrdmulh.s32 q4, q4, q0\n\t"
      "vqrdmulh.s32 q5, q5, q0\n\t"
      "vqrdmulh.s32 q6, q6, q0\n\t"
      "vshr.s32 q1, q4, #31\n\t"
      "vqadd.s32 q4, q4, q1\n\t"
      "vshr.s32 q1, q5, #31\n\t"
      "vqadd.s32 q5, q5, q1\n\t"
      "vshr.s32 q1, q6, #31\n\t"
      "vqadd.s32 q6, q6, q1\n\t"
      "vldrw.u32 q0, [%[t], #80]\n\t"
      "vrshl.s32 q4, q4, q0\n\t"
      "vrshl.s32 q5, q5, q0\n\t"
      "vrshl.s32 q6, q6, q0\n\t"
      "ldr %[s0a], [%[t], #56]\n\t"
      "vadd.i32 q4, q4, %[s0a]\n\t"
      "vadd.i32 q5, q5, %[s0a]\n\t"
      "vadd.i32 q6, q6, %[s0a]\n\t"
      "vldrw.u32 q0, [%[t], #96]\n\t"
      "vmax.s32 q4, q4, q0\n\t"
      "vmax.s32 q5, q5, q0\n\t"
      "vmax.s32 q6, q6, q0\n\t"
      "vldrw.u32 q0, [%[t], #112]\n\t"
      "vmin.s32 q4, q4, q0\n\t"
      "vmin.s32 q5, q5, q0\n\t"
      "vmin.s32 q6, q6, q0\n\t"
      "ldr %[a0], [%[t], #4]\n\t"
      "ldr %[a1], [%[t], #16]\n\t"
      "vstrb.32 q4, [%[a0]]\n\t"
      "add %[a0], %[a0], %[a1]\n\t"
      "vstrb.32 q5, [%[a0]]\n\t"
      "add %[a0], %[a0], %[a1]\n\t"
      "vstrb.32 q6, [%[a0]]\n\t"
      "add %[a0], %[a0], %[a1]\n\t"
      "str %[a0], [%[t], #4]\n\t"
      "ldr %[a0], [%[t]]\n\t"
      "ldr %[a1], [%[t], #12]\n\t"
      "add %[a0], %[a0], %[a1]\n\t"
      "add %[a0], %[a0], %[a1], lsl #1\n\t"
      "str %[a0], [%[t]]\n\t"
      "ldr %[a0], [%[t], #8]\n\t"
      "subs %[a0], %[a0], #1\n\t"
      "str %[a0], [%[t], #8]\n\t"
      "bne 1b\n\t"
      : [s0a] "=&Te"(s0a), [s0b] "=&Te"(s0b), [s1a] "=&Te"(s1a), [s1b] "=&Te"(s1b),
        [s2a] "=&Te"(s2a), [s2b] "=&Te"(s2b), [a0] "=&l"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2),
        [wa] "=&r"(wa), [wb] "=&r"(wb), [t] "+r"(context)
      :
      : "q0", "q1", "q2", "q3", "q4", "q5", "q6", "lr", "cc", "memory");
}

#undef FLOE_GEMM_PASS

// 4 channels (c..c+3, `live` of them real) for every row: the general k.
template <bool kRightOnly>
void gemm_block(const int8_t* a, int32_t a_stride, int32_t rows, const int8_t* w0, int32_t k_size,
                int32_t live, const int32_t* bias, const Requant4& q, const S8Requant& rq,
                int8_t* out, int32_t out_stride) {
  const bool full = live == 4;
  const mve_pred16_t pred = vctp32q(static_cast<uint32_t>(live));
  const OutputStage o = make_output_stage(rq);
  // Missing channels of the last block repeat the first one (results dropped);
  // the bias starts the sums, so it costs no vector add.
  const int8_t* w2 = live > 2 ? w0 + 2 * k_size : w0;
  const int32_t bias0 = bias[0];
  const int32_t bias2 = live > 2 ? bias[2] : 0;
  const SecondPass second{k_size, live > 1 ? w0 + k_size : w0,
                          live > 3 ? w0 + 3 * k_size : w0, live > 1 ? bias[1] : 0,
                          live > 3 ? bias[3] : 0};
  const int32_t full_blocks = rows / 3;
  if (kRightOnly && full && full_blocks > 0) {
    GemmBlocks g;
    g.a = a;
    g.out = out;
    g.blocks = full_blocks;
    g.a_stride = a_stride;
    g.out_stride = out_stride;
    g.k_size = k_size;
    for (int i = 0; i < 4; ++i) g.w[i] = w0 + i * k_size, g.bias[i] = bias[i];
    g.output_offset = rq.output_offset;
    g.unused = 0;
    g.multiplier = q.multiplier;
    g.right_shift = q.right_shift;
    g.act_min = o.act_min;
    g.act_max = o.act_max;
    gemm_blocks_3x4(g);
    a = g.a;
    out = g.out;
  }
  for (int32_t block = kRightOnly && full ? full_blocks : 0; block < full_blocks; ++block) {
    const Rows3 r = dot_3x4(a, a + a_stride, a + 2 * a_stride, w0, w2, bias0, bias2, second);
    store4(out, scale4<kRightOnly>(r.row0, q), o, full, pred);
    store4(out + out_stride, scale4<kRightOnly>(r.row1, q), o, full, pred);
    store4(out + 2 * out_stride, scale4<kRightOnly>(r.row2, q), o, full, pred);
    a += 3 * a_stride;
    out += 3 * out_stride;
  }
  const int32_t rest = rows - 3 * full_blocks;
  if (rest == 1) {
    const int32_t b[4] = {bias0, second.bias1, bias2, second.bias3};
    const int32x4_t sums = dot_1x4(a, w0, second.w1, w2, second.w3, b, k_size);
    store4(out, scale4<kRightOnly>(sums, q), o, full, pred);
  } else if (rest > 0) {
    // Missing rows repeat the first one (results dropped).
    const Rows3 r = dot_3x4(a, rest > 1 ? a + a_stride : a, a, w0, w2, bias0, bias2, second);
    store4(out, scale4<kRightOnly>(r.row0, q), o, full, pred);
    if (rest > 1) store4(out + out_stride, scale4<kRightOnly>(r.row1, q), o, full, pred);
  }
}

// Everything short_k_row_pairs reads, at fixed offsets from one pointer.
struct ShortKRows {
  const int8_t* a;        // 0: the next row (advanced)
  int8_t* out;            // 4: its output (advanced)
  int32_t a_stride;       // 8
  int32_t out_stride;     // 12
  int32_t pairs;          // 16: pairs of rows, >= 1
  int32_t output_offset;  // 20
  int32_t k_size;         // 24
  int32_t unused;         // 28
  int32x4_t bias;         // 32
  int32x4_t multiplier;   // 48
  int32x4_t right_shift;  // 64: min(shift, 0), all negative
  int32x4_t act_min;      // 80
  int32x4_t act_max;      // 96
  int8x16_t w[4];         // 112: the 4 channels' weights, zero beyond k
};

// Pairs of rows for k <= 16, a full channel block with right shifts only:
// the weights stay in q4-q7, each row is one predicated load (no byte beyond
// k) and four VMLADAVs, two rows share the constants' loads; requantized,
// clamped and stored in the same loop. It sets the predicate register
// (VCTP), which GCC 12 cannot be told as a clobber: never inlined, so the
// call itself (VPR is caller-saved) is what tells the caller.
__attribute__((noinline)) void short_k_row_pairs(ShortKRows& r) {
  ShortKRows* context = &r;
  int32_t s0, s1, s2, s3;
  const int8_t* a;
  int8_t* out;
  int32_t a_stride, out_stride;
  __asm__ volatile(
      "vldrw.u32 q4, [%[t], #112]\n\t"
      "vldrw.u32 q5, [%[t], #128]\n\t"
      "vldrw.u32 q6, [%[t], #144]\n\t"
      "vldrw.u32 q7, [%[t], #160]\n\t"
      "ldr %[s0], [%[t], #24]\n\t"
      "vctp.8 %[s0]\n\t"
      "ldr %[a], [%[t]]\n\t"
      "ldr %[out], [%[t], #4]\n\t"
      "ldr %[as], [%[t], #8]\n\t"
      "ldr %[os], [%[t], #12]\n\t"
      "ldr lr, [%[t], #16]\n\t"
      "dls lr, lr\n"
      "1:\n\t"
      "vpst\n\t"
      "vldrbt.u8 q0, [%[a]]\n\t"
      "add %[a], %[a], %[as]\n\t"
      "vpst\n\t"
      "vldrbt.u8 q1, [%[a]]\n\t"
      "add %[a], %[a], %[as]\n\t"
      "vmladav.s8 %[s0], q0, q4\n\t"
      "vmladav.s8 %[s1], q0, q5\n\t"
      "vmladav.s8 %[s2], q0, q6\n\t"
      "vmladav.s8 %[s3], q0, q7\n\t"
      "vmov q2[2], q2[0], %[s0], %[s2]\n\t"
      "vmov q2[3], q2[1], %[s1], %[s3]\n\t"
      "vmladav.s8 %[s0], q1, q4\n\t"
      "vmladav.s8 %[s1], q1, q5\n\t"
      "vmladav.s8 %[s2], q1, q6\n\t"
      "vmladav.s8 %[s3], q1, q7\n\t"
      "vmov q3[2], q3[0], %[s0], %[s2]\n\t"
      "vmov q3[3], q3[1], %[s1], %[s3]\n\t"
      "vldrw.u32 q0, [%[t], #32]\n\t"
      "vadd.i32 q2, q2, q0\n\t"
      "vadd.i32 q3, q3, q0\n\t"
      "vldrw.u32 q0, [%[t], #48]\n\t"
      "vqrdmulh.s32 q2, q2, q0\n\t"
      "vqrdmulh.s32 q3, q3, q0\n\t"
      "vshr.s32 q1, q2, #31\n\t"
      "vqadd.s32 q2, q2, q1\n\t"
      "vshr.s32 q1, q3, #31\n\t"
      "vqadd.s32 q3, q3, q1\n\t"
      "vldrw.u32 q0, [%[t], #64]\n\t"
      "vrshl.s32 q2, q2, q0\n\t"
      "vrshl.s32 q3, q3, q0\n\t"
      "ldr %[s0], [%[t], #20]\n\t"
      "vadd.i32 q2, q2, %[s0]\n\t"
      "vadd.i32 q3, q3, %[s0]\n\t"
      "vldrw.u32 q0, [%[t], #80]\n\t"
      "vmax.s32 q2, q2, q0\n\t"
      "vmax.s32 q3, q3, q0\n\t"
      "vldrw.u32 q0, [%[t], #96]\n\t"
      "vmin.s32 q2, q2, q0\n\t"
      "vmin.s32 q3, q3, q0\n\t"
      "vstrb.32 q2, [%[out]]\n\t"
      "add %[out], %[out], %[os]\n\t"
      "vstrb.32 q3, [%[out]]\n\t"
      "add %[out], %[out], %[os]\n\t"
      "le lr, 1b\n\t"
      "str %[a], [%[t]]\n\t"
      "str %[out], [%[t], #4]\n\t"
      : [s0] "=&Te"(s0), [s1] "=&Te"(s1), [s2] "=&Te"(s2), [s3] "=&Te"(s3), [a] "=&r"(a),
        [out] "=&l"(out), [as] "=&r"(a_stride), [os] "=&r"(out_stride), [t] "+r"(context)
      :
      : "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "lr", "memory");
}

// k <= 16 (person_detect's first layers: k = 8, 9, 16): each channel's
// weights fit one vector, so 4 channels stay in registers (zero beyond k,
// which makes the rows' lanes beyond k irrelevant) and each row costs one
// load and four VMLADAVs instead of a pass of the general loop per block.
template <bool kRightOnly>
void gemm_block_short_k(const int8_t* a, int32_t a_stride, int32_t rows, const int8_t* w0,
                        int32_t k_size, int32_t live, const int32_t* bias, const Requant4& q,
                        const S8Requant& rq, int8_t* out, int32_t out_stride) {
  const bool full = live == 4;
  const mve_pred16_t pred = vctp32q(static_cast<uint32_t>(live));
  const OutputStage o = make_output_stage(rq);
  const mve_pred16_t k_pred = vctp8q(static_cast<uint32_t>(k_size));
  const int8x16_t v0 = vldrbq_z_s8(w0, k_pred);
  const int8x16_t v1 = live > 1 ? vldrbq_z_s8(w0 + k_size, k_pred) : v0;
  const int8x16_t v2 = live > 2 ? vldrbq_z_s8(w0 + 2 * k_size, k_pred) : v0;
  const int8x16_t v3 = live > 3 ? vldrbq_z_s8(w0 + 3 * k_size, k_pred) : v0;
  const int32_t b0 = bias[0];
  const int32_t b1 = live > 1 ? bias[1] : 0;
  const int32_t b2 = live > 2 ? bias[2] : 0;
  const int32_t b3 = live > 3 ? bias[3] : 0;
  int32_t r = 0;
  if (kRightOnly && full && rows >= 2) {
    ShortKRows context;
    context.a = a;
    context.out = out;
    context.a_stride = a_stride;
    context.out_stride = out_stride;
    context.pairs = rows / 2;
    context.output_offset = rq.output_offset;
    context.k_size = k_size;
    context.unused = 0;
    context.bias = vldrwq_s32(bias);
    context.multiplier = q.multiplier;
    context.right_shift = q.right_shift;
    context.act_min = o.act_min;
    context.act_max = o.act_max;
    context.w[0] = v0, context.w[1] = v1, context.w[2] = v2, context.w[3] = v3;
    short_k_row_pairs(context);
    a = context.a;
    out = context.out;
    r = 2 * (rows / 2);
  }
  for (; r < rows; ++r, a += a_stride, out += out_stride) {
    const int8x16_t x = vldrbq_z_s8(a, k_pred);  // reads no byte beyond the row
    const int32x4_t sums = make_lanes(vmladavaq_s8(b0, x, v0), vmladavaq_s8(b1, x, v1),
                                      vmladavaq_s8(b2, x, v2), vmladavaq_s8(b3, x, v3));
    store4(out, scale4<kRightOnly>(sums, q), o, full, pred);
  }
}

}  // namespace

void s8_gemm(const int8_t* a, int32_t a_stride, int32_t rows, const int8_t* w, int32_t channels,
             int32_t k_size, const S8Requant& rq, int8_t* out, int32_t out_stride) {
  for (int32_t c = 0; c < channels; c += 4) {
    const int32_t live = channels - c < 4 ? channels - c : 4;
    const mve_pred16_t pred = vctp32q(static_cast<uint32_t>(live));
    const int32x4_t shift = vldrwq_z_s32(rq.shift + c, pred);
    const Requant4 q = make_requant4(vldrwq_z_s32(rq.multiplier + c, pred), shift);
    const int8_t* w0 = w + c * k_size;
    const bool right_only = right_shifts_only(shift, pred);
    if (k_size <= 16) {
      if (right_only) {
        gemm_block_short_k<true>(a, a_stride, rows, w0, k_size, live, rq.bias + c, q, rq, out + c,
                                 out_stride);
      } else {
        gemm_block_short_k<false>(a, a_stride, rows, w0, k_size, live, rq.bias + c, q, rq, out + c,
                                  out_stride);
      }
    } else if (right_only) {
      gemm_block<true>(a, a_stride, rows, w0, k_size, live, rq.bias + c, q, rq, out + c,
                       out_stride);
    } else {
      gemm_block<false>(a, a_stride, rows, w0, k_size, live, rq.bias + c, q, rq, out + c,
                        out_stride);
    }
  }
}

}  // namespace floe::cortexm

#endif  // FLOE_CORTEXM_S8_MVE
