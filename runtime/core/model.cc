// SPDX-License-Identifier: Apache-2.0
// Model validation: structure (runtime/core/verify_buffer.h), then semantics every later
// stage relies on: tensor byte sizes match dtype x shape, every range lies in
// the constant section or the planned arena, every op index is in range and
// its options have the type its opcode expects. Op-specific shape rules are
// checked by each op's prepare step at Interpreter::Init(). The memory plan
// is verified here too (runtime/core/verify_plan.h), and, when the caller asks,
// the file checksum (schemas/contract/checksum.h).
#include "runtime/core/model.h"

#include <string.h>

#include "runtime/core/backend.h"
#include "runtime/core/checked_math.h"
#include "runtime/core/control_flow.h"
#include "runtime/core/quantization.h"
#include "runtime/core/registry.h"
#include "schemas/contract/checksum.h"
#include "runtime/core/verify_buffer.h"
#include "runtime/core/verify_plan.h"
#include "schemas/floe_generated.h"

namespace floe {
namespace {

bool valid_dtype(schema::DType t) {
  return t >= schema::DType::FLOAT32 && t <= schema::DType::UINT64;
}

}  // namespace

Status Model::fail(Status status, const char* message, int32_t op, int32_t tensor) {
  model_ = nullptr;
  error_.status = status;
  error_.message = message;
  error_.op = op;
  error_.tensor = tensor;
  return status;
}

// Two entry points so that a firmware that never asks for the checksum links
// none of its code (verify_checksum, CRC32C: ~400 B on Cortex-M).
Status Model::Load(const void* data, size_t size) { return load(data, size, nullptr); }

Status Model::Load(const void* data, size_t size, const LoadOptions& options) {
  ChecksumStep checksum = nullptr;
  if (options.verify_checksum) {
    checksum = [](Model& model, size_t n) { return model.verify_checksum(n); };
  }
  return load(data, size, checksum);
}

Status Model::load(const void* data, size_t size, ChecksumStep checksum) {
  model_ = nullptr;
  error_ = Error();
  buffer_ = static_cast<const uint8_t*>(data);
  if (data == nullptr || size < 8) {
    return fail(Status::kInvalidModel, FLOE_MSG("model buffer is empty or too small"));
  }
  // Constants are read in place with aligned loads.
  if (reinterpret_cast<uintptr_t>(data) % kTensorAlignment != 0) {
    return fail(Status::kMisalignedModel, FLOE_MSG("model buffer must be 16-byte aligned"));
  }
  // The file identifier (bytes 4..7), compared with memcmp: the generated
  // check's strncmp would be linked for this one call.
  if (memcmp(static_cast<const uint8_t*>(data) + sizeof(flatbuffers::uoffset_t), schema::ModelIdentifier(),
             flatbuffers::kFileIdentifierLength) != 0) {
    return fail(Status::kInvalidModel, FLOE_MSG("not a floe model (file identifier is not FLOE)"));
  }
  // Table-driven, same rules as flatbuffers::Verifier (runtime/core/verify_buffer.h).
  if (!verify_model_buffer(buffer_, size)) {
    return fail(Status::kInvalidModel, FLOE_MSG("model failed FlatBuffers verification"));
  }
  if (checksum != nullptr) FLOE_RETURN_IF_ERROR(checksum(*this, size));
  const schema::Model* model = schema::GetModel(data);
  if (model->version() == 0 || model->version() > kSchemaVersion) {
    return fail(Status::kUnsupportedVersion,
                FLOE_MSG("model format version is newer than this runtime"));
  }
  if (model->tensors() == nullptr || model->operators() == nullptr ||
      model->inputs() == nullptr || model->outputs() == nullptr) {
    return fail(Status::kInvalidModel, FLOE_MSG("model lacks tensors, operators or I/O lists"));
  }
  constants_ = nullptr;
  constants_size_ = 0;
  if (const auto* constants = model->constants()) {
    constants_ = constants->data();
    constants_size_ = constants->size();
    if (constants_size_ > 0 && (constants_ - buffer_) % kTensorAlignment != 0) {
      return fail(Status::kMisalignedModel, FLOE_MSG("constant section is not 16-byte aligned"));
    }
  }
  model_ = model;
  arena_size_ = model->arena_size();
  FLOE_RETURN_IF_ERROR(read_regions());
  tensor_count_ = model->tensors()->size();
  operator_count_ = model->operators()->size();
  FLOE_RETURN_IF_ERROR(validate_tensors());
  FLOE_RETURN_IF_ERROR(validate_operators());
  FLOE_RETURN_IF_ERROR(validate_io());
  // Run-time control flow: only a registry with WHILE or IF rows has it, and
  // validate_operators refused both without one.
  if (kKernelRegistry.control_flow != nullptr) {
    FLOE_RETURN_IF_ERROR(kKernelRegistry.control_flow->validate_ranges(*this));
  }
  int32_t bad_tensor = -1;
  if (const char* reason = verify_memory_plan(*model_, &bad_tensor)) {
    return fail(Status::kInvalidModel, reason, -1, bad_tensor);
  }
  // XNNPACK's region follows the activations (runtime/core/backend.h), the
  // prepared ops' persistent region (runtime/core/registry.h) follows both;
  // Interpreter::Init() checks that the ops fill its stated size exactly.
  // Each term is below 2^63 so the sum cannot wrap.
  persistent_size_ = sizeof(void*) == 4 ? model->persistent_size_ptr32() : model->persistent_size_ptr64();
  const uint64_t xnnpack = backend_arena_bytes(*this), limit = uint64_t{1} << 62;
  persistent_offset_ = (arena_size_ + xnnpack + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  total_arena_size_ = persistent_offset_ + persistent_size_;
  // One arena for every region: each starts 16-byte aligned. Each region is
  // below 2^62 (read_regions), so the sum of at most four cannot wrap.
  single_arena_size_ = 0;
  for (uint32_t r = 0; r < region_count_; ++r) {
    single_arena_size_ += (region_arena_size(r) + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  }
  if (region_count_ == 1) single_arena_size_ = total_arena_size_;
  if (xnnpack >= limit || persistent_size_ >= limit || arena_size_ >= limit ||
      static_cast<uint64_t>(static_cast<size_t>(single_arena_size_)) != single_arena_size_) {
    return fail(Status::kInvalidModel, FLOE_MSG("model's arena does not fit this target"));
  }
  return Status::kOk;
}

// Model.region_sizes: absent = one region; else 2..kMaxMemoryRegions regions,
// the persistent one among them and its size equal to arena_size.
Status Model::read_regions() {
  region_count_ = 1;
  persistent_region_ = 0;
  region_activations_[0] = arena_size_;
  const auto* sizes = model_->region_sizes();
  if (sizes == nullptr) {
    if (model_->persistent_region() != 0) {
      return fail(Status::kInvalidModel, FLOE_MSG("model's memory regions are inconsistent"));
    }
    return Status::kOk;
  }
  // FlatBuffers aligns a ulong vector to 4 bytes only: read it bytewise.
  const auto size_at = [sizes](uint32_t r) {
    uint64_t bytes;
    memcpy(&bytes, sizes->Data() + sizeof(uint64_t) * r, sizeof bytes);
    return bytes;
  };
  const uint32_t count = sizes->size(), home = model_->persistent_region();
  if (count < 2 || count > kMaxMemoryRegions || home >= count || size_at(home) != arena_size_) {
    return fail(Status::kInvalidModel, FLOE_MSG("model's memory regions are inconsistent"));
  }
  for (uint32_t r = 0; r < count; ++r) {
    const uint64_t bytes = size_at(r);
    if (bytes >= uint64_t{1} << 62) {
      return fail(Status::kInvalidModel, FLOE_MSG("model's arena does not fit this target"));
    }
    region_activations_[r] = bytes;
  }
  region_count_ = count;
  persistent_region_ = home;
  return Status::kOk;
}

void Model::region_name(uint32_t region, char* out, size_t capacity) const {
  if (capacity == 0) return;
  out[0] = '\0';
  if (model_ == nullptr || model_->region_names() == nullptr) return;
  const char* names = model_->region_names()->c_str();
  for (uint32_t r = 0; r < region && *names != '\0'; ++names) {
    if (*names == ',') ++r;
  }
  size_t n = 0;
  while (names[n] != '\0' && names[n] != ',' && n + 1 < capacity) {
    out[n] = names[n];
    ++n;
  }
  out[n] = '\0';
}

Status Model::verify_checksum(size_t size) {
  size_t field = 0;
  if (!find_model_checksum_field(buffer_, &field)) {
    return fail(Status::kChecksumMismatch, FLOE_MSG("model has no payload_crc32c to verify"));
  }
  if (compute_model_checksum(buffer_, size, field) != stored_model_checksum(buffer_, field)) {
    return fail(Status::kChecksumMismatch,
                FLOE_MSG("model checksum mismatch: the file is corrupted or was modified"));
  }
  return Status::kOk;
}

Status Model::validate_tensors() {
  const auto* tensors = model_->tensors();
  for (uint32_t i = 0; i < tensors->size(); ++i) {
    const schema::Tensor* t = tensors->Get(i);
    const int32_t index = static_cast<int32_t>(i);
    if (t == nullptr || !valid_dtype(t->dtype())) {
      return fail(Status::kInvalidModel, FLOE_MSG("tensor has an invalid dtype"), -1, index);
    }
    if (t->source_dtype() != schema::DType::INVALID && !valid_dtype(t->source_dtype())) {
      return fail(Status::kInvalidModel, FLOE_MSG("tensor has an invalid source dtype"), -1, index);
    }
    const auto* shape = t->shape();
    const uint32_t rank = shape ? shape->size() : 0;
    // A complex tensor is float32 (real, imaginary) pairs in a last dim of 2;
    // its source dtype, when set, says complex128 (FLOAT64).
    if (t->complex() && (t->dtype() != schema::DType::FLOAT32 || rank == 0 || shape->Get(rank - 1) != 2 ||
                         (t->source_dtype() != schema::DType::INVALID &&
                          t->source_dtype() != schema::DType::FLOAT64))) {
      return fail(Status::kInvalidModel, FLOE_MSG("complex tensor is not float32 pairs in a last dim of 2"), -1,
                  index);
    }
    if (rank > static_cast<uint32_t>(kMaxRank)) {
      return fail(Status::kInvalidModel, FLOE_MSG("tensor rank exceeds kMaxRank"), -1, index);
    }
    // Kernels loop over every dim; with a 0 dim elsewhere the byte size is 0
    // but loops over the other dims would still run (for ~forever with dims
    // near INT32_MAX). So the product of the nonzero dims must fit in int32,
    // which also bounds the byte size (<= 8 * (2^31 - 1): no overflow).
    uint32_t nonzero_elements = 1;
    bool empty = false;
    for (uint32_t d = 0; d < rank; ++d) {
      const int32_t dim = shape->Get(d);
      if (dim < 0) {
        return fail(Status::kInvalidModel, FLOE_MSG("tensor has a negative dimension"), -1, index);
      }
      empty |= dim == 0;
      // Both factors < 2^31: the 64-bit product is exact.
      const uint64_t product = static_cast<uint64_t>(nonzero_elements) * static_cast<uint32_t>(dim);
      if (dim > 0) nonzero_elements = static_cast<uint32_t>(product);
      if (product > static_cast<uint64_t>(INT32_MAX)) {
        return fail(Status::kInvalidModel, FLOE_MSG("tensor has more than 2^31-1 elements"), -1,
                    index);
      }
    }
    const uint64_t bytes =
        empty ? 0 : uint64_t{nonzero_elements} * dtype_size(static_cast<DType>(t->dtype()));
    if (bytes != t->size()) {
      return fail(Status::kInvalidModel, FLOE_MSG("tensor size does not match dtype x shape"), -1,
                  index);
    }
    // An activation needs its element size (reference kernels index it as an
    // array of its type), up to a word; operands of the other kernels are
    // checked for a whole word in validate_operators.
    const size_t element = dtype_size(static_cast<DType>(t->dtype()));
    const size_t activation_alignment = element < kActivationOffsetAlignment ? element : kActivationOffsetAlignment;
    // Alignments are powers of two: a mask, no 64-bit division linked.
    if ((t->offset() & ((t->is_constant() ? kTensorAlignment : activation_alignment) - 1)) != 0) {
      return fail(Status::kInvalidModel,
                  t->is_constant() ? FLOE_MSG("constant's offset is not 16-byte aligned")
                                   : FLOE_MSG("activation's offset is not a multiple of its element size"),
                  -1, index);
    }
    if (!t->is_constant() && t->region() >= region_count_) {
      return fail(Status::kInvalidModel, FLOE_MSG("tensor's memory region does not exist"), -1, index);
    }
    const uint64_t limit = t->is_constant() ? constants_size_ : region_activations_[t->region()];
    if (!range_fits(t->offset(), t->size(), limit)) {
      return fail(Status::kInvalidModel,
                  t->is_constant() ? FLOE_MSG("constant tensor lies outside the constant section")
                                   : FLOE_MSG("tensor lies outside the planned arena"),
                  -1, index);
    }
  }
  return Status::kOk;
}

// Every entry of `list` must be a tensor index in [lowest, tensor count) (-1
// marks an absent optional input) and, when `written`, not name a constant.
Status Model::check_indices(const void* list, int32_t lowest, bool written, int32_t op,
                            const char* out_of_range, const char* constant) {
  for (const int32_t t : *static_cast<const flatbuffers::Vector<int32_t>*>(list)) {
    if (t < lowest || t >= static_cast<int64_t>(tensor_count_)) {
      return fail(Status::kInvalidModel, out_of_range, op, t);
    }
    if (written && t >= 0 && is_constant(static_cast<size_t>(t))) {
      return fail(Status::kInvalidModel, constant, op, t);
    }
  }
  return Status::kOk;
}

Status Model::validate_operators() {
  const auto* ops = model_->operators();
  for (uint32_t i = 0; i < ops->size(); ++i) {
    const schema::Operator* op = ops->Get(i);
    const int32_t index = static_cast<int32_t>(i);
    if (op == nullptr || op->inputs() == nullptr || op->outputs() == nullptr) {
      return fail(Status::kInvalidModel, FLOE_MSG("operator lacks inputs or outputs"), index);
    }
    FLOE_RETURN_IF_ERROR(check_indices(op->inputs(), -1, false, index,
                                       FLOE_MSG("operator input index out of range"), nullptr));
    FLOE_RETURN_IF_ERROR(check_indices(op->outputs(), 0, true, index,
                                       FLOE_MSG("operator output index out of range"),
                                       FLOE_MSG("operator writes a constant tensor")));
    // The kernel that will run it must be linked (registry.h); its row holds
    // what the op allows.
    const KernelRow* row = kernel(i);
    if (row == nullptr) {
      return fail(Status::kUnsupportedOp,
                  FLOE_MSG("no kernel for this op, dtype and backend (none exists, or not selected)"),
                  index);
    }
    if (op->inputs()->size() > row->max_inputs) {
      return fail(Status::kInvalidModel, FLOE_MSG("operator has more inputs than its op"), index);
    }
    // Only a backend that implements the op (schemas/contract/ops.def) may be
    // given it (an XNNPACK op is prepared by its REFERENCE row).
    const unsigned backend = static_cast<unsigned>(op->backend());
    if (backend >= 8 || ((row->backends >> backend) & 1u) == 0) {
      return fail(Status::kInvalidModel, FLOE_MSG("operator's backend does not implement its op"), index);
    }
    if (op->options_type() != row->options) {
      return fail(Status::kInvalidModel, FLOE_MSG("operator options do not match its opcode"), index);
    }
    // A union type with no table behind it: prepare/eval would read null options.
    if (row->options != schema::OpOptions::NONE && op->options() == nullptr) {
      return fail(Status::kInvalidModel, FLOE_MSG("operator options are missing"), index);
    }
    const bool control_flow = op->opcode() == schema::OpCode::WHILE || op->opcode() == schema::OpCode::IF;
    if (control_flow && kKernelRegistry.control_flow == nullptr) {
      return fail(Status::kUnsupportedOp, FLOE_MSG("no kernel for this op, dtype and backend (none exists, or not selected)"),
                  index);
    }
    if (uint64_t{op->inputs()->size()} + op->outputs()->size() > kMaxOperands) {
      return fail(Status::kInvalidModel, FLOE_MSG("operator has too many operands"), index);
    }
    // XNNPACK and the Cortex-M kernels load whole words (LDRD, VLDRW, packed
    // int8 pairs) from their operands, whatever the element size.
    if (op->backend() != schema::Backend::REFERENCE || op->cortexm_kernel() != schema::CortexMKernel::NONE) {
      for (const auto* list : {op->inputs(), op->outputs()}) {
        for (const int32_t t : *list) {
          if (t >= 0 && !is_constant(static_cast<size_t>(t)) &&
              tensor_offset(static_cast<size_t>(t)) % kActivationOffsetAlignment != 0) {
            return fail(Status::kInvalidModel,
                        FLOE_MSG("an XNNPACK or Cortex-M operand's offset is not 4-byte aligned"), index, t);
          }
        }
      }
    }
  }
  return Status::kOk;
}

Status Model::validate_io() {
  const char* out_of_range = FLOE_MSG("model input/output index out of range");
  FLOE_RETURN_IF_ERROR(check_indices(model_->inputs(), 0, true, -1, out_of_range,
                                     FLOE_MSG("model input is a constant tensor")));
  return check_indices(model_->outputs(), 0, false, -1, out_of_range, nullptr);
}

bool Model::is_constant(size_t index) const {
  return model_->tensors()->Get(static_cast<uint32_t>(index))->is_constant();
}

uint32_t Model::tensor_region(size_t index) const {
  return model_->tensors()->Get(static_cast<uint32_t>(index))->region();
}

uint64_t Model::tensor_offset(size_t index) const {
  return model_->tensors()->Get(static_cast<uint32_t>(index))->offset();
}

// Checked here, where it is read, rather than in Load: models without int8
// tensors (and firmware that never asks) carry no code for it. A record that
// breaks the rules (scale count, quantized_dimension, finite positive scales,
// zero points that fit the dtype) reads as "not quantized", which the int8
// edges (QUANTIZE / DEQUANTIZE prepare) refuse by op index.
Quantization Model::quantization(size_t index) const {
  if (model_ == nullptr || index >= tensor_count_) return Quantization();
  return read_quantization(*model_->tensors()->Get(static_cast<uint32_t>(index)));
}

TensorView bind_tensor(const Model& model, uint8_t* const* arenas, int32_t index) {
  if (index < 0) return TensorView();
  TensorView view = model.tensor(static_cast<size_t>(index));
  if (!model.is_constant(static_cast<size_t>(index))) {
    const size_t i = static_cast<size_t>(index);
    view.data = arenas[model.tensor_region(i)] + model.tensor_offset(i);
  }
  return view;
}

DType Model::kernel_dtype(size_t op) const {
  const schema::Operator* o = model_->operators()->Get(static_cast<uint32_t>(op));
  const auto* tensors = model_->tensors();
  for (const int32_t t : *o->inputs()) {
    if (t >= 0) return static_cast<DType>(tensors->Get(static_cast<uint32_t>(t))->dtype());
  }
  return o->outputs()->size() > 0 ? static_cast<DType>(tensors->Get(static_cast<uint32_t>(o->outputs()->Get(0)))->dtype())
                                  : DType::kInvalid;
}

const KernelRow* Model::kernel(size_t op) const {
  const schema::Operator* o = model_->operators()->Get(static_cast<uint32_t>(op));
  return find_kernel(o->opcode(), o->backend(), kernel_dtype(op));
}

TensorView Model::tensor(size_t index) const {
  const schema::Tensor* t = model_->tensors()->Get(static_cast<uint32_t>(index));
  TensorView view;
  view.name = t->name() ? t->name()->c_str() : "";
  view.dtype = static_cast<DType>(t->dtype());
  view.complex = t->complex();
  if (const auto* shape = t->shape()) {
    view.shape.dims = shape->data();
    view.shape.rank = static_cast<int32_t>(shape->size());
  }
  view.bytes = static_cast<size_t>(t->size());
  view.data = t->is_constant() ? const_cast<uint8_t*>(constants_ + t->offset()) : nullptr;
  return view;
}

}  // namespace floe
