// SPDX-License-Identifier: Apache-2.0
// A program's kernel selection (runtime/core/registry.h) from the models it
// runs: the rows the runtime will take for their operators, written as a C++
// source that defines kKernelRegistry with those rows only. floe-embed ops and
// floe-convert --op-selection write it; floe_add_model() compiles it into each
// target that embeds models. Host-only (heap, exceptions).
#pragma once

#include <string>
#include <vector>

#include "runtime/core/model.h"
#include "runtime/core/registry.h"

namespace floe::tools {

// The rows of this tool's registry (every kernel) that the runtime takes for
// the models' operators, in registry order, each once. Throws
// std::runtime_error naming the op, dtype and backend for an operator no row
// runs.
std::vector<const KernelRow*> rows_for_models(const std::vector<const Model*>& models);

// The row's symbol: floe::kernels::<BACKEND>_<OP>_<DTYPE or ANY>.
std::string kernel_row_symbol(const KernelRow& row);

// The selection source for `rows`; `origin` names the models in its comment.
// Besides kKernelRegistry it defines one marker per row,
// floe_kernel_row_<BACKEND>_<OP>_<DTYPE> (extern "C"), which a model source
// (floe-embed model) compiled with FLOE_KERNEL_SELECTION references for every
// row it runs with: a selection that lacks one fails to link, naming it.
std::string kernel_selection_source(const std::vector<const KernelRow*>& rows, const std::string& origin);

// The marker's name for `row` (above).
std::string kernel_row_marker(const KernelRow& row);

}  // namespace floe::tools
