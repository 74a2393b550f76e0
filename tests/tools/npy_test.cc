// SPDX-License-Identifier: Apache-2.0
// Tests for runtime/tools/npy: reading files written by real numpy, numpy
// reading what write_npy writes, and rejecting malformed files with a message.
// Fixtures are generated at test time by /usr/bin/python3 (the system python
// with numpy); those tests skip visibly when it is unavailable.
#include "runtime/tools/npy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace floe::tools {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPython = "/usr/bin/python3";

std::string read_file_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_file_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

template <typename T>
std::vector<uint8_t> as_bytes(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
std::vector<T> as_values(const NpyArray& array) {
  std::vector<T> values(array.data.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), array.data.data(), array.data.size());
  return values;
}

// True once we know /usr/bin/python3 can import numpy (checked once).
bool numpy_available() {
  static const bool available = [] {
    if (!fs::exists(kPython)) return false;
    const std::string command = std::string(kPython) + " -c 'import numpy' >/dev/null 2>&1";
    return std::system(command.c_str()) == 0;
  }();
  return available;
}

#define REQUIRE_NUMPY()                                                              \
  do {                                                                               \
    if (!numpy_available())                                                          \
      GTEST_SKIP() << "SKIPPED: " << kPython << " with numpy is not available";     \
  } while (0)

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::path(::testing::TempDir()) / "floe_npy_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << "mkdtemp " << pattern;
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Runs a python script with the temp dir as argv[1]; returns its exit status
  // and fills `output` with stdout+stderr.
  int run_python(const std::string& script, std::string* output) {
    const fs::path script_path = dir_ / "script.py";
    const fs::path log_path = dir_ / "python.log";
    write_file_bytes(script_path, script);
    const std::string command = std::string(kPython) + " " + script_path.string() + " " +
                                dir_.string() + " >" + log_path.string() + " 2>&1";
    const int status = std::system(command.c_str());
    *output = read_file_text(log_path);
    return status;
  }

  // The reason read_npy gives for `path`; fails the test if it does not throw
  // std::runtime_error or the message does not name the file.
  std::string read_error(const std::string& file) {
    try {
      read_npy(file);
    } catch (const std::runtime_error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(file), std::string::npos) << "message lacks the path: " << message;
      return message;
    } catch (...) {
      ADD_FAILURE() << file << ": threw something other than std::runtime_error";
      return "";
    }
    ADD_FAILURE() << file << ": read_npy accepted a malformed file";
    return "";
  }

  fs::path dir_;
};

// --- Files written by numpy -------------------------------------------------

// Each fixture also gets <name>.raw = arr.tobytes() (C order) as ground truth.
constexpr const char* kNumpyFixtureScript = R"PY(
import sys
import numpy as np
from numpy.lib import format as npy_format

out = sys.argv[1]

def save(name, arr, version=None):
    with open(f"{out}/{name}.npy", "wb") as f:
        if version is None:
            np.save(f, arr)
        else:
            npy_format.write_array(f, arr, version=version)
    with open(f"{out}/{name}.raw", "wb") as f:
        f.write(np.ascontiguousarray(arr).tobytes())

save("f4", np.array([0.0, 1.5, -2.25, 3.4028235e38, np.inf], dtype="<f4"))
save("f8", np.array([[1e-300, -0.0], [2.5, 1e300]], dtype="<f8"))
save("f2", np.array([1.0, -2.0, 0.5], dtype="<f2"))
save("i1", np.array([-128, 127, 0, -1], dtype="|i1"))
save("u1", np.array([0, 255, 7], dtype="|u1"))
save("i2", np.array([-32768, 32767, 12], dtype="<i2"))
save("u2", np.array([0, 65535, 1234], dtype="<u2"))
save("i4", np.array([-2147483648, 2147483647, 5], dtype="<i4"))
save("i8", np.array([-9223372036854775808, 9223372036854775807, 0, 42], dtype="<i8"))
save("b1", np.array([True, False, True], dtype="|b1"))
save("scalar", np.float64(2.5))                       # numpy scalar -> shape ()
save("zero_d", np.array(7, dtype="<i2"))               # 0-d array -> shape ()
save("empty", np.zeros((0,), dtype="<f4"))
save("empty_3d", np.zeros((2, 0, 3), dtype="<i4"))
save("cube", np.arange(24, dtype="<i4").reshape(2, 3, 4))
save("strided", np.arange(20, dtype="<f4").reshape(4, 5)[:, ::2])  # saved in C order
save("v2", np.arange(6, dtype="<f4").reshape(2, 3), version=(2, 0))
save("v3", np.arange(6, dtype="<f4").reshape(2, 3), version=(3, 0))
save("long_row", np.arange(10, dtype="<i8").reshape(1, 10))
save("u4", np.arange(3, dtype="<u4"))
save("u8", np.arange(2, dtype="<u8"))
save("c8", np.array([1 + 2j, -3.5 - 0.25j], dtype="<c8"))   # read as float32 [2, 2] pairs
save("c16", np.array([[0.5 - 1j], [2 + 0j]], dtype="<c16"))  # float64 [2, 1, 2]

# Files floe must reject.
np.save(f"{out}/fortran.npy", np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)))
np.save(f"{out}/big_endian.npy", np.arange(3, dtype=">f4"))
np.save(f"{out}/timedelta.npy", np.zeros(2, dtype="<m8[s]"))
np.save(f"{out}/complex_big_endian.npy", np.zeros(2, dtype=">c8"))
np.save(f"{out}/clongdouble.npy", np.zeros(2, dtype=np.clongdouble))
np.save(f"{out}/structured.npy", np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))
np.save(f"{out}/unicode.npy", np.array(["ab", "c"]))
print("ok")
)PY";

TEST_F(NpyTest, ReadsEveryDtypeAndShapeNumpyWrites) {
  REQUIRE_NUMPY();
  std::string log;
  ASSERT_EQ(run_python(kNumpyFixtureScript, &log), 0) << log;

  struct Expected {
    const char* name;
    floe::DType dtype;
    std::vector<int64_t> shape;
  };
  const std::vector<Expected> fixtures = {
      {"f4", floe::DType::kFloat32, {5}},       {"f8", floe::DType::kFloat64, {2, 2}},
      {"f2", floe::DType::kFloat16, {3}},       {"i1", floe::DType::kInt8, {4}},
      {"u1", floe::DType::kUInt8, {3}},         {"i2", floe::DType::kInt16, {3}},
      {"u2", floe::DType::kUInt16, {3}},        {"i4", floe::DType::kInt32, {3}},
      {"i8", floe::DType::kInt64, {4}},         {"b1", floe::DType::kBool, {3}},
      {"scalar", floe::DType::kFloat64, {}},    {"zero_d", floe::DType::kInt16, {}},
      {"empty", floe::DType::kFloat32, {0}},    {"empty_3d", floe::DType::kInt32, {2, 0, 3}},
      {"cube", floe::DType::kInt32, {2, 3, 4}}, {"strided", floe::DType::kFloat32, {4, 3}},
      {"v2", floe::DType::kFloat32, {2, 3}},    {"v3", floe::DType::kFloat32, {2, 3}},
      {"long_row", floe::DType::kInt64, {1, 10}},
      {"u4", floe::DType::kUInt32, {3}},        {"u8", floe::DType::kUInt64, {2}},
      {"c8", floe::DType::kFloat32, {2, 2}},    {"c16", floe::DType::kFloat64, {2, 1, 2}},
  };
  for (const Expected& fixture : fixtures) {
    SCOPED_TRACE(fixture.name);
    const NpyArray array = read_npy(path(std::string(fixture.name) + ".npy"));
    EXPECT_EQ(array.dtype, fixture.dtype);
    EXPECT_EQ(array.shape, fixture.shape);
    const std::string raw = read_file_text(path(std::string(fixture.name) + ".raw"));
    EXPECT_EQ(std::string(array.data.begin(), array.data.end()), raw);
  }

  // Spot-check decoded values, independent of the .raw ground truth.
  EXPECT_EQ(as_values<float>(read_npy(path("f4.npy")))[2], -2.25f);
  EXPECT_EQ(as_values<double>(read_npy(path("scalar.npy"))), std::vector<double>{2.5});
  EXPECT_EQ(as_values<int16_t>(read_npy(path("zero_d.npy"))), std::vector<int16_t>{7});
  EXPECT_EQ(as_values<uint16_t>(read_npy(path("f2.npy"))),
            (std::vector<uint16_t>{0x3C00, 0xC000, 0x3800}));  // IEEE half bit patterns
  EXPECT_EQ(as_values<int64_t>(read_npy(path("i8.npy"))),
            (std::vector<int64_t>{INT64_MIN, INT64_MAX, 0, 42}));
  EXPECT_EQ(as_values<int8_t>(read_npy(path("i1.npy"))), (std::vector<int8_t>{-128, 127, 0, -1}));
  EXPECT_EQ(as_values<uint16_t>(read_npy(path("u2.npy"))),
            (std::vector<uint16_t>{0, 65535, 1234}));
  EXPECT_EQ(read_npy(path("b1.npy")).data, (std::vector<uint8_t>{1, 0, 1}));
  const std::vector<int32_t> cube = as_values<int32_t>(read_npy(path("cube.npy")));
  for (int32_t i = 0; i < 24; ++i) EXPECT_EQ(cube[i], i);
  EXPECT_EQ(as_values<float>(read_npy(path("strided.npy"))),
            (std::vector<float>{0, 2, 4, 5, 7, 9, 10, 12, 14, 15, 17, 19}));
  EXPECT_TRUE(read_npy(path("empty.npy")).data.empty());
  // Complex values are (real, imaginary) pairs in a last dim of 2.
  EXPECT_TRUE(read_npy(path("c8.npy")).complex);
  EXPECT_TRUE(read_npy(path("c16.npy")).complex);
  EXPECT_FALSE(read_npy(path("f4.npy")).complex);
  EXPECT_EQ(as_values<float>(read_npy(path("c8.npy"))), (std::vector<float>{1, 2, -3.5f, -0.25f}));
  EXPECT_EQ(as_values<double>(read_npy(path("c16.npy"))), (std::vector<double>{0.5, -1, 2, 0}));

  // What floe must refuse, with a reason a user can act on.
  EXPECT_NE(read_error(path("fortran.npy")).find("Fortran"), std::string::npos);
  EXPECT_NE(read_error(path("big_endian.npy")).find("big-endian"), std::string::npos);
  EXPECT_NE(read_error(path("timedelta.npy")).find("'<m8[s]' is not supported"), std::string::npos);
  EXPECT_NE(read_error(path("complex_big_endian.npy")).find("'>c8' is big-endian"), std::string::npos);
  EXPECT_NE(read_error(path("clongdouble.npy")).find("is not supported"), std::string::npos);
  EXPECT_NE(read_error(path("structured.npy")).find("structured"), std::string::npos);
  EXPECT_NE(read_error(path("unicode.npy")).find("'<U2'"), std::string::npos);
}

// --- Files written by write_npy ---------------------------------------------

struct WriteCase {
  std::string name;
  floe::DType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Deterministic, valid values of each dtype (no NaN payload games, bools 0/1).
std::vector<uint8_t> sample_data(floe::DType dtype, int64_t count) {
  std::vector<uint8_t> bytes;
  for (int64_t i = 0; i < count; ++i) {
    auto append = [&](auto value) {
      const auto* p = reinterpret_cast<const uint8_t*>(&value);
      bytes.insert(bytes.end(), p, p + sizeof(value));
    };
    switch (dtype) {
      case floe::DType::kFloat32: append(static_cast<float>(i) * 0.5f - 3.0f); break;
      case floe::DType::kFloat64: append(static_cast<double>(i) * 1e100 - 7.25); break;
      case floe::DType::kFloat16: append(static_cast<uint16_t>(0x3C00 + i)); break;
      case floe::DType::kInt8: append(static_cast<int8_t>(i * 37 - 128)); break;
      case floe::DType::kUInt8: append(static_cast<uint8_t>(i * 53)); break;
      case floe::DType::kInt16: append(static_cast<int16_t>(i * 4099 - 32768)); break;
      case floe::DType::kUInt16: append(static_cast<uint16_t>(i * 6007)); break;
      case floe::DType::kInt32: append(static_cast<int32_t>(i * 100000007 - 2147483647)); break;
      case floe::DType::kInt64: append(static_cast<int64_t>(i) * 922337203685477 - INT64_MAX); break;
      case floe::DType::kBool: append(static_cast<uint8_t>(i % 3 == 0)); break;
      default: break;
    }
  }
  return bytes;
}

std::vector<WriteCase> write_cases() {
  const std::vector<std::tuple<std::string, floe::DType, std::vector<int64_t>>> specs = {
      {"w_f4", floe::DType::kFloat32, {3}},        {"w_f8", floe::DType::kFloat64, {}},
      {"w_i4", floe::DType::kInt32, {1, 10}},      {"w_i8", floe::DType::kInt64, {2, 3, 4}},
      {"w_i1", floe::DType::kInt8, {0}},           {"w_u1", floe::DType::kUInt8, {5}},
      {"w_i2", floe::DType::kInt16, {2, 0, 3}},    {"w_u2", floe::DType::kUInt16, {4, 1}},
      {"w_f2", floe::DType::kFloat16, {3}},        {"w_b1", floe::DType::kBool, {2, 2}},
      {"w_big_dim", floe::DType::kUInt8, {1000}},  {"w_rank6", floe::DType::kFloat32, {1, 2, 1, 3, 1, 2}},
      // Long enough that numpy's spare growth room pushes the data from byte 128 to 192.
      {"w_rank16", floe::DType::kUInt8, std::vector<int64_t>(16, 1)},
  };
  std::vector<WriteCase> cases;
  for (const auto& [name, dtype, shape] : specs)
    cases.push_back({name, dtype, shape, sample_data(dtype, element_count(shape))});
  return cases;
}

std::string shape_csv(const std::vector<int64_t>& shape) {
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
  return out;
}

// For each line "<name> <descr> <comma-separated shape>": np.load must give that
// dtype, shape and bytes (<name>.raw); the data must start at a multiple of 64;
// with numpy >= 1.23 (which reserves header room for growth) the file must be
// byte-identical to np.save of the same array.
constexpr const char* kNumpyCheckScript = R"PY(
import io, sys
import numpy as np

out = sys.argv[1]
version = tuple(int(p) for p in np.__version__.split(".")[:2])
errors = []
for line in open(f"{out}/manifest.txt"):
    name, descr, shape_text = (line.rstrip("\n").split(" ") + [""])[:3]
    shape = tuple(int(d) for d in shape_text.split(",") if d)
    path = f"{out}/{name}.npy"
    try:
        arr = np.load(path)
    except Exception as e:
        errors.append(f"{name}: np.load failed: {e!r}")
        continue
    raw = open(f"{out}/{name}.raw", "rb").read()
    if arr.dtype.str != descr: errors.append(f"{name}: dtype {arr.dtype.str} != {descr}")
    if arr.shape != shape: errors.append(f"{name}: shape {arr.shape} != {shape}")
    if arr.tobytes() != raw: errors.append(f"{name}: data differs")
    if not arr.flags.c_contiguous: errors.append(f"{name}: not C-contiguous")
    with open(path, "rb") as f:
        major, minor = np.lib.format.read_magic(f)
        np.lib.format.read_array_header_1_0(f)
        if (major, minor) != (1, 0): errors.append(f"{name}: version {major}.{minor}")
        if f.tell() % 64: errors.append(f"{name}: data starts at {f.tell()}")
    if version >= (1, 23):
        buffer = io.BytesIO()
        np.save(buffer, arr)
        if buffer.getvalue() != open(path, "rb").read():
            errors.append(f"{name}: differs from np.save: {open(path, 'rb').read()[:128]!r} vs {buffer.getvalue()[:128]!r}")
print("\n".join(errors) if errors else "ok")
sys.exit(1 if errors else 0)
)PY";

TEST_F(NpyTest, NumpyReadsWhatWriteNpyWrites) {
  REQUIRE_NUMPY();
  std::ofstream manifest(path("manifest.txt"));
  const char* descrs[] = {"", "<f4", "<f2", "", "<f8", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "|b1"};
  for (const WriteCase& c : write_cases()) {
    write_npy(path(c.name + ".npy"), c.dtype, c.shape, c.data.data());
    write_file_bytes(path(c.name + ".raw"), std::string(c.data.begin(), c.data.end()));
    manifest << c.name << " " << descrs[static_cast<int>(c.dtype)] << " " << shape_csv(c.shape)
             << "\n";
  }
  manifest.close();
  std::string log;
  EXPECT_EQ(run_python(kNumpyCheckScript, &log), 0) << log;
}

TEST_F(NpyTest, WriteThenReadRoundTrips) {
  for (const WriteCase& c : write_cases()) {
    SCOPED_TRACE(c.name);
    write_npy(path(c.name + ".npy"), c.dtype, c.shape, c.data.data());
    const NpyArray back = read_npy(path(c.name + ".npy"));
    EXPECT_EQ(back.dtype, c.dtype);
    EXPECT_EQ(back.shape, c.shape);
    EXPECT_EQ(back.data, c.data);
    const std::string file = read_file_text(path(c.name + ".npy"));
    EXPECT_EQ((file.size() - back.data.size()) % 64, 0u) << "data must start 64-aligned";
  }
}

TEST_F(NpyTest, HeaderTextMatchesNumpyFormatting) {
  const float three[3] = {1, 2, 3};
  const float ten[10] = {};
  const double scalar = 4.0;
  write_npy(path("a.npy"), floe::DType::kFloat32, {3}, three);
  write_npy(path("b.npy"), floe::DType::kFloat64, {}, &scalar);
  write_npy(path("c.npy"), floe::DType::kFloat32, {1, 10}, ten);
  write_npy(path("d.npy"), floe::DType::kUInt8, {0}, nullptr);  // no elements: null is fine
  const std::string a = read_file_text(path("a.npy"));
  EXPECT_EQ(a.substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));  // v1.0, 118 bytes
  EXPECT_NE(a.find("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"), std::string::npos);
  EXPECT_NE(read_file_text(path("b.npy")).find("'shape': (), }"), std::string::npos);
  EXPECT_NE(read_file_text(path("c.npy")).find("'shape': (1, 10), }"), std::string::npos);
  EXPECT_NE(read_file_text(path("d.npy")).find("'descr': '|u1'"), std::string::npos);
  EXPECT_EQ(a.size(), 128u + 12u);
  EXPECT_EQ(a[127], '\n');
}

// Float pairs in a last dim of 2 written as complex: numpy's descr and shape,
// the same bytes, read back as the pairs they were.
TEST_F(NpyTest, WritesComplexPairsAsNumpyComplex) {
  const float pairs[6] = {1, -2, 0.5f, 3, -4, 0};
  const double wide[4] = {1.5, -1, 0, 2};
  write_npy(path("c8.npy"), floe::DType::kFloat32, {3, 2}, pairs, /*complex=*/true);
  write_npy(path("c16.npy"), floe::DType::kFloat64, {1, 2, 2}, wide, /*complex=*/true);
  EXPECT_NE(read_file_text(path("c8.npy")).find("{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }"),
            std::string::npos);
  EXPECT_NE(read_file_text(path("c16.npy")).find("{'descr': '<c16', 'fortran_order': False, 'shape': (1, 2), }"),
            std::string::npos);
  const NpyArray back = read_npy(path("c8.npy"));
  EXPECT_TRUE(back.complex);
  EXPECT_EQ(back.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(as_values<float>(back), (std::vector<float>{1, -2, 0.5f, 3, -4, 0}));
  EXPECT_EQ(as_values<double>(read_npy(path("c16.npy"))), (std::vector<double>{1.5, -1, 0, 2}));
  EXPECT_THROW(write_npy(path("x.npy"), floe::DType::kFloat32, {3}, pairs, true), std::runtime_error);
  EXPECT_THROW(write_npy(path("x.npy"), floe::DType::kInt32, {3, 2}, pairs, true), std::runtime_error);
  REQUIRE_NUMPY();  // numpy reads the complex files back
  std::string log;
  EXPECT_EQ(run_python("import numpy as np, sys\n"
                       "d = sys.argv[1]\n"
                       "a = np.load(d + '/c8.npy'); b = np.load(d + '/c16.npy')\n"
                       "assert a.dtype == np.complex64 and a.tolist() == [1-2j, 0.5+3j, -4+0j], a\n"
                       "assert b.dtype == np.complex128 and b.shape == (1, 2) and b[0, 0] == 1.5-1j, b\n",
                       &log),
            0)
      << log;
}

TEST_F(NpyTest, WriteRejectsWhatNpyCannotHold) {
  const uint16_t half = 0;
  EXPECT_THROW(write_npy(path("x.npy"), floe::DType::kBFloat16, {1}, &half), std::runtime_error);
  EXPECT_THROW(write_npy(path("x.npy"), floe::DType::kInvalid, {1}, &half), std::runtime_error);
  EXPECT_THROW(write_npy(path("x.npy"), floe::DType::kUInt8, {-1}, &half), std::runtime_error);
  EXPECT_THROW(write_npy(path("x.npy"), floe::DType::kUInt8, {2}, nullptr), std::runtime_error);
  try {
    write_npy(path("no/such/dir/x.npy"), floe::DType::kUInt8, {1}, &half);
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/dir/x.npy"), std::string::npos) << e.what();
  }
}

// --- Malformed files --------------------------------------------------------

// A .npy file with the given header text, padded numpy-style, then `data`.
std::string npy_bytes(const std::string& header, const std::string& data, int major = 1) {
  const size_t length_width = major == 1 ? 2 : 4;
  std::string text = header;
  while ((6 + 2 + length_width + text.size() + 1) % 64 != 0) text += ' ';
  text += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < length_width; ++i) out += static_cast<char>((text.size() >> (8 * i)) & 0xff);
  return out + text + data;
}

std::string header_with(const std::string& descr, const std::string& fortran,
                        const std::string& shape) {
  return "{'descr': " + descr + ", 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}

TEST_F(NpyTest, AcceptsHeaderVariantsPythonAllows) {
  const std::string four_floats(16, '\0');
  const std::vector<std::string> headers = {
      "{\"shape\": (4,), \"fortran_order\": False, \"descr\": \"<f4\"}",  // any key order, double quotes
      "{'descr':'<f4','fortran_order':False,'shape':(4L,)}",              // Python 2 long, no spaces
      "  {  'descr' : '<f4' ,\t'fortran_order' : False , 'shape' : ( 2 , 2 , ) , }  ",
  };
  for (size_t i = 0; i < headers.size(); ++i) {
    SCOPED_TRACE(headers[i]);
    const std::string file = path("ok" + std::to_string(i) + ".npy");
    write_file_bytes(file, npy_bytes(headers[i], four_floats));
    EXPECT_EQ(read_npy(file).data.size(), 16u);
  }
  write_file_bytes(path("v2.npy"), npy_bytes(header_with("'<f4'", "False", "(4,)"), four_floats, 2));
  EXPECT_EQ(read_npy(path("v2.npy")).shape, std::vector<int64_t>{4});
}

TEST_F(NpyTest, RejectsMalformedFilesWithAReason) {
  const std::string four_floats(16, '\0');
  const std::string good_header = header_with("'<f4'", "False", "(4,)");
  struct Case {
    const char* name;
    std::string bytes;
    const char* reason;  // substring the message must contain
  };
  const std::vector<Case> cases = {
      {"empty", "", "magic"},
      {"text", "hello, world", "magic"},
      {"version4", std::string("\x93NUMPY\x04\x00\x10\x00", 10), "version 4.0"},
      {"short_length", std::string("\x93NUMPY\x01\x00\x10", 9), "truncated"},
      {"header_past_eof", std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 17), "truncated"},
      {"not_a_dict", npy_bytes("[1, 2, 3]", ""), "expected the header to start with '{'"},
      {"no_shape", npy_bytes("{'descr': '<f4', 'fortran_order': False}", four_floats),
       "no 'shape'"},
      {"extra_key",
       npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}", four_floats),
       "unexpected key 'x'"},
      {"duplicate_key",
       npy_bytes("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,)}",
                 four_floats),
       "duplicate key 'descr'"},
      {"unterminated", npy_bytes("{'descr': '<f4, 'fortran_order': False", ""), "after a value"},
      {"open_string", npy_bytes("{'descr", ""), "unterminated string"},
      {"bad_bool", npy_bytes(header_with("'<f4'", "yes", "(4,)"), four_floats), "True or False"},
      {"fortran", npy_bytes(header_with("'<f4'", "True", "(2, 2)"), four_floats), "Fortran"},
      {"big_endian", npy_bytes(header_with("'>i4'", "False", "(4,)"), four_floats), "big-endian"},
      {"native_order", npy_bytes(header_with("'=f4'", "False", "(4,)"), four_floats),
       "byte order"},
      {"unknown_dtype", npy_bytes(header_with("'<q9'", "False", "(4,)"), four_floats),
       "not supported"},
      {"int_shape", npy_bytes(header_with("'<f4'", "False", "(4)"), four_floats), "tuple"},
      {"list_shape", npy_bytes(header_with("'<f4'", "False", "[4]"), four_floats), "tuple"},
      {"negative_dim", npy_bytes(header_with("'<f4'", "False", "(-4,)"), four_floats), "negative"},
      {"double_comma", npy_bytes(header_with("'<f4'", "False", "(4,,)"), four_floats),
       "integer dimension"},
      {"huge_dim",
       npy_bytes(header_with("'<f4'", "False", "(99999999999999999999,)"), four_floats),
       "64 bits"},
      {"too_many_elements",
       npy_bytes(header_with("'<f4'", "False", "(4294967296, 4294967296)"), four_floats),
       "too many elements"},
      {"bytes_overflow",
       npy_bytes(header_with("'<f8'", "False", "(4611686018427387904,)"), four_floats),
       "too many elements"},
      {"trailing_text", npy_bytes(good_header + " junk", four_floats), "after the closing"},
      {"short_data", npy_bytes(good_header, four_floats.substr(0, 15)), "needs 16 data bytes"},
      {"long_data", npy_bytes(good_header, four_floats + "x"), "1 unexpected bytes"},
      {"nul_in_header", npy_bytes(std::string("{'descr': '<f4'\0", 16), ""), "\\x00"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string file = path(std::string(c.name) + ".npy");
    write_file_bytes(file, c.bytes);
    const std::string message = read_error(file);
    EXPECT_NE(message.find(c.reason), std::string::npos) << message;
  }
  const std::string message = read_error(path("does_not_exist.npy"));
  EXPECT_NE(message.find("cannot open"), std::string::npos) << message;
}

TEST_F(NpyTest, EveryTruncationIsAnErrorNotACrash) {
  const int32_t values[6] = {1, 2, 3, 4, 5, 6};
  write_npy(path("full.npy"), floe::DType::kInt32, {2, 3}, values);
  const std::string full = read_file_text(path("full.npy"));
  for (size_t length = 0; length < full.size(); ++length) {
    const std::string file = path("cut.npy");
    write_file_bytes(file, full.substr(0, length));
    EXPECT_THROW(read_npy(file), std::runtime_error) << "truncated to " << length << " bytes";
  }
}

TEST_F(NpyTest, CorruptedHeadersNeverCrash) {
  const int32_t values[6] = {1, 2, 3, 4, 5, 6};
  write_npy(path("good.npy"), floe::DType::kInt32, {2, 3}, values);
  const std::string good = read_file_text(path("good.npy"));
  const size_t header_end = good.size() - sizeof values;
  const uint32_t seed = 12345;
  std::mt19937 rng(seed);
  int rejected = 0;
  for (int trial = 0; trial < 400; ++trial) {  // file I/O bound: kept small
    std::string bad = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f)
      bad[rng() % header_end] = static_cast<char>(rng() % 256);
    write_file_bytes(path("bad.npy"), bad);
    try {
      const NpyArray array = read_npy(path("bad.npy"));
      // A flip in padding can leave a valid file; it must then still be sane.
      int64_t count = 1;
      for (int64_t d : array.shape) count *= d;
      EXPECT_EQ(array.data.size(), static_cast<size_t>(count) * floe::dtype_size(array.dtype))
          << "seed " << seed << " trial " << trial;
    } catch (const std::runtime_error&) {
      ++rejected;
    } catch (...) {
      ADD_FAILURE() << "non-runtime_error exception, seed " << seed << " trial " << trial;
    }
  }
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace floe::tools
