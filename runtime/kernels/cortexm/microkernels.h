// SPDX-License-Identifier: Apache-2.0
// The inner loops behind the Cortex-M MATMUL and CONV2D: a block of output
// columns (or channels) held in registers across a run of k,
//   acc[c] += sum over k in order of a[k] * b[k * ldb + c],
// a contiguous, b rows `ldb` floats apart, acc in memory before and after.
//   mac8   FPU (M4/M33): eight scalar accumulators, hand-scheduled: two k per
//          iteration (one VLDM of two a values, two VLDMs of eight b values,
//          sixteen VFMAs), ~1.4 instructions per multiply-accumulate where
//          GCC 12's C needs ~2.8 (one VLDR per b value). Elsewhere the same sums
//          in C, unfused: the portable build stays bit-exact with the reference.
//   mac16  Helium (M55): sixteen accumulators in q0-q3, two k per iteration
//          (LDRD of two a values, eight VLDRWs, eight VFMA Qd,Qn,Rm), ~0.63
//          instructions per multiply-accumulate where GCC 12 needs ~0.85.
// Inline assembly, because the gain is in the instruction choice (VLDM, LDRD,
// a low-overhead loop) that GCC does not make; each is checked against the
// reference on the boards (tests/cortexm).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "runtime/kernels/cortexm/isa.h"

namespace floe::cortexm {

#if defined(FLOE_CORTEXM_FPU)

inline void mac8(float acc[8], const float* a, const float* b, ptrdiff_t ldb, ptrdiff_t k_size) {
  const ptrdiff_t ldb_bytes = ldb * static_cast<ptrdiff_t>(sizeof(float));
  ptrdiff_t pairs = k_size / 2;
  const ptrdiff_t odd = k_size % 2;
  __asm__ volatile(
      "vldmia %[acc], {s0-s7}\n\t"
      "cmp %[pairs], #0\n\t"
      "beq 2f\n"
      "1:\n\t"
      "vldmia %[a]!, {s16-s17}\n\t"
      "vldmia %[b], {s8-s15}\n\t"
      "add %[b], %[b], %[ldb]\n\t"
      "vldmia %[b], {s24-s31}\n\t"
      "add %[b], %[b], %[ldb]\n\t"
      "vfma.f32 s0, s16, s8\n\t"
      "vfma.f32 s1, s16, s9\n\t"
      "vfma.f32 s2, s16, s10\n\t"
      "vfma.f32 s3, s16, s11\n\t"
      "vfma.f32 s4, s16, s12\n\t"
      "vfma.f32 s5, s16, s13\n\t"
      "vfma.f32 s6, s16, s14\n\t"
      "vfma.f32 s7, s16, s15\n\t"
      "vfma.f32 s0, s17, s24\n\t"
      "vfma.f32 s1, s17, s25\n\t"
      "vfma.f32 s2, s17, s26\n\t"
      "vfma.f32 s3, s17, s27\n\t"
      "vfma.f32 s4, s17, s28\n\t"
      "vfma.f32 s5, s17, s29\n\t"
      "vfma.f32 s6, s17, s30\n\t"
      "vfma.f32 s7, s17, s31\n\t"
      "subs %[pairs], %[pairs], #1\n\t"
      "bne 1b\n"
      "2:\n\t"
      "cmp %[odd], #0\n\t"
      "beq 3f\n\t"
      "vldmia %[a]!, {s16}\n\t"
      "vldmia %[b], {s8-s15}\n\t"
      "vfma.f32 s0, s16, s8\n\t"
      "vfma.f32 s1, s16, s9\n\t"
      "vfma.f32 s2, s16, s10\n\t"
      "vfma.f32 s3, s16, s11\n\t"
      "vfma.f32 s4, s16, s12\n\t"
      "vfma.f32 s5, s16, s13\n\t"
      "vfma.f32 s6, s16, s14\n\t"
      "vfma.f32 s7, s16, s15\n"
      "3:\n\t"
      "vstmia %[acc], {s0-s7}\n\t"
      : [a] "+r"(a), [b] "+r"(b), [pairs] "+r"(pairs)
      : [acc] "r"(acc), [ldb] "r"(ldb_bytes), [odd] "r"(odd)
      : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "s12", "s13",
        "s14", "s15", "s16", "s17", "s24", "s25", "s26", "s27", "s28", "s29", "s30", "s31", "cc",
        "memory");
}

#elif defined(FLOE_CORTEXM_MVE)

// c = 0..15; see the file comment.
inline void mac16(float acc[16], const float* a, const float* b, ptrdiff_t ldb, ptrdiff_t k_size) {
  const ptrdiff_t ldb_bytes = ldb * static_cast<ptrdiff_t>(sizeof(float));
  ptrdiff_t pairs = k_size / 2;
  const ptrdiff_t odd = k_size % 2;
  uint32_t x0, x1;  // a values as raw bits: VFMA Qd,Qn,Rm takes the scalar in a core register
  __asm__ volatile(
      "vldrw.u32 q0, [%[acc]]\n\t"
      "vldrw.u32 q1, [%[acc], #16]\n\t"
      "vldrw.u32 q2, [%[acc], #32]\n\t"
      "vldrw.u32 q3, [%[acc], #48]\n\t"
      "cmp %[pairs], #0\n\t"
      "beq 2f\n\t"
      "dls lr, %[pairs]\n"
      "1:\n\t"
      "ldrd %[x0], %[x1], [%[a]], #8\n\t"
      "vldrw.u32 q4, [%[b]]\n\t"
      "vldrw.u32 q5, [%[b], #16]\n\t"
      "vldrw.u32 q6, [%[b], #32]\n\t"
      "vldrw.u32 q7, [%[b], #48]\n\t"
      "add %[b], %[b], %[ldb]\n\t"
      "vfma.f32 q0, q4, %[x0]\n\t"
      "vfma.f32 q1, q5, %[x0]\n\t"
      "vfma.f32 q2, q6, %[x0]\n\t"
      "vfma.f32 q3, q7, %[x0]\n\t"
      "vldrw.u32 q4, [%[b]]\n\t"
      "vldrw.u32 q5, [%[b], #16]\n\t"
      "vldrw.u32 q6, [%[b], #32]\n\t"
      "vldrw.u32 q7, [%[b], #48]\n\t"
      "add %[b], %[b], %[ldb]\n\t"
      "vfma.f32 q0, q4, %[x1]\n\t"
      "vfma.f32 q1, q5, %[x1]\n\t"
      "vfma.f32 q2, q6, %[x1]\n\t"
      "vfma.f32 q3, q7, %[x1]\n\t"
      "le lr, 1b\n"
      "2:\n\t"
      "cmp %[odd], #0\n\t"
      "beq 3f\n\t"
      "ldr %[x0], [%[a]]\n\t"
      "vldrw.u32 q4, [%[b]]\n\t"
      "vldrw.u32 q5, [%[b], #16]\n\t"
      "vldrw.u32 q6, [%[b], #32]\n\t"
      "vldrw.u32 q7, [%[b], #48]\n\t"
      "vfma.f32 q0, q4, %[x0]\n\t"
      "vfma.f32 q1, q5, %[x0]\n\t"
      "vfma.f32 q2, q6, %[x0]\n\t"
      "vfma.f32 q3, q7, %[x0]\n"
      "3:\n\t"
      "vstrw.32 q0, [%[acc]]\n\t"
      "vstrw.32 q1, [%[acc], #16]\n\t"
      "vstrw.32 q2, [%[acc], #32]\n\t"
      "vstrw.32 q3, [%[acc], #48]\n\t"
      : [a] "+r"(a), [b] "+r"(b), [x0] "=&r"(x0), [x1] "=&r"(x1)
      : [acc] "r"(acc), [ldb] "r"(ldb_bytes), [pairs] "r"(pairs), [odd] "r"(odd)
      : "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "lr", "cc", "memory");
}

#else

inline void mac8(float acc[8], const float* a, const float* b, ptrdiff_t ldb, ptrdiff_t k_size) {
  float c0 = acc[0], c1 = acc[1], c2 = acc[2], c3 = acc[3];
  float c4 = acc[4], c5 = acc[5], c6 = acc[6], c7 = acc[7];
  for (ptrdiff_t k = 0; k < k_size; ++k, b += ldb) {
    const float x = a[k];
    c0 = mac(c0, x, b[0]);
    c1 = mac(c1, x, b[1]);
    c2 = mac(c2, x, b[2]);
    c3 = mac(c3, x, b[3]);
    c4 = mac(c4, x, b[4]);
    c5 = mac(c5, x, b[5]);
    c6 = mac(c6, x, b[6]);
    c7 = mac(c7, x, b[7]);
  }
  acc[0] = c0, acc[1] = c1, acc[2] = c2, acc[3] = c3;
  acc[4] = c4, acc[5] = c5, acc[6] = c6, acc[7] = c7;
}

#endif

// dot: acc + sum over k in order of a[k] * b[k], a and b contiguous (the
// single-output-channel convolution's window rows). FPU: four k per iteration
// (two VLDMs, four VFMAs into one accumulator, so the order is kept), ~2
// instructions per multiply-accumulate where GCC 12's loop needs ~5.
#if defined(FLOE_CORTEXM_FPU)

inline float dot(float acc, const float* a, const float* b, ptrdiff_t n) {
  ptrdiff_t quads = n / 4;
  if (quads > 0) {
    __asm__ volatile(
        "1:\n\t"
        "vldmia %[a]!, {s8-s11}\n\t"
        "vldmia %[b]!, {s12-s15}\n\t"
        "vfma.f32 %[acc], s8, s12\n\t"
        "vfma.f32 %[acc], s9, s13\n\t"
        "vfma.f32 %[acc], s10, s14\n\t"
        "vfma.f32 %[acc], s11, s15\n\t"
        "subs %[quads], %[quads], #1\n\t"
        "bne 1b\n"
        : [acc] "+t"(acc), [a] "+r"(a), [b] "+r"(b), [quads] "+r"(quads)
        :
        : "s8", "s9", "s10", "s11", "s12", "s13", "s14", "s15", "cc", "memory");
  }
  for (ptrdiff_t k = 0; k < n % 4; ++k) acc = mac(acc, a[k], b[k]);
  return acc;
}

// dot_rows: `rows` dot products of n contiguous values, row r of a at
// a + r * a_step and of b at b + r * b_step, summed into one
// accumulator in order (a single-channel convolution window). FPU: the row
// and quad loops in assembly: ~22 instructions for a 6-tap row where calling
// dot() per row needs ~50.
inline float dot_rows(float acc, const float* a, ptrdiff_t a_step, const float* b, ptrdiff_t b_step,
                      ptrdiff_t rows, ptrdiff_t n) {
  if (rows <= 0 || n <= 0) return acc;
  const ptrdiff_t quads = n / 4, rest = n % 4;
  // Pointer increments from the end of one row to the start of the next.
  const ptrdiff_t a_gap = (a_step - n) * static_cast<ptrdiff_t>(sizeof(float));
  const ptrdiff_t b_gap = (b_step - n) * static_cast<ptrdiff_t>(sizeof(float));
  ptrdiff_t q;
  __asm__ volatile(
      "1:\n\t"
      "movs %[q], %[quads]\n\t"
      "beq 3f\n"
      "2:\n\t"
      "vldmia %[a]!, {s8-s11}\n\t"
      "vldmia %[b]!, {s12-s15}\n\t"
      "vfma.f32 %[acc], s8, s12\n\t"
      "vfma.f32 %[acc], s9, s13\n\t"
      "vfma.f32 %[acc], s10, s14\n\t"
      "vfma.f32 %[acc], s11, s15\n\t"
      "subs %[q], %[q], #1\n\t"
      "bne 2b\n"
      "3:\n\t"
      "tst %[rest], #2\n\t"
      "beq 4f\n\t"
      "vldmia %[a]!, {s8-s9}\n\t"
      "vldmia %[b]!, {s12-s13}\n\t"
      "vfma.f32 %[acc], s8, s12\n\t"
      "vfma.f32 %[acc], s9, s13\n"
      "4:\n\t"
      "tst %[rest], #1\n\t"
      "beq 5f\n\t"
      "vldmia %[a]!, {s8}\n\t"
      "vldmia %[b]!, {s12}\n\t"
      "vfma.f32 %[acc], s8, s12\n"
      "5:\n\t"
      "add %[a], %[a], %[a_gap]\n\t"
      "add %[b], %[b], %[b_gap]\n\t"
      "subs %[rows], %[rows], #1\n\t"
      "bne 1b\n"
      : [acc] "+t"(acc), [a] "+r"(a), [b] "+r"(b), [rows] "+r"(rows), [q] "=&r"(q)
      : [quads] "r"(quads), [rest] "r"(rest), [a_gap] "r"(a_gap), [b_gap] "r"(b_gap)
      : "s8", "s9", "s10", "s11", "s12", "s13", "s14", "s15", "cc", "memory");
  return acc;
}

#else

inline float dot(float acc, const float* a, const float* b, ptrdiff_t n) {
  for (ptrdiff_t k = 0; k < n; ++k) acc = mac(acc, a[k], b[k]);
  return acc;
}

inline float dot_rows(float acc, const float* a, ptrdiff_t a_step, const float* b, ptrdiff_t b_step,
                      ptrdiff_t rows, ptrdiff_t n) {
  for (ptrdiff_t r = 0; r < rows; ++r, a += a_step, b += b_step) acc = dot(acc, a, b, n);
  return acc;
}

#endif

}  // namespace floe::cortexm
