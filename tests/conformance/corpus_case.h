// SPDX-License-Identifier: Apache-2.0
// One dl4j_tf_graphs test case as the conformance suite reads it: the case list
// (CASES.tsv, columns found by header name), the `dtypes` file, the CSV value
// files (`*.prediction.csv`, `*.placeholder.csv`, `*.prediction_inbw.csv`, each
// with its `.shape`). Relies on the corpus layout in corpus/MANIFEST.md: values
// are one per line, row-major; a `.shape` of a single 0 with one value is a scalar.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace floe::conformance {

struct CaseRow {
  std::string name;   // "abs/rank2_float16"
  std::string family; // first path component: "abs"
  std::string flags;  // CASES.tsv flags column ("" when none)
};

// Reads CASES.tsv; throws std::runtime_error when the header lacks "case" or "flags".
std::vector<CaseRow> read_cases_tsv(const std::string& path);

// Values read from a CSV file, as doubles (TF prints every dtype as text; int64
// values of the corpus fit a double exactly). `nan`/`inf` spellings accepted.
struct CsvTensor {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

// Reads `<stem>.csv` and `<stem>.shape` (stem = path without the extension).
// Applies the scalar quirk. Throws std::runtime_error on unreadable files or a
// value count that disagrees with the shape.
CsvTensor read_csv_tensor(const std::string& csv_path, const std::string& shape_path);

// `dtypes` file: "<escaped name>.<port> <dtype>" (or "<placeholder> <dtype>") per line.
std::map<std::string, std::string> read_dtypes(const std::string& path);

// TF names in file names: '/' is written "____" in intermediate file names.
std::string escape_node_name(const std::string& node);

// Expected outputs: every `*.prediction.csv` under `case_dir` (recursively;
// '/' in node names is a directory), as (file stem relative to case_dir).
std::vector<std::string> find_prediction_stems(const std::string& case_dir);

// Placeholder values: names `x` with `x.placeholder.csv` in case_dir.
std::vector<std::string> find_placeholder_names(const std::string& case_dir);

}  // namespace floe::conformance
