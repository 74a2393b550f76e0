/* SPDX-License-Identifier: Apache-2.0
 * An int8 .tflite under TF Lite 2.9's C library (the one npm tfjs-tflite-node
 * ships) with its XNNPACK delegate in QS8 mode, for compare.py's int8 rows:
 *   tflite_int8_bench MODEL.tflite [--threads N] [--runs N] [--in IN.npy] [--out OUT.bin] [--builtin]
 * IN.npy: int8 input 0 (its last tensor-size bytes are the data). OUT.bin: the
 * raw bytes of output 0. Prints "median X ms" like tflite_bench. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tensorflow/lite/c/c_api.h"

/* The leading fields of TF Lite 2.9's TfLiteXNNPackDelegateOptions; zeros after. */
struct XnnpackOptions {
  int32_t num_threads;
  uint32_t flags;
  void* weights_cache;
  char reserved[64];
};
enum { kXnnpackFlagQs8 = 1 }; /* TFLITE_XNNPACK_DELEGATE_FLAG_QS8 in 2.9 */
extern TfLiteDelegate* TfLiteXNNPackDelegateCreate(const struct XnnpackOptions* options);

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static int read_tail(const char* path, void* dst, size_t bytes) {
  FILE* f = fopen(path, "rb");
  if (f == NULL || fseek(f, -(long)bytes, SEEK_END) != 0 || fread(dst, 1, bytes, f) != bytes) return 0;
  fclose(f);
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.tflite [--threads N] [--runs N] [--in IN.npy] [--out OUT.bin] [--builtin]\n", argv[0]);
    return 2;
  }
  int threads = 1, runs = 200, delegate = 1;
  const char *in = NULL, *out = NULL;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--in") && i + 1 < argc) in = argv[++i];
    else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
    else if (!strcmp(argv[i], "--builtin")) delegate = 0;
  }
  if (runs < 1) runs = 1;
  TfLiteModel* model = TfLiteModelCreateFromFile(argv[1]);
  if (model == NULL) {
    fprintf(stderr, "cannot load %s\n", argv[1]);
    return 1;
  }
  TfLiteInterpreterOptions* options = TfLiteInterpreterOptionsCreate();
  TfLiteInterpreterOptionsSetNumThreads(options, threads);
  if (delegate) {
    struct XnnpackOptions xo;
    memset(&xo, 0, sizeof xo);
    xo.num_threads = threads;
    xo.flags = kXnnpackFlagQs8;
    TfLiteInterpreterOptionsAddDelegate(options, TfLiteXNNPackDelegateCreate(&xo));
  }
  TfLiteInterpreter* it = TfLiteInterpreterCreate(model, options);
  if (it == NULL || TfLiteInterpreterAllocateTensors(it) != kTfLiteOk) {
    fprintf(stderr, "interpreter setup failed\n");
    return 1;
  }
  TfLiteTensor* input = TfLiteInterpreterGetInputTensor(it, 0);
  const size_t in_bytes = TfLiteTensorByteSize(input);
  int8_t* x = (int8_t*)TfLiteTensorData(input);
  if (in != NULL) {
    if (!read_tail(in, x, in_bytes)) {
      fprintf(stderr, "cannot read %zu bytes from %s\n", in_bytes, in);
      return 1;
    }
  } else {
    for (size_t i = 0; i < in_bytes; i++) x[i] = (int8_t)(i % 7);
  }
  if (TfLiteInterpreterInvoke(it) != kTfLiteOk) {
    fprintf(stderr, "invoke failed\n");
    return 1;
  }
  const TfLiteTensor* output = TfLiteInterpreterGetOutputTensor(it, 0);
  if (out != NULL) {
    FILE* f = fopen(out, "wb");
    if (f == NULL) return 1;
    fwrite(TfLiteTensorData(output), 1, TfLiteTensorByteSize(output), f);
    fclose(f);
  }
  for (int i = 0; i < 5; i++) TfLiteInterpreterInvoke(it);
  double* ms = malloc(sizeof(double) * (size_t)runs);
  for (int i = 0; i < runs; i++) {
    const double start = now_ms();
    TfLiteInterpreterInvoke(it);
    ms[i] = now_ms() - start;
  }
  qsort(ms, (size_t)runs, sizeof(double), by_value);
  printf("TF Lite %s, %s, threads %d: %d runs, min %.4f ms, median %.4f ms\n", TfLiteVersion(),
         delegate ? "XNNPACK delegate (QS8)" : "builtin kernels", threads, runs, ms[0], ms[runs / 2]);
  free(ms);
  return 0;
}
