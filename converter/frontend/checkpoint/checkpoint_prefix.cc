// SPDX-License-Identifier: Apache-2.0
// locate_checkpoint: turns whatever the user pointed at (prefix, file of the
// bundle, directory, `checkpoint` state file, shard pattern) into a V2 bundle
// prefix P with an existing P.index, or the table files of a V1 checkpoint (a
// table file P, or its shards P-00000-of-00002 ..., all of which must exist).
#include <fnmatch.h>
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

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool has_glob_characters(const std::string& path) {
  return base_name(path).find_first_of("?*[") != std::string::npos;
}

// Table files in `dir` whose names match the glob `pattern` (sorted).
std::vector<std::string> matching_table_files(const std::string& dir, const std::string& pattern) {
  std::vector<std::string> files;
  for (const std::string& name : list_directory(dir)) {
    if (::fnmatch(pattern.c_str(), name.c_str(), FNM_PERIOD) == 0 && ckpt::file_has_table_magic(join(dir, name))) {
      files.push_back(join(dir, name));
    }
  }
  return files;
}

// The V1 shards named "<base>-NNNNN-of-NNNNN" beside `prefix` (sorted), any shard count.
std::vector<std::string> v1_shard_files(const std::string& prefix) {
  const std::string dir = parent_dir(prefix);
  const std::string base = base_name(prefix);
  std::vector<std::string> files;
  for (const std::string& name : list_directory(dir)) {
    const size_t shard = shard_suffix_length(name);
    if (shard > 0 && name.size() == base.size() + shard && name.compare(0, base.size(), base) == 0 &&
        ckpt::file_has_table_magic(join(dir, name))) {
      files.push_back(join(dir, name));
    }
  }
  return files;
}

// Shard id and count of a "...-NNNNN-of-NNNNN" name; false without that tail.
bool shard_numbers(const std::string& name, long long& id, long long& count) {
  const size_t tail = shard_suffix_length(name);
  if (tail == 0) return false;
  const std::string numbers = name.substr(name.size() - tail + 1);  // "NNNNN-of-NNNNN"
  const size_t of = numbers.find("-of-");
  if (of == std::string::npos || of > 18 || numbers.size() - of - 4 > 18) return false;
  id = std::stoll(numbers.substr(0, of));
  count = std::stoll(numbers.substr(of + 4));
  return true;
}

// A V1 save: one table file, or every shard of one sharded save (ids 0..N-1 of
// one N, each exactly once), in shard order.
CheckpointLocation v1_location(const std::string& prefix, std::vector<std::string> files, const std::string& given) {
  std::sort(files.begin(), files.end());
  CheckpointLocation location;
  location.prefix = prefix;
  location.format = CheckpointFormat::kV1Table;
  long long id = 0, count = 0;
  if (files.size() == 1 && !shard_numbers(base_name(files[0]), id, count)) {
    location.v1_files = files;
    return location;
  }
  long long expected_count = -1;
  for (const std::string& file : files) {
    if (!shard_numbers(base_name(file), id, count)) {
      throw ConvertError("'" + given + "' names several V1 checkpoint files, and '" + file + "' is not a shard");
    }
    if (expected_count >= 0 && count != expected_count) {
      throw ConvertError("'" + given + "' matches shards of different saves (of " + std::to_string(expected_count) +
                         " and of " + std::to_string(count) + " shards)");
    }
    expected_count = count;
  }
  if (static_cast<long long>(files.size()) != expected_count) {
    throw ConvertError("V1 checkpoint '" + prefix + "' has " + std::to_string(files.size()) + " of its " +
                       std::to_string(expected_count) + " shard files");
  }
  for (size_t i = 0; i < files.size(); ++i) {
    shard_numbers(base_name(files[i]), id, count);
    if (id != static_cast<long long>(i)) {
      throw ConvertError("V1 checkpoint '" + prefix + "': shard " + std::to_string(i) + " of " +
                         std::to_string(expected_count) + " is missing");
    }
  }
  location.v1_files = files;
  return location;
}

// Strips "-NNNNN-of-NNNNN" from a shard name: the prefix of its save.
std::string strip_shard_suffix(const std::string& path) {
  const size_t shard = shard_suffix_length(path);
  return shard > 0 && path.size() > shard ? path.substr(0, path.size() - shard) : path;
}

// A glob naming V1 files ("P-?????-of-00002"), unless a file of that very name exists.
bool is_pattern(const std::string& prefix) {
  return has_glob_characters(prefix) && !exists(prefix) && !exists(prefix + ".index");
}

// True when something of the bundle (or a V1 save) exists for `prefix`.
bool prefix_exists(const std::string& prefix) {
  if (is_pattern(prefix)) return !matching_table_files(parent_dir(prefix), base_name(prefix)).empty();
  return exists(prefix + ".index") || is_regular_file(prefix) || !v1_shard_files(prefix).empty();
}

CheckpointLocation validate_prefix(const std::string& prefix, const std::string& given) {
  const std::string origin = prefix == given ? "" : " (resolved from '" + given + "')";
  if (is_pattern(prefix)) {
    std::vector<std::string> files = matching_table_files(parent_dir(prefix), base_name(prefix));
    if (files.empty()) throw ConvertError("no checkpoint file matches '" + prefix + "'" + origin);
    const std::string save = strip_shard_suffix(files.front());
    return v1_location(save, std::move(files), given);
  }
  const std::string index = prefix + ".index";
  if (is_regular_file(index)) {
    CheckpointLocation location;
    location.prefix = prefix;
    return location;
  }
  if (exists(index))
    throw ConvertError("checkpoint '" + prefix + "': '" + index + "' is not a regular file");
  if (is_regular_file(prefix)) {
    if (!ckpt::file_has_table_magic(prefix)) {
      throw ConvertError("'" + prefix + "' is not a checkpoint: '" + index +
                         "' does not exist and the file is not a checkpoint table" + origin);
    }
    // One shard named by itself stands for its whole save.
    if (shard_suffix_length(base_name(prefix)) > 0) {
      const std::string save = strip_shard_suffix(prefix);
      std::vector<std::string> shards;
      long long id = 0, count = 0, other_count = 0;
      shard_numbers(base_name(prefix), id, count);
      for (const std::string& file : v1_shard_files(save)) {
        if (shard_numbers(base_name(file), id, other_count) && other_count == count) shards.push_back(file);
      }
      return v1_location(save, std::move(shards), given);
    }
    return v1_location(prefix, {prefix}, given);
  }
  std::vector<std::string> shards = v1_shard_files(prefix);
  if (!shards.empty()) return v1_location(prefix, std::move(shards), given);
  throw ConvertError("checkpoint prefix '" + prefix + "' not found: '" + index +
                     "' does not exist" + origin);
}

CheckpointLocation prefix_from_state_file(const std::string& state_path) {
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

// The V1 saves in `dir`: shards grouped by their save's prefix, other table files alone.
std::vector<std::string> v1_saves_in(const std::string& dir) {
  std::vector<std::string> saves;
  for (const std::string& name : list_directory(dir)) {
    const std::string path = join(dir, name);
    if (ends_with(name, ".index") || name == kStateFileName || !ckpt::file_has_table_magic(path)) continue;
    const std::string save = strip_shard_suffix(path);
    if (std::find(saves.begin(), saves.end(), save) == saves.end()) saves.push_back(save);
  }
  return saves;
}

CheckpointLocation prefix_from_directory(const std::string& dir) {
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
  if (indexes.empty() && is_regular_file(saved_model_prefix + ".index")) {
    return validate_prefix(saved_model_prefix, dir);
  }
  if (indexes.empty()) {
    const std::vector<std::string> saves = v1_saves_in(dir);
    if (saves.size() == 1) return validate_prefix(saves[0], dir);
    if (saves.size() > 1) {
      std::string list;
      for (const std::string& save : saves) list += (list.empty() ? "" : ", ") + base_name(save);
      throw ConvertError("directory '" + dir + "' holds no '" + kStateFileName +
                         "' state file and several V1 checkpoints (" + list + "); pass one");
    }
    throw ConvertError("directory '" + dir + "' holds no '" + kStateFileName +
                       "' state file and no .index file");
  }
  std::string list;
  for (const std::string& name : indexes) list += (list.empty() ? "" : ", ") + name;
  throw ConvertError("directory '" + dir + "' holds no '" + kStateFileName +
                     "' state file and several checkpoints (" + list + "); pass a prefix");
}

}  // namespace

std::string resolve_checkpoint_prefix(const std::string& path) { return locate_checkpoint(path).prefix; }

CheckpointLocation locate_checkpoint(const std::string& path) {
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
