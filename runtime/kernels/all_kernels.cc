// SPDX-License-Identifier: Apache-2.0
// The registry of every kernel row (runtime/core/registry.h), for programs
// that name no kernel selection of their own: tools, tests, Linux targets. It
// is a member of the floe_runtime library, so the linker takes it only when
// nothing else defines kKernelRegistry; a program that links a selection
// (floe-embed kernels, as floe_add_model() writes for its target) never
// references it, nor the kernels only it lists.
#include "runtime/core/control_flow.h"
#include "runtime/core/registry.h"

#define FLOE_KERNEL_ROW(backend, op, dtype) extern const KernelRow backend##_##op##_##dtype;
namespace floe::kernels {
#include "runtime/kernels/reference/kernels.def"
#include "runtime/kernels/cortexm/kernels.def"
}  // namespace floe::kernels
#undef FLOE_KERNEL_ROW

namespace floe {
namespace {

#define FLOE_KERNEL_ROW(backend, op, dtype) &kernels::backend##_##op##_##dtype,
constexpr const KernelRow* kAllRows[] = {
#include "runtime/kernels/reference/kernels.def"
#include "runtime/kernels/cortexm/kernels.def"
};
#undef FLOE_KERNEL_ROW

}  // namespace

const KernelRegistry kKernelRegistry = {kAllRows, sizeof(kAllRows) / sizeof(kAllRows[0]), &ControlFlow::kSupport};

}  // namespace floe
