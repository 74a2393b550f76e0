// SPDX-License-Identifier: Apache-2.0
// Pass order (see optimize.h) and why:
//   fold-constants        first, so later passes see constant weights and
//                         per-channel constants (unfused batch-norm parts);
//   transposes            NCHW islands collapse (constants it re-lays out are
//                         computed by the reference TRANSPOSE kernel right away);
//   fold-pads             before bias/activation fusion, which it does not affect;
//   fold-batch-norms      scale/shift chains into weights and bias, so that
//   fuse-bias-activation  finds the activation right after the convolution;
//   dead-code             last: drops what the others left unused.
#include "converter/optimize/optimize.h"

#include <algorithm>

#include "converter/ir/error.h"
#include "converter/optimize/passes.h"

namespace floe::conv {
namespace {

using PassFn = int (*)(LoweredModel&, opt::PassLog&);

struct PassEntry {
  const char* name;
  PassFn run;
  bool detailed;  // print one line per rewrite in the summary
};

const std::vector<PassEntry>& passes() {
  static const std::vector<PassEntry> entries = {
      {"fold-constants", opt::fold_constants, false},
      {"transposes", opt::minimize_transposes, true},
      {"fold-pads", opt::fold_pads, true},
      {"fold-batch-norms", opt::fold_batch_norms, true},
      {"fuse-bias-activation", opt::fuse_bias_activation, true},
      {"dead-code", opt::eliminate_dead_code, false},
  };
  return entries;
}

size_t count_transposes(const LoweredModel& model) {
  return static_cast<size_t>(std::count_if(model.ops.begin(), model.ops.end(), [](const LoweredOp& op) {
    return op.opcode == schema::OpCode::TRANSPOSE;
  }));
}

}  // namespace

const std::vector<std::string>& optimization_pass_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const PassEntry& e : passes()) n.push_back(e.name);
    return n;
  }();
  return names;
}

void check_optimize_options(const OptimizeOptions& options) {
  const std::vector<std::string>& names = optimization_pass_names();
  for (const std::string& name : options.disabled) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      std::string known;
      for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
      throw ConvertError("--disable-pass: unknown pass '" + name + "' (passes: " + known + ")");
    }
  }
}

const PassReport* OptimizeReport::find(const std::string& name) const {
  for (const PassReport& p : passes) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

OptimizeReport optimize(LoweredModel& model, const OptimizeOptions& options) {
  check_optimize_options(options);
  OptimizeReport report;
  report.ops_before = model.ops.size();
  report.transposes_before = count_transposes(model);
  for (const PassEntry& e : passes()) {
    PassReport r;
    r.name = e.name;
    r.ran = options.enabled && options.disabled.count(e.name) == 0;
    report.passes.push_back(std::move(r));
  }
  auto run = [&](size_t index) {
    PassReport& r = report.passes[index];
    if (r.ran) r.rewrites += passes()[index].run(model, r.log);
  };
  for (size_t i = 0; i < passes().size(); ++i) run(i);
  report.ops_after = model.ops.size();
  report.transposes_after = count_transposes(model);
  return report;
}

std::string OptimizeReport::summary() const {
  std::string s = "  optimized: " + std::to_string(ops_before) + " -> " + std::to_string(ops_after) + " ops";
  if (transposes_before > 0 || transposes_after > 0) {
    s += ", TRANSPOSE " + std::to_string(transposes_before) + " -> " + std::to_string(transposes_after);
  }
  s += "\n";
  for (const PassReport& p : passes) {
    s += "    " + p.name + ": ";
    if (!p.ran) {
      s += "disabled\n";
      continue;
    }
    bool detailed = false;
    for (const PassEntry& e : floe::conv::passes()) detailed = detailed || (p.name == e.name && e.detailed);
    if (p.name == "dead-code") {
      size_t ops = 0, values = 0;
      for (const std::string& line : p.log) {
        if (line.rfind("removed unused ", 0) == 0) {
          ++ops;
        } else {
          values = static_cast<size_t>(std::stoul(line.substr(8)));  // "removed N unreferenced value(s)"
        }
      }
      s += std::to_string(ops) + " op(s) and " + std::to_string(values) + " value(s) removed\n";
      continue;
    }
    s += std::to_string(p.rewrites) + (p.rewrites == 1 ? " rewrite\n" : " rewrites\n");
    if (detailed) {
      for (const std::string& line : p.log) s += "      " + line + "\n";
    }
  }
  return s;
}

}  // namespace floe::conv
