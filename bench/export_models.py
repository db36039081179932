# SPDX-License-Identifier: Apache-2.0
"""Exports the inference benchmark's models (bench/model_bench.sh): for each torchvision name
given, one randomly initialized model (seed 0; BatchNorm statistics and affine parameters
randomized too, as tests/models/export_torchvision.py does) in eval mode, written to
OUT_DIR/<name>/ as
  - <key>.npy per state_dict entry plus keys.txt (what Spore's model_bench loads by name),
  - model.onnx (opset 13, dynamic batch dimension; what ONNX Runtime runs),
  - input.npy (1, 3, 224, 224) and output.npy (torch's eval output on it), so each engine can
    show that it runs the same function (max |difference| in its JSON line).
Exits 3 with a message naming the package when torchvision is missing."""
import pathlib
import sys

import numpy as np
import torch

try:
    import torchvision
except ImportError:
    print("torchvision is not installed for /usr/bin/python3: install the Debian package python3-torchvision",
          file=sys.stderr)
    sys.exit(3)


def make(name):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.normal_(0.0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0.0, 0.1)
    return model.eval()


def export(name, out):
    model = make(name)
    out.mkdir(parents=True, exist_ok=True)
    keys = []
    for k, v in model.state_dict().items():
        np.save(out / f"{k}.npy", v.numpy())
        keys.append(k)
    (out / "keys.txt").write_text("\n".join(keys) + "\n")
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        y = model(x)
        torch.onnx.export(model, x, str(out / "model.onnx"), input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}, opset_version=13)
    np.save(out / "input.npy", x.numpy())
    np.save(out / "output.npy", y.numpy())


def main():
    out_dir = pathlib.Path(sys.argv[1])
    for name in sys.argv[2:]:
        export(name, out_dir / name)


if __name__ == "__main__":
    main()
