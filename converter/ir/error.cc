// SPDX-License-Identifier: Apache-2.0
// Converter errors (see error.h).
#include "converter/ir/error.h"

#include <cstdio>

namespace floe::conv {

const char* error_category_name(ErrorCategory category) {
  switch (category) {
    case ErrorCategory::kInvalidInput: return "invalid-input";
    case ErrorCategory::kUnsupported: return "unsupported";
    case ErrorCategory::kNeedsConstant: return "needs-constant";
    case ErrorCategory::kInternal: return "internal";
  }
  return "invalid-input";
}

ConvertError::ConvertError(const std::string& message)
    : std::runtime_error(message),
      category_(message.find("internal error") != std::string::npos ? ErrorCategory::kInternal
                                                                      : ErrorCategory::kInvalidInput) {}

ConvertError::ConvertError(const std::string& message, ErrorCategory category, ErrorLocation where)
    : std::runtime_error(message), category_(category), where_(std::move(where)) {}

ConvertError unsupported_ops_error(const std::string& file,
                                   const std::map<std::string, std::vector<std::string>>& nodes_by_op) {
  size_t count = 0;
  for (const auto& [op, nodes] : nodes_by_op) count += nodes.size();
  std::string message = file + ": " + std::to_string(count) + " node(s) use ops floe does not support:";
  for (const auto& [op, nodes] : nodes_by_op) {
    message += "\n  " + op + " x" + std::to_string(nodes.size()) + ": ";
    for (size_t i = 0; i < nodes.size() && i < 5; ++i) message += (i ? ", " : "") + nodes[i];
    if (nodes.size() > 5) message += ", ...";
  }
  ErrorLocation where;
  where.file = file;
  ConvertError error(message, ErrorCategory::kUnsupported, where);
  error.with_refusals({Refusal{"unsupported ops", nodes_by_op}});
  return error;
}

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string error_json(const ConvertError& e) {
  std::string s = "{\"category\": " + quoted(error_category_name(e.category())) +
                  ", \"message\": " + quoted(e.what()) + ", \"file\": " + quoted(e.where().file) +
                  ", \"node\": " + quoted(e.where().node) + ", \"op\": " + quoted(e.where().op) +
                  ", \"byte_offset\": " + std::to_string(e.where().byte_offset) +
                  ", \"tensor\": " + quoted(e.tensor()) +
                  ", \"needs_predicate\": " + (e.needs_predicate() ? "true" : "false") + ", \"refusals\": [";
  for (size_t i = 0; i < e.refusals().size(); ++i) {
    const Refusal& r = e.refusals()[i];
    s += std::string(i ? ", " : "") + "{\"reason\": " + quoted(r.reason) + ", \"ops\": {";
    size_t k = 0;
    for (const auto& [op, nodes] : r.nodes_by_op) {
      s += std::string(k++ ? ", " : "") + quoted(op) + ": [";
      for (size_t j = 0; j < nodes.size(); ++j) s += std::string(j ? ", " : "") + quoted(nodes[j]);
      s += "]";
    }
    s += "}}";
  }
  return s + "]}\n";
}

}  // namespace floe::conv
