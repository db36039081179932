# SPDX-License-Identifier: Apache-2.0
"""What the `spore` command-line tests share: the binary (argv[1]), running it, and the list of
failed checks each test prints at its end."""
import json
import pathlib
import subprocess
import sys

SPORE = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build/bin/spore").resolve()
failures = []


def run(*args, ok=True):
    """Runs `spore ARGS`; with ok, a non-zero exit is a failure (its stderr's tail recorded)."""
    p = subprocess.run([str(SPORE), *map(str, args)], capture_output=True, text=True, timeout=600)
    if ok and p.returncode != 0:
        failures.append(f"spore {' '.join(map(str, args))} exited {p.returncode}: {p.stderr.strip()[-800:]}")
    return p


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def last_json(p):
    """The JSON object on the last line of a command's stdout (--json)."""
    return json.loads(p.stdout.strip().splitlines()[-1])


def finish(name, passed="all checks passed"):
    """Prints the failures and exits 1 if there are any, else prints `passed`."""
    for f in failures:
        print(f"{name}:", f)
    if failures:
        sys.exit(1)
    print(f"{name}: {passed}")
