// SPDX-License-Identifier: Apache-2.0
// Reading the dl4j_tf_graphs case files (see corpus_case.h).
#include "tests/conformance/corpus_case.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace floe::conformance {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, '\t')) out.push_back(field);
  if (!line.empty() && line.back() == '\t') out.emplace_back();
  return out;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

double parse_value(const std::string& text, const std::string& path) {
  std::string t = trim(text);
  std::string lower = t;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "nan" || lower == "-nan") return NAN;
  if (lower == "inf" || lower == "infinity") return INFINITY;
  if (lower == "-inf" || lower == "-infinity") return -INFINITY;
  if (lower == "true") return 1.0;
  if (lower == "false") return 0.0;
  size_t used = 0;
  double v = 0.0;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    throw std::runtime_error(path + ": cannot parse value '" + t + "'");
  }
  if (used != t.size()) throw std::runtime_error(path + ": cannot parse value '" + t + "'");
  return v;
}

}  // namespace

std::vector<CaseRow> read_cases_tsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::string line;
  if (!std::getline(in, line)) throw std::runtime_error(path + ": empty");
  const std::vector<std::string> header = split_tabs(line);
  int case_col = -1, flags_col = -1;
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == "case") case_col = static_cast<int>(i);
    if (header[i] == "flags") flags_col = static_cast<int>(i);
  }
  if (case_col < 0 || flags_col < 0) throw std::runtime_error(path + ": header lacks 'case' or 'flags'");
  std::vector<CaseRow> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> f = split_tabs(line);
    CaseRow row;
    row.name = f.size() > static_cast<size_t>(case_col) ? f[static_cast<size_t>(case_col)] : "";
    row.flags = f.size() > static_cast<size_t>(flags_col) ? f[static_cast<size_t>(flags_col)] : "";
    row.family = row.name.substr(0, row.name.find('/'));
    if (!row.name.empty()) rows.push_back(row);
  }
  return rows;
}

CsvTensor read_csv_tensor(const std::string& csv_path, const std::string& shape_path) {
  CsvTensor t;
  std::ifstream shape_in(shape_path);
  if (!shape_in) throw std::runtime_error(shape_path + ": cannot open");
  for (std::string line; std::getline(shape_in, line);) {
    line = trim(line);
    if (!line.empty()) t.shape.push_back(std::stoll(line));
  }
  std::ifstream csv(csv_path);
  if (!csv) throw std::runtime_error(csv_path + ": cannot open");
  for (std::string line; std::getline(csv, line);) {
    // Some writers put several comma-separated values on one line.
    std::istringstream fields(line);
    for (std::string field; std::getline(fields, field, ',');) {
      if (!trim(field).empty()) t.values.push_back(parse_value(field, csv_path));
    }
  }
  // Quirk: a shape of [0] holding one value is a scalar.
  if (t.shape.size() == 1 && t.shape[0] == 0 && t.values.size() == 1) t.shape.clear();
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  if (n != static_cast<int64_t>(t.values.size())) {
    throw std::runtime_error(csv_path + ": " + std::to_string(t.values.size()) +
                             " values for a shape of " + std::to_string(n) + " elements");
  }
  return t;
}

std::map<std::string, std::string> read_dtypes(const std::string& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string name, dtype;
    if (fields >> name >> dtype) out[name] = dtype;
  }
  return out;
}

std::string escape_node_name(const std::string& node) {
  std::string out;
  for (char c : node) {
    if (c == '/') {
      out += "____";
    } else {
      out += c;
    }
  }
  return out;
}

std::vector<std::string> find_prediction_stems(const std::string& case_dir) {
  std::vector<std::string> stems;
  const std::string suffix = ".prediction.csv";
  for (const auto& entry : fs::recursive_directory_iterator(case_dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string rel = fs::relative(entry.path(), case_dir).generic_string();
    if (ends_with(rel, suffix)) stems.push_back(rel.substr(0, rel.size() - suffix.size()));
  }
  std::sort(stems.begin(), stems.end());
  return stems;
}

std::vector<std::string> find_placeholder_names(const std::string& case_dir) {
  std::vector<std::string> names;
  const std::string suffix = ".placeholder.csv";
  for (const auto& entry : fs::recursive_directory_iterator(case_dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string rel = fs::relative(entry.path(), case_dir).generic_string();
    if (ends_with(rel, suffix)) names.push_back(rel.substr(0, rel.size() - suffix.size()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace floe::conformance
