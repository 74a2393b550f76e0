// SPDX-License-Identifier: Apache-2.0
// fuzz_model's structured mutator (model_mutator.h): a valid model, one field
// changed through the object API, packed and sealed again.
#include "tests/fuzz/model_mutator.h"

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "converter/emit/emit.h"
#include "schemas/floe_obj_generated.h"

namespace floe::fuzz {
namespace {

using Rng = std::mt19937;
namespace so = schema_obj;

uint32_t below(Rng& rng, size_t n) { return n == 0 ? 0 : static_cast<uint32_t>(rng() % n); }
bool coin(Rng& rng) { return rng() & 1; }

// An integer near the edges a kernel's arithmetic cares about, or near `v`
// (wrapping: the mutator itself must not overflow).
int64_t interesting(Rng& rng, int64_t v) {
  const uint64_t u = static_cast<uint64_t>(v);
  static const int64_t kEdges[] = {0,       1,          -1,         2,         3,          7,
                                   8,       15,         16,         31,        32,         127,
                                   128,     255,        256,        -128,      32767,      -32768,
                                   65535,   65536,      1 << 29,    1 << 30,   INT32_MAX,  INT32_MIN,
                                   INT32_MAX - 1, -(1 << 30)};
  switch (below(rng, 4)) {
    case 0:
      return kEdges[below(rng, sizeof kEdges / sizeof kEdges[0])];
    case 1:
      return static_cast<int64_t>(u + below(rng, 5) - 2);
    case 2:
      return static_cast<int64_t>(u * 2);
    default:
      return static_cast<int32_t>(rng());
  }
}
int32_t interesting32(Rng& rng, int64_t v) { return static_cast<int32_t>(interesting(rng, v)); }

template <typename T>
void mutate_vector(Rng& rng, std::vector<T>* values) {
  if (values->empty() || below(rng, 8) == 0) {
    values->push_back(static_cast<T>(interesting(rng, 0)));
    return;
  }
  if (below(rng, 8) == 0) {
    values->pop_back();
    return;
  }
  T& v = (*values)[below(rng, values->size())];
  v = static_cast<T>(interesting(rng, static_cast<int64_t>(v)));
}

void mutate_tensor(Rng& rng, so::TensorT& t) {
  switch (below(rng, 8)) {
    case 0:
      mutate_vector(rng, &t.shape);
      break;
    case 1:
      t.dtype = static_cast<so::DType>(below(rng, static_cast<size_t>(so::DType::MAX) + 2));
      break;
    case 2:
      t.offset = static_cast<uint64_t>(interesting(rng, static_cast<int64_t>(t.offset)));
      break;
    case 3:
      t.size = static_cast<uint64_t>(interesting(rng, static_cast<int64_t>(t.size)));
      break;
    case 4:
      t.is_constant = !t.is_constant;
      break;
    case 5:
      t.live_first_op = interesting32(rng, t.live_first_op);
      t.live_last_op = interesting32(rng, t.live_last_op);
      break;
    case 6:
      if (!t.quantization) t.quantization = std::make_unique<so::TensorQuantizationT>();
      if (coin(rng)) {
        mutate_vector(rng, &t.quantization->zero_point);
      } else {
        t.quantization->scale.push_back(coin(rng) ? 0.0f : static_cast<float>(interesting(rng, 1)));
      }
      break;
    default:
      t.region = static_cast<uint8_t>(below(rng, 4));
      break;
  }
}

void mutate_requantization(Rng& rng, so::RequantizationT& r) {
  switch (below(rng, 9)) {
    case 0: mutate_vector(rng, &r.input_offsets); break;
    case 1: r.output_offset = interesting32(rng, r.output_offset); break;
    case 2: r.output_multiplier = interesting32(rng, r.output_multiplier); break;
    case 3: r.output_shift = interesting32(rng, r.output_shift); break;
    case 4: mutate_vector(rng, &r.input_multipliers); break;
    case 5: mutate_vector(rng, &r.input_shifts); break;
    case 6: r.left_shift = interesting32(rng, r.left_shift); break;
    case 7:
      r.activation_min = interesting32(rng, r.activation_min);
      break;
    default:
      r.activation_max = interesting32(rng, r.activation_max);
      break;
  }
}

// One numeric field of the options tables the window kernels read; other
// option types get their first integer vector (axes, perm, paddings, ...) or
// nothing.
template <typename Window>
void mutate_window(Rng& rng, Window& o) {
  int32_t* fields[] = {&o.stride_h, &o.stride_w, &o.pad_top, &o.pad_left, &o.pad_bottom, &o.pad_right};
  int32_t& f = *fields[below(rng, 6)];
  f = interesting32(rng, f);
}

void mutate_options(Rng& rng, so::OpOptionsUnion& u) {
  if (auto* o = u.AsConv2DOptions()) {
    if (coin(rng)) {
      mutate_window(rng, *o);
    } else {
      o->dilation_h = interesting32(rng, o->dilation_h);
      o->dilation_w = interesting32(rng, o->dilation_w);
    }
  } else if (auto* o = u.AsDepthwiseConv2DOptions()) {
    if (coin(rng)) {
      mutate_window(rng, *o);
    } else {
      o->depth_multiplier = interesting32(rng, o->depth_multiplier);
    }
  } else if (auto* o = u.AsPool2DOptions()) {
    if (coin(rng)) {
      mutate_window(rng, *o);
    } else {
      o->filter_h = interesting32(rng, o->filter_h);
      o->filter_w = interesting32(rng, o->filter_w);
    }
  } else if (auto* o = u.AsReduceOptions()) {
    mutate_vector(rng, &o->axes);
  } else if (auto* o = u.AsTransposeOptions()) {
    mutate_vector(rng, &o->perm);
  } else if (auto* o = u.AsPadOptions()) {
    mutate_vector(rng, &o->paddings);
  } else if (auto* o = u.AsConcatOptions()) {
    o->axis = interesting32(rng, o->axis);
  }
}

void mutate_operator(Rng& rng, so::OperatorT& op, size_t tensor_count) {
  switch (below(rng, 7)) {
    case 0:
      if (!op.inputs.empty()) {
        op.inputs[below(rng, op.inputs.size())] = static_cast<int32_t>(below(rng, tensor_count + 2)) - 1;
      }
      break;
    case 1:
      if (!op.outputs.empty()) {
        op.outputs[below(rng, op.outputs.size())] = static_cast<int32_t>(below(rng, tensor_count + 1));
      }
      break;
    case 2:
      op.opcode = static_cast<so::OpCode>(below(rng, static_cast<size_t>(so::OpCode::MAX) + 2));
      break;
    case 3:
      op.backend = static_cast<so::Backend>(below(rng, static_cast<size_t>(so::Backend::MAX) + 2));
      op.cortexm_kernel = static_cast<so::CortexMKernel>(below(rng, static_cast<size_t>(so::CortexMKernel::MAX) + 2));
      break;
    case 4:
      if (!op.requantization) op.requantization = std::make_unique<so::RequantizationT>();
      mutate_requantization(rng, *op.requantization);
      break;
    case 5:
      op.single_threaded = !op.single_threaded;
      break;
    default:
      mutate_options(rng, op.options);
      break;
  }
}

void mutate(Rng& rng, so::ModelT& m) {
  const uint32_t kind = below(rng, 16);
  if (kind < 5 && !m.tensors.empty()) {
    mutate_tensor(rng, *m.tensors[below(rng, m.tensors.size())]);
  } else if (kind < 12 && !m.operators.empty()) {
    mutate_operator(rng, *m.operators[below(rng, m.operators.size())], m.tensors.size());
  } else if (kind < 14 && !m.constants.empty()) {
    // Constant bytes: what the prepares must check or survive (shifts, tables, packed words).
    const size_t at = below(rng, m.constants.size());
    const size_t n = 1 + below(rng, 4);
    for (size_t i = at; i < at + n && i < m.constants.size(); ++i) m.constants[i] = static_cast<uint8_t>(rng());
  } else {
    switch (below(rng, 5)) {
      case 0: m.arena_size = static_cast<uint64_t>(interesting(rng, static_cast<int64_t>(m.arena_size))); break;
      case 1: m.xnnpack_arena_size = static_cast<uint64_t>(interesting(rng, static_cast<int64_t>(m.xnnpack_arena_size))); break;
      case 2: mutate_vector(rng, &m.inputs); break;
      case 3: mutate_vector(rng, &m.outputs); break;
      default: mutate_vector(rng, &m.region_sizes); break;
    }
  }
}

// FlatBuffers aligns vectors to 4 bytes only; the object API reads 8-byte
// elements in place, so a byte-mutated buffer may hold one it cannot unpack.
bool eight_byte_vectors_aligned(const so::Model& m) {
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 8 == 0; };
  if (m.region_sizes() != nullptr && !aligned(m.region_sizes()->Data())) return false;
  if (m.tensors() == nullptr) return true;
  for (const so::Tensor* t : *m.tensors()) {
    const auto* q = t->quantization();
    if (q != nullptr && q->zero_point() != nullptr && !aligned(q->zero_point()->Data())) return false;
  }
  return true;
}

}  // namespace

size_t mutate_model(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  flatbuffers::Verifier verifier(data, size);
  if (size < 8 || !so::VerifyModelBuffer(verifier)) return 0;
  if (!eight_byte_vectors_aligned(*so::GetModel(data))) return 0;
  std::unique_ptr<so::ModelT> model(so::GetModel(data)->UnPack());
  // A verified buffer may name an options type without its table; Pack would
  // dereference the missing object.
  for (auto& op : model->operators) {
    if (op && op->options.type != so::OpOptions::NONE && op->options.value == nullptr) op->options.Reset();
  }
  Rng rng(seed);
  for (uint32_t n = 1 + below(rng, 3); n > 0; --n) mutate(rng, *model);
  model->payload_crc32c = 0xFFFFFFFFu;  // a non-default value keeps the field in the buffer for seal_model
  flatbuffers::FlatBufferBuilder fbb;
  so::FinishModelBuffer(fbb, so::Model::Pack(fbb, model.get()));
  std::vector<uint8_t> bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  conv::seal_model(&bytes);  // the checksum matches: both Load paths see the change
  if (bytes.size() > max_size) return 0;
  std::memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}

}  // namespace floe::fuzz
