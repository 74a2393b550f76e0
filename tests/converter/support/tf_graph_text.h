// SPDX-License-Identifier: Apache-2.0
// Writes small TF1 GraphDefs in text format for converter tests (the loader
// sniffs text vs binary), node by node, with the attrs TF itself would write.
// Used to build graphs the corpus lacks: nested while loops, TensorArrays in
// loops, conds inside loops, Pad -> Conv2D, NCHW conv stacks.
#pragma once

#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

namespace floe::testing {

class TfGraphText {
 public:
  // attrs: already-formatted "attr { ... }" entries (see the helpers below).
  TfGraphText& node(const std::string& name, const std::string& op, std::initializer_list<std::string> inputs,
                    std::initializer_list<std::string> attrs = {}) {
    text_ += "node {\n  name: \"" + name + "\"\n  op: \"" + op + "\"\n";
    for (const std::string& in : inputs) text_ += "  input: \"" + in + "\"\n";
    for (const std::string& a : attrs) text_ += "  " + a + "\n";
    text_ += "}\n";
    return *this;
  }
  // Writes the graph to `path` and returns it.
  std::string write(const std::string& path) const {
    std::ofstream(path) << text_ << "versions { producer: 27 }\n";  // a TF 1.x producer: "shape {}" is a scalar
    return path;
  }

  static std::string type(const std::string& key, const std::string& dtype) {
    return "attr { key: \"" + key + "\" value { type: " + dtype + " } }";
  }
  static std::string str(const std::string& key, const std::string& value) {
    return "attr { key: \"" + key + "\" value { s: \"" + value + "\" } }";
  }
  static std::string boolean(const std::string& key, bool value) {
    return "attr { key: \"" + key + "\" value { b: " + (value ? "true" : "false") + " } }";
  }
  static std::string integer(const std::string& key, int64_t value) {
    return "attr { key: \"" + key + "\" value { i: " + std::to_string(value) + " } }";
  }
  static std::string ints(const std::string& key, const std::vector<int64_t>& values) {
    std::string s = "attr { key: \"" + key + "\" value { list {";
    for (int64_t v : values) s += " i: " + std::to_string(v);
    return s + " } } }";
  }
  static std::string shape(const std::string& key, const std::vector<int64_t>& dims) {
    std::string s = "attr { key: \"" + key + "\" value { shape {";
    for (int64_t d : dims) s += " dim { size: " + std::to_string(d) + " }";
    return s + " } } }";
  }
  // Const value attr: float_val / int_val entries for `dtype` DT_FLOAT / DT_INT32.
  static std::string tensor(const std::string& dtype, const std::vector<int64_t>& dims,
                            const std::vector<double>& values) {
    std::string s = "attr { key: \"value\" value { tensor { dtype: " + dtype + " tensor_shape {";
    for (int64_t d : dims) s += " dim { size: " + std::to_string(d) + " }";
    s += " }";
    for (double v : values) {
      s += dtype == "DT_FLOAT" ? " float_val: " + std::to_string(v) : " int_val: " + std::to_string(static_cast<int64_t>(v));
    }
    return s + " } } }";
  }

  // Common nodes.
  TfGraphText& placeholder(const std::string& name, const std::string& dtype, const std::vector<int64_t>& dims) {
    return node(name, "Placeholder", {}, {type("dtype", dtype), shape("shape", dims)});
  }
  TfGraphText& constant(const std::string& name, const std::string& dtype, const std::vector<int64_t>& dims,
                        const std::vector<double>& values) {
    return node(name, "Const", {}, {type("dtype", dtype), tensor(dtype, dims, values)});
  }
  TfGraphText& enter(const std::string& name, const std::string& input, const std::string& frame, bool invariant,
                     const std::string& dtype) {
    return node(name, "Enter", {input},
                {type("T", dtype), str("frame_name", frame), boolean("is_constant", invariant),
                 integer("parallel_iterations", 10)});
  }

 private:
  std::string text_;
};

}  // namespace floe::testing
