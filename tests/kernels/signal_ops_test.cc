// SPDX-License-Identifier: Apache-2.0
// floe's reference kernels for TFLite Micro's Signal ops, run on the test
// vectors of TFLM's own kernel unit tests (github.com/tensorflow/tflite-micro:
// signal/micro/kernels/*_test.cc, the large vectors in
// signal/testdata/fft_test_data.cc). Only the numbers are taken from there:
// inputs, goldens, and the attribute values that TFLM's tests pass as
// FlexBuffer custom options (decoded by hand; see each test). Each TFLM case is
// checked the way TFLM's test checks it (exactly, unless TFLM's test allows a
// tolerance itself).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "converter/frontend/tflite/custom_options.h"
#include "runtime/kernels/reference/signal_filter_bank.h"
#include "runtime/kernels/reference/signal_spectrum.h"

namespace floe::ref {
namespace {

template <typename T, size_t N>
constexpr size_t count_of(const T (&)[N]) {
  return N;
}

// ---------------------------------------------------------------------------
// SIGNAL_WINDOW: signal/micro/kernels/window_test.cc (options: "shift" = 12 or
// 8, from window_flexbuffers_generated_data.cc).

constexpr int16_t kRamp16[16] = {0x000, 0x100, 0x200, 0x300, 0x400, 0x500, 0x600, 0x700,
                                 0x800, 0x900, 0xA00, 0xB00, 0xC00, 0xD00, 0xE00, 0xF00};
constexpr int16_t kFallingWeights16[16] = {0xF00, 0xE00, 0xD00, 0xC00, 0xB00, 0xA00, 0x900, 0x800,
                                           0x700, 0x600, 0x500, 0x400, 0x300, 0x200, 0x100, 0x000};
constexpr int16_t kRampWindowed16[16] = {0, 224, 416, 576, 704, 800, 864, 896, 896, 864, 800, 704, 576, 416, 224, 0};

TEST(TflmSignalKernels, WindowLength16Shift12MatchesTflm) {
  int16_t y[16];
  signal_window(kRamp16, kFallingWeights16, y, 1, 16, 12);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(y[i], kRampWindowed16[i]) << "i=" << i;
}

TEST(TflmSignalKernels, WindowLength32Shift8SaturatesLikeTflm) {
  const int16_t x[32] = {1221, 1920, 9531, 2795, 1826, 371,  8446, 850,  3129, 8218, 4199,
                         8358, 205,  5268, 3263, 2849, 8398, 1381, 6305, 668,  8867, 4651,
                         9121, 6141, 1961, 3750, 8418, 8085, 3308, 1788, 1608, 4761};
  const int16_t w[32] = {1323, 764,  9100, 4220, 1745, 9311, 178,  9442, 5676, 1817, 5433,
                         5837, 7635, 4539, 6548, 9690, 6097, 4275, 1523, 3694, 7506, 2797,
                         5153, 172,  2172, 4540, 6643, 7845, 1719, 7564, 1700, 5227};
  const int16_t golden[32] = {6310,  5730,  32767, 32767, 12446, 13493, 5872,  31350, 32767, 32767, 32767,
                              32767, 6113,  32767, 32767, 32767, 32767, 23061, 32767, 9639,  32767, 32767,
                              32767, 4125,  16637, 32767, 32767, 32767, 22212, 32767, 10678, 32767};
  int16_t y[32];
  signal_window(x, w, y, 1, 32, 8);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], golden[i]) << "i=" << i;
}

TEST(TflmSignalKernels, WindowLength16Shift12FourRowsMatchesTflm) {
  // TFLM's [2, 2, 16] input: the same ramp in each of the 4 rows, one set of
  // 16 weights for all of them.
  int16_t x[64], y[64];
  for (int r = 0; r < 4; ++r) {
    for (int i = 0; i < 16; ++i) x[r * 16 + i] = kRamp16[i];
  }
  signal_window(x, kFallingWeights16, y, 4, 16, 12);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(y[i], kRampWindowed16[i % 16]) << "i=" << i;
}

// ---------------------------------------------------------------------------
// SIGNAL_FFT_AUTO_SCALE: the FftAutoScale cases of
// signal/micro/kernels/fft_test.cc (no options); the 400-sample vector is
// kFftAutoScaleLength512Input of signal/testdata/fft_test_data.cc, whose
// golden is the input itself (scale 0: its largest magnitude already needs 15
// bits).

static const int16_t kAutoScaleLargeInput[400] = {
    27728,  28180,  -23037, -999,   7627,   19097,  4809,   -28251, 25421,  21584,  5775,   -514,   31389,  -13221,
    28700,  3928,   -32678, 9413,   21553,  -11903, 19367,  18168,  3923,   13968,  -19808, -8946,  9707,   4996,
    -2033,  26133,  8465,   -29982, 145,    4190,   -27992, 18817,  -7428,  24828,  23734,  -1823,  -24872, -14335,
    12368,  24986,  26849,  14131,  -21011, 26386,  22377,  -11729, 18306,  -9073,  14716,  -14157, 17728,  -6062,
    21593,  -5285,  -20960, -5598,  -10791, 2156,   -1026,  12427,  8910,   12726,  26340,  20350,  -28668, 5619,
    29298,  10801,  11427,  -5965,  6491,   -21680, 1107,   9373,   14507,  -16623, -17628, -3940,  3115,   -28103,
    8256,   23231,  13811,  -27905, 20126,  7647,   -31981, 4270,   -2447,  -24855, -15303, 29773,  22757,  13823,
    -2623,  -18288, -29900, -32254, 2751,   21161,  13991,  -4786,  2118,   -5267,  -13969, -7855,  17443,  -4976,
    26066,  29508,  -22460, -27974, 28652,  -24058, 25214,  18340,  15171,  3101,   28870,  11533,  -3481,  3047,
    6802,   23452,  15039,  -32103, -29734, -9678,  11514,  29903,  -30983, -30655, -19125, 18490,  14868,  18846,
    -3849,  18431,  31245,  12547,  24499,  -15543, 8004,   30226,  -17948, -27011, -10040, -21747, -4077,  29493,
    25322,  -10680, -23061, 16320,  -262,   19493,  -29407, -30065, -29158, -14538, 17318,  5900,   22016,  -8523,
    -3482,  8226,   6269,   -9888,  -18543, 11548,  32126,  716,    12042,  -2344,  28403,  16777,  18536,  19821,
    -13224, -32000, 18846,  29756,  15152,  -25000, -2854,  2894,   5817,   -20644, -14967, -22120, 19426,  24206,
    -10895, 9359,   22642,  15413,  -544,   11456,  29289,  -29467, -7007,  1946,   -12714, 29003,  -9754,  -11247,
    -8743,  -26529, 12775,  17819,  -4068,  10532,  7749,   -15982, -3309,  -15015, -14728, -5061,  4456,   -23045,
    4875,   18613,  -26598, 20189,  -2459,  -1949,  -27655, 10714,  -25641, -31826, -14901, 26440,  -29853, -21380,
    -9872,  7330,   -24977, 28143,  22335,  -24296, 1775,   19950,  -31505, -23314, -7708,  8747,   -14274, 30659,
    -31703, -16215, -7103,  -7876,  25772,  773,    28262,  16517,  26455,  -15645, 18958,  -1342,  30649,  6825,
    8075,   -13666, 16635,  31946,  -22845, -27888, 11845,  7597,   -20615, -27995, 11419,  -2343,  -6894,  7419,
    30308,  15120,  24538,  -25659, -26220, 25970,  -11688, 26728,  -27865, -8426,  24771,  30570,  27041,  -20003,
    13894,  16227,  -32113, -4925,  -7249,  -27491, 743,    11549,  -18304, 6082,   -27239, 22277,  -914,   5237,
    -30772, -6916,  15278,  -28297, 9274,   14611,  23071,  -9831,  1675,   -31961, -17243, 16597,  -21968, 12045,
    -16939, 9563,   7989,   1251,   22767,  28480,  31961,  31297,  30398,  -2645,  1837,   -15697, -19268, -15887,
    29292,  -10900, 812,    -10870, -2759,  20450,  -20981, 28539,  -30402, -17263, -19693, -32710, 6172,   -30003,
    27373,  24939,  -28543, -8928,  1198,   -326,   -3504,  -23640, 24945,  -24141, 17787,  20449,  -7981,  -10926,
    -26171, -20678, 4107,   -32513, 8184,   -12479, 16854,  -18552, -21534, -8804,  -30278, 18573,  -16409, 14746,
    -17123, 24656,  25243,  4516,   19254,  -2165,  24230,  -7639,  -19385, -15505, -15386, 21841,  -12507, 9168,
    4469,   -2649,  21013,  23788,  21282,  27991,  -31716, 22753};
static_assert(count_of(kAutoScaleLargeInput) == 400, "TFLM's auto-scale vector has 400 samples");

TEST(TflmSignalKernels, FftAutoScaleSmallMatchesTflm) {
  const int16_t x[8] = {0x0000, 0x1111, 0x2222, 0x3333, 0x3333, 0x2222, 0x1111, 0x0000};
  const int16_t golden[8] = {0x0000, 0x2222, 0x4444, 0x6666, 0x6666, 0x4444, 0x2222, 0x0000};
  int16_t y[8];
  EXPECT_EQ(signal_fft_auto_scale(x, y, 8), 1);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(y[i], golden[i]) << "i=" << i;
}

TEST(TflmSignalKernels, FftAutoScaleScaleBitMatchesTflm) {
  const int16_t x[8] = {238, 113, -88, -243, -5, -130, 159, -70};
  const int16_t golden[8] = {30464, 14464, -11264, -31104, -640, -16640, 20352, -8960};
  int16_t y[8];
  EXPECT_EQ(signal_fft_auto_scale(x, y, 8), 7);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(y[i], golden[i]) << "i=" << i;
}

TEST(TflmSignalKernels, FftAutoScaleLargeMatchesTflm) {
  std::vector<int16_t> y(400);
  EXPECT_EQ(signal_fft_auto_scale(kAutoScaleLargeInput, y.data(), 400), 0);
  for (int i = 0; i < 400; ++i) EXPECT_EQ(y[i], kAutoScaleLargeInput[i]) << "i=" << i;
}

// ---------------------------------------------------------------------------
// SIGNAL_RFFT, int16: signal/micro/kernels/fft_test.cc (RfftTestSize64Int16,
// RfftTestSize512Int16; options from fft_flexbuffers_generated_data.cc:
// fft_length = 64 / 512, T = int16). Those are the only int16 RFFT lengths
// TFLM tests. 64 points run as a 32-point complex FFT, 32 = 4 * 4 * 2: the
// radix-2 stage is exercised there; 512 -> 256 = 4^4 is radix-4 only.

std::vector<int16_t> run_rfft(int32_t fft_length, const int16_t* x, int32_t input_length, int32_t rows) {
  const std::vector<int16_t> tw = conv::kissfft_twiddles(fft_length);
  const std::vector<int16_t> st = conv::kissfft_super_twiddles(fft_length);
  std::vector<int16_t> out(static_cast<size_t>(rows) * (fft_length + 2));
  signal_rfft(RfftParams{fft_length, input_length, rows}, x, tw.data(), st.data(), out.data());
  return out;
}

TEST(TflmSignalKernels, RfftInt16Length64ImpulseMatchesTflmExactly) {
  int16_t x[64] = {};
  x[0] = 16384;
  const std::vector<int16_t> out = run_rfft(64, x, 64, 1);
  ASSERT_EQ(out.size(), 66u);
  // Every bin is (256, 0): 16384 scaled down by 1/64 through the stages.
  for (int i = 0; i < 66; ++i) EXPECT_EQ(out[i], i % 2 == 0 ? 256 : 0) << "i=" << i;
}

// kRfftInt16Length512Input and the (non-HiFi3) kRfftInt16Length512Golden of
// signal/testdata/fft_test_data.cc.
static const int16_t kRfft512Input[512] = {
    10160, 13773, 14060, 12558, 1521,  7242,  5158,  13300, 11261, 13098, 5079,  1013,  12920, 13929, 1165,  2539,
    5788,  14374, 4920,  10888, 3021,  15694, 5775,  7080,  10262, 5754,  14959, 9359,  3658,  3000,  1765,  9500,
    8090,  10601, 10575, 5819,  9646,  15126, 5842,  1023,  4584,  5098,  14319, 12369, 14998, 14763, 14761, 2135,
    8867,  5190,  12429, 2984,  12787, 3965,  11073, 5798,  12984, 1987,  12506, 1880,  12293, 14638, 10053, 14428,
    12737, 272,   12108, 8827,  9971,  9393,  9383,  12871, 11425, 11198, 4062,  14971, 14303, 4339,  13744, 6937,
    2180,  623,   7116,  10179, 9514,  12048, 9904,  4688,  10935, 10358, 11893, 13560, 14973, 14585, 14428, 1807,
    6186,  6279,  1312,  13328, 6753,  13669, 2949,  9794,  8960,  11569, 4097,  15988, 5239,  10071, 8095,  3415,
    8543,  16254, 12748, 9281,  8205,  985,   7221,  9894,  4773,  2979,  690,   4775,  4361,  12046, 7819,  10220,
    3124,  12790, 5053,  956,   15510, 13038, 255,   12206, 1424,  6180,  5863,  2497,  2711,  743,   73,    13877,
    7370,  13087, 10478, 3710,  14614, 11262, 7705,  7737,  8149,  9024,  9576,  8372,  14543, 12887, 15800, 1273,
    7,     9485,  795,   4285,  717,   10022, 11952, 13151, 15738, 7128,  9026,  14966, 4291,  15703, 3983,  1138,
    2184,  3093,  9932,  3324,  14257, 9833,  11579, 7454,  1124,  12158, 12897, 5627,  8895,  5304,  8116,  3812,
    12881, 15179, 4846,  14269, 9627,  11180, 11801, 15496, 8776,  6444,  198,   4207,  3445,  15131, 13610, 3581,
    10129, 6235,  367,   9038,  11437, 10229, 268,   12610, 2108,  4648,  5850,  154,   14184, 7735,  14149, 14188,
    14337, 13938, 4799,  1672,  11077, 2997,  12084, 4639,  6446,  13492, 6431,  13945, 1692,  3852,  711,   10363,
    5579,  9509,  12894, 939,   6337,  1323,  1660,  2191,  9799,  14653, 4772,  10142, 10447, 6300,  3097,  10681,
    14654, 5837,  10706, 13193, 8799,  6977,  14438, 7591,  14338, 7588,  14547, 13582, 12291, 13699, 15169, 2158,
    8290,  13491, 6990,  8303,  4815,  9482,  6162,  9086,  14506, 4841,  14955, 8701,  7794,  3058,  12616, 356,
    1954,  9090,  916,   15470, 3315,  2703,  8482,  8649,  8692,  5817,  5048,  13615, 2730,  9785,  12048, 6351,
    8537,  12805, 12359, 3833,  4593,  1665,  15655, 16335, 71,    9970,  5767,  12270, 1977,  10516, 11729, 3953,
    10746, 11030, 12843, 13832, 12992, 1602,  7686,  14599, 13637, 11613, 239,   6200,  1171,  7247,  398,   6560,
    16332, 1690,  7986,  8245,  3215,  13510, 2383,  4390,  7257,  7447,  12854, 12016, 16153, 4089,  10229, 9767,
    3945,  13731, 8896,  2220,  12295, 4950,  3097,  132,   5216,  5032,  16041, 1762,  14244, 16241, 7530,  6306,
    12353, 12422, 12694, 1635,  13828, 4010,  14180, 4188,  1181,  15440, 2139,  8837,  13864, 8095,  8295,  13486,
    2202,  2791,  25,    6553,  13699, 6658,  10057, 11228, 1761,  11289, 15118, 2313,  6523,  9702,  122,   13532,
    11987, 6760,  14261, 1610,  8826,  13136, 453,   8861,  354,   6276,  3543,  7152,  9727,  13253, 8488,  13672,
    5977,  1767,  15732, 774,   12728, 898,   1451,  898,   3191,  8178,  15761, 9253,  3040,  3806,  15401, 9150,
    12289, 8305,  5524,  1933,  11885, 2526,  7716,  8975,  8692,  6358,  5773,  1783,  15245, 5923,  8934,  5871,
    8808,  9962,  14261, 2696,  14275, 6927,  12380, 2660,  14313, 2755,  1652,  2369,  5013,  3718,  12291, 8516,
    8593,  958,   9848,  8632,  6893,  5075,  9919,  869,   2398,  11832, 5344,  13667, 794,   807,   1301,  11698,
    11771, 13999, 3745,  10128, 2677,  160,   9138,  5562,  16370, 9246,  7543,  6392,  14953, 10361, 8045,  1386,
    7070,  15021, 11687, 1342,  4931,  10918, 4242,  13984, 4025,  5962,  2154,  6696,  8040,  2013,  354,   9710};
static_assert(count_of(kRfft512Input) == 512, "TFLM's 512-point RFFT input has 512 samples");

static const int16_t kRfft512Golden[514] = {
    8073, 0,    -69,  -149, 45,   -261, -83,  -150, -101, -24,  -45,  206,  159,  -84,  -11,  1,    107,  -34,
    -116, 253,  124,  -132, -56,  112,  -213, -197, 45,   106,  14,   -251, -66,  53,   99,   -129, -101, -86,
    72,   -147, -52,  -11,  -142, 128,  55,   -192, 116,  94,   36,   97,   242,  -401, 89,   -163, -177, 93,
    194,  147,  49,   -104, -198, -141, -133, -126, 108,  -198, 90,   101,  -2,   142,  62,   37,   47,   -224,
    47,   132,  -98,  -388, -230, 186,  36,   282,  -152, -242, -112, -100, 303,  -22,  63,   9,    43,   108,
    38,   106,  254,  -275, 25,   -44,  -2,   139,  236,  -133, 51,   -233, 25,   -125, -92,  112,  48,   58,
    -193, 121,  181,  146,  6,    114,  7,    181,  22,   -336, 162,  218,  56,   -256, 3,    -205, 325,  -276,
    -166, -173, -25,  -64,  74,   95,   125,  -40,  156,  122,  83,   -118, -7,   -109, -64,  -8,   13,   180,
    267,  144,  -131, 6,    11,   -10,  -165, -262, -162, 84,   85,   -112, 171,  -160, -62,  133,  -15,  -58,
    128,  -198, 393,  -6,   224,  -297, -9,   341,  -73,  104,  -68,  -311, -172, -31,  -290, -133, -56,  -40,
    -43,  -93,  -170, -43,  120,  -63,  -104, -94,  53,   -243, 79,   -73,  -8,   -139, -56,  49,   -103, -87,
    188,  -322, 78,   -85,  -50,  -179, -106, -34,  -91,  -50,  37,   -96,  -28,  -181, -180, 61,   170,  195,
    92,   -6,   -17,  251,  -106, 122,  173,  31,   35,   233,  -8,   91,   226,  139,  -82,  215,  17,   146,
    -169, 60,   -94,  -119, -40,  -69,  15,   213,  28,   -103, 206,  -23,  13,   161,  112,  -315, 139,  -78,
    -71,  3,    103,  -1,   77,   -213, -7,   -78,  89,   112,  -111, -221, 58,   61,   -71,  -38,  -84,  1,
    34,   42,   167,  -77,  96,   107,  3,    -11,  56,   -133, -110, 191,  -340, -77,  36,   101,  55,   49,
    113,  105,  -211, -28,  -47,  175,  42,   -19,  57,   244,  -98,  155,  66,   165,  -200, -25,  49,   96,
    -228, -52,  24,   154,  190,  -225, 104,  67,   -38,  81,   -2,   60,   32,   95,   -42,  -171, -228, 261,
    11,   77,   206,  -185, -181, 99,   60,   -62,  -231, 96,   90,   -85,  284,  94,   90,   73,   -49,  -141,
    100,  -110, -83,  -107, -127, -198, 268,  116,  -86,  228,  -67,  48,   118,  -106, 148,  48,   -122, -78,
    -20,  -191, 121,  96,   158,  161,  -51,  57,   -267, 156,  -74,  -21,  277,  194,  -157, -141, -365, 160,
    -274, -79,  234,  29,   38,   278,  -181, 4,    -54,  49,   207,  -338, 235,  160,  5,    100,  169,  52,
    -1,   -58,  -429, -26,  -41,  -54,  160,  189,  -37,  2,    -248, -113, 120,  69,   -32,  -256, -269, 66,
    48,   279,  -225, -295, 147,  191,  78,   -9,   32,   -109, 169,  -72,  139,  93,   -32,  9,    -190, -83,
    389,  207,  -192, -172, 311,  -188, 124,  -39,  -90,  -86,  -28,  -85,  0,    -138, 90,   -71,  107,  133,
    -175, -32,  -162, -135, -51,  -123, -156, 30,   295,  -141, -196, 53,   101,  -181, -142, 162,  159,  -16,
    209,  9,    37,   171,  14,   122,  -38,  63,   181,  66,   178,  118,  -73,  -56,  -436, 80,   -69,  140,
    -68,  -32,  -105, 67,   98,   -192, 74,   5,    42,   -135, 41,   -190, 178,  -173, 43,   84,   -497, -43,
    -340, 40,   -289, 117,  14,   -37,  117,  -238, 125,  0};
static_assert(count_of(kRfft512Golden) == 514, "TFLM's 512-point RFFT golden has 257 (re, im) bins");

TEST(TflmSignalKernels, RfftInt16Length512MatchesTflmExactly) {
  const std::vector<int16_t> out = run_rfft(512, kRfft512Input, 512, 1);
  ASSERT_EQ(out.size(), 514u);
  // TFLM's own test lets its portable kernel be up to 3 off this golden;
  // floe is held to the golden exactly.
  for (int i = 0; i < 514; ++i) EXPECT_EQ(out[i], kRfft512Golden[i]) << "i=" << i;
}

TEST(TflmSignalKernels, RfftInt16Length64ImpulseRowsAreIndependent) {
  // Not a TFLM int16 case of its own: TFLM's four-row impulse case
  // (RfftTestSize64Int32OuterDims4, the impulse at the start of each of 4
  // rows, every bin (256, 0)) has the same numbers as the int16 one, so it is
  // run here on the int16 kernel to check the rows.
  int16_t x[4 * 64] = {};
  for (int r = 0; r < 4; ++r) x[r * 64] = 16384;
  const std::vector<int16_t> out = run_rfft(64, x, 64, 4);
  ASSERT_EQ(out.size(), 4u * 66u);
  for (int i = 0; i < 4 * 66; ++i) EXPECT_EQ(out[i], (i % 66) % 2 == 0 ? 256 : 0) << "i=" << i;
}

// Not TFLM's: every power-of-two length, radix-2 stage or not, against the
// DFT in double. TFLM's vectors are exact but cover 64 (an impulse) and 512
// only; this checks the unrolled stages' structure (digit reversal, twiddle
// strides, the split) at 4 .. 4096 points on seeded full-scale input and a
// short row (zero-padded): each output within a few steps of DFT / fft_length
// (one rounding per stage).
TEST(SignalKernels, RfftInt16FollowsTheDftAtEveryLength) {
  for (int32_t length = 4; length <= 4096; length *= 2) {
    for (const int32_t samples : {length, length / 2 + 1}) {
      std::vector<int16_t> x(static_cast<size_t>(samples));
      uint32_t seed = static_cast<uint32_t>(length * 31 + samples);
      for (int16_t& v : x) {
        seed = 1664525u * seed + 1013904223u;
        v = static_cast<int16_t>(seed >> 16);
      }
      const std::vector<int16_t> out = run_rfft(length, x.data(), samples, 1);
      ASSERT_EQ(out.size(), static_cast<size_t>(length + 2));
      int32_t stages = 0;
      for (int32_t n = length; n > 1; n /= 2) ++stages;
      double worst = 0.0;
      for (int32_t k = 0; k <= length / 2; ++k) {
        double re = 0.0, im = 0.0;
        for (int32_t t = 0; t < samples; ++t) {
          const double phase = -2.0 * 3.14159265358979323846 * static_cast<double>(k) * t / length;
          re += x[static_cast<size_t>(t)] * std::cos(phase);
          im += x[static_cast<size_t>(t)] * std::sin(phase);
        }
        worst = std::max({worst, std::fabs(out[static_cast<size_t>(2 * k)] - re / length),
                          std::fabs(out[static_cast<size_t>(2 * k + 1)] - im / length)});
      }
      EXPECT_LE(worst, stages + 1.0) << "fft_length " << length << ", " << samples << " samples";
    }
  }
}

// ---------------------------------------------------------------------------
// SIGNAL_ENERGY: signal/micro/kernels/energy_test.cc (options from
// energy_flexbuffers_generated_data.cc; its map's keys sorted: end_index,
// start_index). TFLM's test zeroes the output first and expects 0 outside
// [start, end), which is what floe writes there, so all 8 bins are compared.

constexpr int16_t kEnergyInput[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

void expect_energy(int32_t start, int32_t end, const uint32_t (&golden)[8]) {
  uint32_t energy[8] = {};
  signal_energy(kEnergyInput, energy, 8, start, end);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(energy[i], golden[i]) << "start=" << start << " end=" << end << " i=" << i;
}

TEST(TflmSignalKernels, EnergyMiddleStartAndEndRangesMatchTflm) {
  const uint32_t middle[8] = {0, 0, 61, 113, 0, 0, 0, 0};   // start 2, end 4
  const uint32_t start[8] = {5, 25, 61, 113, 0, 0, 0, 0};   // start 0, end 4
  const uint32_t end[8] = {0, 0, 0, 0, 181, 265, 365, 481};  // start 4, end 8
  expect_energy(2, 4, middle);
  expect_energy(0, 4, start);
  expect_energy(4, 8, end);
}

// ---------------------------------------------------------------------------
// SIGNAL_FILTER_BANK: signal/micro/kernels/filter_bank_test.cc (options:
// num_channels = 32 / 16, from filter_bank_flexbuffers_generated_data.cc).
// TFLM's inputs in order: energy, weights, unweights, channel frequency
// starts, channel weight starts, channel widths.

TEST(TflmSignalKernels, FilterBank32ChannelsMatchesTflm) {
  static const uint32_t energy[257] = {
      65451,      11468838,   4280615122, 4283105055, 30080683,   969970,     1168164,    192770,     344209,
      1811809,    1740724,    586130,     305045,     17981,      169273,     103321,     85277,      529901,
      524660,     116609,     29653,      64345,      13121,      273956,     593748,     463432,     348169,
      77545,      2117,       19277,      13837,      85,         16322,      1325,       69584,      233930,
      253273,     94180,      8642,       104245,     151937,     231970,     90405,      95849,      106285,
      81938,      76226,      103337,     303250,     337705,     75140,      43874,      33730,      44761,
      117608,     57322,      9945,       19816,      48674,      19465,      15696,      52229,      103738,
      102541,     126421,     133157,     33680,      7738,       45029,      57122,      61605,      60138,
      26170,      41444,      210994,     238338,     74324,      21460,      33125,      3940,       15481,
      7709,       24929,      17714,      170993,     91978,      45965,      214133,     96832,      1800,
      16717,      42341,      87421,      114341,     65161,      26260,      135077,     245000,     122117,
      81188,      107753,     74125,      86432,      91460,      29648,      2069,       3161,       5002,
      784,        1152,       1424,       277,        452,        2696,       3610,       2120,       2617,
      562,        1153,       4610,       2906,       65,         786450,     4293722107, 0,          393208,
      2,          196608,     65539,      65537,      4294967295, 65537,      4294901762, 65535,      4294770689,
      65533,      131073,     4294901761, 131071,     131071,     65535,      4294901764, 4294967295, 0,
      4294901758, 4294901761, 196607,     4294836224, 131070,     4294901762, 4294901759, 196608,     4294901761,
      131071,     131070,     65538,      0,          4294901761, 65536,      4294836225, 65536,      4294836225,
      4294901757, 65535,      4294901760, 196607,     4294967295, 0,          131071,     4294901762, 4294836221,
      196608,     65536,      1,          131074,     4294770690, 4294967291, 196611,     4294770687, 262143,
      4294901759, 131071,     1,          4294901759, 196607,     4294705153, 196607,     4294967294, 65536,
      1,          4294901759, 65536,      0,          65536,      65537,      4294901759, 65536,      3,
      4294836222, 65534,      65536,      65538,      4294836225, 4294901760, 4294901761, 4294967293, 0,
      65534,      131070,     65537,      4294901762, 65536,      2,          4294836224, 1,          4294901760,
      0,          4294967294, 131073,     4294901760, 65535,      131073,     4294836224, 65536,      4294901760,
      4294901760, 4294967295, 4294901761, 131071,     4294901760, 131071,     4294836224, 2,          4294901758,
      4294967292, 131073,     0,          65535,      0,          4294901760, 4294967295, 131073,     4294901764,
      4294836223, 4294967295, 65535,      65537,      65533,      3,          131072,     4294836224, 65537,
      1,          4294967293, 196611,     4294901759, 1};
  static const int16_t weights[117] = {
      1133, 2373, 3712, 1047, 2564, 66,   1740, 3486, 1202, 3079, 919,  2913, 865,  2964, 1015, 3210, 1352, 3633,
      1859, 123,  2520, 856,  3323, 1726, 161,  2722, 1215, 3833, 2382, 956,  3652, 2276, 923,  3689, 2380, 1093,
      3922, 2676, 1448, 239,  3144, 1970, 814,  3770, 2646, 1538, 445,  3463, 2399, 1349, 313,  3386, 2376, 1379,
      394,  3517, 2556, 1607, 668,  3837, 2920, 2013, 1117, 231,  3450, 2583, 1725, 877,  37,   3302, 2480, 1666,
      861,  63,   3369, 2588, 1813, 1046, 287,  3630, 2885, 2147, 1415, 690,  4067, 3355, 2650, 1950, 1257, 569,
      3984, 3308, 2638, 1973, 1314, 661,  12,   3465, 2827, 2194, 1566, 943,  325,  3808, 3199, 2595, 1996, 1401,
      810,  224,  3738, 3160, 2586, 2017, 1451, 890,  332};
  static const int16_t unweights[117] = {
      2962, 1722, 383,  3048, 1531, 4029, 2355, 609,  2893, 1016, 3176, 1182, 3230, 1131, 3080, 885,  2743, 462,
      2236, 3972, 1575, 3239, 772,  2369, 3934, 1373, 2880, 262,  1713, 3139, 443,  1819, 3172, 406,  1715, 3002,
      173,  1419, 2647, 3856, 951,  2125, 3281, 325,  1449, 2557, 3650, 632,  1696, 2746, 3782, 709,  1719, 2716,
      3701, 578,  1539, 2488, 3427, 258,  1175, 2082, 2978, 3864, 645,  1512, 2370, 3218, 4058, 793,  1615, 2429,
      3234, 4032, 726,  1507, 2282, 3049, 3808, 465,  1210, 1948, 2680, 3405, 28,   740,  1445, 2145, 2838, 3526,
      111,  787,  1457, 2122, 2781, 3434, 4083, 630,  1268, 1901, 2529, 3152, 3770, 287,  896,  1500, 2099, 2694,
      3285, 3871, 357,  935,  1509, 2078, 2644, 3205, 3763};
  static const int16_t frequency_starts[33] = {5,  6,  7,  9,  11, 12, 14, 16, 18, 20, 22, 25, 27, 30, 32,  35,  38,
                                               41, 45, 48, 52, 56, 60, 64, 69, 74, 79, 84, 89, 95, 102, 108, 115};
  static const int16_t weight_starts[33] = {0,  1,  2,  4,  6,  7,  9,  11, 13, 15, 17, 20, 22, 25, 27,  30,  33,
                                            36, 40, 43, 47, 51, 55, 59, 64, 69, 74, 79, 84, 90, 97, 103, 110};
  static const int16_t widths[33] = {1, 1, 2, 2, 1, 2, 2, 2, 2, 2, 3, 2, 3, 2, 3, 3, 3,
                                     4, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5, 6, 7, 6, 7, 7};
  const uint64_t golden[32] = {5645104312, 3087527471, 5883346002, 10807122775, 2465336182, 853935004, 1206905130,
                               3485828019, 1134726750, 832725041,  4442875878, 2122064365,  178483220,  151483681,
                               1742660113, 1309124116, 1954305288, 1323857378, 2750861165,  1340947482, 792522630,
                               669257768,  1659699572, 940652856,  1957080469, 1034203505,  1541805928, 1710818326,
                               2432875876, 2254716277, 275382345,  57293224};
  const FilterBankTables tables{weights, unweights, frequency_starts, weight_starts, widths};
  uint64_t out[32];
  signal_filter_bank(energy, tables, 32, out);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(out[i], golden[i]) << "channel " << i;
}

TEST(TflmSignalKernels, FilterBank16ChannelsMatchesTflm) {
  static const uint32_t energy[129] = {
      645050, 4644,  3653,  24262, 56660, 43260, 50584, 57902, 31702, 5401,  45555, 34852, 8518,  43556, 13358,
      19350,  40221, 18017, 27284, 64491, 60099, 17863, 11001, 29076, 32666, 65268, 50947, 28694, 32377, 30014,
      25607,  22547, 45086, 10654, 46797, 8622,  47348, 43085, 5747,  51544, 50364, 6208,  20696, 59782, 14429,
      60125,  37079, 32673, 63457, 60142, 34042, 11280, 1874,  33734, 62118, 13766, 54398, 47818, 50976, 46930,
      25906,  59441, 25958, 59136, 1756,  18652, 29213, 13379, 51845, 1207,  55626, 27108, 43771, 35236, 3374,
      40959,  47707, 41540, 34282, 27094, 36329, 13593, 65257, 47006, 46857, 1114,  37106, 18738, 25969, 15461,
      2842,   36470, 32489, 61622, 23613, 29624, 32820, 30438, 9543,  6767,  23037, 52896, 12059, 32264, 11575,
      42400,  43344, 27511, 16712, 6877,  4910,  50047, 61569, 57237, 48558, 2310,  22192, 7874,  46141, 64056,
      61997,  7298,  31372, 25316, 683,   58940, 18755, 17898, 19196};
  static const int16_t weights[59] = {-2210, 1711, 3237, 1247, 2507, 61,   1019, 899,  206,  146,  2849, 2756,
                                      1260,  1280, 1951, 213,  617,  2047, 211,  347,  2821, 3747, 150,  1924,
                                      3962,  942,  1430, 2678, 993,  308,  3364, 2491, 954,  1308, 879,  3950,
                                      1,     3556, 3628, 2104, 78,   1298, 1080, 342,  1337, 1639, 2352, 829,
                                      1358,  2498, 1647, 2507, 3816, 3767, 3735, 1155, 2221, 2196, 1160};
  static const int16_t unweights[59] = {408,  3574, 1880, 2561, 2011, 3394, 1019, 445,  3901, 343,  1874, 3846,
                                        3566, 1830, 327,  111,  623,  1037, 2803, 1947, 1518, 661,  3239, 2351,
                                        1257, 269,  1574, 3431, 3972, 2487, 2181, 1458, 552,  717,  679,  1031,
                                        1738, 1782, 128,  2242, 353,  1460, 3305, 1424, 3813, 2895, 164,  272,
                                        3886, 3135, 141,  747,  3233, 1478, 2612, 3837, 3271, 73,   1746};
  // TFLM's table as it is (its last frequency start, 33, is below the one
  // before it).
  static const int16_t frequency_starts[17] = {5, 6, 7, 9, 11, 12, 14, 16, 18, 20, 22, 25, 27, 30, 32, 35, 33};
  static const int16_t weight_starts[17] = {0, 1, 2, 4, 6, 7, 9, 11, 13, 15, 17, 20, 22, 25, 27, 30, 33};
  static const int16_t widths[17] = {1, 1, 2, 2, 1, 2, 2, 2, 2, 2, 3, 2, 3, 2, 3, 3, 3};
  const uint64_t golden[16] = {104199304, 407748384, 206363744, 200989269, 52144406,  230780884, 174394190, 379684049,
                               94840835,  57788823,  531528204, 318265707, 263149795, 188110467, 501443259, 200747781};
  const FilterBankTables tables{weights, unweights, frequency_starts, weight_starts, widths};
  uint64_t out[16];
  signal_filter_bank(energy, tables, 16, out);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], golden[i]) << "channel " << i;
}

// ---------------------------------------------------------------------------
// SIGNAL_FILTER_BANK_SQUARE_ROOT: signal/micro/kernels/filter_bank_square_root_test.cc
// (no options; the scale is its second input, a scalar: 7 and 5).

void expect_square_root(const uint64_t* in, int32_t scale_bits, const uint32_t* golden, int n) {
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(sqrt64(in[i]) >> scale_bits, golden[i]) << "scale_bits=" << scale_bits << " i=" << i;
  }
}

TEST(TflmSignalKernels, FilterBankSquareRootMatchesTflm) {
  const uint64_t in32[32] = {10528000193, 28362909357, 47577133750, 8466055850, 5842710800, 2350911449, 2989811430,
                             2646718839,  515262774,   276394561,   469831522,  55815334,   28232446,   11591835,
                             40329249,    67658028,    183446654,   323189165,  117473797,  41339272,   25846050,
                             12428673,    18670978,    22521722,    78477733,   54207503,   25150296,   43098592,
                             28211625,    15736687,    20990296,    17907031};
  const uint32_t golden32[32] = {801, 1315, 1704, 718, 597, 378, 427, 401, 177, 129, 169, 58, 41, 26, 49, 64,
                                 105, 140,  84,   50,  39,  27,  33,  37,  69,  57,  39,  51, 41, 30, 35, 33};
  expect_square_root(in32, 7, golden32, 32);

  const uint64_t in16[16] = {13051415151, 14932650877, 18954728418, 8730126017, 6529665275,  12952546517,
                             10314975609, 8919697835,  8053663348,  17231208421, 7366899760, 1372112200,
                             19953434807, 17012385332, 4710443222,  17765594053};
  const uint32_t golden16[16] = {3570, 3818, 4302, 2919, 2525, 3556, 3173, 2951,
                                 2804, 4102, 2682, 1157, 4414, 4076, 2144, 4165};
  expect_square_root(in16, 5, golden16, 16);
}

// ---------------------------------------------------------------------------
// SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION:
// signal/micro/kernels/filter_bank_spectral_subtraction_test.cc. Both TFLM
// cases share one set of options
// (filter_bank_spectral_subtraction_flexbuffers_generated_data.cc) but for
// num_channels (32 / 16): smoothing = alternate_smoothing = 655,
// one_minus_smoothing = alternate_one_minus_smoothing = 15729,
// smoothing_bits = 0, min_signal_remaining = 819,
// spectral_subtraction_bits = 14, clamping = 0 (TFLM tests clamping off only).
// TFLM starts the noise state at zero; its second output is the noise
// estimate after the call. Its "Reset" cases run the op, reset the state and
// run it again on the same input, expecting the same outputs both times.

constexpr SpectralSubtractionParams kTflmSubtractionParams{655, 15729, 655, 15729, 0, 819, 14, 0};

// The 32-channel map of TFLM's test data, as bytes.
constexpr uint8_t kTflmSubtraction32ChannelOptions[210] = {
    0x6e, 0x75, 0x6d, 0x5f, 0x63, 0x68, 0x61, 0x6e, 0x6e, 0x65, 0x6c, 0x73, 0x00, 0x73, 0x6d, 0x6f, 0x6f, 0x74,
    0x68, 0x69, 0x6e, 0x67, 0x00, 0x6f, 0x6e, 0x65, 0x5f, 0x6d, 0x69, 0x6e, 0x75, 0x73, 0x5f, 0x73, 0x6d, 0x6f,
    0x6f, 0x74, 0x68, 0x69, 0x6e, 0x67, 0x00, 0x61, 0x6c, 0x74, 0x65, 0x72, 0x6e, 0x61, 0x74, 0x65, 0x5f, 0x73,
    0x6d, 0x6f, 0x6f, 0x74, 0x68, 0x69, 0x6e, 0x67, 0x00, 0x61, 0x6c, 0x74, 0x65, 0x72, 0x6e, 0x61, 0x74, 0x65,
    0x5f, 0x6f, 0x6e, 0x65, 0x5f, 0x6d, 0x69, 0x6e, 0x75, 0x73, 0x5f, 0x73, 0x6d, 0x6f, 0x6f, 0x74, 0x68, 0x69,
    0x6e, 0x67, 0x00, 0x73, 0x6d, 0x6f, 0x6f, 0x74, 0x68, 0x69, 0x6e, 0x67, 0x5f, 0x62, 0x69, 0x74, 0x73, 0x00,
    0x6d, 0x69, 0x6e, 0x5f, 0x73, 0x69, 0x67, 0x6e, 0x61, 0x6c, 0x5f, 0x72, 0x65, 0x6d, 0x61, 0x69, 0x6e, 0x69,
    0x6e, 0x67, 0x00, 0x63, 0x6c, 0x61, 0x6d, 0x70, 0x69, 0x6e, 0x67, 0x00, 0x73, 0x70, 0x65, 0x63, 0x74, 0x72,
    0x61, 0x6c, 0x5f, 0x73, 0x75, 0x62, 0x74, 0x72, 0x61, 0x63, 0x74, 0x69, 0x6f, 0x6e, 0x5f, 0x62, 0x69, 0x74,
    0x73, 0x00, 0x09, 0x66, 0x7b, 0x26, 0x3c, 0xa9, 0x93, 0x9e, 0x4f, 0x23, 0x09, 0x00, 0x01, 0x00, 0x09, 0x00,
    0x71, 0x3d, 0x8f, 0x02, 0x00, 0x00, 0x33, 0x03, 0x20, 0x00, 0x71, 0x3d, 0x8f, 0x02, 0x00, 0x00, 0x0e, 0x00,
    0x05, 0x05, 0x05, 0x05, 0x05, 0x05, 0x05, 0x05, 0x05, 0x1b, 0x25, 0x01};

TEST(TflmSignalKernels, SpectralSubtractionOptionsDecodeAsUsedHere) {
  // The hand-decoded values above, read back from TFLM's bytes by floe's
  // FlexBuffer reader.
  const conv::CustomOptions o(kTflmSubtraction32ChannelOptions, sizeof(kTflmSubtraction32ChannelOptions));
  EXPECT_EQ(o.integer("num_channels"), 32);
  EXPECT_EQ(o.integer("smoothing"), kTflmSubtractionParams.smoothing);
  EXPECT_EQ(o.integer("one_minus_smoothing"), kTflmSubtractionParams.one_minus_smoothing);
  EXPECT_EQ(o.integer("alternate_smoothing"), kTflmSubtractionParams.alternate_smoothing);
  EXPECT_EQ(o.integer("alternate_one_minus_smoothing"), kTflmSubtractionParams.alternate_one_minus_smoothing);
  EXPECT_EQ(o.integer("smoothing_bits"), kTflmSubtractionParams.smoothing_bits);
  EXPECT_EQ(o.integer("min_signal_remaining"), kTflmSubtractionParams.min_signal_remaining);
  EXPECT_EQ(o.integer("spectral_subtraction_bits"), kTflmSubtractionParams.spectral_subtraction_bits);
  EXPECT_EQ(o.integer("clamping"), kTflmSubtractionParams.clamping);
}

// Runs `frames` frames in a row on one noise state, starting from zero, with
// the state reset to zero between frames when `reset` is set; every frame is
// checked against the same goldens.
void expect_spectral_subtraction(const uint32_t* x, const uint32_t* golden_out, const uint32_t* golden_noise,
                                 int32_t channels, int frames, bool reset) {
  std::vector<uint32_t> noise(channels, 0), out(channels);
  for (int f = 0; f < frames; ++f) {
    if (reset) std::fill(noise.begin(), noise.end(), 0u);
    signal_spectral_subtraction(kTflmSubtractionParams, x, noise.data(), out.data(), channels);
    for (int32_t i = 0; i < channels; ++i) {
      EXPECT_EQ(out[i], golden_out[i]) << "frame " << f << " channel " << i;
      EXPECT_EQ(noise[i], golden_noise[i]) << "frame " << f << " channel " << i;
    }
  }
}

constexpr uint32_t kSubtraction32In[32] = {322, 308, 210, 212, 181, 251, 403, 259, 65, 48, 76,  48,  50,  46,  53,  52,
                                           112, 191, 136, 59,  70,  51,  39,  64,  33, 44, 41,  49,  74,  107, 262, 479};
constexpr uint32_t kSubtraction32Out[32] = {310, 296, 202, 204, 174, 241, 387, 249, 63, 47, 73,  47,  49,  45,  51,  50,
                                            108, 184, 131, 57,  68,  49,  38,  62,  32, 43, 40,  48,  72,  103, 252, 460};
constexpr uint32_t kSubtraction32Noise[32] = {12, 12, 8, 8, 7, 10, 16, 10, 2, 1, 3, 1, 1, 1,  2,  2,
                                              4,  7,  5, 2, 2, 2,  1,  2,  1, 1, 1, 1, 2, 4, 10, 19};
constexpr uint32_t kSubtraction16In[16] = {393, 213, 408, 1, 361, 385, 386, 326, 170, 368, 368, 305, 152, 322, 213, 319};
constexpr uint32_t kSubtraction16Out[16] = {378, 205, 392, 1, 347, 370, 371, 313, 164, 354, 354, 293, 146, 310, 205, 307};
constexpr uint32_t kSubtraction16Noise[16] = {15, 8, 16, 0, 14, 15, 15, 13, 6, 14, 14, 12, 6, 12, 8, 12};

TEST(TflmSignalKernels, SpectralSubtraction32ChannelsMatchesTflm) {
  expect_spectral_subtraction(kSubtraction32In, kSubtraction32Out, kSubtraction32Noise, 32, 1, false);
}

TEST(TflmSignalKernels, SpectralSubtraction16ChannelsMatchesTflm) {
  expect_spectral_subtraction(kSubtraction16In, kSubtraction16Out, kSubtraction16Noise, 16, 1, false);
}

TEST(TflmSignalKernels, SpectralSubtractionResetBetweenFramesMatchesTflm) {
  expect_spectral_subtraction(kSubtraction32In, kSubtraction32Out, kSubtraction32Noise, 32, 2, true);
  expect_spectral_subtraction(kSubtraction16In, kSubtraction16Out, kSubtraction16Noise, 16, 2, true);
}

// ---------------------------------------------------------------------------
// SIGNAL_PCAN: signal/micro/kernels/pcan_test.cc, case Mix1Ref1Case (options:
// snr_shift = 6, from pcan_flexbuffers_generated_data.cc).

TEST(TflmSignalKernels, PcanMix1Ref1MatchesTflm) {
  const uint32_t x[40] = {286, 298, 305, 291, 290, 279, 273, 257, 250, 240, 240, 233, 234, 230,
                          221, 205, 183, 159, 156, 188, 239, 298, 345, 374, 380, 369, 359, 364,
                          372, 354, 302, 243, 194, 135, 64,  72,  171, 245, 277, 304};
  const uint32_t noise[40] = {7310, 18308, 7796, 17878, 7413, 17141, 6978, 15789, 6390, 14745,
                              6135, 14314, 5981, 14130, 5649, 12594, 4677, 9768,  3987, 11550,
                              6109, 18308, 8819, 22977, 9713, 22670, 9176, 22363, 9509, 21748,
                              7719, 14929, 4959, 8294,  1636, 4423,  4371, 15052, 7080, 18677};
  const int16_t gain_lut[125] = {
      32636, 32633,  32630, -6,     0,     -21589, 32624, -12,    0,     -21589, 32612, -23,    -2,
      -21589, 32587, -48,   0,      -21589, 32539, -96,    0,     -21589, 32443, -190,   0,     -21589,
      32253, -378,   4,     -21589, 31879, -739,   18,    -21589, 31158, -1409,  62,    -21589, 29811,
      -2567, 202,    -21589, 27446, -4301, 562,    -21589, 23707, -6265,  1230,  -21589, 18672, -7458,
      1952,  -21589, 13166, -7030,  2212,  -21589, 8348,  -5342,  1868,  -21589, 4874,  -3459,  1282,
      -21589, 2697,  -2025, 774,    -21589, 1446,  -1120, 436,    -21589, 762,   -596,   232,    -21589,
      398,   -313,   122,   -21589, 207,   -164,   64,    -21589, 107,    -85,   34,     -21589, 56,
      -45,   18,     -21589, 29,    -22,    8,     -21589, 15,    -13,    6,     -21589, 8,      -8,
      4,     -21589, 4,     -2,     0,     -21589, 2,     -3,     2,     -21589, 1,     0,      0,
      -21589, 1,     -3,    2,      -21589, 0,     0,      0};
  const uint32_t golden[40] = {1301, 836, 1354, 827, 1312, 811, 1263, 779, 1192, 753, 1160, 743, 1140, 738,
                               1096, 698, 956,  607, 845,  667, 1157, 836, 1461, 912, 1546, 908, 1496, 904,
                               1527, 895, 1346, 758, 999,  548, 378,  344, 908,  761, 1274, 843};
  uint32_t out[40] = {};
  signal_pcan(x, noise, gain_lut, 6, out, 40);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(out[i], golden[i]) << "channel " << i;
}

// ---------------------------------------------------------------------------
// SIGNAL_FILTER_BANK_LOG: signal/micro/kernels/filter_bank_log_test.cc
// (options from filter_bank_log_flexbuffers_generated_data.cc, keys sorted:
// input_correction_bits = 3, output_scale = 1600 for the 32-channel case;
// 5 and 32768 for the 16-channel one).

TEST(TflmSignalKernels, FilterBankLog32ChannelsScale1600Correction3MatchesTflm) {
  const uint32_t x[32] = {29, 21, 29, 40, 19, 11, 13, 23, 13, 11, 25, 17, 5,  4,  46, 14,
                          17, 14, 20, 14, 10, 10, 15, 11, 17, 12, 15, 16, 19, 18, 6,  2};
  const int16_t golden[32] = {8715, 8198, 8715, 9229, 8038, 7164, 7431, 8344, 7431, 7164, 8477,
                              7860, 5902, 5545, 9453, 7550, 7860, 7550, 8120, 7550, 7011, 7011,
                              7660, 7164, 7860, 7303, 7660, 7763, 8038, 7952, 6194, 4436};
  int16_t out[32];
  signal_filter_bank_log(x, out, 32, 3, 1600);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(out[i], golden[i]) << "channel " << i;
}

TEST(TflmSignalKernels, FilterBankLog16ChannelsScale32768Correction5MatchesTflm) {
  const uint32_t x[16] = {48, 20, 19, 24, 35, 47, 23, 30, 31, 10, 48, 21, 46, 14, 18, 27};
  const int16_t golden[16] = {32767, 15121, 13440, 21095, 32767, 32767, 19701, 28407,
                              29482, 32767, 32767, 16720, 32767, 3434,  11669, 24955};
  int16_t out[16];
  signal_filter_bank_log(x, out, 16, 5, 32768);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], golden[i]) << "channel " << i;
}

TEST(TflmSignalKernels, FilterBankLogOptionsDecodeAsUsedHere) {
  // TFLM's 16-channel map (32-bit values), read back by floe's FlexBuffer
  // reader.
  constexpr uint8_t bytes[65] = {0x6f, 0x75, 0x74, 0x70, 0x75, 0x74, 0x5f, 0x73, 0x63, 0x61, 0x6c, 0x65, 0x00,
                                 0x69, 0x6e, 0x70, 0x75, 0x74, 0x5f, 0x63, 0x6f, 0x72, 0x72, 0x65, 0x63, 0x74,
                                 0x69, 0x6f, 0x6e, 0x5f, 0x62, 0x69, 0x74, 0x73, 0x00, 0x02, 0x17, 0x25, 0x00,
                                 0x00, 0x04, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
                                 0x05, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x06, 0x06, 0x0a, 0x26, 0x01};
  const conv::CustomOptions o(bytes, sizeof(bytes));
  EXPECT_EQ(o.integer("input_correction_bits"), 5);
  EXPECT_EQ(o.integer("output_scale"), 32768);
}

}  // namespace
}  // namespace floe::ref
