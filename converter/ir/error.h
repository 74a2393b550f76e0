// SPDX-License-Identifier: Apache-2.0
// Converter errors. Host code may throw: every failure becomes one ConvertError
// whose message names the file, node, op and (for binary formats) byte offset.
// The same facts are fields, so tools and tests classify an error without
// reading its text. floe-convert catches it, prints it (and, with --error-json,
// writes the fields), removes partial output and exits 2.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace floe::conv {

enum class ErrorCategory : uint8_t {
  kInvalidInput,   // a malformed or inconsistent file, a bad option or input value
  kUnsupported,    // ops or constructs floe does not convert: listed in refusals()
  kNeedsConstant,  // a value must be known at conversion time: tensor() names it
  kInternal,       // a converter defect ("internal error: ...")
};
const char* error_category_name(ErrorCategory category);

// Where: the file, and when known the node, its op and the byte offset.
struct ErrorLocation {
  std::string file;
  std::string node;
  std::string op;
  int64_t byte_offset = -1;
};

// One group of offending nodes, e.g. reason "random ops": {"RandomUniform": [n1, n2]}.
struct Refusal {
  std::string reason;
  std::map<std::string, std::vector<std::string>> nodes_by_op;
};

class ConvertError : public std::runtime_error {
 public:
  // Category kInvalidInput, or kInternal when the message says "internal error".
  explicit ConvertError(const std::string& message);
  ConvertError(const std::string& message, ErrorCategory category, ErrorLocation where = {});

  ErrorCategory category() const { return category_; }
  const ErrorLocation& where() const { return where_; }
  // kUnsupported: every group of offenders (all of them, not the first).
  const std::vector<Refusal>& refusals() const { return refusals_; }
  // kNeedsConstant: the tensor ("node:k") whose value conversion needs, or the
  // graph input it depends on.
  const std::string& tensor() const { return tensor_; }
  // A cond predicate (a bool) would have to be known at conversion time.
  bool needs_predicate() const { return needs_predicate_; }
  // A loop runs at run time but has no bound: --max-loop-iterations gives one.
  bool needs_loop_bound() const { return needs_loop_bound_; }

  ConvertError& with_refusals(std::vector<Refusal> refusals) {
    refusals_ = std::move(refusals);
    return *this;
  }
  ConvertError& with_tensor(std::string tensor) {
    tensor_ = std::move(tensor);
    return *this;
  }
  ConvertError& with_predicate() {
    needs_predicate_ = true;
    return *this;
  }
  ConvertError& with_loop_bound() {
    needs_loop_bound_ = true;
    return *this;
  }

 private:
  ErrorCategory category_;
  ErrorLocation where_;
  std::vector<Refusal> refusals_;
  std::string tensor_;
  bool needs_predicate_ = false;
  bool needs_loop_bound_ = false;
};

// "<file>: <count> node(s) use ops floe does not support:" with each op, its
// count and up to five node names per line; category kUnsupported.
ConvertError unsupported_ops_error(const std::string& file,
                                   const std::map<std::string, std::vector<std::string>>& nodes_by_op);

// The fields as one JSON object (floe-convert --error-json).
std::string error_json(const ConvertError& error);

}  // namespace floe::conv
