#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Runs a .tflite model on TensorFlow Lite 2.9 (the tfjs-tflite-node binding of
// ../shared/tools/peers) over a sequence of inputs on one interpreter, so its
// variable tensors (SVDF's, LSTM's state) carry from each invocation to the
// next, as a TFLite or TFLM user's streaming loop has them. Prints one JSON
// line per invocation: the values of every output.
// Usage: node tflite_sequence.js PEERS_DIR MODEL.tflite INPUTS.bin STEPS [STREAMS]
//   INPUTS.bin holds STREAMS x STEPS steps back to back, each step the raw
//   bytes of every input in the model's input order; each stream of STEPS
//   invocations runs on a fresh interpreter.
'use strict';
const fs = require('fs');
const path = require('path');
const [peers, modelPath, inputsPath, stepsText, streamsText] = process.argv.slice(2);
const steps = Number(stepsText), streams = streamsText === undefined ? 1 : Number(streamsText);
if (!peers || !modelPath || !inputsPath || !(steps > 0) || !(streams > 0)) {
  console.error('usage: tflite_sequence.js PEERS_DIR MODEL.tflite INPUTS.bin STEPS [STREAMS]');
  process.exit(2);
}
const root = path.dirname(require.resolve('tfjs-tflite-node/package.json', { paths: [peers] }));
const bindings = require(require.resolve('bindings', { paths: [peers] }));
const addon = bindings({ bindings: 'node_tflite_binding', module_root: root });
const bytes = fs.readFileSync(modelPath);
const model = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
const all = fs.readFileSync(inputsPath);
for (let stream = 0; stream < streams; stream++) {
  const interp = new addon.Interpreter(model, { threads: 1 });
  const views = interp.getInputs().map(t => { const d = t.data(); return new Uint8Array(d.buffer, d.byteOffset, d.byteLength); });
  const step = views.reduce((bytes, v) => bytes + v.byteLength, 0);
  if (all.length !== step * steps * streams) {
    console.error(`${inputsPath}: ${all.length} bytes, expected ${streams} x ${steps} x ${step}`);
    process.exit(2);
  }
  for (let k = 0; k < steps; k++) {
    let at = (stream * steps + k) * step;
    for (const view of views) {
      view.set(all.subarray(at, at + view.byteLength));
      at += view.byteLength;
    }
    interp.infer();
    console.log(JSON.stringify(interp.getOutputs().map(t => Array.from(t.data()))));
  }
}
