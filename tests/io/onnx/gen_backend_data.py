# SPDX-License-Identifier: Apache-2.0
"""Runs onnx.backend.test.cmd_tools generate-data under numpy >= 1.24.

Debian's python3-onnx 1.12 ships the node test generators but not their data; some generators
still use the aliases numpy removed in 1.24 (np.float, np.int, np.bool, np.object), so restore
them before onnx is imported.
"""
import sys

import numpy

for name, value in (("float", float), ("int", int), ("bool", bool), ("object", object),
                    ("complex", complex), ("str", str)):
    if name not in numpy.__dict__:
        setattr(numpy, name, value)

from onnx.backend.test.cmd_tools import main  # noqa: E402

if __name__ == "__main__":
    sys.argv = ["cmd_tools"] + sys.argv[1:]
    main()
