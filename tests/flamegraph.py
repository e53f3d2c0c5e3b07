# SPDX-License-Identifier: GPL-2.0-only
"""python3 tests/flamegraph.py FOLDED SVG

The SVG that FlameGraph's flamegraph.pl drew from FOLDED (with --minwidth 0)
shows what FOLDED holds: the root's total, and for every frame name the
weight of all the places it appears (flamegraph.pl may draw one place as two
boxes when it sorts other lines between them, so names are compared by their
summed weight).  flamegraph.pl writes '<' and '>' in names as '(' and ')'."""
import html
import re
import sys
from collections import Counter


def main(folded, svg):
    prefixes = Counter()
    total = 0
    with open(folded) as f:
        for n, line in enumerate(f, 1):
            m = re.fullmatch(r"(.+) (\d+)", line.rstrip("\n"))
            if not m:
                sys.exit(f"{folded}:{n}: not 'frames count': {line!r}")
            frames, weight = m.group(1).split(";"), int(m.group(2))
            total += weight
            for i in range(1, len(frames) + 1):
                prefixes[tuple(frames[:i])] += weight
    want = Counter()
    for path, weight in prefixes.items():
        want[path[-1].translate(str.maketrans("<>", "()"))] += weight
    got = Counter()
    root = None
    with open(svg) as f:
        for title in re.findall(r"<title>(.*?)</title>", f.read()):
            m = re.fullmatch(r"(.*) \(([\d,]+) samples, [\d.]+%\)", html.unescape(title))
            if not m:
                continue
            name, weight = m.group(1), int(m.group(2).replace(",", ""))
            if name == "all" and root is None:
                root = weight
                continue
            got[name] += weight
    bad = []
    if root != total:
        bad.append(f"the root has {root}, the file {total} in all")
    for name in sorted(set(want) | set(got)):
        if want[name] != got[name]:
            bad.append(f"'{name}': {got[name]} drawn, {want[name]} in the file")
    if not total:
        bad.append("the file has no stacks")
    if bad:
        sys.exit(f"{svg} (from {folded}): " + "; ".join(bad[:10]))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
