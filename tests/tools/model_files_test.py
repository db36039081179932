# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of Spore's model-file tools (run by `make test`; issue 6): real PyTorch
models exported to ONNX at test time (nothing large is committed) run through `spore run` and
match PyTorch; ONNX -> MindIR conversion keeps the outputs bit for bit in a fresh process;
`spore info` counts what the file holds; `spore compare` names the layer where an injected error
starts; bad input fails with a clear message and a non-zero exit.

Usage: /usr/bin/python3 tests/tools/model_files_test.py build/bin/spore"""
import json
import pathlib
import sys
import tempfile

import numpy as np
import torch

from spore_cli import check, finish, run  # beside this file


def rel_err(a, b):
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))


def export(model, x, path, dynamic_batch=False, opset=13):
    kwargs = {}
    if dynamic_batch:
        kwargs["dynamic_axes"] = {"input": {0: "batch"}, "output": {0: "batch"}}
    # Not under no_grad: PyTorch's fused TransformerEncoder inference path (which ONNX cannot
    # express) runs only when gradients are off.
    torch.onnx.export(model, x, str(path), input_names=["input"], output_names=["output"],
                      opset_version=opset, **kwargs)
    with torch.no_grad():
        return model(x).numpy()


def real_models():
    # torchvision models with randomized BatchNorm (default statistics make outputs tiny and
    # hide errors): the benchmark's exporter builds them.
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
    from export_models import make
    resnet, mobilenet = make("resnet18"), make("mobilenet_v2")
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0, batch_first=True)
    transformer = torch.nn.TransformerEncoder(layer, num_layers=2).eval()
    g = torch.Generator().manual_seed(1)
    return [("resnet18", resnet, torch.randn(2, 3, 224, 224, generator=g), True),
            ("mobilenet_v2", mobilenet, torch.randn(1, 3, 224, 224, generator=g), False),
            ("transformer", transformer, torch.randn(2, 16, 64, generator=g), True)]


def test_real_models(tmp):
    for name, model, x, dynamic in real_models():
        onnx_path, mindir_path = tmp / f"{name}.onnx", tmp / f"{name}.mindir"
        want = export(model, x, onnx_path, dynamic_batch=dynamic, opset=14 if name == "transformer" else 13)
        np.save(tmp / f"{name}_in.npy", x.numpy())
        outs = {}
        for mode in ("pynative", "graph"):
            d = tmp / f"{name}_{mode}"
            if run("run", onnx_path, "--input", f"input={tmp / f'{name}_in.npy'}", "--output-dir", d,
                   "--mode", mode).returncode == 0:
                outs[mode] = np.load(d / "output.npy")
                check(rel_err(outs[mode], want) <= 1e-4,
                      f"{name} ({mode}): max rel error {rel_err(outs[mode], want):.3g} vs PyTorch > 1e-4")
        # ONNX -> MindIR -> a fresh process: the same graph, so the same bits.
        if run("convert", onnx_path, mindir_path).returncode == 0 and "pynative" in outs:
            d = tmp / f"{name}_mindir"
            if run("run", mindir_path, "--input", tmp / f"{name}_in.npy", "--output-dir", d,
                   "--mode", "pynative").returncode == 0:
                check(np.array_equal(np.load(d / "output.npy"), outs["pynative"]),
                      f"{name}: the MindIR conversion's output differs from the ONNX file's")
        info = run("info", onnx_path, "--json")
        if info.returncode == 0:
            r = json.loads(info.stdout)
            import onnx
            m = onnx.load(str(onnx_path))
            n_init = sum(int(np.prod(t.dims)) for t in m.graph.initializer)
            check(r["parameters"] >= n_init, f"{name}: info counts {r['parameters']} parameters, the file has "
                  f"{n_init} initializer elements")
            check(r["flops"] > 0 and r["ops"], f"{name}: info has no FLOPs or ops: {info.stdout[:300]}")
        if dynamic:
            # The batch is symbolic: another batch size runs without re-export.
            x4 = torch.randn(4, *x.shape[1:])
            np.save(tmp / f"{name}_in4.npy", x4.numpy())
            if run("run", onnx_path, "--input", tmp / f"{name}_in4.npy", "--output-dir", tmp / f"{name}_b4").returncode == 0:
                with torch.no_grad():
                    check(rel_err(np.load(tmp / f"{name}_b4" / "output.npy"), model(x4).numpy()) <= 1e-4,
                          f"{name}: batch 4 on the symbolic-batch model disagrees with PyTorch")
        rep = run("run", onnx_path, "--input", tmp / f"{name}_in.npy", "--repeat", "3", "--warmup", "1")
        if rep.returncode == 0:
            r = json.loads(rep.stdout.strip().splitlines()[-1])
            check(0 < r["min_ms"] <= r["median_ms"] <= r["p90_ms"], f"{name}: --repeat statistics {r}")


class Deep(torch.nn.Module):
    """20 Linear+Tanh layers: `spore compare` must name the layer whose weights were changed."""

    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(32, 32) for _ in range(20))

    def forward(self, x):
        for lin in self.layers:
            x = torch.tanh(lin(x))
        return x


def test_compare(tmp):
    torch.manual_seed(0)
    model = Deep().eval()
    x = torch.randn(4, 32)
    np.save(tmp / "deep_in.npy", x.numpy())
    export(model, x, tmp / "deep_a.onnx")
    k = 13
    with torch.no_grad():
        model.layers[k].weight[0, 0] += 0.05
    export(model, x, tmp / "deep_b.onnx")
    p = run("compare", tmp / "deep_a.onnx", tmp / "deep_b.onnx", "--input", tmp / "deep_in.npy", "--json", ok=False)
    if check(p.returncode == 1, f"compare of differing models exited {p.returncode}: {p.stderr[-400:]}"):
        r = json.loads(p.stdout)
        first = r["first_diverging"] or ""
        check(f"layers.{k}/" in first and "Gemm" in first, f"compare names {first!r}, expected layer {k}'s Gemm")
        names = [l["layer_a"] for l in r["layers"]]
        check(len(names) >= 40 and names.index(first) == 2 * k if first in names else False,
              f"compare matched {len(names)} layers and names {first!r} at position "
              f"{names.index(first) if first in names else None}, expected {2 * k} (Gemm and Tanh per layer)")
        table = run("compare", tmp / "deep_a.onnx", tmp / "deep_b.onnx", "--input", tmp / "deep_in.npy", ok=False)
        check(f"first diverging layer: /layers.{k}/" in table.stdout, f"compare table: {table.stdout[-500:]}")
    # The same model as ONNX and as MindIR, and Graph vs PyNative: nothing diverges.
    run("convert", tmp / "deep_a.onnx", tmp / "deep_a.mindir")
    same = run("compare", tmp / "deep_a.onnx", tmp / "deep_a.mindir", "--input", tmp / "deep_in.npy",
               "--mode-b", "graph", "--json", ok=False)
    if check(same.returncode == 0, f"compare ONNX vs MindIR (graph) exited {same.returncode}: {same.stdout[-400:]}{same.stderr[-400:]}"):
        check(all(l["matched_by"] == "name" for l in json.loads(same.stdout)["layers"]), "ONNX vs MindIR: layers not matched by name")
    # bfloat16 storage diverges beyond 1e-4 but stays close (cosine > 0.99).
    lo = run("compare", tmp / "deep_a.onnx", tmp / "deep_a.onnx", "--input", tmp / "deep_in.npy",
             "--precision-b", "bfloat16", "--json", ok=False)
    if check(lo.returncode == 1, f"compare vs bfloat16 exited {lo.returncode}: {lo.stderr[-300:]}"):
        check(min(l["cosine"] for l in json.loads(lo.stdout)["layers"]) > 0.99, "bfloat16 emulation is far off")


def test_encrypted(tmp):
    """ONNX -> encrypted MindIR (--out-key), run with the key (hex and @FILE): the same outputs
    as the plain file; without the key, or with another, a clear error."""
    key = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    (tmp / "model.key").write_text(key + "\n")
    enc = tmp / "deep_enc.mindir"
    if not run("convert", tmp / "deep_a.onnx", enc, "--out-key", key).returncode == 0:
        return
    check(enc.read_bytes()[:8] == b"SPOREENC", "convert --out-key did not write an encrypted file")
    run("run", tmp / "deep_a.mindir", "--input", tmp / "deep_in.npy", "--output-dir", tmp / "plain_out")
    run("run", enc, "--input", tmp / "deep_in.npy", "--output-dir", tmp / "enc_out", "--key", "@" + str(tmp / "model.key"))
    outs = sorted((tmp / "plain_out").glob("*.npy"))
    check(len(outs) == 1 and all(np.array_equal(np.load(f), np.load(tmp / "enc_out" / f.name)) for f in outs),
          "the encrypted model's outputs differ from the plain one's")
    info = run("info", enc, "--key", key, "--json")
    if info.returncode == 0:
        check(json.loads(info.stdout)["format"] == "mindir", f"info of the encrypted file: {info.stdout}")
    for args, needle in [(("info", enc), "the file is encrypted (AES-GCM); give its key"),
                         (("info", enc, "--key", key.replace("00", "ff", 1)), "the key is wrong or the file was modified"),
                         (("info", enc, "--key", "12345"), "--key: [model key] the key has 5 characters"),
                         (("convert", enc, tmp / "x.onnx", "--key", key, "--out-key", key), "ONNX files have no encrypted form")]:
        p = run(*args, ok=False)
        check(p.returncode == 1 and needle in p.stderr and "internal error" not in p.stderr,
              f"spore {' '.join(map(str, args))}: exit {p.returncode}, expected 1 and {needle!r} in: {p.stderr.strip()[-400:]}")
    # The key never shows in an error message.
    bad = run("info", enc, "--key", key.replace("00", "ff", 1), ok=False)
    check(key[2:] not in bad.stderr, "an error message shows the key")


def test_errors(tmp):
    a = tmp / "deep_a.onnx"
    cases = [
        (("info", tmp / "missing.onnx"), "missing.onnx"),
        (("run", a), "takes 1 input(s), got 0"),
        (("run", a, "--input", tmp / "deep_in.npy", "--input", tmp / "deep_in.npy"), "takes 1 input(s), got 2"),
        (("run", a, "--input", "nosuch=" + str(tmp / "deep_in.npy")), "has no input named 'nosuch'"),
        (("run", a, "--input", tmp / "wrong_shape.npy"), "must be float32[4, 32]"),
        (("run", a, "--input", tmp / "wrong_dtype.npy"), "must be float32[4, 32]"),
        (("run", a, "--input", tmp / "deep_in.npy", "--mode", "fast"), "--mode must be one of graph, pynative"),
        (("info", tmp / "deep_in.npy"), "deep_in.npy"),
        (("convert", a, tmp / "out.txt"), "name the file .mindir (MindIR) or .onnx (ONNX)"),
        (("run", a, "--input", tmp / "garbage.npy"), "garbage.npy"),
    ]
    np.save(tmp / "wrong_shape.npy", np.zeros((4, 31), np.float32))
    np.save(tmp / "wrong_dtype.npy", np.zeros((4, 32), np.float64))
    (tmp / "garbage.npy").write_bytes(b"\x93NUMPY\x01\x00\xff\xff{'descr': '<f4'")
    for args, needle in cases:
        p = run(*args, ok=False)
        check(p.returncode == 1 and needle in p.stderr and "internal error" not in p.stderr,
              f"spore {' '.join(map(str, args))}: exit {p.returncode}, expected 1 and {needle!r} in: {p.stderr.strip()[-400:]}")


with tempfile.TemporaryDirectory() as d:
    tmp = pathlib.Path(d)
    test_real_models(tmp)
    test_compare(tmp)
    test_encrypted(tmp)
    test_errors(tmp)

finish("model files", "real models match PyTorch, conversion is exact, compare names the injected layer, errors are clear")
