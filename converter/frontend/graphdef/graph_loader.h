// SPDX-License-Identifier: Apache-2.0
// Loading the graph to convert from a TF1 GraphDef (.pb / .pbtxt), MetaGraphDef
// (.meta) or SavedModel (saved_model.pb[txt] or its directory). The format is
// sniffed from the content (format_sniff.h), never from the extension. Every
// failure is a ConvertError naming the file and, for binary input, the byte
// offset and node where decoding broke; for text, the line and column.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "converter/frontend/graphdef/format_sniff.h"
#include "converter/proto/tf_subset.pb.h"

namespace floe::conv {

struct LoadedGraph {
  GraphFileKind kind = GraphFileKind::kGraphDef;
  GraphEncoding encoding = GraphEncoding::kBinary;
  std::string path;                                 // the file actually read
  floe::tfproto::GraphDef graph;                    // the graph to convert
  std::optional<floe::tfproto::MetaGraphDef> meta;  // .meta / SavedModel; its graph_def is moved into `graph`
  std::string saved_model_dir;                      // SavedModel export dir (variables at <dir>/variables/variables)
  size_t default_attrs_added = 0;                   // attrs filled from meta_info_def.stripped_op_list
  std::vector<std::string> warnings;                // e.g. text fields outside floe's schema, skipped
};

struct LoadOptions {
  // SavedModel: the MetaGraphDef whose tag SET equals this one is chosen (else the
  // only one whose tags include all of these, with a warning).
  std::vector<std::string> tags = {"serve"};
  // Fill attrs absent from nodes with the defaults in stripped_op_list (what TF's
  // importer does); without it, attr getters still fall back to the built-in table.
  bool fill_default_attrs = true;
};

// `path` is a graph file or a SavedModel directory (saved_model.pb, else
// saved_model.pbtxt, inside it).
LoadedGraph load_graph(const std::string& path, const LoadOptions& options = {});

// Same, for file contents already in memory; `path` is used in messages and for
// saved_model_dir.
LoadedGraph load_graph_from_bytes(const std::string& bytes, const std::string& path,
                                  const LoadOptions& options = {});

// The tags of a MetaGraphDef as "{serve, gpu}" (sorted), for messages.
std::string format_tag_set(const floe::tfproto::MetaGraphDef& meta);

}  // namespace floe::conv
