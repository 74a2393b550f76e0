// SPDX-License-Identifier: Apache-2.0
// floe._floe: the converter and the host runtime for Python (pybind11).
//   convert(...) -> bytes          the floe-convert options as keyword arguments
//   Interpreter(model_bytes, ...)  numpy in, numpy out, per-op timing
// floe/__init__.py is the public face (defaults, calibration from arrays).
// Host code: exceptions and the heap are fine here; the runtime underneath
// still runs inside the one arena this object owns.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "converter/ir/error.h"
#include "converter/pipeline/convert.h"
#include "runtime/core/backend.h"
#include "runtime/core/interpreter.h"
#include "runtime/core/model.h"
#include "runtime/core/selftest.h"
#include "runtime/tools/error_text.h"
#include "runtime/tools/model_file.h"
#include "schemas/floe_generated.h"

#if defined(FLOE_PYTHON_WITH_PTHREADPOOL)
#include <pthreadpool.h>
#endif

namespace py = pybind11;

namespace {

// The checks floe-convert's command line makes, with the keyword names.
floe::conv::ConvertOptions convert_options(
    const std::string& graph, const std::string& checkpoint, const std::vector<std::string>& outputs,
    const std::vector<std::string>& inputs, const std::map<std::string, std::vector<int64_t>>& input_shapes,
    const std::string& target, const std::vector<std::string>& tags, const std::string& signature,
    const std::map<std::string, std::string>& freeze_inputs, bool optimize,
    const std::vector<std::string>& disable_passes, const std::string& quantize, const std::string& calibration,
    const std::string& io, bool strict_int8, const std::string& calibration_method,
    const std::map<std::string, std::string>& selftest_inputs, const std::string& memory_regions,
    uint32_t max_loop_iterations, const std::string& int8_rounding) {
  using floe::conv::ConvertError;
  floe::conv::ConvertOptions options;
  if (graph.empty()) throw ConvertError("convert(): graph is required");
  options.graph_path = graph;
  options.checkpoint_path = checkpoint;
  options.outputs = outputs;
  options.inputs = inputs;
  options.input_shapes = input_shapes;
  options.target = target;
  options.tags = tags;
  options.signature = signature;
  options.frozen_inputs = freeze_inputs;
  options.optimize.enabled = optimize;
  for (const std::string& pass : disable_passes) options.optimize.disabled.insert(pass);
  if (!quantize.empty() && quantize != "int8") {
    throw ConvertError("convert(): quantize='" + quantize + "': only 'int8' is supported");
  }
  options.quantize_int8 = quantize == "int8";
  if (options.quantize_int8 && calibration.empty()) {
    throw ConvertError("convert(): quantize='int8' needs calibration (an .npz, a directory of .npy files, or "
                       "a dict of arrays)");
  }
  if (!options.quantize_int8 && !calibration.empty()) throw ConvertError("convert(): calibration needs quantize='int8'");
  if (io != "float" && io != "int8") throw ConvertError("convert(): io='" + io + "': expected 'float' or 'int8'");
  if (calibration_method != "minmax" && calibration_method != "percentile") {
    throw ConvertError("convert(): calibration_method='" + calibration_method + "': expected 'minmax' or 'percentile'");
  }
  if (int8_rounding != "exact" && int8_rounding != "fast") {
    throw ConvertError("convert(): int8_rounding='" + int8_rounding + "': expected 'exact' or 'fast'");
  }
  options.int8_fast_rounding = int8_rounding == "fast";
  options.calibration_path = calibration;
  options.selftest_inputs = selftest_inputs;
  if (!memory_regions.empty()) options.memory_regions = floe::conv::parse_memory_regions(memory_regions);
  options.max_loop_iterations = max_loop_iterations;
  options.post_training.int8_io = io == "int8";
  options.post_training.strict = strict_int8;
  options.post_training.method = calibration_method == "percentile" ? floe::conv::CalibrationMethod::kPercentile
                                                                     : floe::conv::CalibrationMethod::kMinMax;
  return options;
}

py::tuple run_conversion(const floe::conv::ConvertOptions& options) {
  floe::conv::ConvertResult result;
  {
    py::gil_scoped_release unlocked;
    result = floe::conv::convert(options);
  }
  return py::make_tuple(py::bytes(reinterpret_cast<const char*>(result.model.data()), result.model.size()),
                        result.summary);
}

py::dtype numpy_dtype(floe::DType dtype) {
  switch (dtype) {
    case floe::DType::kFloat32: return py::dtype("float32");
    case floe::DType::kFloat16: return py::dtype("float16");
    case floe::DType::kFloat64: return py::dtype("float64");
    case floe::DType::kInt8: return py::dtype("int8");
    case floe::DType::kInt16: return py::dtype("int16");
    case floe::DType::kInt32: return py::dtype("int32");
    case floe::DType::kInt64: return py::dtype("int64");
    case floe::DType::kUInt8: return py::dtype("uint8");
    case floe::DType::kUInt16: return py::dtype("uint16");
    case floe::DType::kUInt32: return py::dtype("uint32");
    case floe::DType::kUInt64: return py::dtype("uint64");
    case floe::DType::kBool: return py::dtype("bool");
    case floe::DType::kBFloat16:  // numpy has no bfloat16: its raw 16-bit patterns
      return py::dtype("uint16");
    case floe::DType::kInvalid: break;
  }
  throw std::runtime_error("tensor has no numpy dtype");
}

std::string text_of(py::handle object) { return py::str(object).cast<std::string>(); }

std::vector<py::ssize_t> dims(const floe::Shape& shape) {
  return std::vector<py::ssize_t>(shape.dims, shape.dims + shape.rank);
}

// A complex input or output (TensorView::complex) is numpy's complex64: the
// same bytes as its float32 pairs, without the pair dim.
py::dtype numpy_dtype(const floe::TensorView& view) {
  return view.complex ? py::dtype("complex64") : numpy_dtype(view.dtype);
}
std::vector<py::ssize_t> dims(const floe::TensorView& view) {
  std::vector<py::ssize_t> d = dims(view.shape);
  if (view.complex) d.pop_back();
  return d;
}

std::string error_text(const char* what, const floe::Error& error, const floe::Model* model = nullptr,
                       const floe::IndexFault& index = floe::IndexFault()) {
  return std::string(what) + ": " + floe::tools::error_text(error, model, index);
}

// One model, one arena, one floe::Interpreter, as a device holds them.
class PyInterpreter {
 public:
  PyInterpreter(const py::bytes& model, py::object arena_size, py::object num_threads) {
    const std::string_view bytes = model;
    model_size_ = bytes.size();
    model_bytes_ = floe::tools::aligned_bytes(model_size_);  // Load needs 16-byte alignment
    std::memcpy(model_bytes_.get(), bytes.data(), model_size_);
    if (model_.Load(model_bytes_.get(), model_size_) != floe::Status::kOk) {
      throw py::value_error(error_text("Model::Load", model_.error()));
    }
    arena_size_ = arena_size.is_none() ? static_cast<size_t>(model_.arena_size()) : arena_size.cast<size_t>();
    arena_ = floe::tools::aligned_bytes(arena_size_ == 0 ? 1 : arena_size_);
    interpreter_ = std::make_unique<floe::Interpreter>(model_, arena_.get(), arena_size_);
    set_threads(num_threads);
    if (interpreter_->Init() != floe::Status::kOk) {
      throw py::value_error(error_text("Interpreter::Init", interpreter_->error()) + " (arena " +
                            std::to_string(arena_size_) + " B; the model needs " +
                            std::to_string(model_.arena_size()) + " B)");
    }
  }

  py::list details(bool inputs) const {
    py::list list;
    const size_t count = inputs ? interpreter_->input_count() : interpreter_->output_count();
    for (size_t i = 0; i < count; ++i) {
      const floe::TensorView view = inputs ? interpreter_->input(i) : interpreter_->output(i);
      const floe::Quantization q = inputs ? interpreter_->input_quantization(i) : interpreter_->output_quantization(i);
      py::dict d;
      d["name"] = view.name;
      d["index"] = tensor_index(inputs, i);
      d["shape"] = py::array_t<int32_t>(view.shape.rank - (view.complex ? 1 : 0), view.shape.dims);
      d["dtype"] = numpy_dtype(view);
      d["quantization"] = py::make_tuple(q.quantized() ? q.scale : 0.0f, q.quantized() ? q.zero_point : 0);
      list.append(d);
    }
    return list;
  }

  void set_tensor(uint32_t index, const py::array& value) {
    const int position = io_position(true, index);
    if (position < 0) throw py::value_error("set_tensor: tensor " + std::to_string(index) + " is not a model input");
    const floe::TensorView view = interpreter_->input(static_cast<size_t>(position));
    const py::dtype want = numpy_dtype(view);
    if (!value.dtype().is(want)) {
      throw py::value_error(std::string("set_tensor: input '") + view.name + "' is " + text_of(want) + ", got " +
                            text_of(value.dtype()));
    }
    const std::vector<py::ssize_t> shape = dims(view);
    const std::vector<py::ssize_t> given(value.shape(), value.shape() + value.ndim());
    if (given != shape) {
      throw py::value_error(std::string("set_tensor: input '") + view.name + "' has shape " +
                            text_of(py::cast(shape)) + ", got " + text_of(py::cast(given)));
    }
    const py::array contiguous = py::array::ensure(value, py::array::c_style);
    std::memcpy(view.data, contiguous.data(), view.bytes);
  }

  // tflite_runtime's tensor(i)(): a numpy view of the tensor's bytes in the
  // arena (no copy), kept valid by holding the interpreter alive.
  py::array tensor_view(py::object self, uint32_t index) {
    if (index >= model_.tensor_count()) throw py::value_error("tensor: no tensor " + std::to_string(index));
    const floe::TensorView view = interpreter_->tensor(index);
    if (view.data == nullptr) throw py::value_error("tensor: tensor " + std::to_string(index) + " has no data");
    return py::array(numpy_dtype(view), dims(view), view.data, self);
  }

  // A copy, like tflite_runtime's get_tensor: valid after the next invoke().
  py::array get_tensor(uint32_t index) const {
    if (index >= model_.tensor_count()) throw py::index_error("get_tensor: no tensor " + std::to_string(index));
    const floe::TensorView view = interpreter_->tensor(index);
    if (view.data == nullptr) throw py::value_error("get_tensor: tensor " + std::to_string(index) + " has no data");
    py::array out(numpy_dtype(view), dims(view));
    std::memcpy(out.mutable_data(), view.data, view.bytes);
    return out;
  }

  void invoke(bool profile) {
    floe::Status status;
    if (profile) {
      op_ms_.assign(model_.operator_count(), 0.0);
      last_ = Clock::now();
      interpreter_->set_observer(&PyInterpreter::on_op, this);
    }
    {
      py::gil_scoped_release unlocked;
      status = interpreter_->Invoke();
    }
    interpreter_->set_observer(nullptr, nullptr);
    profiled_ = profile;
    if (status != floe::Status::kOk) throw std::runtime_error(error_text("Interpreter::Invoke", interpreter_->error(), &model_, interpreter_->index_fault()));
  }

  // tflite_runtime's reset_all_variables(): variable tensors (SVDF's state)
  // back to their value after Init().
  void reset_all_variables() {
    if (interpreter_->ResetVariableTensors() != floe::Status::kOk) {
      throw std::runtime_error(error_text("Interpreter::ResetVariableTensors", interpreter_->error()));
    }
  }

  // The last invoke(profile=True): one entry per op, in execution order.
  py::list profile() const {
    py::list list;
    if (!profiled_) return list;
    const auto* ops = model_.schema()->operators();
    for (size_t i = 0; i < op_ms_.size(); ++i) {
      const floe::schema::Operator* op = ops->Get(static_cast<uint32_t>(i));
      py::dict d;
      d["index"] = i;
      d["op"] = floe::schema::EnumNameOpCode(op->opcode());
      d["node"] = op->name() != nullptr ? op->name()->str() : std::string();
      d["backend"] = interpreter_->runs_on_backend(i) ? "xnnpack" : "kernels";
      d["ms"] = op_ms_[i];
      list.append(d);
    }
    return list;
  }

  // The model's embedded self-test (convert(selftest_inputs=...)) in an arena
  // of its own, so this interpreter's prepared state is left alone.
  py::dict self_test() const {
    const size_t size = static_cast<size_t>(model_.arena_size());
    floe::tools::AlignedBytes arena = floe::tools::aligned_bytes(size == 0 ? 1 : size);
    floe::SelfTestResult r;
    {
      py::gil_scoped_release unlocked;
      r = floe::SelfTest(model_, arena.get(), size);
    }
    if (r.status != floe::Status::kOk && r.status != floe::Status::kKernelError) {
      throw std::runtime_error(std::string("self_test: ") + floe::status_name(r.status) + ": " + r.message);
    }
    py::dict d;
    d["passed"] = r.status == floe::Status::kOk;
    d["op"] = r.op;
    d["node"] = r.op_name;
    d["output"] = r.output;
    d["message"] = r.message;
    d["ops_checked"] = r.ops_checked;
    d["tolerance"] = r.tolerance;
    return d;
  }

  size_t arena_size() const { return arena_size_; }
  size_t threads() const { return threads_; }
  size_t arena_used() const { return interpreter_->arena_used(); }
  size_t model_arena_size() const { return static_cast<size_t>(model_.arena_size()); }
  size_t operator_count() const { return model_.operator_count(); }

 private:
  using Clock = std::chrono::steady_clock;

  static void on_op(void* user, size_t op, const char*) {
    auto* self = static_cast<PyInterpreter*>(user);
    const Clock::time_point now = Clock::now();
    self->op_ms_[op] = std::chrono::duration<double, std::milli>(now - self->last_).count();
    self->last_ = now;
  }

  // num_threads > 1: a pthreadpool of that many threads for the XNNPACK ops
  // (a build without XNNPACK runs on the caller's thread and says so).
  void set_threads(py::object num_threads) {
    if (num_threads.is_none()) return;
    const long requested = num_threads.cast<long>();
    if (requested < 1 && requested != -1) {
      throw py::value_error("Interpreter: num_threads must be >= 1 (or -1 for the default), got " +
                            std::to_string(requested));
    }
    if (requested <= 1) return;
#if defined(FLOE_PYTHON_WITH_PTHREADPOOL)
    pool_.reset(pthreadpool_create(static_cast<size_t>(requested)));
    if (pool_ == nullptr) throw std::runtime_error("Interpreter: pthreadpool_create failed");
    interpreter_->set_thread_pool(pool_.get());
    threads_ = static_cast<size_t>(requested);
#endif
  }

  uint32_t tensor_index(bool inputs, size_t position) const {
    const auto* list = inputs ? model_.schema()->inputs() : model_.schema()->outputs();
    return static_cast<uint32_t>(list->Get(static_cast<uint32_t>(position)));
  }

  int io_position(bool inputs, uint32_t index) const {
    const size_t count = inputs ? interpreter_->input_count() : interpreter_->output_count();
    for (size_t i = 0; i < count; ++i) {
      if (tensor_index(inputs, i) == index) return static_cast<int>(i);
    }
    return -1;
  }

  floe::tools::AlignedBytes model_bytes_;
  size_t model_size_ = 0;
  floe::Model model_;
  floe::tools::AlignedBytes arena_;
  size_t arena_size_ = 0;
  // Before interpreter_: destroyed after it.
#if defined(FLOE_PYTHON_WITH_PTHREADPOOL)
  struct PoolDeleter {
    void operator()(pthreadpool_t pool) const { pthreadpool_destroy(pool); }
  };
  std::unique_ptr<std::remove_pointer_t<pthreadpool_t>, PoolDeleter> pool_;
#endif
  std::unique_ptr<floe::Interpreter> interpreter_;
  size_t threads_ = 1;
  std::vector<double> op_ms_;
  Clock::time_point last_;
  bool profiled_ = false;
};

}  // namespace

PYBIND11_MODULE(_floe, m) {
  m.doc() = "floe's converter and host runtime (use the floe package, floe/__init__.py)";
  py::register_exception<floe::conv::ConvertError>(m, "ConvertError", PyExc_ValueError);
  // Installs floe's arena allocator into XNNPACK (a no-op without it): once per process.
  if (floe::backend_initialize() != floe::Status::kOk) throw std::runtime_error("floe::backend_initialize failed");

  m.def(
      "convert",
      [](const std::string& graph, const std::string& checkpoint, const std::vector<std::string>& outputs,
         const std::vector<std::string>& inputs, const std::map<std::string, std::vector<int64_t>>& input_shapes,
         const std::string& target, const std::vector<std::string>& tags, const std::string& signature,
         const std::map<std::string, std::string>& freeze_inputs, bool optimize,
         const std::vector<std::string>& disable_passes, const std::string& quantize,
         const std::string& calibration, const std::string& io, bool strict_int8,
         const std::string& calibration_method, const std::map<std::string, std::string>& selftest_inputs,
         const std::string& memory_regions, uint32_t max_loop_iterations, const std::string& int8_rounding) {
        return run_conversion(convert_options(graph, checkpoint, outputs, inputs, input_shapes, target, tags, signature,
                                       freeze_inputs, optimize, disable_passes, quantize, calibration, io,
                                       strict_int8, calibration_method, selftest_inputs, memory_regions,
                                       max_loop_iterations, int8_rounding));
      },
      py::arg("graph"), py::arg("checkpoint"), py::arg("outputs"), py::arg("inputs"), py::arg("input_shapes"),
      py::arg("target"), py::arg("tags"), py::arg("signature"), py::arg("freeze_inputs"), py::arg("optimize"),
      py::arg("disable_passes"), py::arg("quantize"), py::arg("calibration"), py::arg("io"),
      py::arg("strict_int8"), py::arg("calibration_method"), py::arg("selftest_inputs"),
      py::arg("memory_regions"), py::arg("max_loop_iterations"), py::arg("int8_rounding"), "Converts a model; returns (model bytes, summary). Raises ConvertError.");

  py::class_<PyInterpreter>(m, "Interpreter")
      .def(py::init<const py::bytes&, py::object, py::object>(), py::arg("model"),
           py::arg("arena_size") = py::none(), py::arg("num_threads") = py::none())
      .def("get_input_details", [](const PyInterpreter& self) { return self.details(true); })
      .def("get_output_details", [](const PyInterpreter& self) { return self.details(false); })
      .def("set_tensor", &PyInterpreter::set_tensor, py::arg("index"), py::arg("value"))
      .def("get_tensor", &PyInterpreter::get_tensor, py::arg("index"))
      .def("_tensor_view",
           [](py::object self, uint32_t index) { return self.cast<PyInterpreter&>().tensor_view(self, index); },
           py::arg("index"))
      .def("invoke", &PyInterpreter::invoke, py::arg("profile") = false)
      .def("reset_all_variables", &PyInterpreter::reset_all_variables)
      .def("profile", &PyInterpreter::profile)
      .def("self_test", &PyInterpreter::self_test)
      .def_property_readonly("arena_size", &PyInterpreter::arena_size)
      .def_property_readonly("num_threads", &PyInterpreter::threads)
      .def_property_readonly("arena_used", &PyInterpreter::arena_used)
      .def_property_readonly("model_arena_size", &PyInterpreter::model_arena_size)
      .def_property_readonly("operator_count", &PyInterpreter::operator_count);
}
