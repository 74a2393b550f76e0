// SPDX-License-Identifier: Apache-2.0
// The optimization pass manager: runs the passes over the lowered model (after
// lower_graph, before emit) in one fixed order and reports what each did.
// Every pass can be turned off by name, and all of them at once, so tests can
// check a model computes the same with and without each pass.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "converter/ir/lowered.h"

namespace floe::conv {

struct OptimizeOptions {
  bool enabled = true;             // false: no pass runs (floe-convert --no-optimize)
  std::set<std::string> disabled;  // pass names (floe-convert --disable-pass NAME)
  // With fold-constants on, lower_graph folds TF nodes over constants as it goes
  // (the fast path) and the pass folds what is left. Tests turn this off to check
  // the pass alone folds the same model.
  bool fold_while_lowering = true;
};

struct PassReport {
  std::string name;
  bool ran = false;
  int rewrites = 0;
  std::vector<std::string> log;  // one line per rewrite
};

struct OptimizeReport {
  std::vector<PassReport> passes;  // every pass, in order, also the ones disabled
  size_t ops_before = 0, ops_after = 0;
  size_t transposes_before = 0, transposes_after = 0;

  const PassReport* find(const std::string& name) const;
  // Indented lines for floe-convert's summary.
  std::string summary() const;
};

// The pass names, in the order they run:
// fold-constants, transposes, fold-pads, fold-batch-norms, fuse-bias-activation, dead-code.
const std::vector<std::string>& optimization_pass_names();

// Throws ConvertError when options.disabled names an unknown pass.
void check_optimize_options(const OptimizeOptions& options);

OptimizeReport optimize(LoweredModel& model, const OptimizeOptions& options);

}  // namespace floe::conv
