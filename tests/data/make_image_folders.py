# SPDX-License-Identifier: Apache-2.0
"""Writes the image folders of tests/data/image_folder_test.cc under argv[1], with PIL (which
links the same libjpeg-turbo as Spore) and a hand-made 16-bit PNG, plus what each image must
decode to: expected/<i>_{rgb,gray,keep}.npy and expected/manifest.txt, whose lines are
"<path> <label> <rgb tolerance> <gray tolerance>" in torchvision ImageFolder order."""
import os
import struct
import sys
import zlib

import numpy as np

try:
    from PIL import Image
except ImportError:
    sys.exit("PIL is missing: install python3-pil (scripts/install-deps.sh) for the image_folder tests")

root = sys.argv[1]
rng = np.random.default_rng(7)
H, W = 6, 5


def path(*parts):
    p = os.path.join(root, *parts)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    return p


def rgb(h=H, w=W):
    return rng.integers(0, 256, (h, w, 3), dtype=np.uint8)


def gray(h=H, w=W):
    return rng.integers(0, 256, (h, w), dtype=np.uint8)


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def write_png16_rgb(p, a):
    h, w, _ = a.shape
    raw = b"".join(b"\x00" + a[y].astype(">u2").tobytes() for y in range(h))
    with open(p, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0)) +
                png_chunk(b"IDAT", zlib.compress(raw)) + png_chunk(b"IEND", b""))


def pil_l(a):  # PIL's convert("L") on an RGB array
    return np.asarray(Image.fromarray(a, "RGB").convert("L"))


expected = {}  # path -> (rgb, gray, keep, rgb_tol, gray_tol)

# formats/: every kind of file, all 6x5, so they stack into one random-access source.
fmt = "formats"
p = path(fmt, "ant", "a0.png"); Image.fromarray(rgb()).save(p)
p = path(fmt, "ant", "a1.PNG"); Image.fromarray(gray()).save(p)
p = path(fmt, "ant", "sub", "a2.png"); Image.fromarray(rng.integers(0, 256, (H, W, 4), dtype=np.uint8), "RGBA").save(p)
with open(path(fmt, "ant", "notes.txt"), "w") as f:
    f.write("not an image\n")
p = path(fmt, "bee", "b0.jpg"); Image.fromarray(rgb()).save(p, quality=90)
p = path(fmt, "bee", "b1.JPEG"); Image.fromarray(gray()).save(p, quality=85)
pal = Image.fromarray(rng.integers(0, 8, (H, W), dtype=np.uint8), "P")
pal.putpalette(list(rng.integers(0, 256, 8 * 3, dtype=np.uint8)) + [0] * (248 * 3))
pal.save(path(fmt, "cow", "c0.png"), transparency=2)
write_png16_rgb(path(fmt, "cow", "c1.png"), rng.integers(0, 65536, (H, W, 3), dtype=np.uint16))
Image.fromarray(rng.integers(0, 256, (H, W, 2), dtype=np.uint8), "LA").save(path(fmt, "cow", "c2.png"))
Image.fromarray(rng.integers(0, 65536, (H, W), dtype=np.uint16)).save(path(fmt, "cow", "c3.png"))
Image.fromarray(rng.integers(0, 2, (H, W), dtype=np.uint8).astype(bool)).save(path(fmt, "cow", "c4.png"))


def expect(p):
    """What Spore must decode `p` to: PIL's decode, or numpy for what PIL cannot read as 8 bits."""
    name = os.path.basename(p)
    im = Image.open(p)
    if name == "c1.png":  # 16-bit RGB: libpng's strip_16 keeps the high byte
        with open(p, "rb") as f:
            data = f.read()
        w, h = struct.unpack(">II", data[16:24])
        idat = data[33 + 8:-12 - 4]
        raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + w * 6)[:, 1:]
        hi = raw.reshape(h, w, 3, 2)[..., 0].copy()
        assert (np.asarray(im.convert("RGB")) == hi).all(), "PIL and the hand decode disagree on c1.png"
        return hi, pil_l(hi)[..., None], hi, 0, 1
    if name == "c3.png":  # 16-bit gray
        g = (np.asarray(im).astype(np.uint32) >> 8).astype(np.uint8)
        return np.repeat(g[..., None], 3, 2), g[..., None], g[..., None], 0, 0
    rgb_ = np.asarray(im.convert("RGB"))
    keep_mode = {"L": "L", "1": "L", "LA": "LA", "RGB": "RGB", "RGBA": "RGBA", "P": "RGBA"}[im.mode]
    keep = np.asarray(im.convert(keep_mode))
    if keep.ndim == 2:
        keep = keep[..., None]
    if im.format == "JPEG" and im.mode == "RGB":
        g = Image.open(p)
        g.draft("L", g.size)  # libjpeg's own grayscale output (the Y channel), as Spore asks for
        return rgb_, np.asarray(g.convert("L"))[..., None], keep, 0, 0
    color = im.mode in ("RGB", "RGBA", "P")
    return rgb_, np.asarray(im.convert("L"))[..., None], keep, 0, 1 if color else 0


# sizes/: images of several sizes (a run of two equal ones), PNG and JPEG.
Image.fromarray(rgb(8, 8)).save(path("sizes", "x", "p0.png"))
Image.fromarray(rgb(10, 6)).save(path("sizes", "x", "p1.png"))
Image.fromarray(rgb(10, 6)).save(path("sizes", "x", "p2.png"))
Image.fromarray(rgb(12, 9)).save(path("sizes", "y", "q0.jpg"), quality=95)

# empty/: the middle class has no image.
Image.fromarray(rgb()).save(path("empty", "a", "x.png"))
os.makedirs(path("empty", "b", "only_text", "t"), exist_ok=True)
with open(path("empty", "b", "readme.md"), "w") as f:
    f.write("no images here\n")
Image.fromarray(rgb()).save(path("empty", "c", "y.png"))

# The manifest, in torchvision.datasets.ImageFolder's order (find_classes + make_dataset).
os.makedirs(path("expected", "x"), exist_ok=True)
lines = []
for tree in ("formats", "sizes"):
    top = os.path.join(root, tree)
    classes = sorted(e.name for e in os.scandir(top) if e.is_dir())
    for label, cls in enumerate(classes):
        for r, _, names in sorted(os.walk(os.path.join(top, cls), followlinks=True)):
            for n in sorted(names):
                if n.lower().endswith((".png", ".jpg", ".jpeg")):
                    p = os.path.join(r, n)
                    i = len(lines)
                    e = expect(p)
                    for kind, a in zip(("rgb", "gray", "keep"), e[:3]):
                        np.save(os.path.join(root, "expected", f"{i}_{kind}.npy"), np.ascontiguousarray(a, np.uint8))
                    lines.append(f"{os.path.relpath(p, root)} {label} {e[3]} {e[4]}")
with open(os.path.join(root, "expected", "manifest.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
