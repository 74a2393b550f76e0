// SPDX-License-Identifier: Apache-2.0
// Looking rows up in the program's kernel registry (registry.h). The registry
// itself is defined elsewhere: by a program's kernel selection, or by
// runtime/kernels/all_kernels.cc.
#include "runtime/core/registry.h"

namespace floe {

static_assert(static_cast<int>(DType::kBool) == static_cast<int>(schema::DType::BOOL),
              "runtime DType must mirror schema DType");
static_assert(static_cast<int>(DType::kUInt64) == static_cast<int>(schema::DType::UINT64) &&
                  schema::DType::MAX == schema::DType::UINT64,
              "runtime DType must mirror schema DType");

namespace {

const KernelRow* find_row(const KernelRegistry& registry, schema::OpCode code, schema::Backend backend,
                          DType dtype) {
  const KernelRow* any = nullptr;
  for (uint32_t i = 0; i < registry.count; ++i) {
    const KernelRow* row = registry.rows[i];
    if (row->opcode != code || row->backend != backend) continue;
    if (row->dtype == dtype) return row;
    if (row->dtype == kernel_dtype_of::ANY) any = row;
  }
  return any;
}

}  // namespace

const KernelRow* find_kernel(const KernelRegistry& registry, schema::OpCode code, schema::Backend backend,
                             DType dtype) {
  const KernelRow* row = find_row(registry, code, backend, dtype);
  if (row == nullptr && backend == schema::Backend::XNNPACK) {
    row = find_row(registry, code, schema::Backend::REFERENCE, dtype);
  }
  return row;
}

const char* kernel_op_name(schema::OpCode code) {
  for (uint32_t i = 0; i < kKernelRegistry.count; ++i) {
    if (kKernelRegistry.rows[i]->opcode == code) return kKernelRegistry.rows[i]->name;
  }
  return "?";
}

}  // namespace floe
