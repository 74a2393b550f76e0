// SPDX-License-Identifier: Apache-2.0
// Converting a graph a test wrote (TfGraphText) in-process, and the one error
// a refused conversion gives, for the op tests that check both.
#pragma once

#include <string>
#include <vector>

#include "converter/ir/error.h"
#include "converter/pipeline/convert.h"
#include "tests/converter/support/tf_graph_text.h"
#include "tests/support/model_runner.h"

namespace floe::testing {

// `g` written as `name`.pbtxt in a fresh temporary directory and converted for `outputs`.
inline conv::ConvertResult convert_graph(const TfGraphText& g, const std::string& name,
                                         std::vector<std::string> outputs) {
  conv::ConvertOptions options;
  options.graph_path = g.write(make_temp_dir() + "/" + name + ".pbtxt");
  options.outputs = std::move(outputs);
  return conv::convert(options);
}

// The ConvertError's message when the conversion is refused, else "(no error)".
inline std::string conversion_error(const TfGraphText& g, const std::string& name, std::vector<std::string> outputs) {
  try {
    convert_graph(g, name, std::move(outputs));
  } catch (const conv::ConvertError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace floe::testing
