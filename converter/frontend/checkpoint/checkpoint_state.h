// SPDX-License-Identifier: Apache-2.0
// The `checkpoint` state file: a text-format CheckpointState message
// (tf-formats.md §10, text-format rules §13). Only the two path fields are
// kept; unknown fields (timestamps, future additions) are parsed and ignored.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace floe::conv::ckpt {

struct CheckpointState {
  std::string model_checkpoint_path;
  std::vector<std::string> all_model_checkpoint_paths;
};

// `file_name` prefixes error messages (with the 1-based line number).
CheckpointState parse_checkpoint_state(std::string_view text, const std::string& file_name);
CheckpointState read_checkpoint_state_file(const std::string& path);

}  // namespace floe::conv::ckpt
