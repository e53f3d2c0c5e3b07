#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks that the kept corpora speak their formats' current versions.

A corpus whose inputs stopped at an old version's check (after the format
moved on) would replay without ever reaching the decoder behind that check:
tests/fuzz/run.sh runs this first and fails when
  - an input of the injection wire (corpus/wire) carries the right magic and
    a former version (1 .. XPU_WIRE_VERSION-1), or a seed is not current;
  - a recording (corpus/record, corpus/replay) carries a former major
    version, or a seed (seed-*) is not at the current major and minor, so
    that what the newest minor added is fed to the reader.
Inputs with other magics or nonsense versions are kept: they test the checks.

    tests/fuzz/versions.py [CORPUS_DIR]      (default tests/fuzz/corpus)
"""
import os
import re
import struct
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def define(path, name):
    text = open(os.path.join(ROOT, path)).read()
    m = re.search(r"#define\s+%s\s+(\d+)" % name, text)
    if not m:
        sys.exit("versions.py: no #define %s in %s" % (name, path))
    return int(m.group(1))


WIRE_MAGIC = 0x57555058
WIRE_VERSION = define("inject/wire.h", "XPU_WIRE_VERSION")
REC_MAGIC = b"XPUTOPRC"
REC_MAJOR = define("core/stream/record.h", "XPU_REC_VERSION")
REC_MINOR = define("core/stream/record_fmt.h", "REC_MINOR")


def inputs(corpus, name):
    d = os.path.join(corpus, name)
    files = sorted(os.listdir(d)) if os.path.isdir(d) else []
    if not files:
        yield None, None, b""
    for f in files:
        yield f, f.startswith("seed-"), open(os.path.join(d, f), "rb").read()


def check_wire(corpus):
    bad, seeds = [], 0
    for f, seed, b in inputs(corpus, "wire"):
        if f is None:
            return ["corpus/wire holds no inputs"]
        ok = len(b) >= 6 and struct.unpack_from("<I", b)[0] == WIRE_MAGIC
        version = struct.unpack_from("<H", b, 4)[0] if ok else None
        if seed:
            seeds += 1
            if version != WIRE_VERSION:
                bad.append("wire/%s: a seed of version %s, not %d" % (f, version, WIRE_VERSION))
        elif ok and 1 <= version < WIRE_VERSION:
            bad.append("wire/%s: wire version %d, the current is %d" % (f, version, WIRE_VERSION))
    if not seeds:
        bad.append("corpus/wire has no seed-* inputs")
    return bad


def check_records(corpus, name):
    bad, seeds = [], 0
    for f, seed, b in inputs(corpus, name):
        if f is None:
            return ["corpus/%s holds no inputs" % name]
        ok = len(b) >= 12 and b[:8] == REC_MAGIC
        major, minor = struct.unpack_from("<HH", b, 8) if ok else (None, None)
        if seed and ok:
            seeds += 1
            if (major, minor) != (REC_MAJOR, REC_MINOR):
                bad.append("%s/%s: a seed of version %s.%s, not %d.%d" % (name, f, major, minor, REC_MAJOR, REC_MINOR))
        elif ok and 1 <= major < REC_MAJOR:
            bad.append("%s/%s: recording version %d, the current is %d" % (name, f, major, REC_MAJOR))
    if not seeds:
        bad.append("corpus/%s has no seed-* recordings" % name)
    return bad


def main():
    corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "fuzz", "corpus")
    bad = check_wire(corpus) + check_records(corpus, "record") + check_records(corpus, "replay")
    for b in bad:
        print("  " + b, file=sys.stderr)
    if bad:
        print("FAIL fuzz_corpora_speak_their_current_versions (tests/fuzz/seeds.sh makes new seeds)")
        return 1
    print("ok   fuzz_corpora_speak_their_current_versions (wire %d, recordings %d.%d)"
          % (WIRE_VERSION, REC_MAJOR, REC_MINOR))
    return 0


if __name__ == "__main__":
    sys.exit(main())
