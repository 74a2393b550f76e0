// SPDX-License-Identifier: Apache-2.0
// The whole conversion: load -> resolve feeds/fetches -> prune -> freeze ->
// check ops -> infer/fold/lower -> plan -> emit. One call, one result or one
// ConvertError; nothing is written to disk here (the CLI does that atomically).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "converter/emit/emit.h"

namespace floe::conv {

struct ConvertOptions {
  std::string graph_path;
  std::string checkpoint_path;             // prefix, directory or file; "" = none
  std::vector<std::string> outputs;        // node or node:k
  std::vector<std::string> inputs;         // any tensor; default: the Placeholders the outputs need
  std::map<std::string, std::vector<int64_t>> input_shapes;  // fixes unknown dims
};

struct ConvertResult {
  std::vector<uint8_t> model;
  std::string summary;  // human-readable report (op histogram, parameters, arena)
  EmitStats stats;
};

ConvertResult convert(const ConvertOptions& options);

}  // namespace floe::conv
