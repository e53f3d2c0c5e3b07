# SPDX-License-Identifier: GPL-2.0-only
"""python3 tests/promtext.py monotonic SCRAPE...
   python3 tests/promtext.py names SCRAPE
   python3 tests/promtext.py label SCRAPE METRIC LABEL

Reads scrapes of xputop's /metrics (the Prometheus text format) for
tests/cli/metrics.sh:
  monotonic  every counter (and histogram bucket, sum and count) of each
             scrape is at least what it was in the one before; prints the
             number of series compared, fails naming the first that went back
  names      the metric names, one a line
  label      the raw (escaped) values of LABEL in METRIC's series, one a line
"""
import re
import sys

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$')


def parse(path):
    types, samples = {}, {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("# TYPE "):
                _, _, name, kind = line.split(" ", 3)
                types[name] = kind
                continue
            if not line or line.startswith("#"):
                continue
            m = SAMPLE.match(line)
            if not m:
                raise SystemExit(f"{path}: not a sample line: {line!r}")
            samples[(m.group(1), m.group(2) or "")] = float(m.group(3))
    return types, samples


def family(name, types):
    for suffix in ("", "_bucket", "_sum", "_count"):
        base = name[: len(name) - len(suffix)] if suffix and name.endswith(suffix) else name
        if base in types:
            return types[base]
    return None


def monotonic(paths):
    prev, compared = None, 0
    for p in paths:
        types, cur = parse(p)
        if prev is not None:
            for key, v in cur.items():
                if family(key[0], types) in ("counter", "histogram") and key in prev:
                    compared += 1
                    if v < prev[key]:
                        raise SystemExit(f"{p}: {key[0]}{key[1]} went back from {prev[key]} to {v}")
        prev = cur
    print(compared)


def label(path, metric, lab):
    _, samples = parse(path)
    pat = re.compile(lab + r'="((?:[^"\\]|\\.)*)"')
    for name, labels in samples:
        if name == metric:
            m = pat.search(labels)
            if m:
                print(m.group(1))


def main():
    what = sys.argv[1]
    if what == "monotonic":
        monotonic(sys.argv[2:])
    elif what == "names":
        for name in sorted({k[0] for k in parse(sys.argv[2])[1]}):
            print(name)
    elif what == "label":
        label(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
