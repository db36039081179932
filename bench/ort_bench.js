// SPDX-License-Identifier: Apache-2.0
// ONNX Runtime's side of the model inference figures (bench/model_bench.sh): node ort_bench.js
// ORT_DIR MODELS_DIR NAME... runs MODELS_DIR/<name>/model.onnx (bench/export_models.py) with
// onnxruntime-node from ORT_DIR (npm install --ignore-scripts onnxruntime-node@1.30.0 there, per
// PERF-NOTES.md), 2 intra-op threads, one inter-op thread, all graph optimizations, at batch 1
// and 16 on 224x224 inputs. One JSON line per (model, batch): the median latency of timed runs
// after warm-up, and the max |difference| of its output on input.npy from torch's output.npy.
'use strict';
const path = require('path');
const { readNpyF32 } = require('./npy');

async function main() {
  const [ortDir, modelsDir, ...names] = process.argv.slice(2);
  const ort = require(path.join(ortDir, 'node_modules', 'onnxruntime-node'));
  const opts = {
    intraOpNumThreads: 2, interOpNumThreads: 1, graphOptimizationLevel: 'all', executionMode: 'sequential',
  };
  for (const name of names) {
    const dir = path.join(modelsDir, name);
    const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), opts);
    const x = readNpyF32(path.join(dir, 'input.npy'));
    const want = readNpyF32(path.join(dir, 'output.npy'));
    const got = (await session.run({ input: new ort.Tensor('float32', x.data, x.shape) })).output.data;
    let diff = 0;
    for (let i = 0; i < want.data.length; ++i) diff = Math.max(diff, Math.abs(got[i] - want.data[i]));
    for (const batch of [1, 16]) {
      const n = batch * 3 * 224 * 224;
      const data = new Float32Array(n);
      for (let i = 0; i < n; ++i) data[i] = Math.sin(i * 0.37);  // any values: the time does not depend on them
      const feeds = { input: new ort.Tensor('float32', data, [batch, 3, 224, 224]) };
      for (let i = 0; i < 3; ++i) await session.run(feeds);  // warm-up
      const times = [];
      const budget = batch === 1 ? 3000 : 6000;  // ms of timed runs, at least 5 runs
      const t0 = performance.now();
      while (times.length < 5 || (performance.now() - t0 < budget && times.length < 200)) {
        const t = performance.now();
        await session.run(feeds);
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      console.log(JSON.stringify({ bench: 'ort_infer', model: name, batch, threads: 2, runs: times.length,
                                   ms: times[times.length >> 1], min_ms: times[0], max_abs_diff: diff }));
    }
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
