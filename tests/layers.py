#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The layering of xputop's folders (docs/architecture.md), read from the
#include lines of the sources and, given a build, from the objects' symbols.

    layers.py [--root DIR] [--build OUT]

Prints one line per violation, naming the file, the include (or symbol) and
the rule, and exits 1 when there is any.  What it holds:

  - each folder includes only its own headers and those of the folders
    MAY_INCLUDE lets it (a lower layer never includes a higher one); for some
    pairs only a few headers are allowed (SURFACE);
  - no circle between folders, and none between the files of a folder
    (a.c includes b.h and b.c includes a.h) beyond KNOWN_CIRCLES;
  - system headers of a library only where the library belongs: curses in
    tui/, libbpf's user-side headers in core/sources/ (and core/util/sys.c,
    which routes libbpf's messages), CUPTI and CUDA in inject/;
  - the names a folder's headers declare (xpu_OBJECT_...) use object
    prefixes no other layer uses: tui/ and core/ never share one (the
    TUI's own widgets are xpu_tui_*), so a name says its layer;
  - no xpu_ function is defined (outside static) in two layers (bpf/, inject/,
    core/, tui/), and with --build no global symbol is defined by both the
    TUI's objects and the core's;
  - a view is named (XPU_VIEW_<ID>, its descriptors xpu_snap_view_<name>,
    xpu_batch_view_<name>, xpu_view_<name>) only in its own files (their
    names hold the view's: snap_cpu.c, batch_cpu.c, view_cpu.c) and in the
    tables that list the views (VIEW_TABLES): adding one touches no other file;
  - with --build: the TUI's objects call nothing in the models, sources,
    stream, symbolizer or outputs (it computes no statistic: what it shows,
    it reads from the snapshot), bar the names of values in NAME_LOOKUPS; the
    injection library needs neither libbpf nor ncurses.
"""
import argparse
import os
import re
import subprocess
import sys

CORE = ["util", "symbols", "stream", "models", "session", "sources", "outputs", "settings", "app"]
FOLDERS = ["bpf", "inject", "tui"] + ["core/" + d for d in CORE]

# Who may include whom, besides itself: the layers from the bottom up.
MAY_INCLUDE = {
    "bpf": [],
    "inject": [],
    "core/util": [],
    "core/symbols": ["core/util"],
    "core/stream": ["core/util"],
    "core/models": ["core/util", "core/symbols", "core/stream", "bpf"],
    "core/session": ["core/util", "core/symbols", "core/stream", "core/models"],
    "core/sources": ["core/util", "core/symbols", "core/stream", "core/models", "core/session", "bpf",
                     "inject"],
    "core/outputs": ["core/util", "core/symbols", "core/stream", "core/models", "core/session", "bpf"],
    "core/settings": ["core/util", "core/stream", "core/models", "core/session", "core/outputs"],
    "tui": ["core/util", "core/stream", "core/session", "core/settings", "bpf"],
    "core/app": ["core/util", "core/symbols", "core/stream", "core/models", "core/session", "core/sources",
                 "core/outputs", "core/settings", "tui", "inject", "bpf"],
}
# Where only some headers of an allowed folder may be included.
SURFACE = {
    # The TUI reads the snapshot (snapshot.h and the flame it carries) and
    # names the values its fields hold (event.h, the BPF ABI enums).
    ("tui", "core/session"): {"snapshot.h", "flame.h"},
    ("tui", "core/stream"): {"event.h"},
    ("tui", "bpf"): {"cpu.h", "gpu.h", "npu.h"},
    # Sources decode the injection library's wire format, nothing else of it.
    ("core/sources", "inject"): {"wire.h"},
    ("core/app", "inject"): {"wire.h"},
    # The BPF skeletons are the sources' business.
    ("core/models", "bpf"): {"cpu.h", "gpu.h", "npu.h"},
    ("core/outputs", "bpf"): {"cpu.h", "gpu.h", "npu.h"},
    ("core/app", "bpf"): {"cpu.h", "gpu.h", "npu.h"},
}
# Headers the build writes, and the folder they belong to.
GENERATED = {"vmlinux.h": "bpf", "install_dirs.h": "core/util", "profile.pb-c.h": "core/outputs"}
SKEL = re.compile(r"^[a-z_]+\.skel\.h$")
# Circles between the files of one folder that are known and why they stay.
KNOWN_CIRCLES = {
    # A key handler puts a message on the status line tui.c owns, and tui.c
    # dispatches the keys and clicks; mouse.c takes tui.h's reaction flags.
    frozenset({"tui/keys", "tui/mouse", "tui/tui"}),
}
# System headers and where they may appear (a folder, or one file).
SYSTEM = [
    (re.compile(r"^n?cursesw?(/.*)?\.h$|^ncursesw/"), ["tui"]),
    (re.compile(r"^bpf/(libbpf|bpf)\.h$"), ["core/sources", "core/util/sys.c"]),
    (re.compile(r"^bpf/bpf_(helpers|tracing|core_read|endian)\.h$"), ["bpf"]),
    (re.compile(r"^(cupti|cuda|cuda_runtime)[a-z_]*\.h$"), ["inject"]),
]
# What the TUI may call outside util/, session/ and settings/: the words for
# a value (a category, a severity), not a statistic.
NAME_LOOKUPS = {"xpu_npu_cat_name", "xpu_alert_sev_name"}
TUI_MAY_CALL = {"tui", "core/util", "core/session", "core/settings"}
# The files that list the views: a view's name may stand there besides its own files.
VIEW_TABLES = {"core/session/view_list.h", "core/outputs/batch.c"}
VIEW_LIST = re.compile(r"\bX\((\w+),\s*(\w+)\)")
# A function defined (not declared) with external linkage.
DEFINITION = re.compile(r"^(?!static\b|extern\b|typedef\b|return\b)[A-Za-z_][\w \t\*]*?\b(xpu_\w+)\s*"
                        r"\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)\s*\{", re.M)
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def folder_of(path):
    for f in sorted(FOLDERS, key=len, reverse=True):
        if path.startswith(f + "/") and "/" not in path[len(f) + 1:]:
            return f
    return None


def sources(root):
    out = []
    for f in FOLDERS:
        d = os.path.join(root, f)
        if not os.path.isdir(d):
            continue
        for n in sorted(os.listdir(d)):
            if n.endswith((".c", ".h")):
                out.append(f + "/" + n)
    return out


def check_folders(root, problems):
    """core/ holds the layers' folders only: a file or folder the Makefile
    and this test do not know would be built or checked by neither."""
    mk = os.path.join(root, "Makefile")
    if os.path.isfile(mk):
        m = re.search(r"^CORE_DIRS := (.*)$", open(mk).read(), re.M)
        if not m or m.group(1).split() != CORE:
            problems.append("Makefile: CORE_DIRS is not the layers of core/ in tests/layers.py (%s)"
                            % " ".join(CORE))
    core = os.path.join(root, "core")
    for n in sorted(os.listdir(core)):
        if n.endswith((".c", ".h")):
            problems.append("core/%s: core/ holds only folders; put it in the folder of its layer" % n)
        elif os.path.isdir(os.path.join(core, n)) and n not in CORE:
            problems.append("core/%s/: not a layer: add it to CORE and MAY_INCLUDE in tests/layers.py and "
                            "to CORE_DIRS in the Makefile, or put its files in a layer" % n)


def check_includes(root, problems):
    files = sources(root)
    owner = {}
    for p in files:
        if p.endswith(".h") or p.endswith(".bpf.c"):
            b = os.path.basename(p)
            if b in owner and not p.endswith(".c"):
                problems.append("%s and %s: two headers named %s (every folder is on the include path)"
                                % (owner[b], p, b))
            owner.setdefault(b, p)
    for k, v in GENERATED.items():
        owner.setdefault(k, v + "/" + k)
    edges = {}		# folder -> folder -> first (file, include)
    stems = {}		# file stem -> stem -> (file, include): .c files only
    for p in files:
        src = folder_of(p)
        with open(os.path.join(root, p), errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                kind, name = m.groups()
                where = "%s:%d: #include %s" % (p, n, kind + name + (">" if kind == "<" else '"'))
                if kind == "<":
                    for pat, places in SYSTEM:
                        if pat.search(name) and src not in places and p not in places:
                            problems.append("%s: %s is only for %s" % (where, name, ", ".join(places)))
                    continue
                rel = os.path.normpath(os.path.join(os.path.dirname(p), name))
                if os.path.isfile(os.path.join(root, rel)) and folder_of(rel):
                    target = rel
                elif SKEL.match(os.path.basename(name)):
                    target = "bpf/" + os.path.basename(name)
                elif os.path.basename(name) in owner:
                    target = owner[os.path.basename(name)]
                else:
                    problems.append("%s: no folder has %s" % (where, name))
                    continue
                dst = folder_of(target)
                if SKEL.match(os.path.basename(target)) and src not in ("core/sources",):
                    problems.append("%s: BPF skeletons are included by core/sources/ only" % where)
                    continue
                if dst == src:
                    a, b = os.path.splitext(p)[0], os.path.splitext(target)[0]
                    if p.endswith(".c") and a != b:
                        stems.setdefault(a, {}).setdefault(b, where)
                    continue
                edges.setdefault(src, {}).setdefault(dst, where)
                if dst not in MAY_INCLUDE.get(src, []):
                    problems.append("%s: %s/ may not include %s/ (%s/ may include: %s)"
                                    % (where, src, dst, src, ", ".join(MAY_INCLUDE.get(src)) or "nothing else"))
                    continue
                allowed = SURFACE.get((src, dst))
                if allowed is not None and os.path.basename(target) not in allowed and not SKEL.match(name):
                    problems.append("%s: from %s/, %s/ may include only %s"
                                    % (where, dst, src, ", ".join(sorted(allowed))))
    for circle in circles(edges):
        problems.append("circle between folders %s: %s" % (" -> ".join(circle + [circle[0]]), "; ".join(
            edges[circle[i]][circle[(i + 1) % len(circle)]] for i in range(len(circle)))))
    found = set()
    for circle in circles(stems):
        found.add(frozenset(circle))
        if any(frozenset(circle) <= k for k in KNOWN_CIRCLES):
            continue
        problems.append("circle between files %s: %s" % (" -> ".join(circle + [circle[0]]), "; ".join(
            stems[circle[i]][circle[(i + 1) % len(circle)]] for i in range(len(circle)))))
    for k in KNOWN_CIRCLES:
        if not any(c <= k for c in found):
            problems.append("KNOWN_CIRCLES in tests/layers.py lists %s, which is no longer a circle: "
                            "take it out" % ", ".join(sorted(k)))
    own = circles({a: {b: 1 for b in bs} for a, bs in MAY_INCLUDE.items()})
    for c in own:
        problems.append("MAY_INCLUDE in tests/layers.py is itself a circle: %s" % " -> ".join(c))


def circles(graph):
    """One circle per strongly connected component with more than one node."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(path_in(graph, set(comp)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def path_in(graph, comp):
    """A cycle through the smallest node of a strongly connected component."""
    start = min(comp)
    prev, todo = {start: None}, [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph.get(v, {})):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return path[::-1]
            if w in comp and w not in prev:
                prev[w] = v
                todo.append(w)
    return sorted(comp)


def nm(args):
    r = subprocess.run(["nm"] + args, capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else ""


def check_objects(root, out, problems):
    defined = {}
    for f in FOLDERS:
        if not f.startswith("core/"):
            continue
        d = os.path.join(out, f)
        if not os.path.isdir(d):
            problems.append("%s: no objects (build first, or leave out --build)" % d)
            return
        objs = [os.path.join(d, n) for n in sorted(os.listdir(d)) if n.endswith(".o")]
        for line in nm(["-A", "--defined-only"] + objs).splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBR":
                defined.setdefault(parts[2], (f, os.path.basename(parts[0].rsplit(":", 1)[0])))
    tdir = os.path.join(out, "tui")
    tobjs = [os.path.join(tdir, n) for n in sorted(os.listdir(tdir)) if n.endswith(".o")] \
        if os.path.isdir(tdir) else []
    if not tobjs:
        problems.append("%s: no TUI objects (build first, or leave out --build)" % tdir)
    for line in nm(["-A", "--defined-only"] + tobjs).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBR" and parts[2] in defined:
            f, obj = defined[parts[2]]
            problems.append("tui/%s and %s/%s both define %s: a name is defined in one layer"
                            % (os.path.basename(parts[0].rsplit(":", 1)[0]).replace(".o", ".c"), f,
                               obj.replace(".o", ".c"), parts[2]))
    for line in nm(["-A", "--undefined-only"] + tobjs).splitlines():
        parts = line.split()
        sym = parts[-1]
        if sym not in defined or sym in NAME_LOOKUPS:
            continue
        f, obj = defined[sym]
        if f not in TUI_MAY_CALL:
            problems.append("tui/%s calls %s (%s/%s): the TUI reads the snapshot and computes no statistic"
                            % (os.path.basename(parts[0].rsplit(":", 1)[0]).replace(".o", ".c"), sym, f,
                               obj.replace(".o", ".c")))
    for lib in ("libxputop_inject.so", "tests/libxputop_inject_fake.so"):
        p = os.path.join(out, lib)
        if not os.path.isfile(p):
            continue
        r = subprocess.run(["readelf", "-d", "-W", p], capture_output=True, text=True)
        for m in re.finditer(r"\(NEEDED\).*\[(.*)\]", r.stdout):
            if re.match(r"lib(bpf|n?cursesw?|tinfo|elf|dw)\b", m.group(1)):
                problems.append("%s needs %s: the injection library links neither libbpf nor ncurses"
                                % (p, m.group(1)))
        syms = nm(["-D", p]) + nm([p])
        for m in re.finditer(r"\b(bpf_object__\w+|ring_buffer__\w+|libbpf_\w+|initscr|newterm|wgetch)\b", syms):
            problems.append("%s holds %s: the injection library links neither libbpf nor ncurses"
                            % (p, m.group(1)))
            break


DECL = re.compile(r"^[A-Za-z_][\w \t\*]*?\b(xpu_[a-z0-9]+)_\w*\s*\(", re.M)


def prefixes(root, folders):
    """{xpu_OBJECT: first header declaring a function with it} over folders."""
    found = {}
    for f in folders:
        d = os.path.join(root, f)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith(".h"):
                continue
            with open(os.path.join(d, name), errors="replace") as fh:
                for m in DECL.finditer(fh.read()):
                    found.setdefault(m.group(1), f + "/" + name)
    return found


def layer_of(path):
    return "core" if path.startswith("core/") else path.split("/")[0]


def check_definitions(root, problems):
    """A function's name says its layer: none is defined in two."""
    where = {}
    for p in sources(root):
        if not p.endswith(".c"):
            continue
        with open(os.path.join(root, p), errors="replace") as fh:
            for m in DEFINITION.finditer(fh.read()):
                where.setdefault(m.group(1), {}).setdefault(layer_of(p), p)
    for name, layers in sorted(where.items()):
        if len(layers) > 1:
            problems.append("%s is defined in %s: a function is defined in one layer"
                            % (name, " and ".join(sorted(layers.values()))))


def check_views(root, problems):
    """A view is named in its own files and the tables that list the views only."""
    lst = os.path.join(root, "core/session/view_list.h")
    if not os.path.isfile(lst):
        problems.append("core/session/view_list.h: missing (the list of the views)")
        return
    m = re.search(r"#define XPU_VIEW_LIST\(X\)((?:.*\\\n)*.*)", open(lst).read())
    views = VIEW_LIST.findall(m.group(1)) if m else []
    if not views:
        problems.append("core/session/view_list.h: no view in XPU_VIEW_LIST")
    for vid, name in views:
        word = re.compile(r"\b(XPU_VIEW_%s|xpu_(?:snap_|batch_)?view_%s)\b" % (vid, name))
        own = re.compile(r"(^|_)%s(_|\.)" % name)
        for p in sources(root):
            if p in VIEW_TABLES or own.search(os.path.basename(p)):
                continue
            with open(os.path.join(root, p), errors="replace") as fh:
                for n, line in enumerate(fh, 1):
                    w = word.search(line)
                    if w:
                        problems.append("%s:%d: names %s: a view is named only in its own files and in %s"
                                        % (p, n, w.group(1), ", ".join(sorted(VIEW_TABLES))))
                        break


def check_prefixes(root, problems):
    tui = prefixes(root, ["tui"])
    core = prefixes(root, ["core/" + d for d in CORE])
    for p in sorted(set(tui) & set(core)):
        problems.append("%s and %s both declare %s_* functions: a name's prefix says its layer "
                        "(the TUI's own are xpu_tui_*)" % (tui[p], core[p], p))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--build")
    a = ap.parse_args()
    problems = []
    check_folders(a.root, problems)
    check_includes(a.root, problems)
    check_prefixes(a.root, problems)
    check_definitions(a.root, problems)
    check_views(a.root, problems)
    if a.build:
        check_objects(a.root, a.build, problems)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
