// SPDX-License-Identifier: Apache-2.0
// Format sniffing. Text: no control bytes and a leading field name whose owner
// message is known. Binary: the top-level wire fields must have the wire types
// the candidate message declares, plus one positive sign — a NodeDef (field 2 is
// an op name) vs a MetaInfoDef (field 2 is an OpList message) inside field 1,
// VersionDef varints vs CollectionDef entries in field 4, a schema-version
// varint for SavedModel.
#include "converter/frontend/graphdef/format_sniff.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <set>

#include "converter/frontend/graphdef/wire_walk.h"
#include "converter/ir/error.h"

namespace floe::conv {
namespace {

const uint8_t* as_bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

std::string hex_prefix(const std::string& bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < std::min<size_t>(bytes.size(), 16); ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (i) out += ' ';
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

// ------------------------------------------------------------------- text
// TF's writers escape every byte < 0x20 except \n, \t (and \r from Windows
// editors) inside strings, while a binary GraphDef has a 0x12 (op tag) byte in
// its first node: any other control byte means binary.
bool has_only_text_bytes(const std::string& bytes) {
  const size_t limit = std::min<size_t>(bytes.size(), 1 << 16);
  for (size_t i = 0; i < limit; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if ((c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0x7F) return false;
  }
  return true;
}

// First field name of a text-format message, skipping whitespace, '#' comments and a BOM.
std::optional<std::string> first_text_identifier(const std::string& bytes) {
  size_t i = bytes.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  while (i < bytes.size()) {
    const char c = bytes[i];
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      ++i;
    } else if (c == '#') {
      while (i < bytes.size() && bytes[i] != '\n') ++i;
    } else {
      break;
    }
  }
  size_t end = i;
  while (end < bytes.size() && (std::isalnum(static_cast<unsigned char>(bytes[end])) || bytes[end] == '_')) ++end;
  if (end == i) return std::nullopt;
  return bytes.substr(i, end - i);
}

std::optional<GraphFileKind> text_kind(const std::string& field) {
  static const std::set<std::string> kGraphDef = {"node", "library", "version", "versions", "debug_info"};
  static const std::set<std::string> kMeta = {"meta_info_def", "graph_def",     "saver_def",
                                              "collection_def", "signature_def", "asset_file_def",
                                              "object_graph_def"};
  if (kGraphDef.count(field)) return GraphFileKind::kGraphDef;
  if (kMeta.count(field)) return GraphFileKind::kMetaGraphDef;
  if (field == "saved_model_schema_version" || field == "meta_graphs") return GraphFileKind::kSavedModel;
  return std::nullopt;
}

// ----------------------------------------------------------------- binary
struct Scan {
  std::vector<WireField> fields;
  bool complete = false;
};

Scan scan(const std::string& bytes, size_t begin, size_t end) {
  Scan s;
  s.fields = scan_fields(as_bytes(bytes), begin, end, &s.complete);
  return s;
}

const WireField* first(const Scan& s, uint32_t number) {
  for (const auto& f : s.fields) {
    if (f.number == number) return &f;
  }
  return nullptr;
}

// Every field the message declares must carry the declared wire type.
// `expected[n]` for n in 1..size-1; -1 = field not declared (anything goes).
bool wire_types_match(const Scan& s, const std::vector<int>& expected) {
  return std::all_of(s.fields.begin(), s.fields.end(), [&](const WireField& f) {
    return f.number >= expected.size() || expected[f.number] < 0 || expected[f.number] == f.wire_type;
  });
}

bool is_op_name(const std::string& bytes, const WireField& f) {
  if (f.truncated || f.wire_type != 2) return false;
  const size_t n = f.payload_end - f.payload_begin;
  if (n == 0 || n > 256) return false;
  for (size_t i = f.payload_begin; i < f.payload_end; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (!std::isalnum(c) && c != '_' && c != '.' && c != '>' && c != '-' && c != '/') return false;
  }
  return true;
}

// NodeDef: name 1, op 2, input 3, device 4 (strings), attr 5 (entries), debug 6.
bool looks_like_node_def(const std::string& bytes, const WireField& entry) {
  const Scan s = scan(bytes, entry.payload_begin, entry.payload_end);
  if (!wire_types_match(s, {-1, 2, 2, 2, 2, 2, 2, 2})) return false;
  const WireField* op = first(s, 2);
  return op != nullptr && is_op_name(bytes, *op);
}

// MetaInfoDef: stripped_op_list 2 is an OpList (only `op` = field 1 messages),
// tags 4 / versions 5, 6 strings, stripped_default_attrs 7 a varint.
bool looks_like_meta_info_def(const std::string& bytes, const WireField& entry) {
  const Scan s = scan(bytes, entry.payload_begin, entry.payload_end);
  if (!wire_types_match(s, {-1, 2, 2, 2, 2, 2, 2, 0, 2})) return false;
  if (const WireField* ops = first(s, 2)) {
    const Scan op_list = scan(bytes, ops->payload_begin, ops->payload_end);
    return !op_list.fields.empty() &&
           std::all_of(op_list.fields.begin(), op_list.fields.end(),
                       [](const WireField& f) { return f.number == 1 && f.wire_type == 2; });
  }
  return first(s, 4) || first(s, 5) || first(s, 7);
}

std::optional<GraphFileKind> binary_kind(const std::string& bytes, bool* structure_intact) {
  const Scan top = scan(bytes, 0, bytes.size());
  *structure_intact = top.complete;
  if (top.fields.empty()) return std::nullopt;

  // SavedModel: saved_model_schema_version 1 (varint) + meta_graphs 2.
  if (wire_types_match(top, {-1, 0, 2}) && first(top, 1) != nullptr &&
      std::all_of(top.fields.begin(), top.fields.end(), [](const WireField& f) { return f.number <= 2; })) {
    return GraphFileKind::kSavedModel;
  }
  const bool graph_ok = wire_types_match(top, {-1, 2, 2, 0, 2, 2});
  const bool meta_ok = wire_types_match(top, {-1, 2, 2, 2, 2, 2, 2, 2});
  if (!graph_ok && !meta_ok) return std::nullopt;

  std::vector<const WireField*> field1;
  for (const auto& f : top.fields) {
    if (f.number == 1) field1.push_back(&f);
  }
  if (!field1.empty()) {
    // Several nodes are checked so that one damaged node does not hide the kind.
    const size_t checked = std::min<size_t>(field1.size(), 16);
    for (size_t i = 0; graph_ok && i < checked; ++i) {
      if (looks_like_node_def(bytes, *field1[i])) return GraphFileKind::kGraphDef;
    }
    if (meta_ok && looks_like_meta_info_def(bytes, *field1[0])) return GraphFileKind::kMetaGraphDef;
    return std::nullopt;
  }
  // No field 1: a graph without nodes, or a MetaGraphDef without meta_info_def.
  if (meta_ok && (first(top, 3) || first(top, 6) || first(top, 7))) return GraphFileKind::kMetaGraphDef;
  if (const WireField* f4 = first(top, 4)) {
    const Scan inner = scan(bytes, f4->payload_begin, f4->payload_end);
    const bool version_def = inner.fields.empty() || inner.fields[0].wire_type == 0;
    if (version_def && graph_ok) return GraphFileKind::kGraphDef;
    if (!version_def && meta_ok) return GraphFileKind::kMetaGraphDef;  // collection_def entry
    return std::nullopt;
  }
  if (const WireField* f2 = first(top, 2)) {
    // MetaGraphDef.graph_def holds nodes; GraphDef.library holds FunctionDefs.
    const Scan inner = scan(bytes, f2->payload_begin, f2->payload_end);
    const WireField* node = first(inner, 1);
    if (node && looks_like_node_def(bytes, *node)) {
      return meta_ok ? std::optional(GraphFileKind::kMetaGraphDef) : std::nullopt;
    }
    return graph_ok ? std::optional(GraphFileKind::kGraphDef) : std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

const char* graph_file_kind_name(GraphFileKind kind) {
  switch (kind) {
    case GraphFileKind::kGraphDef: return "GraphDef";
    case GraphFileKind::kMetaGraphDef: return "MetaGraphDef";
    case GraphFileKind::kSavedModel: return "SavedModel";
  }
  return "?";
}

SniffResult sniff_graph_file(const std::string& bytes, const std::string& path) {
  const std::string none = path + ": not a TensorFlow GraphDef, MetaGraphDef or SavedModel";
  if (bytes.empty()) throw ConvertError(none + " (the file is empty)");
  // floe-convert converts these itself (converter/frontend/tflite); only the
  // TF-graph tools (--info, --list-ops) reach this point with one.
  if (bytes.size() >= 8 && bytes.compare(4, 4, "TFL3") == 0) {
    throw ConvertError(none + ": it is a TensorFlow Lite model (TFL3); convert it with floe-convert --graph " +
                       path + " -o model.floe (--info and --list-ops describe TensorFlow graphs)");
  }

  if (has_only_text_bytes(bytes)) {
    const std::optional<std::string> field = first_text_identifier(bytes);
    if (!field) {
      throw ConvertError(none + " (text file without a leading field name; starts with bytes " +
                         hex_prefix(bytes) + ")");
    }
    if (const auto kind = text_kind(*field)) return {GraphEncoding::kText, *kind};
    std::string hint;
    if (*field == "model_checkpoint_path" || *field == "all_model_checkpoint_paths") {
      hint = "; this is a checkpoint state file (CheckpointState), not a graph";
    }
    throw ConvertError(none + " (text-format message whose first field '" + *field +
                       "' belongs to none of them" + hint + ")");
  }

  bool intact = false;
  if (const auto kind = binary_kind(bytes, &intact)) return {GraphEncoding::kBinary, *kind};
  if (!intact) {
    // Truncated before anything identifying: go by the first tag so the parser's
    // diagnosis (with byte offsets) explains the breakage.
    const auto tag = static_cast<unsigned char>(bytes[0]);
    if (tag == 0x08) return {GraphEncoding::kBinary, GraphFileKind::kSavedModel};
    if (tag == 0x0A && bytes.size() > 1) return {GraphEncoding::kBinary, GraphFileKind::kGraphDef};
    throw ConvertError(none + " (neither protobuf text nor a well-formed binary protobuf; first bytes " +
                       hex_prefix(bytes) + ")");
  }
  throw ConvertError(none + " (a well-formed binary protobuf of some other message type; first bytes " +
                     hex_prefix(bytes) + ")");
}

}  // namespace floe::conv
