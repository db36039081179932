// SPDX-License-Identifier: Apache-2.0
// ONNX Runtime on any one-input ONNX file (bench/model_files_bench.py): node ort_run.js ORT_DIR
// MODEL.onnx INPUT.npy BUDGET_MS, with onnxruntime-node from ORT_DIR (PERF-NOTES.md), 2 intra-op
// threads, one inter-op thread, all graph optimizations. Prints one JSON line: the median and
// minimum latency of the timed runs after 3 warm-up runs, and the output's first values.
'use strict';
const path = require('path');
const { readNpyF32 } = require('./npy');

async function main() {
  const [ortDir, model, input, budgetMs] = process.argv.slice(2);
  const ort = require(path.join(ortDir, 'node_modules', 'onnxruntime-node'));
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: 2, interOpNumThreads: 1, graphOptimizationLevel: 'all', executionMode: 'sequential',
  });
  const x = readNpyF32(input);
  const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', x.data, x.shape) };
  let out;
  for (let i = 0; i < 3; ++i) out = await session.run(feeds);
  const times = [];
  const t0 = performance.now();
  while (times.length < 5 || (performance.now() - t0 < Number(budgetMs) && times.length < 200)) {
    const t = performance.now();
    await session.run(feeds);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const y = out[session.outputNames[0]].data;
  console.log(JSON.stringify({ ms: times[times.length >> 1], min_ms: times[0], runs: times.length,
                               head: Array.from(y.slice(0, 4)) }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
