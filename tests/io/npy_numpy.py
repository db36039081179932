# SPDX-License-Identifier: Apache-2.0
"""numpy's side of the .npy/.npz tests (tests/io/npy_numpy_test.cc).

  npy_numpy.py write DIR   numpy writes every case to DIR, with each array's expected content
                           (C-order little-endian bytes) beside it and DIR/manifest.txt listing
                           them; Spore reads the files and compares bit for bit.
  npy_numpy.py check DIR   Spore wrote the files and manifest; numpy reads each and compares.

Manifest line: KIND FILE KEY DTYPE RAWFILE DIM... (KIND npy or npz; KEY '-' for .npy files).
"""
import os
import sys
import zipfile

import numpy as np

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def sample(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    dt = np.dtype(dtype)
    if dt.kind == "b":
        a = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        if n >= 2:
            a[0], a[1] = info.min, info.max
    else:
        # Random bit patterns cover every exponent; NaN payloads aside, add the special values.
        bits = rng.integers(0, 2 ** (8 * dt.itemsize), n, dtype=np.uint64, endpoint=False)
        a = bits.astype({2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]).view(dt)
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -2.5], dtype=dt)
        a[: min(n, len(specials))] = specials[: min(n, len(specials))]
    return a.reshape(shape)


def raw(a):
    """C-order little-endian bytes of a (what Spore's tensor holds)."""
    return np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes(order="C")


def cases():
    out = []
    for i, d in enumerate(DTYPES):
        out.append((f"c_{d}", sample(d, (3, 4, 5), i), {}))
        out.append((f"f_{d}", np.asfortranarray(sample(d, (3, 4, 5), 100 + i)), {}))
        if np.dtype(d).itemsize > 1:
            out.append((f"be_{d}", sample(d, (2, 7), 200 + i).astype(np.dtype(d).newbyteorder(">")), {}))
            out.append((f"bef_{d}", np.asfortranarray(sample(d, (4, 3), 300 + i).astype(np.dtype(d).newbyteorder(">"))), {}))
    out.append(("scalar_f8", np.array(3.25), {}))
    out.append(("scalar_i4", np.array(-7, dtype=np.int32), {}))
    out.append(("empty_1d", np.zeros((0,), np.float32), {}))
    out.append(("empty_3d", np.zeros((3, 0, 2), np.int64), {}))
    out.append(("vec", sample("float32", (11,), 7), {}))
    out.append(("v2", sample("int16", (5, 2), 8), {"version": (2, 0)}))
    out.append(("v3", sample("float64", (2, 2, 2), 9), {"version": (3, 0)}))
    out.append(("f_v2", np.asfortranarray(sample("uint8", (6, 5), 10)), {"version": (2, 0)}))
    return out


def write(d):
    lines = []
    for name, a, kw in cases():
        path = os.path.join(d, name + ".npy")
        with open(path, "wb") as f:
            np.lib.format.write_array(f, a, allow_pickle=False, **kw)
        rawfile = os.path.join(d, name + ".raw")
        open(rawfile, "wb").write(raw(a))
        lines.append(" ".join(["npy", path, "-", a.dtype.name, rawfile] + [str(s) for s in a.shape]))
    members = {f"m_{d}": sample(d, (2, 3), 400 + i) for i, d in enumerate(DTYPES)}
    members["fortran"] = np.asfortranarray(sample("float32", (3, 5), 500))
    members["bigend"] = sample("int32", (4,), 501).astype(">i4")
    members["scalar"] = np.array(1.5, np.float16)
    members["empty"] = np.zeros((0, 4), np.uint8)
    for archive, save in (("plain.npz", np.savez), ("packed.npz", np.savez_compressed)):
        path = os.path.join(d, archive)
        save(path, **members)
        for key, a in members.items():
            rawfile = os.path.join(d, f"{archive}.{key}.raw")
            open(rawfile, "wb").write(raw(a))
            lines.append(" ".join(["npz", path, key, a.dtype.name, rawfile] + [str(s) for s in a.shape]))
    # Hostile or foreign archives for the error tests.
    with zipfile.ZipFile(os.path.join(d, "text_member.npz"), "w") as z:
        z.writestr("notes.txt", "hello")
    open(os.path.join(d, "manifest.txt"), "w").write("\n".join(lines) + "\n")


def check(d):
    bad = 0
    seen = 0
    archives = {}
    for line in open(os.path.join(d, "manifest.txt")):
        kind, path, key, dtype, rawfile, *dims = line.split()
        if kind == "npy":
            a = np.load(path, allow_pickle=False)
        else:
            if path not in archives:
                archives[path] = np.load(path, allow_pickle=False)
            a = archives[path][key]
        expect = open(rawfile, "rb").read()
        shape = tuple(int(x) for x in dims)
        problems = []
        if a.dtype.name != dtype:
            problems.append(f"dtype {a.dtype.name} != {dtype}")
        if a.shape != shape:
            problems.append(f"shape {a.shape} != {shape}")
        if raw(a) != expect:
            problems.append("bytes differ")
        if problems:
            bad += 1
            print(f"MISMATCH {path} {key}: {', '.join(problems)}")
        seen += 1
    print(f"numpy checked {seen} arrays, {bad} mismatches")
    return 1 if bad or seen == 0 else 0


if __name__ == "__main__":
    mode, d = sys.argv[1], sys.argv[2]
    if mode == "write":
        write(d)
        sys.exit(0)
    sys.exit(check(d))
