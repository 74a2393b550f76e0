// SPDX-License-Identifier: Apache-2.0
// Whether this CPU is in the class the XNNPACK tests' <graph>_class.floe
// models were converted for (tests/xnnpack/CMakeLists.txt), where the
// converter's arena budget is exact: x86-64 with AVX-512F (x86_64-avx512; for
// int8 models also CD, BW, DQ, VL),
// aarch64 without the dot product (aarch64-no-dotprod). Elsewhere those
// models run the reference kernels and the tests use the target-wide model.
#pragma once

#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

namespace floe::testing {

inline bool in_exact_budget_class(bool int8 = false) {
#if defined(__x86_64__)
  // int8 models: XNNPACK's int8 AVX-512 kernels need CD, BW, DQ and VL too.
  return __builtin_cpu_supports("avx512f") &&
         (!int8 || (__builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")));
#elif defined(__aarch64__)
  (void)int8;
  return (getauxval(AT_HWCAP) & (1ul << 20)) == 0;  // no HWCAP_ASIMDDP
#else
  (void)int8;
  return false;
#endif
}

}  // namespace floe::testing
