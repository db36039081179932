# SPDX-License-Identifier: Apache-2.0
"""Writes torchvision models for the zoo's state_dict test: for each name given, a randomly
initialized model in eval mode (BatchNorm statistics and affine parameters randomized too, so a
misnamed buffer changes the output), its state_dict as one <key>.npy per entry plus keys.txt, an
input.npy of shape (1, 3, 64, 64) and the model's output.npy, under OUT_DIR/<name>/.
Exits 3 with a message naming the package when torchvision is missing."""
import pathlib
import sys

import numpy as np
import torch

try:
    import torchvision
except ImportError:
    print("torchvision is not installed for /usr/bin/python3: install the Debian package python3-torchvision "
          "(scripts/install-deps.sh does)", file=sys.stderr)
    sys.exit(3)


def export(name, out):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.normal_(0.0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0.0, 0.1)
                m.num_batches_tracked.fill_(7)
    model.eval()
    out.mkdir(parents=True, exist_ok=True)
    keys = []
    for k, v in model.state_dict().items():
        np.save(out / f"{k}.npy", v.numpy())
        keys.append(k)
    (out / "keys.txt").write_text("\n".join(keys) + "\n")
    x = torch.randn(1, 3, 64, 64)
    with torch.no_grad():
        y = model(x)
    np.save(out / "input.npy", x.numpy())
    np.save(out / "output.npy", y.numpy())


def main():
    out_dir = pathlib.Path(sys.argv[1])
    for name in sys.argv[2:]:
        export(name, out_dir / name)


if __name__ == "__main__":
    main()
