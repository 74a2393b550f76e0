// SPDX-License-Identifier: Apache-2.0
// SavedModel / MetaGraphDef SignatureDefs: which one supplies the default
// inputs and outputs of a conversion, and how to describe them in messages.
// Keys beginning with "__" (TF2's __saved_model_init_op) are not signatures a
// user converts and are never listed or chosen.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "converter/proto/tf_subset.pb.h"

namespace floe::conv {

struct SignatureTensor {
  std::string key;     // the SignatureDef map key ("x")
  std::string tensor;  // the graph tensor ("x:0")
  std::string dtype;   // "DT_FLOAT"
  std::string shape;   // "[-1,1]", "?" when unknown
};

struct Signature {
  std::string name;
  std::string method;
  std::vector<SignatureTensor> inputs;   // sorted by key
  std::vector<SignatureTensor> outputs;  // sorted by key
};

// Every user-facing signature of `meta`, sorted by name.
std::vector<Signature> list_signatures(const floe::tfproto::MetaGraphDef& meta);

// The signature a conversion uses: `requested` when given (error listing the
// available ones when absent), else "serving_default", else the only one.
// Several and none chosen -> ConvertError listing them. nullopt when `meta` has no
// signatures and none was requested. `source` prefixes messages.
std::optional<Signature> choose_signature(const floe::tfproto::MetaGraphDef& meta,
                                          const std::string& requested, const std::string& source);

// "serving_default(x=x:0 DT_FLOAT [-1,1] -> y=y:0 DT_FLOAT [-1,1])".
std::string format_signature(const Signature& signature);

}  // namespace floe::conv
