# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of the `spore` command line (run by `make test`): a short `spore train`
lowers the loss, its checkpoint reloads in `spore eval` with the same accuracy, `--resume`
continues exactly as the uninterrupted run (at an epoch boundary and inside an epoch), and bad input (flags, paths, files) fails with a clear message and a non-zero exit."""
import json
import os
import tempfile

from spore_cli import check, finish, last_json, run  # beside this file


with tempfile.TemporaryDirectory() as tmp:
    ck, logs = os.path.join(tmp, "ck"), os.path.join(tmp, "logs")
    common = ["--limit", "2048", "--batch-size", "64", "--json"]
    p = run("train", "--model", "mlp", "--epochs", "2", "--checkpoint-dir", ck, "--log-dir", logs, *common)
    if p.returncode == 0:
        r = last_json(p)
        for key in ("test_accuracy", "train_loss", "samples_per_second", "epochs", "seconds", "checkpoint"):
            check(key in r, f"spore train --json lacks {key}: {r}")
        epochs = [json.loads(l) for l in open(os.path.join(logs, "metrics.jsonl")) if '"epoch"' in l and '"event": "epoch"' in l]
        check(len(epochs) == 2, f"metrics.jsonl has {len(epochs)} epoch lines, expected 2")
        if len(epochs) == 2:
            check(epochs[1]["train_loss"] < epochs[0]["train_loss"],
                  f"the loss did not decrease: {epochs[0]['train_loss']} -> {epochs[1]['train_loss']}")
        check(r["test_accuracy"] > 0.5, f"test accuracy {r['test_accuracy']} after 2 epochs on 2048 samples")
        check("epoch 2/2" in p.stderr, "no progress lines on stderr")
        e = run("eval", "--checkpoint", r["checkpoint"], "--limit", "2048", "--batch-size", "64", "--json")
        if e.returncode == 0:
            check(last_json(e)["test_accuracy"] == r["test_accuracy"],
                  f"eval of the checkpoint gives {last_json(e)['test_accuracy']}, train gave {r['test_accuracy']}")
        # The confusion matrix: 10 x 10 counts of the test samples, its diagonal the accuracy.
        e = run("eval", "--checkpoint", r["checkpoint"], "--limit", "2048", "--batch-size", "64", "--json",
                "--confusion-matrix")
        if e.returncode == 0:
            j = last_json(e)
            cm = j.get("confusion_matrix", [])
            total = sum(sum(row) for row in cm)
            check(len(cm) == 10 and all(len(row) == 10 for row in cm) and total > 0,
                  f"confusion matrix {cm}")
            if total:
                diag = sum(cm[i][i] for i in range(len(cm)))
                check(abs(diag / total - j["test_accuracy"]) < 1e-5,  # the JSON prints 6 digits
                      f"confusion matrix diagonal {diag}/{total} vs accuracy {j['test_accuracy']}")
            check("true\\pred" in e.stdout, f"no confusion table in {e.stdout[:300]}")
        pr = run("predict", "--checkpoint", r["checkpoint"], "--count", "5", "--json")
        if pr.returncode == 0:
            check(len(last_json(pr)["predictions"]) == 5, f"predict printed {pr.stdout}")
        # Resume: one more epoch from the newest checkpoint.
        res = run("train", "--model", "mlp", "--epochs", "3", "--checkpoint-dir", ck, "--resume", *common)
        if res.returncode == 0:
            check("resuming from" in res.stderr and last_json(res)["epochs"] == 3, f"resume: {res.stderr[-300:]}")
        # Resume is exact. 2 epochs straight, and 1 epoch then --resume for the second, log the same
        # epochs and end with the same metrics; so does a resume from inside epoch 2 (step 40 of 64,
        # the newer checkpoints deleted), with a per-step cosine schedule to restore as well.
        def epoch_lines(d):
            keep = ("epoch", "step", "loss", "lr", "train_accuracy", "train_loss")
            rows = [json.loads(l) for l in open(os.path.join(d, "metrics.jsonl"))]
            return [{k: j[k] for k in keep} for j in rows if j["event"] == "epoch"]

        def final(p):
            return {k: last_json(p)[k] for k in ("steps", "train_loss", "test_accuracy", "test_loss")} if p.returncode == 0 else None

        d = {name: os.path.join(tmp, name) for name in ("la", "lb", "cb", "lc", "ld", "cd", "le")}
        straight = run("train", "--model", "mlp", "--epochs", "2", "--log-dir", d["la"], *common)
        run("train", "--model", "mlp", "--epochs", "1", "--checkpoint-dir", d["cb"], "--log-dir", d["lb"], *common)
        resumed = run("train", "--model", "mlp", "--epochs", "2", "--checkpoint-dir", d["cb"], "--resume", "--log-dir", d["lb"], *common)
        if straight.returncode == 0 and resumed.returncode == 0:
            check(final(resumed) == final(straight), f"resumed at the epoch boundary: {final(resumed)} vs straight {final(straight)}")
            check(epoch_lines(d["lb"]) == epoch_lines(d["la"]) and len(epoch_lines(d["la"])) == 2,
                  f"logged epochs differ: {epoch_lines(d['lb'])} vs straight {epoch_lines(d['la'])}")
        cosine = ["--schedule", "cosine", "--lr", "0.003"]
        straight = run("train", "--model", "mlp", "--epochs", "2", *cosine, "--log-dir", d["lc"], *common)
        run("train", "--model", "mlp", "--epochs", "2", *cosine, "--checkpoint-dir", d["cd"], "--checkpoint-every", "20",
            "--log-dir", d["ld"], *common)
        kept = sorted(os.listdir(d["cd"]))
        check(kept == ["ckpt-40.spore", "ckpt-60.spore", "ckpt-64.spore"], f"checkpoints kept: {kept}")
        for name in ("ckpt-60.spore", "ckpt-64.spore"):
            if os.path.exists(os.path.join(d["cd"], name)):
                os.remove(os.path.join(d["cd"], name))
        resumed = run("train", "--model", "mlp", "--epochs", "2", *cosine, "--checkpoint-dir", d["cd"], "--resume",
                      "--log-dir", d["le"], *common)
        if straight.returncode == 0 and resumed.returncode == 0:
            check("(step 40)" in resumed.stderr, f"resume did not start at step 40: {resumed.stderr[-300:]}")
            check(final(resumed) == final(straight), f"resumed mid-epoch: {final(resumed)} vs straight {final(straight)}")
            check(epoch_lines(d["le"]) == epoch_lines(d["lc"])[1:],
                  f"the resumed epoch logs {epoch_lines(d['le'])}, the straight run {epoch_lines(d['lc'])[1:]}")
        bad = run("train", "--model", "lenet", "--epochs", "3", "--checkpoint-dir", ck, "--resume", *common, ok=False)
        check(bad.returncode == 1 and "zoo_model: the checkpoint has mlp, this run lenet" in bad.stderr, f"resume with another model: {bad.stderr}")
        # One-cycle schedules: SGD with momentum (cycled) and Adam (beta1 cycled) train; with
        # --momentum 0 there is nothing to cycle and the rate alone follows the schedule.
        for opt_flags in (["--optimizer", "sgd", "--momentum", "0.9", "--lr", "0.05"],
                          ["--optimizer", "adam", "--lr", "0.003"],
                          ["--optimizer", "sgd", "--momentum", "0", "--lr", "0.05"]):
            oc = run("train", "--model", "mlp", "--epochs", "1", "--schedule", "onecycle", *opt_flags, *common)
            if oc.returncode == 0:
                check(last_json(oc)["test_accuracy"] > 0.5, f"onecycle {opt_flags}: {oc.stdout[-300:]}")
        # A corrupted checkpoint is refused whole.
        corrupt = os.path.join(tmp, "bad.spore")
        data = bytearray(open(r["checkpoint"], "rb").read())
        data[len(data) // 2] ^= 0xFF
        open(corrupt, "wb").write(data)
        c = run("eval", "--checkpoint", corrupt, ok=False)
        check(c.returncode == 1 and "checksum" in c.stderr, f"corrupted checkpoint: {c.stderr}")

    for args, text in [
        (["train", "--epochs", "x"], "--epochs expects an integer, got 'x'"),
        (["train", "--nope", "1"], "unknown flag --nope; known flags:"),
        (["train", "--model", "vgg", "--limit", "64"], "unknown model 'vgg'; known:"),
        (["train", "--optimizer", "sgdd"], "--optimizer must be one of sgd, adam"),
        (["train", "--mode", "eager"], "--mode must be one of graph, pynative"),
        (["train", "--dataset", "/nonexistent"], "neither fashion-mnist nor a directory"),
        (["train", "--dataset", tmp], "is neither an image folder nor an IDX directory"),
        (["train", "--resume"], "--resume needs --checkpoint-dir"),
        (["eval"], "needs --checkpoint FILE"),
        (["eval", "--checkpoint", "/nonexistent.spore"], "cannot open /nonexistent.spore"),
        (["frobnicate"], "unknown command 'frobnicate'"),
    ]:
        p = run(*args, ok=False)
        check(p.returncode != 0 and text in p.stderr, f"spore {' '.join(args)}: expected an error containing {text!r}, "
              f"got exit {p.returncode}: {p.stderr.strip()[:300]}")

finish("cli test")
