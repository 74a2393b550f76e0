#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An independent numpy model of TensorFlow's AudioSpectrogram and Mfcc, written
from the published algorithm (float64 throughout, numpy's FFT), to check floe's
kernels: audio_ops_test writes seeded random audio and floe's outputs as .npy,
this script recomputes both and compares.

  audio_frontend_numpy.py --audio A.npy --spectrogram S.npy --mfcc M.npy
      --window 640 --stride 320 [--magnitude] --sample-rate 16000
      --channels 40 --coefficients 10 --lower 20 --upper 4000

Spectrogram: relative error |floe - ref| / (|ref| + 1e-6 * max|ref| of its
frame), so bins ~120 dB below a frame's peak (where float32 FFT rounding
dominates any value) are judged against that floor. MFCC: |floe - ref| /
max(|ref|, 1). Both must be <= 1e-4; prints the largest of each. Exit 0 ok,
1 mismatch, 2 bad arguments.
"""
import argparse
import sys

import numpy as np


def spectrogram(audio, window_size, stride, magnitude_squared):
    length, channels = audio.shape
    fft_length = 1
    while fft_length < window_size:
        fft_length *= 2
    hann = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(window_size) / window_size)  # periodic
    frames = 0 if length < window_size else 1 + (length - window_size) // stride
    out = np.zeros((channels, frames, fft_length // 2 + 1))
    for c in range(channels):
        for f in range(frames):
            frame = audio[f * stride:f * stride + window_size, c].astype(np.float64) * hann
            power = np.abs(np.fft.rfft(frame, n=fft_length)) ** 2
            out[c, f] = power if magnitude_squared else np.sqrt(power)
    return out


def mel(hz):
    return 1127.0 * np.log1p(hz / 700.0)


def mfcc(spec, sample_rate, lower, upper, channel_count, coefficient_count):
    bins = spec.shape[2]
    centres = mel(lower) + (mel(upper) - mel(lower)) / (channel_count + 1) * np.arange(1, channel_count + 2)
    hz_per_bin = 0.5 * sample_rate / (bins - 1)
    first = int(1.5 + lower / hz_per_bin)
    last = int(upper / hz_per_bin)
    # Triangle filters as a dense [channels, bins] matrix: bin i between centres
    # c-1 and c rises for channel c and falls for channel c-1.
    weights = np.zeros((channel_count, bins))
    for i in range(first, last + 1):
        m = mel(i * hz_per_bin)
        c = int(np.searchsorted(centres[:channel_count], m, side='left'))  # first centre >= m
        lo = centres[c - 1] if c > 0 else mel(lower)
        rise = (m - lo) / (centres[c] - lo)  # share of the channel whose centre is above
        if c < channel_count:
            weights[c, i] += rise
        if c > 0:
            weights[c - 1, i] += 1.0 - rise
    energies = np.sqrt(spec.astype(np.float64)) @ weights.T
    log_mel = np.log(np.maximum(energies, 1e-12))
    k = np.arange(coefficient_count)[:, None]
    j = np.arange(channel_count)[None, :]
    dct = np.sqrt(2.0 / channel_count) * np.cos(np.pi / channel_count * k * (j + 0.5))
    return log_mel @ dct.T


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--audio', required=True)
    p.add_argument('--spectrogram', required=True)
    p.add_argument('--mfcc', required=True)
    p.add_argument('--window', type=int, required=True)
    p.add_argument('--stride', type=int, required=True)
    p.add_argument('--magnitude', action='store_true', help='the spectrogram is |X|, not |X|^2')
    p.add_argument('--sample-rate', type=int, required=True)
    p.add_argument('--channels', type=int, default=40)
    p.add_argument('--coefficients', type=int, default=13)
    p.add_argument('--lower', type=float, default=20.0)
    p.add_argument('--upper', type=float, default=4000.0)
    a = p.parse_args()
    audio = np.load(a.audio)
    spec = spectrogram(audio, a.window, a.stride, not a.magnitude)
    got_spec = np.load(a.spectrogram)
    if got_spec.shape != spec.shape:
        print(f'spectrogram shape {got_spec.shape}, numpy {spec.shape}')
        return 1
    floor = 1e-6 * np.max(np.abs(spec), axis=2, keepdims=True)
    spec_err = float(np.max(np.abs(got_spec - spec) / (np.abs(spec) + floor))) if spec.size else 0.0
    # TF's limits are float attrs: the model used them rounded to float32.
    # Mfcc reads whatever the spectrogram holds (TF takes its square root either way).
    ref = mfcc(spec, a.sample_rate, float(np.float32(a.lower)),
               float(np.float32(a.upper)), a.channels, a.coefficients)
    got = np.load(a.mfcc)
    if got.shape != ref.shape:
        print(f'mfcc shape {got.shape}, numpy {ref.shape}')
        return 1
    mfcc_err = float(np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1.0))) if ref.size else 0.0
    print(f'spectrogram {spec.shape} max relative error {spec_err:.3g}; mfcc {ref.shape} max relative error {mfcc_err:.3g}')
    return 0 if spec_err <= 1e-4 and mfcc_err <= 1e-4 else 1


if __name__ == '__main__':
    sys.exit(main())
