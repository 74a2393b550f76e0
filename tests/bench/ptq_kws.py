# SPDX-License-Identifier: Apache-2.0
"""Post-training int8 quantization of the corpus' float keyword-spotting models, measured.

    /usr/bin/python3 tests/bench/ptq_kws.py --bin build/host/bin --shared ../shared --work DIR

For each model: converts it to float and, calibrated on one set of inputs, to
int8 (floe-convert --quantize int8); prints the converter's per-layer SQNR
(on the calibration set) and the top-1 agreement of int8 with float on a
second, disjoint set of inputs, run through floe-run. The inputs are what the
corpus holds, augmented (seeded):
  - mlperf_tiny_qualcomm/KWS (input_1, MLPerf's MFCC features): the one real
    feature map of the corpus (int8/mlperf_tiny/kws/kws_input0_int8.npy,
    dequantized with the int8 model's input scale and zero point), shifted in
    time, scaled and with Gaussian noise. Its own front end (tf.signal) is not
    in the graph, so WAV clips cannot be fed.
  - ML-KWS-for-MCU DS_CNN_S/M/L (fed at Mfcc:0): features of the corpus' five
    1 s clips (speech_commands_wav yes/no/noise/silence, ML-KWS silence.wav),
    shifted, scaled and mixed with noise, then through a numpy transcription
    of TensorFlow's AudioSpectrogram + Mfcc with the graphs' attributes.
A measurement, not a test: the numbers go into the closing notes.
"""

import argparse
import os
import subprocess
import sys
import wave

import numpy as np

# The graphs' AudioSpectrogram and Mfcc attributes (all DS_CNN sizes).
WINDOW, STRIDE, FFT = 640, 320, 1024
RATE, LOW_HZ, HIGH_HZ, CHANNELS, COEFFICIENTS = 16000, 20.0, 4000.0, 40, 10


def read_wav(path):
    with wave.open(path, "rb") as w:
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0
    return np.pad(pcm, (0, max(0, RATE - len(pcm))))[:RATE]


def mel(hz):
    return 1127.0 * np.log1p(hz / 700.0)


def mfcc(samples):
    """TF's AudioSpectrogram (magnitude squared, periodic Hann) then Mfcc, in float64."""
    frames = 1 + (len(samples) - WINDOW) // STRIDE
    hann = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(WINDOW) / WINDOW)
    spectrum = np.stack([np.abs(np.fft.rfft(samples[f * STRIDE:f * STRIDE + WINDOW] * hann, FFT)) ** 2
                         for f in range(frames)])
    bins = FFT // 2 + 1
    hz_per_bin = 0.5 * RATE / (bins - 1)
    centers = mel(LOW_HZ) + (mel(HIGH_HZ) - mel(LOW_HZ)) / (CHANNELS + 1) * np.arange(1, CHANNELS + 2)
    start, end = int(1.5 + LOW_HZ / hz_per_bin), int(HIGH_HZ / hz_per_bin)
    bank = np.zeros((bins, CHANNELS))
    for i in range(start, end + 1):
        m = mel(i * hz_per_bin)
        upper = int(np.searchsorted(centers, m))  # first center >= m
        lower_edge = centers[upper - 1] if upper > 0 else mel(LOW_HZ)
        weight = (centers[upper] - m) / (centers[upper] - lower_edge)
        if upper > 0:
            bank[i, upper - 1] += weight
        if upper < CHANNELS:
            bank[i, upper] += 1.0 - weight
    energies = np.log(np.maximum(np.sqrt(spectrum) @ bank, 1e-12))
    dct = np.sqrt(2.0 / CHANNELS) * np.cos(
        np.pi / CHANNELS * np.outer(np.arange(COEFFICIENTS), np.arange(CHANNELS) + 0.5))
    return (energies @ dct.T).astype(np.float32)


def audio_inputs(clips, seed, n):
    rng = np.random.RandomState(seed)
    noise = clips[-1]
    out = []
    for _ in range(n):
        clip = np.roll(clips[rng.randint(len(clips))], rng.randint(-1600, 1601))
        mixed = clip * rng.uniform(0.5, 1.5) + np.roll(noise, rng.randint(RATE)) * rng.uniform(0.0, 0.3)
        out.append(mfcc(np.clip(mixed, -1.0, 1.0))[None])
    return out


def feature_inputs(features, seed, n):
    rng = np.random.RandomState(seed)
    return [(np.roll(features, rng.randint(-8, 9), axis=1) * rng.uniform(0.8, 1.2) +
             rng.normal(0.0, 3.0, features.shape)).astype(np.float32) for _ in range(n)]


class Floe:
    def __init__(self, bin_dir, work):
        self.bin, self.work = bin_dir, work

    def convert(self, out, args):
        r = subprocess.run([os.path.join(self.bin, "floe-convert")] + args + ["-o", out],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            sys.exit("floe-convert failed:\n" + r.stdout)
        return r.stdout

    def top1(self, model, input_name, x):
        sample, out_dir = os.path.join(self.work, "sample.npy"), os.path.join(self.work, "out")
        os.makedirs(out_dir, exist_ok=True)
        np.save(sample, x)
        subprocess.run([os.path.join(self.bin, "floe-run"), model, "--input", input_name + "=" + sample,
                        "-o", out_dir], check=True, stdout=subprocess.DEVNULL)
        (name,) = os.listdir(out_dir)
        value = np.load(os.path.join(out_dir, name))
        os.remove(os.path.join(out_dir, name))
        return int(np.argmax(value))


def report(floe, label, graph_args, input_name, calibration, evaluation):
    work = floe.work
    np.savez(os.path.join(work, "calibration.npz"), **{input_name: np.concatenate(calibration)})
    float_model, int8_model = os.path.join(work, "float.floe"), os.path.join(work, "int8.floe")
    floe.convert(float_model, graph_args)
    summary = floe.convert(int8_model, graph_args + ["--quantize", "int8", "--calibration",
                                                     os.path.join(work, "calibration.npz")])
    agree = sum(floe.top1(float_model, input_name, x) == floe.top1(int8_model, input_name, x)
                for x in evaluation)
    print("## %s: calibrated on %d inputs, top-1 agreement with float %d / %d" %
          (label, len(calibration), agree, len(evaluation)))
    for line in summary.splitlines():
        if "SQNR" in line or "model:" in line:
            print("  " + line.strip())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--shared", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    corpus = os.path.join(args.shared, "corpus")
    floe = Floe(args.bin, args.work)

    kws = os.path.join(corpus, "mlperf_tiny_qualcomm", "KWS", "trained_models")
    q = np.load(os.path.join(corpus, "int8", "mlperf_tiny", "kws", "kws_input0_int8.npy")).astype(np.float32)
    features = (q - 83.0) * 0.584703  # the int8 model's input quantization
    report(floe, "mlperf_tiny_qualcomm KWS (checkpoint)",
           ["--graph", os.path.join(kws, "kws.ckpt.meta"), "--checkpoint", kws, "--outputs", "dense/Softmax",
            "--input-shape", "input_1=1,49,10,1"],
           "input_1", [features] + feature_inputs(features, 1, 63), feature_inputs(features, 2, 200))

    clips = [read_wav(os.path.join(corpus, "speech_commands_wav", n + "_1000ms.wav"))
             for n in ("yes", "no", "silence")]
    clips.append(read_wav(os.path.join(corpus, "ML-KWS-for-MCU", "silence.wav")))
    clips.append(read_wav(os.path.join(corpus, "speech_commands_wav", "noise_1000ms.wav")))
    calibration, evaluation = audio_inputs(clips, 1, 64), audio_inputs(clips, 2, 200)
    for size in ("S", "M", "L"):
        graph = os.path.join(corpus, "ML-KWS-for-MCU", "Pretrained_models", "DS_CNN", "DS_CNN_%s.pb" % size)
        report(floe, "ML-KWS-for-MCU DS_CNN_%s (fed at Mfcc:0)" % size,
               ["--graph", graph, "--inputs", "Mfcc:0", "--input-shape", "Mfcc=1,49,10",
                "--outputs", "labels_softmax"], "Mfcc", calibration, evaluation)
    return 0


if __name__ == "__main__":
    sys.exit(main())
