# SPDX-License-Identifier: Apache-2.0
"""Issue 6's figures (`make bench`): the same ONNX files run by `spore run --repeat` (Graph mode),
ONNX Runtime (bench/ort_run.js, 2 threads, all optimizations) and PyTorch (the module the file
was exported from, eval + inference_mode, channels_last for the CNNs as PERF-NOTES.md
recommends), batch 1 and 16, in one run; and the load time of a ~100 MB MindIR file.

Usage (PERF-NOTES.md's PyTorch environment):
  LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp ATEN_CPU_CAPABILITY=avx512 \\
    /usr/bin/python3 bench/model_files_bench.py build/bin/spore [--quick]
One JSON line per figure: {"bench", "spore_ms", "peer", "peer_ms", "ratio" (Spore / peer, lower
is better), "target", "met"}; ONNX Runtime's lines say "skipped" when node or onnxruntime-node
(installed outside the repository: PERF-NOTES.md) is missing."""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from export_models import make  # noqa: E402  torchvision models with randomized BatchNorm

SPORE = pathlib.Path(sys.argv[1]).resolve()
QUICK = "--quick" in sys.argv
ORT_DIR = os.environ.get("SPORE_ORT_DIR", "/tmp/ort")
HAVE_ORT = shutil.which("node") is not None and (pathlib.Path(ORT_DIR) / "node_modules" / "onnxruntime-node").is_dir()
torch.set_num_threads(2)


def emit(**kw):
    print(json.dumps(kw), flush=True)


def figure(label, spore_ms, peer, peer_ms, target, limit):
    ratio = spore_ms / peer_ms
    emit(bench=label, spore_ms=round(spore_ms, 3), peer=peer, peer_ms=round(peer_ms, 3), ratio=round(ratio, 3),
         target=f"<= {limit}x {peer}", met=ratio <= limit)


def torch_ms(model, x, budget):
    with torch.inference_mode():
        for _ in range(3):
            model(x)
        times, start = [], time.perf_counter()
        while len(times) < 5 or (time.perf_counter() - start < budget and len(times) < 200):
            t0 = time.perf_counter()
            model(x)
            times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2] * 1e3


def spore_ms(model_path, input_path, budget):
    # Enough timed runs for the budget, from one untimed estimate.
    probe = subprocess.run([str(SPORE), "run", str(model_path), "--input", str(input_path), "--repeat", "1",
                            "--warmup", "2"], capture_output=True, text=True, check=True)
    one = json.loads(probe.stdout.strip().splitlines()[-1])["median_ms"]
    n = int(max(5, min(200, budget * 1e3 / max(one, 1e-3))))
    p = subprocess.run([str(SPORE), "run", str(model_path), "--input", str(input_path), "--repeat", str(n),
                        "--warmup", "2"], capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])["median_ms"]


def ort_ms(model_path, input_path, budget):
    p = subprocess.run(["node", str(HERE / "ort_run.js"), ORT_DIR, str(model_path), str(input_path),
                        str(int(budget * 1e3))], capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])["ms"]


def transformer():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, dropout=0.0,
                                             batch_first=True)
    return torch.nn.TransformerEncoder(layer, num_layers=4).eval()


def main():
    tmp = pathlib.Path(tempfile.mkdtemp())
    try:
        models = [("resnet18", make("resnet18"), (3, 224, 224), True),
                  ("mobilenet_v2", make("mobilenet_v2"), (3, 224, 224), True),
                  ("transformer", transformer(), (128, 256), False)]
        for name, model, sample_shape, cnn in models:
            peer_model = model.to(memory_format=torch.channels_last) if cnn else model
            for batch in (1, 16):
                # One file per batch size with static shapes: the transformer's attention reshapes
                # its batch through Shape arithmetic, which Spore's importer folds only for static
                # sizes (docs/onnx-support.md); every engine runs the same file.
                path = tmp / f"{name}_b{batch}.onnx"
                x = torch.randn(batch, *sample_shape, generator=torch.Generator().manual_seed(batch))
                # Not under no_grad: PyTorch's fused TransformerEncoder path (not exportable) runs only then.
                torch.onnx.export(model.to(memory_format=torch.contiguous_format) if cnn else model, x, str(path),
                                  input_names=["input"], output_names=["output"], opset_version=14)
                xin = tmp / f"{name}_{batch}.npy"
                np.save(xin, x.numpy())
                budget = (1.0 if QUICK else 3.0) * (1 if batch == 1 else 2)
                s = spore_ms(path, xin, budget)
                label = f"{name} b{batch} `spore run --repeat` (ONNX file, Graph, 2T)"
                if HAVE_ORT:
                    figure(label + " vs onnxruntime", s, "onnxruntime 1.30 (node)", ort_ms(path, xin, budget), "", 1.0)
                else:
                    emit(bench=label + " vs onnxruntime", skipped="node/onnxruntime-node not installed (PERF-NOTES.md)")
                px = x.contiguous(memory_format=torch.channels_last) if cnn else x
                figure(label + " vs torch", s, "torch eager" + (" channels_last" if cnn else ""),
                       torch_ms(peer_model, px, budget), "", 0.75)
        # Load time of a ~100 MB MindIR file (4 Linear(2560, 2560): 105 MB of float32 weights).
        big = torch.nn.Sequential(*[torch.nn.Linear(2560, 2560) for _ in range(4)]).eval()
        with torch.no_grad():
            torch.onnx.export(big, torch.randn(1, 2560), str(tmp / "big.onnx"), input_names=["input"],
                              output_names=["output"], opset_version=13)
        subprocess.run([str(SPORE), "convert", str(tmp / "big.onnx"), str(tmp / "big.mindir")], check=True,
                       capture_output=True)
        size_mb = (tmp / "big.mindir").stat().st_size / 1e6
        loads = []
        for _ in range(5):
            p = subprocess.run([str(SPORE), "bench", str(tmp / "big.mindir"), "--repeat", "1", "--warmup", "0"],
                               capture_output=True, text=True, check=True)
            loads.append(json.loads(p.stdout.splitlines()[0])["load_ms"])
        load = sorted(loads)[len(loads) // 2]
        emit(bench=f"load a {size_mb:.0f} MB MindIR file (ModelFile::open, file in the page cache)",
             spore_ms=round(load, 2), target="<= 500 ms", met=load <= 500)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
