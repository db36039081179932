# SPDX-License-Identifier: Apache-2.0
"""`spore train --dataset DIR` on an image folder (DIR/train/<class>/*, DIR/test/<class>/*, PNG and
JPEG of several sizes, written here with PIL): training learns the three classes, `spore eval`
reloads the checkpoint to the same accuracy, `spore predict` names the class of one image file,
and bad layouts fail with a message that says what to provide. Run by `make test`."""
import os
import random
import tempfile

from PIL import Image, ImageDraw

from spore_cli import check, finish, last_json, run  # beside this file

CLASSES = ["disk", "hbar", "vbar"]


def image(kind, rng):
    """A bright shape of `kind` on a noisy dark background, random size and colour."""
    w, h = rng.randint(24, 40), rng.randint(24, 40)
    img = Image.new("RGB", (w, h), tuple(rng.randint(0, 60) for _ in range(3)))
    d = ImageDraw.Draw(img)
    colour = tuple(rng.randint(150, 255) for _ in range(3))
    if kind == "disk":
        d.ellipse([w * 0.25, h * 0.25, w * 0.75, h * 0.75], fill=colour)
    elif kind == "hbar":
        d.rectangle([0, h * 0.4, w, h * 0.6], fill=colour)
    else:
        d.rectangle([w * 0.4, 0, w * 0.6, h], fill=colour)
    for _ in range(w * h // 10):
        img.putpixel((rng.randrange(w), rng.randrange(h)), tuple(rng.randint(0, 255) for _ in range(3)))
    return img


def write_folder(root, per_class, rng, classes=CLASSES):
    for c in classes:
        os.makedirs(os.path.join(root, c), exist_ok=True)
        for i in range(per_class):
            img = image(c, rng)
            # Every third image a JPEG: both decoders run; the extension's case does not matter.
            name = f"{i:03d}.JPG" if i % 3 == 0 else f"{i:03d}.png"
            img.save(os.path.join(root, c, name), quality=95) if name.endswith("JPG") else img.save(os.path.join(root, c, name))


with tempfile.TemporaryDirectory() as tmp:
    rng = random.Random(3)
    data = os.path.join(tmp, "shapes")
    write_folder(os.path.join(data, "train"), 60, rng)
    write_folder(os.path.join(data, "test"), 20, rng)
    ck = os.path.join(tmp, "ck")
    # eval and predict take the image size and channels from the checkpoint.
    common = ["--dataset", data, "--batch-size", "16", "--json"]
    t = run("train", "--model", "mlp", "--epochs", "4", "--lr", "0.003", "--image-size", "16", "--checkpoint-dir", ck,
            "--data-stats", *common)
    if t.returncode == 0:
        r = last_json(t)
        check(r["test_accuracy"] >= 0.9, f"image folder: test accuracy {r['test_accuracy']} on three easy classes")
        check("training data pipeline:" in t.stderr and "map" in t.stderr and "prefetch" in t.stderr,
              f"--data-stats printed no pipeline stages: {t.stderr[-600:]}")
        e = run("eval", "--checkpoint", r["checkpoint"], *common)
        if e.returncode == 0:
            check(abs(last_json(e)["test_accuracy"] - r["test_accuracy"]) < 1e-6,
                  f"eval {last_json(e)['test_accuracy']} vs train's {r['test_accuracy']}")
        one = os.path.join(data, "test", "vbar", "001.png")
        p = run("predict", "--checkpoint", r["checkpoint"], "--input", one, "--json")
        if p.returncode == 0:
            check("(vbar)" in p.stdout and last_json(p)["class_names"] == ["vbar"], f"predict on a vbar image: {p.stdout}")
        p = run("predict", "--checkpoint", r["checkpoint"], "--count", "5", *common)
        if p.returncode == 0:
            check(p.stdout.count("label 0 (disk)") == 5, f"the first five test images are disks: {p.stdout}")
        # The checkpoint's classes are not Fashion-MNIST's: eval there is refused.
        bad = run("eval", "--checkpoint", r["checkpoint"], ok=False)
        check(bad.returncode == 1 and "are not the ones" in bad.stderr and "disk,hbar,vbar" in bad.stderr,
              f"eval of a shapes checkpoint on fashion-mnist: {bad.stderr}")
    # Gray input through LeNet (28 x 28, one channel).
    g = run("train", "--model", "lenet", "--epochs", "2", "--lr", "0.003", "--channels", "1",
            "--dataset", data, "--batch-size", "16", "--json")
    if g.returncode == 0:
        check(last_json(g)["test_accuracy"] >= 0.8, f"lenet on gray shapes: {last_json(g)}")

    # --limit reads a fixed random subset of each split: every class still shows up, and two runs agree.
    lim = [run("train", "--model", "mlp", "--epochs", "1", "--image-size", "16", "--limit", "48", *common) for _ in range(2)]
    if all(p.returncode == 0 for p in lim):
        check(last_json(lim[0]) == {**last_json(lim[1]), "seconds": last_json(lim[0])["seconds"],
                                    "samples_per_second": last_json(lim[0])["samples_per_second"]},
              f"--limit runs differ: {last_json(lim[0])} vs {last_json(lim[1])}")
        check(last_json(lim[0])["steps"] == 3, f"48 samples in batches of 16 are 3 steps: {last_json(lim[0])}")
    # Resumed inside an epoch, a folder run ends as the uninterrupted one.
    straight = run("train", "--model", "mlp", "--epochs", "2", "--image-size", "16", *common)
    rd = os.path.join(tmp, "resume")
    first = run("train", "--model", "mlp", "--epochs", "1", "--image-size", "16", "--checkpoint-dir", rd,
                "--checkpoint-every", "5", *common)
    if first.returncode == 0:
        for name in os.listdir(rd):
            if name != "ckpt-5.spore":
                os.remove(os.path.join(rd, name))
        resumed = run("train", "--model", "mlp", "--epochs", "2", "--image-size", "16", "--checkpoint-dir", rd,
                      "--resume", *common)
        if straight.returncode == 0 and resumed.returncode == 0:
            keep = ("train_loss", "test_accuracy", "test_loss", "steps")
            a, b = last_json(straight), last_json(resumed)
            check("(step 5)" in resumed.stderr and all(a[k] == b[k] for k in keep), f"folder resume: {b} vs {a}")
        other = run("train", "--model", "mlp", "--epochs", "2", "--image-size", "20", "--checkpoint-dir", rd,
                    "--resume", *common, ok=False)
        check(other.returncode == 1 and "image_size: the checkpoint has 16, this run 20" in other.stderr,
              f"resume with another image size: {other.stderr[-400:]}")

    # A model trained on Fashion-MNIST classifies a PNG of a test image as it classifies the image.
    fm = run("train", "--model", "mlp", "--epochs", "1", "--limit", "2048", "--checkpoint-dir",
             os.path.join(tmp, "fm"), "--json")
    if fm.returncode == 0:
        import gzip
        raw = gzip.open("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz").read()
        png = os.path.join(tmp, "item0.png")
        Image.frombytes("L", (28, 28), raw[16:16 + 784]).save(png)
        ck_fm = last_json(fm)["checkpoint"]
        by_file = run("predict", "--checkpoint", ck_fm, "--input", png, "--json")
        by_set = run("predict", "--checkpoint", ck_fm, "--count", "1", "--json")
        if by_file.returncode == 0 and by_set.returncode == 0:
            check(last_json(by_file)["predictions"] == last_json(by_set)["predictions"],
                  f"the PNG of test image 0: {by_file.stdout} vs the data set's: {by_set.stdout}")

    no_test = os.path.join(tmp, "no_test")
    write_folder(os.path.join(no_test, "train"), 2, rng)
    other = os.path.join(tmp, "other")
    write_folder(os.path.join(other, "train"), 2, rng)
    write_folder(os.path.join(other, "test"), 2, rng, classes=["disk", "hbar"])
    corrupt = os.path.join(tmp, "corrupt")
    write_folder(os.path.join(corrupt, "train"), 3, rng)
    write_folder(os.path.join(corrupt, "test"), 3, rng)
    cut = os.path.join(corrupt, "train", "hbar", "001.png")
    open(cut, "r+b").truncate(os.path.getsize(cut) // 2)
    for args, text in [
        (["--dataset", corrupt], "hbar/001.png: corrupt or truncated PNG"),
        (["--dataset", data, "--batch-size", "500"], "fewer samples than one batch of --batch-size 500"),
        (["--dataset", no_test], "has a train/ image folder but no test/ or val/"),
        (["--dataset", other], "the train classes ('disk', 'hbar', 'vbar') differ from"),
        (["--dataset", tmp], "is neither an image folder nor an IDX directory"),
        (["--dataset", data, "--channels", "2"], "--channels must be 1 or 3, got 2"),
        (["--channels", "3"], "holds gray IDX images; --channels 3 needs an image folder"),
        (["--dataset", data, "--model", "lenet", "--image-size", "16"], "lenet takes 28x28 images"),
    ]:
        p = run("train", "--epochs", "1", *args, ok=False)
        check(p.returncode == 1 and text in p.stderr, f"spore train {' '.join(args)}: expected {text!r}, "
              f"got exit {p.returncode}: {p.stderr.strip()[:300]}")

finish("cli image folder test")
