#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every file a comment or a document names exists: paths under the
project's folders (core/sources/share.h, docs/metrics.md, ...) in the
tracked sources and documents, ending in a source or document extension.
Names with a placeholder (NAME, VIEW, a * or a $) and #include <...> of
system headers are not paths of this tree, nor are the rows of a quoted
`git diff --stat`.  Prints each missing path with
where it is named; exits 1 if there is one.

    tests/paths.py [ROOT]       ROOT: the checkout (default .)"""
import os
import re
import subprocess
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
TOP = r"(?:bpf|core|tui|inject|tests|docs|bench|man|themes|\.ci)"
EXT = r"\.(?:c|h|md|sh|py|in|theme|cu|json|proto|supp|awk|mjs|8)"
PATH = re.compile(r"(?<![\w./<$-])(" + TOP + r"/[A-Za-z0-9_./-]*?" + EXT + r")(?![\w*])")
# Files that name made-up paths on purpose: layers.sh adds them to a copy
# of the tree to show that the check names them.
MADE_UP = {"tests/cli/layers.sh"}
# A row of `git diff --stat` quoted in a document names what another branch
# changed (docs/architecture.md's hello view), not a file of this tree.
STAT_ROW = re.compile(r"^ \S+ +\| +\d+ [+-]*$")
TEXT = re.compile(r"\.(?:c|h|sh|py|md|cu|mjs|awk|in)$|^Makefile$|^tests/run$|^\.ci/")


def files():
    try:
        out = subprocess.check_output(["git", "-c", "safe.directory=*", "-C", ROOT, "ls-files"],
                                      text=True, stderr=subprocess.DEVNULL)
        return out.split()
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, dirs, names in os.walk(ROOT):
            dirs[:] = [x for x in dirs if not x.startswith("build") and x != ".git"]
            found += [os.path.relpath(os.path.join(d, n), ROOT) for n in names]
        return found


def main():
    missing = {}
    for f in files():
        if f in MADE_UP or f.startswith(("tests/fuzz/corpus/", "tests/fixtures/")) or not TEXT.search(f):
            continue
        try:
            with open(os.path.join(ROOT, f), encoding="utf-8", errors="replace") as fh:
                lines = fh.read().split("\n")
        except OSError:
            continue
        for n, line in enumerate(lines, 1):
            if STAT_ROW.match(line):
                continue
            for m in PATH.finditer(line):
                p = m.group(1)
                if re.search(r"[A-Z]{3,}", p.split("/")[-1].split(".")[0]) and not os.path.exists(
                        os.path.join(ROOT, p)):
                    continue	# a placeholder: model_VIEW.c, fuzz_NAME.c
                if not os.path.exists(os.path.join(ROOT, p)):
                    missing.setdefault(p, []).append(f"{f}:{n}")
    for p, where in sorted(missing.items()):
        print(f"{p}: named in {', '.join(where[:4])}" + (f" and {len(where) - 4} more" if len(where) > 4 else ""))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
