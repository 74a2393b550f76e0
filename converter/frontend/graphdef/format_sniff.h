// SPDX-License-Identifier: Apache-2.0
// Deciding what a graph file holds from its bytes alone (tf-formats §8): text or
// binary, and GraphDef vs MetaGraphDef vs SavedModel. Extensions lie in the wild
// (dl4j's train_iris.pb is text), so they are never consulted.
#pragma once

#include <string>

namespace floe::conv {

enum class GraphFileKind { kGraphDef, kMetaGraphDef, kSavedModel };
enum class GraphEncoding { kBinary, kText };

struct SniffResult {
  GraphEncoding encoding = GraphEncoding::kBinary;
  GraphFileKind kind = GraphFileKind::kGraphDef;
};

// "GraphDef", "MetaGraphDef", "SavedModel".
const char* graph_file_kind_name(GraphFileKind kind);

// Classifies `bytes` (the whole file). Throws ConvertError naming `path` when the
// file is empty or is none of the three messages (e.g. a checkpoint state file,
// a fingerprint.pb, a saved_model_config.pb, random bytes). A binary file whose
// structure breaks part-way is still classified from its intact prefix, so the
// parser can then report precisely where it breaks.
SniffResult sniff_graph_file(const std::string& bytes, const std::string& path);

}  // namespace floe::conv
