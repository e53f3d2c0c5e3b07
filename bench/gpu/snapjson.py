# SPDX-License-Identifier: GPL-2.0-only
"""What the bench/gpu scripts read of xputop's NDJSON (`xputop -b -j`)."""
import json
import sys


def last_gpu(path):
    """The GPU part of the last snapshot that has one (exits if none)."""
    snap = None
    for line in open(path, errors="replace"):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if isinstance(j, dict) and "gpu" in j:
            snap = j
    if not snap:
        sys.exit(f"{path}: no snapshot with a GPU part")
    return snap["gpu"]
