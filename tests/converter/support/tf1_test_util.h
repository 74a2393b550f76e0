// SPDX-License-Identifier: Apache-2.0
// Helpers for the TF1-structure tests: write a text GraphDef to a temp file,
// convert it in-process, and capture the ConvertError message of a refusal.
// The node helpers spell the attrs TF writes, so graphs stay readable.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "converter/ir/error.h"
#include "converter/pipeline/convert.h"
#include "tests/support/model_runner.h"

namespace floe::testing {

inline std::string write_text_graph(const std::string& pbtxt, const std::string& name = "g.pbtxt") {
  const std::string path = make_temp_dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << pbtxt;
  return path;
}

struct ConvertOutcome {
  std::vector<uint8_t> model;  // empty when refused
  std::string summary;
  std::string error;           // ConvertError message when refused
};

inline ConvertOutcome try_convert(const conv::ConvertOptions& options) {
  ConvertOutcome out;
  try {
    conv::ConvertResult r = conv::convert(options);
    out.model = std::move(r.model);
    out.summary = std::move(r.summary);
  } catch (const conv::ConvertError& e) {
    out.error = e.what();
  }
  return out;
}

inline conv::ConvertOptions text_graph_options(const std::string& pbtxt, std::vector<std::string> outputs) {
  conv::ConvertOptions options;
  options.graph_path = write_text_graph(pbtxt);
  options.outputs = std::move(outputs);
  return options;
}

// Node snippets in text format.
inline std::string placeholder(const std::string& name, const std::string& dtype, const std::string& dims) {
  return "node { name: '" + name + "' op: 'Placeholder' attr { key: 'dtype' value { type: " + dtype +
         " } } attr { key: 'shape' value { shape { " + dims + " } } } }\n";
}
inline std::string float_const(const std::string& name, const std::string& dims, const std::string& values,
                               const std::string& extra = "") {
  return "node { name: '" + name + "' op: 'Const' " + extra +
         " attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { tensor { dtype: DT_FLOAT "
         "tensor_shape { " + dims + " } " + values + " } } } }\n";
}
inline std::string bool_const(const std::string& name, bool value) {
  return "node { name: '" + name + "' op: 'Const' attr { key: 'dtype' value { type: DT_BOOL } } attr { key: "
         "'value' value { tensor { dtype: DT_BOOL tensor_shape { } bool_val: " + (value ? "true" : "false") +
         " } } } }\n";
}
inline std::string binary(const std::string& name, const std::string& op, const std::string& a,
                          const std::string& b, const std::string& extra = "") {
  return "node { name: '" + name + "' op: '" + op + "' input: '" + a + "' input: '" + b + "' " + extra +
         " attr { key: 'T' value { type: DT_FLOAT } } }\n";
}
inline std::string unary(const std::string& name, const std::string& op, const std::string& a,
                         const std::string& extra = "") {
  return "node { name: '" + name + "' op: '" + op + "' input: '" + a + "' " + extra +
         " attr { key: 'T' value { type: DT_FLOAT } } }\n";
}

// The ConvertError message `fn` throws ("" and a test failure when it does not).
template <typename Fn>
std::string conv_error(Fn&& fn) {
  try {
    fn();
  } catch (const conv::ConvertError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConvertError";
  return "";
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace floe::testing
