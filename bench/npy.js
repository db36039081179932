// SPDX-License-Identifier: Apache-2.0
// Reads a float32 little-endian .npy file for the ONNX Runtime benchmarks (ort_bench.js,
// ort_run.js): { shape, data: Float32Array }.
'use strict';
const fs = require('fs');

function readNpyF32(file) {
  const buf = fs.readFileSync(file);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + hlen;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
  if (!header.includes("'<f4'")) throw new Error(`${file}: expected float32 little-endian, header ${header}`);
  const shape = header.match(/'shape':\s*\(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + buf.length));
  return { shape, data };
}

module.exports = { readNpyF32 };
