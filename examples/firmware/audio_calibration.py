# SPDX-License-Identifier: Apache-2.0
"""Calibration samples for a keyword-spotting graph fed its decoded audio.

    /usr/bin/python3 examples/firmware/audio_calibration.py OUT.npz NAME CLIP.wav...

Writes OUT.npz with one member NAME: every clip (16-bit PCM, 16 kHz, mono,
padded or cut to one second) at gains 0.5, 1 and 1.5 and circularly shifted
by -0.1, 0 and +0.1 s, clipped to [-1, 1], stacked as [k * 16000, 1] float32
(k samples of a [16000, 1] input). Deterministic; numpy and the standard
library only.
"""

import sys
import wave

import numpy as np

RATE = 16000


def read_clip(path):
    with wave.open(path, "rb") as w:
        if w.getsampwidth() != 2 or w.getnchannels() != 1 or w.getframerate() != RATE:
            sys.exit("%s: expected 16-bit mono PCM at %d Hz" % (path, RATE))
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0
    return np.pad(pcm, (0, max(0, RATE - len(pcm))))[:RATE]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out, name, clips = sys.argv[1], sys.argv[2], sys.argv[3:]
    samples = [np.clip(np.roll(read_clip(c), shift) * gain, -1.0, 1.0)
               for c in clips for gain in (0.5, 1.0, 1.5) for shift in (-RATE // 10, 0, RATE // 10)]
    np.savez(out, **{name: np.concatenate(samples).astype(np.float32).reshape(-1, 1)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
