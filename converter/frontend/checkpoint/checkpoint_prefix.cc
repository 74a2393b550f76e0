// SPDX-License-Identifier: Apache-2.0
// resolve_checkpoint_prefix: turns whatever the user pointed at (prefix, file of
// the bundle, directory, `checkpoint` state file) into the bundle prefix P with an
// existing P.index, and recognises V1 checkpoints (a table file P, or P-?????-of-?????)
// so they get one clear message instead of a misleading "not found".
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "converter/frontend/checkpoint/checkpoint_reader.h"
#include "converter/frontend/checkpoint/checkpoint_state.h"
#include "converter/frontend/checkpoint/table_reader.h"
#include "converter/ir/error.h"

namespace floe::conv {
namespace {

constexpr const char* kStateFileName = "checkpoint";
constexpr const char* kV1Message =
    "checkpoint V1 format is not supported; re-save with tf.train.Saver(write_version=V2)";

bool is_regular_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Length of a "-NNNNN-of-NNNNN" tail (at least 5 digits each) ending `s`, or 0.
size_t shard_suffix_length(const std::string& s) {
  size_t end = s.size();
  auto digits_before = [&](size_t pos) {
    size_t n = 0;
    while (n < pos && std::isdigit(static_cast<unsigned char>(s[pos - n - 1]))) ++n;
    return n;
  };
  const size_t total_digits = digits_before(end);
  if (total_digits < 5) return 0;
  end -= total_digits;
  if (end < 4 || s.compare(end - 4, 4, "-of-") != 0) return 0;
  end -= 4;
  const size_t shard_digits = digits_before(end);
  if (shard_digits < 5 || end - shard_digits < 1 || s[end - shard_digits - 1] != '-') return 0;
  return total_digits + 4 + shard_digits + 1;
}

// Strips ".index", ".meta" or ".data-NNNNN-of-NNNNN" from a path naming one bundle file.
std::string strip_bundle_suffix(const std::string& path) {
  for (const char* suffix : {".index", ".meta"}) {
    if (ends_with(path, suffix) && path.size() > std::string(suffix).size()) {
      return path.substr(0, path.size() - std::string(suffix).size());
    }
  }
  const size_t shard = shard_suffix_length(path);
  const std::string data_tag = ".data";
  if (shard > 0 && path.size() >= shard + data_tag.size() &&
      path.compare(path.size() - shard - data_tag.size(), data_tag.size(), data_tag) == 0 &&
      path.size() > shard + data_tag.size()) {
    return path.substr(0, path.size() - shard - data_tag.size());
  }
  return path;
}

std::string parent_dir(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string join(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir == ".") return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

// State files written on Windows hold backslash paths and drive letters.
bool is_absolute_foreign_or_local(const std::string& p) {
  if (!p.empty() && (p[0] == '/' || p[0] == '\\')) return true;
  return p.size() >= 3 && std::isalpha(static_cast<unsigned char>(p[0])) && p[1] == ':' &&
         (p[2] == '\\' || p[2] == '/');
}

std::string basename_any_separator(const std::string& p) {
  const size_t sep = p.find_last_of("/\\");
  return sep == std::string::npos ? p : p.substr(sep + 1);
}

// File names in `dir`; empty when it cannot be listed (never throws).
std::vector<std::string> list_directory(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// V1 sharded saves are "P-00000-of-00002"; look for any file of that shape beside P.
bool has_v1_shard_files(const std::string& prefix) {
  const std::string dir = parent_dir(prefix);
  const size_t slash = prefix.find_last_of('/');
  const std::string base = slash == std::string::npos ? prefix : prefix.substr(slash + 1);
  for (const std::string& name : list_directory(dir)) {
    const size_t shard = shard_suffix_length(name);
    if (shard > 0 && name.size() == base.size() + shard &&
        name.compare(0, base.size(), base) == 0 && ckpt::file_has_table_magic(join(dir, name))) {
      return true;
    }
  }
  return false;
}

// True when something of the bundle (or a V1 save) exists for `prefix`.
bool prefix_exists(const std::string& prefix) {
  return exists(prefix + ".index") || is_regular_file(prefix) || has_v1_shard_files(prefix);
}

std::string validate_prefix(const std::string& prefix, const std::string& given) {
  const std::string index = prefix + ".index";
  if (is_regular_file(index)) return prefix;
  const std::string origin = prefix == given ? "" : " (resolved from '" + given + "')";
  if (exists(index))
    throw ConvertError("checkpoint '" + prefix + "': '" + index + "' is not a regular file");
  if (is_regular_file(prefix)) {
    if (ckpt::file_has_table_magic(prefix)) throw ConvertError(prefix + ": " + kV1Message);
    throw ConvertError("'" + prefix + "' is not a checkpoint: '" + index +
                       "' does not exist and the file is not a checkpoint table" + origin);
  }
  if (has_v1_shard_files(prefix)) throw ConvertError(prefix + ": " + kV1Message);
  throw ConvertError("checkpoint prefix '" + prefix + "' not found: '" + index +
                     "' does not exist" + origin);
}

std::string prefix_from_state_file(const std::string& state_path) {
  const ckpt::CheckpointState state = ckpt::read_checkpoint_state_file(state_path);
  std::string named = state.model_checkpoint_path;
  if (named.empty() && !state.all_model_checkpoint_paths.empty()) {
    named = state.all_model_checkpoint_paths.back();
  }
  if (named.empty()) throw ConvertError(state_path + ": state file names no model_checkpoint_path");
  const std::string dir = parent_dir(state_path);
  const std::string as_written = is_absolute_foreign_or_local(named) ? named : join(dir, named);
  if (prefix_exists(as_written)) return validate_prefix(as_written, state_path);
  // Checkpoints copied between machines keep the writer's paths: look beside the state file.
  const std::string beside = join(dir, basename_any_separator(named));
  if (beside != as_written && prefix_exists(beside)) return validate_prefix(beside, state_path);
  throw ConvertError(state_path + ": names checkpoint '" + named + "', but neither '" + as_written +
                     ".index' nor '" + beside + ".index' exists");
}

std::string prefix_from_directory(const std::string& dir) {
  const std::string state_path = join(dir, kStateFileName);
  if (is_regular_file(state_path)) return prefix_from_state_file(state_path);
  // No state file: accept a directory holding exactly one bundle (e.g. a SavedModel's variables/).
  std::vector<std::string> indexes;
  for (const std::string& name : list_directory(dir)) {
    if (ends_with(name, ".index") && is_regular_file(join(dir, name))) indexes.push_back(name);
  }
  if (indexes.size() == 1) return validate_prefix(strip_bundle_suffix(join(dir, indexes[0])), dir);
  // A SavedModel directory keeps its bundle at variables/variables.
  const std::string saved_model_prefix = join(dir, "variables/variables");
  if (indexes.empty() && is_regular_file(saved_model_prefix + ".index")) return saved_model_prefix;
  if (indexes.empty()) {
    throw ConvertError("directory '" + dir + "' holds no '" + kStateFileName +
                       "' state file and no .index file");
  }
  std::string list;
  for (const std::string& name : indexes) list += (list.empty() ? "" : ", ") + name;
  throw ConvertError("directory '" + dir + "' holds no '" + kStateFileName +
                     "' state file and several checkpoints (" + list + "); pass a prefix");
}

}  // namespace

std::string resolve_checkpoint_prefix(const std::string& path) {
  if (path.empty()) throw ConvertError("checkpoint path is empty");
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  if (is_directory(trimmed)) return prefix_from_directory(trimmed);
  const bool names_state_file =
      trimmed == kStateFileName || ends_with(trimmed, std::string("/") + kStateFileName);
  if (names_state_file && is_regular_file(trimmed) && !ckpt::file_has_table_magic(trimmed)) {
    return prefix_from_state_file(trimmed);
  }
  // A path that exists as given is a bundle file, a V1 file, or something else entirely.
  const std::string prefix = strip_bundle_suffix(trimmed);
  return validate_prefix(prefix, path);
}

}  // namespace floe::conv
