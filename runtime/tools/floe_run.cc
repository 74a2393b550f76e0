// SPDX-License-Identifier: Apache-2.0
// Host-only tool code (never built for a device): it may use the heap, the
// standard library and exceptions; the arena-only rule binds runtime/core and kernels.
// floe-run: runs a .floe model on the host with inputs from .npy or .wav files.
//   floe-run model.floe --input NAME=file.npy|file.wav ... [--output-dir DIR] [--print]
//            [--dump-intermediates DIR] [--quantize] [--dequantize] [--labels FILE]
//   floe-run model.floe --selftest   (the self-test floe-convert --selftest-input embedded)
//   floe-run model.floe --front-end frontend.floe --stride N --input NAME=file.wav ...
//            (the WAV through an audio front end window by window, its frames stacked into NAME)
// A 16-bit PCM WAV file (recognised by its RIFF/WAVE header) is decoded as
// DecodeWav does, into float samples in [-1, 1) shaped [samples, channels],
// zero-padded or truncated to the input's length with a note; its channel count
// must match the input's and its sample rate the one the model's MFCC front end
// was built for; for an int16 input (an integer front end) the file's own
// 16-bit samples are fed. --labels FILE (one label a line) prints the top label and its
// score for each float output of that many classes.
// Each output is written to DIR/<name>.npy ('/' and ':' replaced by '_', a
// trailing ":0" dropped). --dump-intermediates writes every op's outputs, as
// the op finishes (before the arena slot is reused), to
// DIR/<op index>_<tensor name>.npy plus DIR/index.tsv (op, opcode, tensor, file),
// to find the first op that diverges from a reference. Exit 0 on success, 2 on
// any error. With --quantize an int8 input may be given as a float32 .npy: it is
// quantized with the input's scale and zero point (without it such a file is
// refused, as the Python Interpreter refuses it); --dequantize turns int8
// outputs into reals.
// A .npy of another dtype (numpy's default float64 / int64, a float64 input
// floe computes in float32, ...) is converted as Session.run converts a fed
// value, with a note on stderr, when no value changes (float to float rounds);
// otherwise, and for an element count other than the input's, it exits 2
// naming the value or the --input-shape floe-convert needs for that shape.
// A complex input (Tensor.complex) takes a complex64 .npy as its bytes, or a
// complex128 one converted with a note; a complex output is written as
// complex64 and printed as numpy prints it.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>

#include "runtime/core/interpreter.h"
#include "runtime/core/selftest.h"
#include "runtime/kernels/reference/quantize.h"
#include "runtime/tools/error_text.h"
#include "runtime/tools/model_file.h"
#include "runtime/tools/input_conversion.h"
#include "runtime/tools/npy.h"
#include "runtime/tools/wav.h"
#include "schemas/floe_generated.h"

namespace {

std::string file_stem(std::string name) {
  if (name.size() > 2 && name.compare(name.size() - 2, 2, ":0") == 0) name.resize(name.size() - 2);
  for (char& c : name) {
    if (c == '/' || c == ':') c = '_';
  }
  return name;
}

std::string shape_string(const floe::Shape& shape) {
  std::string s = "[";
  for (int i = 0; i < shape.rank; ++i) s += (i ? "," : "") + std::to_string(shape.dims[i]);
  return s + "]";
}

std::string describe(const floe::Error& e) { return floe::tools::error_text(e); }

template <typename T>
void print_values(const T* data, int64_t count) {
  constexpr int64_t kMaxPrinted = 1000;
  for (int64_t i = 0; i < count && i < kMaxPrinted; ++i) {
    std::cout << (i ? " " : "") << +data[i];
  }
  if (count > kMaxPrinted) std::cout << " ... (" << count << " values)";
  std::cout << "\n";
}

void print_tensor(const floe::TensorView& t) {
  const int64_t n = t.shape.num_elements();
  if (t.complex) {  // numpy's spelling: (re+imj)
    const floe::Shape shape{t.shape.dims, t.shape.rank - 1};
    std::cout << t.name << " complex64 " << shape_string(shape) << "\n  ";
    constexpr int64_t kMaxPrinted = 500;
    for (int64_t i = 0; i < n / 2 && i < kMaxPrinted; ++i) {
      const float im = t.as<float>()[2 * i + 1];
      std::cout << (i ? " " : "") << "(" << t.as<float>()[2 * i] << (std::signbit(im) ? "-" : "+") << std::fabs(im)
                << "j)";
    }
    if (n / 2 > kMaxPrinted) std::cout << " ... (" << n / 2 << " values)";
    std::cout << "\n";
    return;
  }
  std::cout << t.name << " " << floe::dtype_name(t.dtype) << " " << shape_string(t.shape) << "\n  ";
  switch (t.dtype) {
    case floe::DType::kFloat32: {
      print_values(t.as<float>(), n);
      if (t.shape.rank == 2 && t.shape.dims[0] == 1 && n > 1) {
        int64_t best = 0;
        for (int64_t i = 1; i < n; ++i) best = t.as<float>()[i] > t.as<float>()[best] ? i : best;
        std::cout << "  argmax: " << best << "\n";
      }
      break;
    }
    case floe::DType::kInt32: print_values(t.as<int32_t>(), n); break;
    case floe::DType::kInt64: print_values(t.as<int64_t>(), n); break;
    case floe::DType::kInt8: print_values(t.as<int8_t>(), n); break;
    case floe::DType::kUInt8: print_values(t.as<uint8_t>(), n); break;
    case floe::DType::kInt16: print_values(t.as<int16_t>(), n); break;
    case floe::DType::kUInt16: print_values(t.as<uint16_t>(), n); break;
    case floe::DType::kUInt32: print_values(t.as<uint32_t>(), n); break;
    case floe::DType::kUInt64: print_values(t.as<uint64_t>(), n); break;
    case floe::DType::kBool: print_values(static_cast<const uint8_t*>(t.data), n); break;
    default: std::cout << "(" << t.bytes << " bytes)\n"; break;
  }
}

// Observer state for --dump-intermediates.
struct Dumper {
  const floe::Model* model = nullptr;
  const floe::Interpreter* interpreter = nullptr;
  std::string dir;
  std::ofstream index;
  std::string error;
};

void dump_op_outputs(void* user, size_t op_index, const char* op_name) {
  auto* d = static_cast<Dumper*>(user);
  if (!d->error.empty()) return;
  const auto* op = d->model->schema()->operators()->Get(static_cast<uint32_t>(op_index));
  for (int32_t t : *op->outputs()) {
    const floe::TensorView v = d->interpreter->tensor(static_cast<size_t>(t));
    char prefix[24];
    std::snprintf(prefix, sizeof prefix, "%04zu_", op_index);
    const std::string file = prefix + file_stem(v.name) + ".npy";
    try {
      if (v.dtype == floe::DType::kBFloat16) {
        d->index << op_index << "\t" << op_name << "\t" << v.name << "\t(bfloat16: no .npy type)\n";
        continue;
      }
      std::vector<int64_t> shape(v.shape.dims, v.shape.dims + v.shape.rank);
      floe::tools::write_npy(d->dir + "/" + file, v.dtype, shape, v.data);
      d->index << op_index << "\t" << op_name << "\t" << v.name << "\t" << file << "\n";
    } catch (const std::exception& e) {
      d->error = e.what();
    }
  }
}

// With --quantize, a float .npy for an int8 input is quantized with the input's scale and zero
// point, exactly as the model's own QUANTIZE would (ref::quantize_s8).
bool quantize_float_input(const floe::Interpreter& interpreter, size_t index,
                          const floe::tools::NpyArray& array, const floe::TensorView& input) {
  const floe::Quantization q = interpreter.input_quantization(index);
  if (input.dtype != floe::DType::kInt8 || array.dtype != floe::DType::kFloat32 || q.channels != 1 ||
      array.data.size() != input.bytes * sizeof(float)) {
    return false;
  }
  floe::ref::quantize_s8({q.scale, q.zero_point},
                         floe::In<float>{reinterpret_cast<const float*>(array.data.data()), input.shape},
                         floe::Out<int8_t>{static_cast<int8_t*>(input.data), input.shape});
  return true;
}

// What convert_input needs to know about input `index`.
floe::tools::InputTarget input_target(const floe::Model& model, const floe::Interpreter& interpreter, size_t index) {
  const floe::TensorView input = interpreter.input(index);
  floe::tools::InputTarget target;
  target.name = input.name;
  target.dtype = input.dtype;
  const auto* tensor = model.schema()->tensors()->Get(
      static_cast<uint32_t>(model.schema()->inputs()->Get(static_cast<uint32_t>(index))));
  target.source_dtype = static_cast<floe::DType>(tensor->source_dtype());
  target.shape.assign(input.shape.dims, input.shape.dims + input.shape.rank);
  target.quantized = input.dtype == floe::DType::kInt8 && interpreter.input_quantization(index).quantized();
  target.complex = input.complex;
  target.data = input.data;
  return target;
}

// --dequantize: an int8 output with a scale becomes float32 real values.
floe::TensorView dequantized(const floe::Interpreter& interpreter, size_t index, std::vector<float>* storage) {
  const floe::TensorView out = interpreter.output(index);
  const floe::Quantization q = interpreter.output_quantization(index);
  if (out.dtype != floe::DType::kInt8 || q.channels != 1) return out;
  storage->resize(static_cast<size_t>(out.shape.num_elements()));
  floe::ref::dequantize_s8({q.scale, q.zero_point}, floe::In<int8_t>{out.as<int8_t>(), out.shape},
                           floe::Out<float>{storage->data(), out.shape});
  floe::TensorView view = out;
  view.dtype = floe::DType::kFloat32;
  view.data = storage->data();
  view.bytes = storage->size() * sizeof(float);
  return view;
}

// --selftest: the model's embedded self-test (floe-convert --selftest-input).
// Exit 0 when it passes, 1 when an op or output is off, 2 when it cannot run.
int run_selftest(const std::string& model_path, bool skip_checksum) {
  const floe::tools::ModelFile file = floe::tools::read_model_file(model_path);
  floe::Model model;
  floe::LoadOptions load_options;
  load_options.verify_checksum = !skip_checksum;
  if (model.Load(file.data.get(), file.size, load_options) != floe::Status::kOk) {
    std::cerr << "floe-run: " << model_path << ": " << describe(model.error()) << "\n";
    return 2;
  }
  const size_t arena_size = static_cast<size_t>(model.arena_size());
  floe::tools::AlignedBytes arena = floe::tools::aligned_bytes(arena_size);
  const floe::SelfTestResult r = floe::SelfTest(model, arena.get(), arena_size);
  if (r.status == floe::Status::kOk) {
    std::cout << "self-test: PASS: " << r.ops_checked << " ops match the host's (integer outputs exact, float32 within "
              << r.tolerance << ")\n";
    return 0;
  }
  if (r.status == floe::Status::kKernelError && r.op >= 0) {
    std::cout << "self-test: FAIL at op " << r.op << " (" << r.op_name << "): " << r.message << "\n";
    return 1;
  }
  if (r.status == floe::Status::kKernelError && r.output >= 0) {
    std::cout << "self-test: FAIL at output " << r.output << ": " << r.message << "\n";
    return 1;
  }
  std::cerr << "floe-run: " << model_path << ": self-test: " << floe::status_name(r.status) << ": " << r.message
            << "\n";
  return 2;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open for reading");
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A WAV file into a [samples, channels] float32 input, as DecodeWav would give it.
void feed_wav(const floe::Model& model, const std::string& path, const std::vector<uint8_t>& bytes,
              const floe::TensorView& input) {
  floe::tools::WavAudio wav;
  try {
    wav = floe::tools::parse_wav(bytes.data(), bytes.size());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  std::string note;
  const std::vector<uint8_t> fed =
      floe::tools::wav_input_bytes(wav, path, input, floe::tools::model_sample_rate(model), &note);
  if (!note.empty()) std::cerr << "floe-run: note: " << note << "\n";
  std::memcpy(input.data, fed.data(), input.bytes);
}

// --front-end FILE --stride N: the input is a stack of feature frames the
// front-end model (one int16 input of a window of samples, one output of a
// frame's features) computes from the WAV, window after window `stride`
// samples apart, its state starting fresh, as TFLite Micro's micro_speech
// example feeds its preprocessor and keyword model.
struct FrontEnd {
  std::string path;
  int stride = 0;
};

void feed_front_end(const FrontEnd& front_end, bool skip_checksum, const std::string& wav_path,
                    const std::vector<uint8_t>& bytes, const floe::TensorView& input) {
  floe::tools::WavAudio wav;
  try {
    wav = floe::tools::parse_wav(bytes.data(), bytes.size());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(wav_path + ": " + e.what());
  }
  const floe::tools::ModelFile file = floe::tools::read_model_file(front_end.path);
  floe::Model model;
  floe::LoadOptions load_options;
  load_options.verify_checksum = !skip_checksum;
  if (model.Load(file.data.get(), file.size, load_options) != floe::Status::kOk) {
    throw std::runtime_error(front_end.path + ": " + describe(model.error()));
  }
  floe::tools::AlignedBytes arena = floe::tools::aligned_bytes(static_cast<size_t>(model.arena_size()));
  floe::Interpreter interpreter(model, arena.get(), static_cast<size_t>(model.arena_size()));
  if (interpreter.Init() != floe::Status::kOk) throw std::runtime_error(front_end.path + ": " + describe(interpreter.error()));
  if (interpreter.input_count() != 1 || interpreter.output_count() != 1 ||
      interpreter.input(0).dtype != floe::DType::kInt16) {
    throw std::runtime_error(front_end.path + ": a front end takes one int16 window of samples to one output");
  }
  const floe::TensorView window = interpreter.input(0), features = interpreter.output(0);
  if (features.dtype != input.dtype || features.bytes == 0 || input.bytes % features.bytes != 0) {
    throw std::runtime_error(front_end.path + ": its " + floe::dtype_name(features.dtype) + " output of " +
                             std::to_string(features.shape.num_elements()) + " values does not tile input '" +
                             input.name + "' (" + floe::dtype_name(input.dtype) + ", " +
                             std::to_string(input.shape.num_elements()) + " values)");
  }
  const size_t window_samples = static_cast<size_t>(window.shape.num_elements());
  const size_t frames = input.bytes / features.bytes;
  std::string note;
  const std::vector<int16_t> pcm = floe::tools::wav_as_pcm16(wav, wav_path, wav.frames, &note);
  std::memset(input.data, 0, input.bytes);
  size_t made = 0;
  for (size_t start = 0; made < frames && start + window_samples <= pcm.size();
       start += static_cast<size_t>(front_end.stride), ++made) {
    std::memcpy(window.data, pcm.data() + start, window.bytes);
    if (interpreter.Invoke() != floe::Status::kOk) {
      throw std::runtime_error(front_end.path + ": window " + std::to_string(made) + ": " +
                               describe(interpreter.error()));
    }
    std::memcpy(static_cast<uint8_t*>(input.data) + made * features.bytes, features.data, features.bytes);
  }
  if (made < frames) {
    std::cerr << "floe-run: note: " << wav_path << ": " << made << " windows of " << window_samples << " samples for "
              << frames << " frames; the rest are zero\n";
  }
}

std::vector<std::string> read_labels(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open for reading");
  std::vector<std::string> labels;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) labels.push_back(line);
  }
  if (labels.empty()) throw std::runtime_error(path + ": no labels");
  return labels;
}

// "label: yes 0.9998 (output labels_softmax:0)" for a float output of labels.size() classes.
// An int8 output: the top stored value, and its real value when quantized.
void print_top_label(const floe::TensorView& out, const floe::Quantization& q, const std::vector<std::string>& labels) {
  if (out.shape.num_elements() != static_cast<int64_t>(labels.size())) return;
  size_t best = 0;
  if (out.dtype == floe::DType::kFloat32) {
    const float* p = out.as<float>();
    for (size_t i = 1; i < labels.size(); ++i) best = p[i] > p[best] ? i : best;
    std::printf("label: %s %.4f (output %s)\n", labels[best].c_str(), static_cast<double>(p[best]), out.name);
  } else if (out.dtype == floe::DType::kInt8) {
    const int8_t* p = out.as<int8_t>();
    for (size_t i = 1; i < labels.size(); ++i) best = p[i] > p[best] ? i : best;
    const double real = q.quantized() ? static_cast<double>(q.scale) * (p[best] - q.zero_point) : p[best];
    std::printf("label: %s %.4f (output %s, int8 %d)\n", labels[best].c_str(), real, out.name, p[best]);
  }
}

int run(const std::string& model_path, const std::vector<std::string>& input_specs,
        const std::string& output_dir, bool print, bool skip_checksum, const std::string& dump_dir,
        bool quantize, bool dequantize, const std::string& labels_path, const FrontEnd& front_end) {
  const std::vector<std::string> labels = labels_path.empty() ? std::vector<std::string>{} : read_labels(labels_path);
  const floe::tools::ModelFile file = floe::tools::read_model_file(model_path);
  floe::Model model;
  floe::LoadOptions load_options;
  load_options.verify_checksum = !skip_checksum;  // a file from disk: check it
  if (model.Load(file.data.get(), file.size, load_options) != floe::Status::kOk) {
    std::cerr << "floe-run: " << model_path << ": " << describe(model.error()) << "\n";
    return 2;
  }
  const size_t arena_size = static_cast<size_t>(model.arena_size());
  floe::tools::AlignedBytes arena = floe::tools::aligned_bytes(arena_size);
  floe::Interpreter interpreter(model, arena.get(), arena_size);
  if (interpreter.Init() != floe::Status::kOk) {
    std::cerr << "floe-run: " << model_path << ": " << describe(interpreter.error()) << "\n";
    return 2;
  }

  std::vector<bool> fed(interpreter.input_count(), false);
  for (const std::string& spec : input_specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos) throw std::runtime_error("--input '" + spec + "': expected NAME=file.npy");
    const std::string name = spec.substr(0, eq), path = spec.substr(eq + 1);
    const int index = interpreter.input_index(name.c_str());
    if (index < 0) throw std::runtime_error("the model has no input named '" + name + "'");
    const floe::TensorView input = interpreter.input(static_cast<size_t>(index));
    {
      const std::vector<uint8_t> head = read_bytes(path);
      if (floe::tools::looks_like_wav(head.data(), head.size())) {
        if (!front_end.path.empty()) {
          feed_front_end(front_end, skip_checksum, path, head, input);
        } else {
          feed_wav(model, path, head, input);
        }
        fed[static_cast<size_t>(index)] = true;
        continue;
      }
    }
    const floe::tools::NpyArray array = floe::tools::read_npy(path);
    if (quantize && quantize_float_input(interpreter, static_cast<size_t>(index), array, input)) {
      fed[static_cast<size_t>(index)] = true;
      continue;
    }
    const std::string note =
        floe::tools::convert_input(array.data.data(), array.dtype, array.shape, path,
                                   input_target(model, interpreter, static_cast<size_t>(index)), array.complex);
    if (!note.empty()) std::cerr << "floe-run: note: " << note << "\n";
    fed[static_cast<size_t>(index)] = true;
  }
  for (size_t i = 0; i < fed.size(); ++i) {
    if (!fed[i]) {
      const floe::TensorView input = interpreter.input(i);
      const floe::Shape shape{input.shape.dims, input.shape.rank - (input.complex ? 1 : 0)};
      throw std::runtime_error("input '" + std::string(input.name) + "' (" +
                               (input.complex ? "complex64" : floe::dtype_name(input.dtype)) + " " + shape_string(shape) +
                               ") was not given: pass --input " + input.name + "=file.npy");
    }
  }

  Dumper dumper;
  if (!dump_dir.empty()) {
    std::filesystem::create_directories(dump_dir);
    dumper.model = &model;
    dumper.interpreter = &interpreter;
    dumper.dir = dump_dir;
    dumper.index.open(dump_dir + "/index.tsv");
    if (!dumper.index) throw std::runtime_error(dump_dir + "/index.tsv: cannot write");
    dumper.index << "op\topcode\ttensor\tfile\n";
    interpreter.set_observer(dump_op_outputs, &dumper);
  }
  if (interpreter.Invoke() != floe::Status::kOk) {
    std::cerr << "floe-run: " << floe::tools::error_text(interpreter.error(), &model, interpreter.index_fault()) << "\n";
    return 2;
  }
  if (!dumper.error.empty()) throw std::runtime_error("--dump-intermediates: " + dumper.error);
  for (size_t i = 0; i < interpreter.output_count(); ++i) {
    std::vector<float> real;
    const floe::TensorView out = dequantize ? dequantized(interpreter, i, &real) : interpreter.output(i);
    if (print) print_tensor(out);
    if (!labels.empty()) print_top_label(out, interpreter.output_quantization(i), labels);
    if (!output_dir.empty()) {
      std::vector<int64_t> shape(out.shape.dims, out.shape.dims + out.shape.rank);
      floe::tools::write_npy(output_dir + "/" + file_stem(out.name) + ".npy", out.dtype, shape, out.data,
                             out.complex);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"floe-run: run a floe model on the host"};
  std::string model_path, output_dir, dump_dir;
  std::vector<std::string> inputs;
  bool print = false;
  app.add_option("model", model_path, "the .floe model")->required();
  app.add_option("--input,-i", inputs,
                 "NAME=file.npy or NAME=file.wav (repeatable); a float32 file for an int8 input needs --quantize");
  bool quantize = false, dequantize = false;
  app.add_flag("--quantize", quantize,
               "quantize a float32 .npy given for an int8 input with the input's scale and zero point");
  app.add_flag("--dequantize", dequantize, "write and print int8 outputs as real (float32) values");
  app.add_option("--output-dir,-o", output_dir, "write each output to DIR/<name>.npy");
  app.add_flag("--print,-p", print, "print every output's name, shape and values");
  app.add_option("--dump-intermediates", dump_dir,
                 "write every op's outputs to DIR/<op>_<tensor>.npy (+ DIR/index.tsv) as the ops run");
  std::string labels_path;
  app.add_option("--labels", labels_path, "FILE with one label a line: print each classifier output's top label and score");
  bool skip_checksum = false;
  app.add_flag("--no-verify-checksum", skip_checksum,
               "load without checking the model's payload_crc32c (validation still runs)");
  FrontEnd front_end;
  auto* front_end_option = app.add_option(
      "--front-end", front_end.path,
      "a .floe audio front end (int16 window of samples -> one frame of features): a WAV given with --input "
      "is run through it window after window and the frames stacked into that input");
  app.add_option("--stride", front_end.stride, "samples between the front end's windows")
      ->check(CLI::Range(1, 1 << 30))
      ->needs(front_end_option);
  front_end_option->needs("--stride");
  bool selftest = false;
  app.add_flag("--selftest", selftest,
               "run the model's embedded self-test (floe-convert --selftest-input) and name the first op that "
               "differs from the host");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    if (selftest) return run_selftest(model_path, skip_checksum);
    return run(model_path, inputs, output_dir, print, skip_checksum, dump_dir, quantize, dequantize, labels_path,
               front_end);
  } catch (const std::exception& e) {
    std::cerr << "floe-run: error: " << e.what() << "\n";
    return 2;
  }
}
