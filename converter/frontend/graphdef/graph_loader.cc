// SPDX-License-Identifier: Apache-2.0
// Graph file loading: resolve the path, sniff the format, parse with protobuf,
// and when protobuf fails explain why — binary failures through the wire walker
// (protobuf itself only returns false), text failures through an ErrorCollector.
// Unknown fields are allowed in text because tf_subset.proto is a subset.
#include "converter/frontend/graphdef/graph_loader.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <unordered_map>

#include "converter/ir/tf_dtype.h"
#include "converter/ir/attrs.h"
#include "converter/frontend/graphdef/wire_walk.h"
#include "converter/ir/error.h"
#include "converter/ir/limits.h"

namespace floe::conv {
namespace tfp = floe::tfproto;
namespace fs = std::filesystem;

namespace {

std::string resolve_graph_path(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw ConvertError(path + ": no such file or directory");
  if (!fs::is_directory(path, ec)) return path;
  for (const char* name : {"saved_model.pb", "saved_model.pbtxt"}) {
    const fs::path candidate = fs::path(path) / name;
    if (fs::is_regular_file(candidate, ec)) return candidate.string();
  }
  throw ConvertError(path + ": a directory without saved_model.pb or saved_model.pbtxt "
                            "(expected a graph file or a SavedModel export directory)");
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConvertError(path + ": cannot open: " + std::strerror(errno));
  std::error_code size_error;
  const uintmax_t size = fs::file_size(path, size_error);
  if (!size_error && size > kMaxInputFileBytes) {
    throw ConvertError(path + ": " + std::to_string(size) + " bytes, over floe's limit of " +
                       std::to_string(kMaxInputFileBytes) + " bytes for a graph file (protobuf's 2 GiB)");
  }
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw ConvertError(path + ": read error: " + std::strerror(errno));
  return bytes;
}

template <typename Message>
void parse_binary(const std::string& bytes, const std::string& path, GraphFileKind kind,
                  Message* message) {
  const char* kind_name = graph_file_kind_name(kind);
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    throw ConvertError(path + ": binary " + kind_name + " of " + std::to_string(bytes.size()) +
                       " bytes is over protobuf's 2 GiB message limit, so TF cannot have written it");
  }
  if (message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;

  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const std::optional<WireFault> fault = diagnose_wire(data, bytes.size(), Message::descriptor());
  if (!fault) {
    throw ConvertError(path + ": protobuf rejected the binary " + kind_name + " (" +
                       std::to_string(bytes.size()) + " bytes) although its wire structure is intact");
  }
  std::string where;
  if (!fault->path.empty()) where = "inside " + fault->path;
  if (!fault->last_complete.empty()) {
    where += (where.empty() ? "" : "; ") + std::string("last complete ") + fault->last_complete;
  }
  ErrorLocation location;
  location.file = path;
  location.byte_offset = static_cast<int64_t>(fault->offset);
  throw ConvertError(path + ": truncated or corrupt " + kind_name + " at byte " +
                         std::to_string(fault->offset) + (where.empty() ? "" : " (" + where + ")") + ": " +
                         fault->problem,
                     ErrorCategory::kInvalidInput, location);
}

class TextErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (!has_error_) {
      has_error_ = true;
      line_ = line + 1;  // protobuf counts from 0
      column_ = column + 1;
      message_ = message;
    }
  }
  void AddWarning(int line, int column, const std::string& message) override {
    warnings_.push_back("line " + std::to_string(line + 1) + ", column " + std::to_string(column + 1) +
                        ": " + message);
  }

  bool has_error_ = false;
  int line_ = 0;
  int column_ = 0;
  std::string message_;
  std::vector<std::string> warnings_;
};

template <typename Message>
void parse_text(const std::string& bytes, const std::string& path, GraphFileKind kind,
                Message* message, std::vector<std::string>* warnings) {
  TextErrorCollector errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  // Our schema is a subset of TF's: skip (balanced) fields it does not declare,
  // and expanded Any payloads ("[type.googleapis.com/...] { }").
  parser.AllowUnknownField(true);
  parser.AllowUnknownExtension(true);
  const bool ok = parser.ParseFromString(bytes, message);
  for (const std::string& warning : errors.warnings_) warnings->push_back(path + ": " + warning);
  if (ok) return;
  const std::string what = errors.has_error_ ? errors.message_ : std::string("unknown error");
  throw ConvertError(path + ": text-format " + graph_file_kind_name(kind) + " parse error at line " +
                     std::to_string(errors.line_) + ", column " + std::to_string(errors.column_) + ": " +
                     what);
}

template <typename Message>
void parse(const std::string& bytes, const std::string& path, const SniffResult& sniffed,
           Message* message, std::vector<std::string>* warnings) {
  if (sniffed.encoding == GraphEncoding::kText) {
    parse_text(bytes, path, sniffed.kind, message, warnings);
  } else {
    parse_binary(bytes, path, sniffed.kind, message);
  }
}

std::set<std::string> tag_set(const tfp::MetaGraphDef& meta) {
  const auto& tags = meta.meta_info_def().tags();
  return {tags.begin(), tags.end()};
}

// TF's loader wants the exact tag set. When none matches but exactly one
// MetaGraphDef's tags include every requested tag ({serve, train} for "serve"),
// that one is what the user means: take it and say so in a warning.
tfp::MetaGraphDef select_meta_graph(tfp::SavedModel& saved_model, const std::string& path,
                                    const std::vector<std::string>& tags, std::vector<std::string>* warnings) {
  const std::set<std::string> wanted(tags.begin(), tags.end());
  std::string available;
  tfp::MetaGraphDef* superset = nullptr;
  int supersets = 0;
  for (auto& meta : *saved_model.mutable_meta_graphs()) {
    const std::set<std::string> have = tag_set(meta);
    if (have == wanted) return std::move(meta);
    if (!wanted.empty() && std::includes(have.begin(), have.end(), wanted.begin(), wanted.end())) {
      superset = &meta;
      ++supersets;
    }
    available += (available.empty() ? "" : ", ") + format_tag_set(meta);
  }
  if (supersets == 1) {
    warnings->push_back(path + ": no MetaGraphDef has exactly the requested tags; using the one tagged " +
                        format_tag_set(*superset));
    return std::move(*superset);
  }
  std::string wanted_text;
  for (const auto& tag : wanted) wanted_text += (wanted_text.empty() ? "" : ", ") + tag;
  if (available.empty()) throw ConvertError(path + ": SavedModel contains no MetaGraphDef");
  throw ConvertError(path + ": SavedModel has no MetaGraphDef with tags {" + wanted_text +
                     "}; available tag sets: " + available);
}

// TF's importer rejects these too; failing here names the node and file.
void check_nodes(const tfp::GraphDef& graph, const std::string& path) {
  std::unordered_map<std::string, int> index_of;
  for (int i = 0; i < graph.node_size(); ++i) {
    const tfp::NodeDef& node = graph.node(i);
    const std::string where = path + ": node #" + std::to_string(i);
    if (node.name().empty()) throw ConvertError(where + " (op '" + node.op() + "') has an empty name");
    if (node.op().empty()) throw ConvertError(where + " '" + node.name() + "' has an empty op");
    auto [it, inserted] = index_of.emplace(node.name(), i);
    if (!inserted) {
      throw ConvertError(path + ": duplicate node name '" + node.name() + "' (nodes #" +
                         std::to_string(it->second) + " and #" + std::to_string(i) + ")");
    }
  }
  // Dangling inputs: TF's importer refuses them, and they are also what a file
  // cut exactly between two nodes can leave behind.
  for (int i = 0; i < graph.node_size(); ++i) {
    const tfp::NodeDef& node = graph.node(i);
    for (const std::string& input : node.input()) {
      InputRef ref;
      try {
        ref = parse_input(input);
      } catch (const ConvertError& e) {
        throw ConvertError(path + ": node #" + std::to_string(i) + " '" + node.name() + "': " + e.what());
      }
      if (!index_of.count(ref.node)) {
        throw ConvertError(path + ": node #" + std::to_string(i) + " '" + node.name() + "' input '" + input +
                           "' refers to a node that is not in the graph");
      }
    }
  }
}

// Moves meta.graph_def into out.graph and keeps the rest of the MetaGraphDef.
void adopt_meta_graph(tfp::MetaGraphDef meta, LoadedGraph& out) {
  out.graph.Swap(meta.mutable_graph_def());
  meta.clear_graph_def();
  out.meta = std::move(meta);
}

}  // namespace

std::string format_tag_set(const tfp::MetaGraphDef& meta) {
  std::string text;
  for (const auto& tag : tag_set(meta)) text += (text.empty() ? "" : ", ") + tag;
  return "{" + text + "}";
}

// Upper bound on the GraphDef nodes the bytes encode, counted without parsing:
// binary, the `node` fields (field 1) of the GraphDef, reached through
// MetaGraphDef.graph_def (2) and SavedModel.meta_graphs (2); text, each `node {`
// / `node: {`. A malformed encoding stops the count (the parser reports it).
int64_t count_binary_fields(const uint8_t* p, size_t size, const std::vector<int>& path, size_t depth) {
  int64_t count = 0;
  size_t pos = 0;
  auto varint = [&](uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64 && pos < size; shift += 7) {
      const uint8_t b = p[pos++];
      *v |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80u) == 0) return true;
    }
    return false;
  };
  while (pos < size) {
    uint64_t tag = 0, value = 0;
    if (!varint(&tag)) break;
    const int field = static_cast<int>(tag >> 3);
    switch (tag & 7u) {
      case 0:
        if (!varint(&value)) return count;
        break;
      case 1:
        pos += 8;
        break;
      case 5:
        pos += 4;
        break;
      case 2:
        if (!varint(&value) || value > size - pos) return count;
        if (depth == path.size() ? field == 1 : field == path[depth]) {
          if (depth == path.size()) {
            ++count;
          } else {
            count += count_binary_fields(p + pos, static_cast<size_t>(value), path, depth + 1);
          }
        }
        pos += static_cast<size_t>(value);
        break;
      default:
        return count;
    }
  }
  return count;
}

int64_t count_text_nodes(const std::string& text) {
  int64_t count = 0;
  for (size_t at = text.find("node"); at != std::string::npos; at = text.find("node", at + 4)) {
    if (at > 0 && !std::isspace(static_cast<unsigned char>(text[at - 1])) && text[at - 1] != '{') continue;
    size_t k = at + 4;
    while (k < text.size() && (std::isspace(static_cast<unsigned char>(text[k])) || text[k] == ':')) ++k;
    count += k < text.size() && text[k] == '{';
  }
  return count;
}

void check_node_count_before_parsing(const std::string& bytes, const std::string& path, const SniffResult& sniffed) {
  int64_t nodes = 0;
  if (sniffed.encoding == GraphEncoding::kText) {
    nodes = count_text_nodes(bytes);
  } else {
    const std::vector<int> to_graph = sniffed.kind == GraphFileKind::kGraphDef       ? std::vector<int>{}
                                      : sniffed.kind == GraphFileKind::kMetaGraphDef ? std::vector<int>{2}
                                                                                     : std::vector<int>{2, 2};
    nodes = count_binary_fields(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), to_graph, 0);
  }
  if (nodes > kMaxGraphNodes) {
    throw ConvertError(path + ": " + std::to_string(nodes) + " nodes, over floe's limit of " +
                       std::to_string(kMaxGraphNodes) + " nodes per graph");
  }
}

// The values a TensorProto lists for its dtype (tensor_content holds them all).
uint64_t listed_values(const tfp::TensorProto& t) {
  const int64_t listed = std::max<int64_t>(
      {t.float_val_size(), t.double_val_size(), t.int_val_size(), t.int64_val_size(), t.bool_val_size(),
       t.half_val_size(), t.uint32_val_size(), t.uint64_val_size(), t.string_val_size(), t.scomplex_val_size() / 2,
       t.dcomplex_val_size() / 2});
  return static_cast<uint64_t>(listed);
}

// The bytes every Const value claims (declared shape times dtype size), summed
// before any of them is decoded, and the part of them filled from a shorter
// value list (a constant over one tensor's limit is refused as such when it
// is decoded).
void check_claimed_constant_bytes(const tfp::GraphDef& graph, const std::string& path) {
  uint64_t total = 0, expanded = 0;
  for (const tfp::NodeDef& node : graph.node()) {
    if (node.op() != "Const") continue;
    const auto value = node.attr().find("value");
    if (value == node.attr().end() || !value->second.has_tensor()) continue;
    const tfp::TensorProto& tensor = value->second.tensor();
    const uint64_t element_bytes = dtype_size(tf_dtype_to_floe(tf_dtype_base(tensor.dtype())));
    uint64_t bytes = element_bytes;
    for (const auto& dim : tensor.tensor_shape().dim()) {
      if (dim.size() <= 0) {
        bytes = 0;
        break;
      }
      const uint64_t d = static_cast<uint64_t>(dim.size());
      bytes = bytes > kMaxClaimedConstantBytes / d ? kMaxClaimedConstantBytes + 1 : bytes * d;
    }
    const ErrorLocation where{path, node.name(), "Const", -1};
    total += std::min<uint64_t>(bytes, kMaxClaimedConstantBytes + 1);
    if (total > kMaxClaimedConstantBytes) {
      throw ConvertError(path + ": node '" + node.name() + "' (op Const): the graph's constants claim over " +
                             std::to_string(kMaxClaimedConstantBytes) + " bytes together, floe's limit",
                         ErrorCategory::kInvalidInput, where);
    }
    if (!tensor.tensor_content().empty() || bytes > kMaxTensorBytes) continue;
    const uint64_t listed = std::min(listed_values(tensor), bytes) * element_bytes;
    expanded += bytes > listed ? bytes - listed : 0;
    if (expanded > kMaxExpandedConstantBytes) {
      throw ConvertError(path + ": node '" + node.name() + "' (op Const): " + std::to_string(bytes) +
                             " bytes from " + std::to_string(listed_values(tensor)) +
                             " listed values; the graph's constants fill over " +
                             std::to_string(kMaxExpandedConstantBytes) +
                             " bytes together by repeating a last value, floe's limit",
                         ErrorCategory::kInvalidInput, where);
    }
  }
}

LoadedGraph load_graph_from_bytes(const std::string& bytes, const std::string& path,
                                  const LoadOptions& options) {
  const SniffResult sniffed = sniff_graph_file(bytes, path);
  check_node_count_before_parsing(bytes, path, sniffed);
  LoadedGraph out;
  out.kind = sniffed.kind;
  out.encoding = sniffed.encoding;
  out.path = path;

  switch (sniffed.kind) {
    case GraphFileKind::kGraphDef:
      parse(bytes, path, sniffed, &out.graph, &out.warnings);
      break;
    case GraphFileKind::kMetaGraphDef: {
      tfp::MetaGraphDef meta;
      parse(bytes, path, sniffed, &meta, &out.warnings);
      adopt_meta_graph(std::move(meta), out);
      break;
    }
    case GraphFileKind::kSavedModel: {
      tfp::SavedModel saved_model;
      parse(bytes, path, sniffed, &saved_model, &out.warnings);
      if (saved_model.saved_model_schema_version() != 1) {
        out.warnings.push_back(path + ": SavedModel schema version " +
                               std::to_string(saved_model.saved_model_schema_version()) +
                               " (TF writes 1)");
      }
      adopt_meta_graph(select_meta_graph(saved_model, path, options.tags, &out.warnings), out);
      const fs::path dir = fs::path(path).parent_path();
      out.saved_model_dir = dir.empty() ? "." : dir.string();
      break;
    }
  }

  check_nodes(out.graph, path);
  check_claimed_constant_bytes(out.graph, path);
  if (options.fill_default_attrs && out.meta && out.meta->meta_info_def().has_stripped_op_list()) {
    out.default_attrs_added = apply_default_attrs(out.graph, out.meta->meta_info_def().stripped_op_list());
  }
  return out;
}

LoadedGraph load_graph(const std::string& path, const LoadOptions& options) {
  const std::string file = resolve_graph_path(path);
  return load_graph_from_bytes(read_whole_file(file), file, options);
}

}  // namespace floe::conv
