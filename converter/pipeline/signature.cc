// SPDX-License-Identifier: Apache-2.0
// SignatureDef selection and description (see signature.h). A signature whose
// tensors are sparse or composite cannot feed a dense model: refused by name.
#include "converter/pipeline/signature.h"

#include <algorithm>
#include <map>

#include "converter/ir/tf_dtype.h"
#include "converter/ir/error.h"

namespace floe::conv {
namespace tfp = floe::tfproto;

namespace {

std::string shape_text(const tfp::TensorInfo& info) {
  if (!info.has_tensor_shape() || info.tensor_shape().unknown_rank()) return "?";
  std::string text = "[";
  for (int i = 0; i < info.tensor_shape().dim_size(); ++i) {
    text += (i ? "," : "") + std::to_string(info.tensor_shape().dim(i).size());
  }
  return text + "]";
}

std::vector<SignatureTensor> tensors(const google::protobuf::Map<std::string, tfp::TensorInfo>& map) {
  std::map<std::string, const tfp::TensorInfo*> sorted;
  for (const auto& [key, info] : map) sorted[key] = &info;
  std::vector<SignatureTensor> out;
  for (const auto& [key, info] : sorted) {
    SignatureTensor t;
    t.key = key;
    if (info->has_coo_sparse()) {
      t.tensor = info->coo_sparse().values_tensor_name();
      t.dtype = "sparse";
    } else if (info->has_composite_tensor()) {
      t.dtype = "composite";
    } else {
      t.tensor = info->name();
      t.dtype = tf_dtype_name(info->dtype());
    }
    t.shape = shape_text(*info);
    out.push_back(std::move(t));
  }
  return out;
}

std::string signature_names(const std::vector<Signature>& all) {
  std::string names;
  for (const Signature& s : all) names += (names.empty() ? "" : ", ") + s.name;
  return names;
}

void require_dense(const Signature& s, const std::string& source) {
  for (const auto* list : {&s.inputs, &s.outputs}) {
    for (const SignatureTensor& t : *list) {
      if (t.dtype == "sparse" || t.dtype == "composite") {
        throw ConvertError(source + ": signature '" + s.name + "' tensor '" + t.key + "' is a " + t.dtype +
                           " tensor; floe converts dense tensors only (pass --inputs/--outputs instead)");
      }
    }
  }
}

}  // namespace

std::vector<Signature> list_signatures(const tfp::MetaGraphDef& meta) {
  std::vector<Signature> out;
  for (const auto& [name, def] : meta.signature_def()) {
    if (name.rfind("__", 0) == 0) continue;
    Signature s;
    s.name = name;
    s.method = def.method_name();
    s.inputs = tensors(def.inputs());
    s.outputs = tensors(def.outputs());
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const Signature& a, const Signature& b) { return a.name < b.name; });
  return out;
}

std::optional<Signature> choose_signature(const tfp::MetaGraphDef& meta, const std::string& requested,
                                          const std::string& source) {
  const std::vector<Signature> all = list_signatures(meta);
  auto find = [&](const std::string& name) -> const Signature* {
    for (const Signature& s : all) {
      if (s.name == name) return &s;
    }
    return nullptr;
  };
  const Signature* chosen = nullptr;
  if (!requested.empty()) {
    chosen = find(requested);
    if (chosen == nullptr) {
      throw ConvertError(source + ": no signature '" + requested + "'" +
                         (all.empty() ? std::string(" (the graph has no signatures)")
                                      : "; available: " + signature_names(all)));
    }
  } else if (all.empty()) {
    return std::nullopt;
  } else if ((chosen = find("serving_default")) == nullptr) {
    if (all.size() > 1) {
      throw ConvertError(source + ": " + std::to_string(all.size()) +
                         " signatures and none is serving_default; choose one with --signature: " +
                         signature_names(all));
    }
    chosen = &all.front();
  }
  require_dense(*chosen, source);
  if (chosen->outputs.empty()) {
    throw ConvertError(source + ": signature '" + chosen->name + "' has no outputs");
  }
  return *chosen;
}

std::string format_signature(const Signature& s) {
  auto list = [](const std::vector<SignatureTensor>& ts) {
    std::string text;
    for (const SignatureTensor& t : ts) {
      text += (text.empty() ? "" : ", ") + t.key + "=" + t.tensor + " " + t.dtype + " " + t.shape;
    }
    return text;
  };
  return s.name + "(" + list(s.inputs) + " -> " + list(s.outputs) + ")";
}

}  // namespace floe::conv
