#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Reads xputop's NDJSON on stdin and checks one property, for the shell tests.

Usage: jsonq.py CHECK [ARGS...]; exit status 0 when the property holds,
1 (with the reason on stderr) when it does not.
"""
import json
import math
import re
import sys


def chrome_trace(_, path):
    """PATH is a Chrome trace with kernel and launch events, GPU tracks named,
    and a flow from launches to kernels."""
    with open(path) as f:
        t = json.load(f)
    ev = t["traceEvents"]
    kernels = [e for e in ev if e.get("cat") == "kernel"]
    launches = [e for e in ev if e.get("cat") == "launch"]
    flows = [e for e in ev if e.get("cat") == "flow"]
    tracks = [e for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"]
    if not kernels or not launches:
        sys.exit(f"{len(kernels)} kernels and {len(launches)} launches in the trace")
    if not all(e["ph"] == "X" and e["dur"] > 0 and "ts" in e for e in kernels):
        sys.exit("a kernel event lacks a duration or time")
    if not any(e["args"]["name"].startswith("GPU 0 stream") for e in tracks):
        sys.exit("GPU tracks are not named")
    if not flows or {e["ph"] for e in flows} != {"s", "f"}:
        sys.exit("no launch -> kernel flows")


def snapshots():
    out = []
    for n, line in enumerate(sys.stdin, 1):
        line = line.strip()
        if not line:
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as e:
            sys.exit(f"line {n} is not JSON: {e}")
    if not out:
        sys.exit("no JSON snapshots on stdin")
    return out


def top_comm(snaps, comm, *others):
    """The last snapshot's first CPU row is COMM, leaving out rows of the
    commands OTHERS (xputops of a sanitizer build outspend a spinning
    program while they start)."""
    rows = [r for r in snaps[-1]["cpu"] if r["comm"] not in others]
    if not rows or rows[0]["comm"] != comm:
        sys.exit(f"top CPU process is {rows[0]['comm'] if rows else None!r}, not {comm!r}")


def top_tier(snaps, comm, *others):
    """In the last snapshot COMM's row is first, or level with the first
    (at least 80% of its CPU share): another suite's spinning program on
    the other CPU takes as much as COMM, and either may come first.  Rows
    of the commands OTHERS are left out, as in top_comm."""
    rows = [r for r in snaps[-1]["cpu"] if r["comm"] not in others]
    mine = [r for r in rows if r["comm"] == comm]
    if not rows or not mine:
        sys.exit(f"no row of {comm!r}: {[r['comm'] for r in rows[:5]]}")
    if mine[0]["cpu_pct"] < 0.8 * rows[0]["cpu_pct"]:
        sys.exit(f"{comm!r} has {mine[0]['cpu_pct']:.1f}% of a CPU, the first row "
                 f"({rows[0]['comm']!r}) {rows[0]['cpu_pct']:.1f}%")


def stack_has(snaps, pid, *frames):
    """Some stack of PID (in the last snapshot) holds FRAMES in this order, root first."""
    for row in snaps[-1]["cpu"]:
        if row["pid"] != int(pid):
            continue
        for st in row["stacks"]:
            names = st["frames"]
            at = 0
            for f in names:
                if at < len(frames) and f == frames[at]:
                    at += 1
            if at == len(frames):
                return
        sys.exit(f"no stack of pid {pid} holds {frames}: {[s['frames'] for s in row['stacks']]}")
    sys.exit(f"pid {pid} is not in the CPU table")


def has_kernel_frames(snaps):
    """Some stack in the last snapshot has a kernel frame (_[k])."""
    for row in snaps[-1]["cpu"]:
        for st in row["stacks"]:
            if any(f.endswith("_[k]") for f in st["frames"]):
                return
    sys.exit("no kernel frames in any stack")


def only_pids(snaps, *pids):
    """Every CPU row of every snapshot is one of PIDS."""
    want = {int(p) for p in pids}
    for s in snaps:
        for row in s["cpu"]:
            if row["pid"] not in want:
                sys.exit(f"pid {row['pid']} ({row['comm']}) is shown although -p {pids}")


def count(snaps, n):
    """Exactly N snapshots, each with the documented keys."""
    if len(snaps) != int(n):
        sys.exit(f"{len(snaps)} snapshots, expected {n}")
    for s in snaps:
        for key in ("time", "cpu", "gpu", "npu", "alerts", "dropped"):
            if key not in s:
                sys.exit(f"snapshot lacks key {key!r}")


def same_as(snaps, path):
    """The snapshots equal those in PATH, except for the words that say where
    the data came from (source, and the CPU/GPU/NPU status lines) and
    xputop's own memory, CPU time and symbolizer work (the replaying process's,
    not the recorded one's)."""
    with open(path) as f:
        other = [json.loads(line) for line in f if line.strip()]

    def numbers(s):
        s = dict(s)
        s.pop("source", None)
        s.pop("memory", None)
        s.pop("self_cpu_s", None)
        s.pop("symbolizer", None)
        s.pop("collection", None)  # how a live xputop collects: a replay has none
        for view in ("cpu_info", "gpu", "npu", "gpu_devices"):
            s[view] = {k: v for k, v in s.get(view, {}).items() if k not in ("status", "state")}
        s["npu"].pop("sources", None)  # what this machine offers, not what was recorded
        s["gpu"].pop("peers", None)  # what this machine's socket refused: live, not recorded
        if "tracing" in s["gpu"]:  # the mode asked of the libraries is live, not recorded
            s["gpu"]["tracing"] = {k: v for k, v in s["gpu"]["tracing"].items()
                                   if k in ("estimated", "traced_pct", "gpu_ns_est",
                                            "gpu_ns_est_err_pct")}
        return s

    if len(other) != len(snaps):
        sys.exit(f"{len(snaps)} snapshots here, {len(other)} in {path}")
    for n, (a, b) in enumerate(zip(snaps, other), 1):
        if numbers(a) != numbers(b):
            diff = [k for k in a if numbers(a).get(k) != numbers(b).get(k)]
            sys.exit(f"snapshot {n} differs in {diff}")


def _in_order(names, frames):
    at = 0
    for f in names:
        if at < len(frames) and f == frames[at]:
            at += 1
    return at == len(frames)


def gpu_kernels(snaps, expected_path):
    """The last snapshot's kernels have exactly the calls and total GPU time
    the workload reported (expected_path: its JSON lines)."""
    rows = {k["mangled"]: k for k in snaps[-1]["gpu"]["kernels"]}
    with open(expected_path) as f:
        want = [json.loads(line) for line in f if line.strip()]
    if not want:
        sys.exit("the workload reported no kernels")
    for w in want:
        k = rows.get(w["kernel"])
        if not k:
            sys.exit(f"kernel {w['kernel']} missing; have {sorted(rows)}")
        if k["calls"] != w["calls"] or k["total_ns"] != w["total_ns"]:
            sys.exit(f"{w['kernel']}: {k['calls']} calls {k['total_ns']} ns, expected "
                     f"{w['calls']} calls {w['total_ns']} ns")


def gpu_estimates(snaps, expected_path, calls_pct, share_pp, lo_pct, hi_pct):
    """The last snapshot's figures are sampled estimates, from between LO_PCT
    and HI_PCT of the time traced: the calls of each kernel run in every step
    (at least half as often as the most frequent; a graph's kernels come in
    bursts, a slice catching a whole graph or none) within CALLS_PCT
    percent of what the workload reported, or within three standard
    deviations of a count estimated from that share of the time where that
    is wider (n calls seen with probability f each: sqrt((1-f)/(n f)); 114
    calls traced a fifth of the time are good to 56%), each share within
    SHARE_PP points of its true share, and fewer kernels arrived than ran."""
    g = snaps[-1]["gpu"]
    t = g["tracing"]
    if not t["estimated"] or not float(lo_pct) <= t["traced_pct"] <= float(hi_pct):
        sys.exit(f"tracing {t}: expected estimates from {lo_pct}-{hi_pct}% of the time")
    rows = {k["mangled"]: k for k in g["kernels"]}
    with open(expected_path) as f:
        want = [json.loads(line) for line in f if line.strip()]
    all_ns = sum(w["total_ns"] for w in want)
    f = t["traced_pct"] / 100
    for w in want:
        k = rows.get(w["kernel"])
        if not k:
            sys.exit(f"kernel {w['kernel']} missing; have {sorted(rows)}")
        err = 100 * abs(k["calls"] - w["calls"]) / w["calls"]
        share = 100 * w["total_ns"] / all_ns
        print(f"  {w['kernel']}: {k['calls']} calls estimated, {w['calls']} ran ({err:.1f}% off); "
              f"share {k['share_pct']:.1f}%, true {share:.1f}%")
        frequent = w["calls"] * 2 >= max(x["calls"] for x in want)
        allowed = max(float(calls_pct), 300 * math.sqrt((1 - f) / (w["calls"] * f)))
        if (frequent and err > allowed) or abs(k["share_pct"] - share) > float(share_pp):
            sys.exit(f"{w['kernel']}: the estimate is off by more than {allowed:.0f}% or {share_pp} points")
    proc = [p for p in g["processes"] if p["pid"] == want[0]["pid"]][0]
    if proc["tracing"] != "sampled" or proc["kernels"] >= sum(w["calls"] for w in want):
        sys.exit(f"the process traced {proc['kernels']} kernels in mode {proc['tracing']}")


def gpu_modes(snaps, first, last):
    """GPU tracing was in mode FIRST in the first snapshot, LAST in the last,
    and the injected process reported tracing in each."""
    got = (snaps[0]["gpu"]["tracing"]["mode"], snaps[-1]["gpu"]["tracing"]["mode"])
    if got != (first, last):
        sys.exit(f"tracing went {got[0]} -> {got[1]}, expected {first} -> {last}")
    for s, want in ((snaps[0], first), (snaps[-1], last)):
        procs = [p for p in s["gpu"]["processes"] if p.get("tracing")]
        if procs and procs[0]["tracing"] != want and want == "exact":
            sys.exit(f"the process traced {procs[0]['tracing']} while the mode was {want}")


def gpu_stack_pct(snaps, pct):
    """The share of GPU time with a launch stack is at least PCT."""
    got = snaps[-1]["gpu"]["stack_pct"]
    if got is None or got < float(pct) - 1e-9:
        sys.exit(f"stack_pct is {got}, expected {pct}")


def gpu_path(snaps, kernel, *frames):
    """Every stack of KERNEL's rows holds FRAMES in order."""
    rows = [k for k in snaps[-1]["gpu"]["kernels"] if k["kernel"].startswith(kernel)]
    if not rows:
        sys.exit(f"no kernel {kernel}")
    for k in rows:
        if not k["stacks"]:
            sys.exit(f"{kernel} has no stacks")
        for st in k["stacks"]:
            if not _in_order(st["frames"], frames):
                sys.exit(f"{kernel}: stack {st['frames']} lacks {frames}")


def _pid_rows(snaps, expected_path, kernel):
    pid = _lines(expected_path, "kernels")[0]["pid"]
    rows = [k for k in snaps[-1]["gpu"]["kernels"] if k["pid"] == pid and k["kernel"].startswith(kernel)]
    if not rows or not all(k["stacks"] for k in rows):
        sys.exit(f"no kernel {kernel} with stacks in process {pid}")
    return rows


def gpu_stitched(snaps, expected_path, kernel, kind, *frames):
    """Every stack of KERNEL in the process of EXPECTED_PATH (the program's
    kernel lines) was stitched as KIND and holds FRAMES in order."""
    for k in _pid_rows(snaps, expected_path, kernel):
        for st in k["stacks"]:
            if st.get("stitched") != kind or not _in_order(st["frames"], frames):
                sys.exit(f"{kernel}: stack {st['frames']} ({st.get('stitched')}), expected {kind} with {frames}")


def gpu_stitched_mostly(snaps, expected_path, kernel, pct, kind, *frames):
    """At least PCT% of the GPU time of KERNEL in the process of
    EXPECTED_PATH has stacks stitched as KIND holding FRAMES in order; the
    rest only under the waiter ("launched for", "backward of": what a node
    whose making came before the probes keeps) or the launching thread's
    own ("same thread": a run or wait that returned before its end probe
    was in, the first of a process on a busy machine, stitches nothing)."""
    got = total = 0
    for k in _pid_rows(snaps, expected_path, kernel):
        for st in k["stacks"]:
            total += st["gpu_ns"]
            if st.get("stitched") == kind and _in_order(st["frames"], frames):
                got += st["gpu_ns"]
            elif st.get("stitched") not in ("launched for", "backward of", "same thread"):
                sys.exit(f"{kernel}: stack {st['frames']} ({st.get('stitched')}), expected {kind} with {frames}")
    if got < float(pct) / 100 * total:
        sys.exit(f"{kernel}: {100 * got / max(total, 1):.1f}% of its GPU time {kind} with {frames}, expected {pct}%")


def gpu_stacks_lack(snaps, expected_path, kernel, *frames):
    """No stack of KERNEL in the process of EXPECTED_PATH holds any of FRAMES."""
    for k in _pid_rows(snaps, expected_path, kernel):
        for st in k["stacks"]:
            if set(frames) & set(st["frames"]):
                sys.exit(f"{kernel}: stack {st['frames']} holds {set(frames) & set(st['frames'])}")


def gpu_pid_kernels(snaps, expected_path):
    """The process of EXPECTED_PATH has exactly the calls and GPU time of
    each kernel it reported."""
    for w in _lines(expected_path, "kernels"):
        rows = [k for k in snaps[-1]["gpu"]["kernels"] if k["pid"] == w["pid"] and k["mangled"] == w["kernel"]]
        got = (sum(k["calls"] for k in rows), sum(k["total_ns"] for k in rows))
        if got != (w["calls"], w["total_ns"]):
            sys.exit(f"{w['kernel']} of {w['pid']}: {got}, expected {(w['calls'], w['total_ns'])}")


def gpu_kernel_names(snaps, mangled, kernel, name):
    """The kernel rows of the CUPTI name MANGLED read KERNEL in the table and
    NAME (the full demangled name) in the name field."""
    rows = [k for k in snaps[-1]["gpu"]["kernels"] if k["mangled"] == mangled]
    if not rows:
        sys.exit(f"no kernel {mangled}")
    for k in rows:
        if k["kernel"] != kernel or k["name"] != name:
            sys.exit(f"{mangled} reads {k['kernel']!r} / {k['name']!r}, expected {kernel!r} / {name!r}")


def gpu_process(snaps, comm, mode):
    """A process named COMM is listed in MODE ("cupti" or "launches only")."""
    for s in reversed(snaps):
        for p in s["gpu"]["processes"]:
            if p["comm"] == comm and p["mode"] == mode:
                return
    sys.exit(f"no {mode} process {comm}: {snaps[-1]['gpu']['processes']}")


def stacks_distinct(snaps):
    """No row of the CPU or GPU view lists one path twice in its stacks."""
    for s in snaps:
        for view, rows in (("cpu", s["cpu"]), ("gpu", s["gpu"]["kernels"])):
            for r in rows:
                paths = [tuple(t["frames"]) for t in r["stacks"]]
                for p in set(paths):
                    if paths.count(p) > 1:
                        sys.exit(f"{view} row of pid {r['pid']} lists {';'.join(p)} {paths.count(p)} times")


def gpu_only_pids(snaps, *pids):
    """The GPU view's processes and kernels, and the CPU view's rows, are of
    PIDS only, and each of PIDS launched kernels that were seen."""
    want = {int(p) for p in pids}
    seen = set()
    for s in snaps:
        for p in s["gpu"]["processes"]:
            if p["pid"] not in want:
                sys.exit(f"process {p['pid']} ({p['comm']}) is in the GPU view")
        for k in s["gpu"]["kernels"]:
            if k["pid"] not in want:
                sys.exit(f"a kernel of process {k['pid']} is in the GPU view")
            seen.add(k["pid"])
        if len(want) == 1:
            for r in s["cpu"]:
                if r["pid"] not in want:
                    sys.exit(f"process {r['pid']} ({r['comm']}) is in the CPU view")
    if seen != want:
        sys.exit(f"kernels of {sorted(seen)}, expected of {sorted(want)}")


def gpu_no_process(snaps, comm):
    """No snapshot lists a GPU process named COMM."""
    for s in snaps:
        if any(p["comm"] == comm for p in s["gpu"]["processes"]):
            sys.exit(f"process {comm} is listed")


def gpu_launch_path(snaps, pid, *frames):
    """Some launch-only stack of PID holds FRAMES in order."""
    stacks = [st for s in snaps for st in s["gpu"]["launch_stacks"] if st["pid"] == int(pid)]
    if not stacks:
        sys.exit(f"no launch-only stacks of pid {pid}")
    if not any(_in_order(st["frames"], frames) for st in stacks):
        sys.exit(f"no launch stack of {pid} holds {frames}: {[st['frames'] for st in stacks[:3]]}")


def gpu_account(snaps, expected_path):
    """The last snapshot accounts for every kernel the stand-in ran (its JSON
    lines at EXPECTED_PATH, which name its pid): the kernels that arrived,
    plus those the library and CUPTI dropped, add up to them exactly."""
    with open(expected_path) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    if not lines:
        sys.exit(f"{expected_path}: the program printed no totals")
    ran, pid = sum(e["calls"] for e in lines), lines[0]["pid"]
    procs = [p for p in snaps[-1]["gpu"]["processes"] if p["pid"] == int(pid)]
    if not procs:
        sys.exit(f"no process {pid}")
    got = procs[0]["kernels"]
    lost = procs[0]["kernels_dropped"] + procs[0]["cupti_dropped"]
    if got + lost != ran:
        sys.exit(f"{got} kernels arrived + {lost} dropped = {got + lost}, the program ran {ran}")
    print(f"  {ran} kernels: {got} arrived, {lost} dropped and counted")


def _lines(path, what):
    with open(path) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    if not lines:
        sys.exit(f"{path}: the program printed no {what}")
    return lines


def _gpu_proc(snaps, pid):
    procs = [p for p in snaps[-1]["gpu"]["processes"] if p["pid"] == int(pid)]
    if not procs:
        sys.exit(f"no GPU process {pid}: {[p['pid'] for p in snaps[-1]['gpu']['processes']]}")
    return procs[0]


def _stand(path):
    """The stand-in CUPTI's counters: the program's {"stand_cupti": ...} line
    in PATH, with its pid, and the other profiler's counters, if it played
    one, as other_launches and other_seen."""
    lines = _lines(path, "counters")
    line = [x for x in lines if "stand_cupti" in x]
    if not line:
        sys.exit(f"{path}: no stand_cupti line")
    c = dict(line[-1]["stand_cupti"], pid=line[-1]["pid"])
    for x in lines:
        c.update({"other_" + k: v for k, v in x.get("other_profiler", {}).items()})
    return c


def gpu_traced_pct(snaps, expected_path, lo, hi):
    """The last snapshot's figures are sampled estimates, and the process of
    EXPECTED_PATH (the program's kernel totals, naming its pid) traced
    between LO and HI percent of its time.  Its own row: the summary's
    share is the mean over every sampled process, and the launch probes
    count other suites' programs too (their share is the probes')."""
    want = [w for w in _lines(expected_path, "kernel totals") if "kernel" in w]
    t, p = snaps[-1]["gpu"]["tracing"], _gpu_proc(snaps, want[0]["pid"])
    print(f"  traced {p.get('traced_pct')}% of its time ({t['traced_pct']:.2f}% the mean of all)")
    if not t["estimated"] or p.get("tracing") != "sampled" or not float(lo) <= p.get("traced_pct", -1) <= float(hi):
        sys.exit(f"tracing {t}, its row {p.get('tracing')} {p.get('traced_pct')}%: "
                 f"expected estimates from {lo}-{hi}% of the time")


def _estimates(p, want):
    """Process row P's launches (one a kernel), kernels and GPU time
    estimates against WANT (the program's kernel totals), printed: (key,
    estimate, its uncertainty, what ran); exits where one was not made."""
    out = []
    for key, true in (("launches_est", sum(w["calls"] for w in want)),
                      ("kernels_est", sum(w["calls"] for w in want)),
                      ("gpu_ns_est", sum(w["total_ns"] for w in want))):
        est, err = p[key], p[key + "_err_pct"]
        if est is None or err is None:
            sys.exit(f"{key} {est} +-{err}%: no estimate made")
        print(f"  {key}: {est:.0f} +-{err:.1f}%, {true} ran ({100 * (est - true) / true:+.1f}%)")
        out.append((key, est, err, true))
    return out


def gpu_traced_whole(snaps, expected_path, lo_pct, hi_pct, err_pct):
    """The process of EXPECTED_PATH (the program's kernel totals, naming its
    pid): its library traced throughout for LO_PCT to HI_PCT percent of its
    time (traced_whole_pct), and its launches (one a kernel), kernels and
    GPU time come within ERR_PCT percent of what ran, each with an
    uncertainty of at most ERR_PCT."""
    want = [w for w in _lines(expected_path, "kernel totals") if "kernel" in w]
    p = _gpu_proc(snaps, want[0]["pid"])
    whole = p.get("traced_whole_pct")
    print(f"  traced throughout {whole}% of its time ({p.get('traced_whole_launches')} launches, "
          f"{p.get('traced_whole_kernels')} kernels), tracing {p.get('tracing')}, scaled by {p.get('scaled_by')}")
    if whole is None or not float(lo_pct) <= whole <= float(hi_pct):
        sys.exit(f"traced throughout {whole}% of its time: not {lo_pct}-{hi_pct}%")
    for key, est, err, true in _estimates(p, want):
        if abs(est - true) > float(err_pct) * true / 100 or err > float(err_pct):
            sys.exit(f"{key}: {est:.0f} +-{err:.1f}% of the {true} that ran: not within {err_pct}%")


def gpu_within_stated(snaps, expected_path, sigmas, most_pct):
    """The process of EXPECTED_PATH (the program's kernel totals, naming its
    pid) has its launches (one a kernel), kernels and GPU time estimated
    within SIGMAS times the uncertainty xputop states for each, and within
    MOST_PCT percent of what ran (a wide uncertainty does not make a poor
    estimate pass)."""
    want = [w for w in _lines(expected_path, "kernel totals") if "kernel" in w]
    p = _gpu_proc(snaps, want[0]["pid"])
    for key, est, err, true in _estimates(p, want):
        if abs(est - true) > min(float(sigmas) * est * err, float(most_pct) * true) / 100:
            sys.exit(f"{key}: {est:.0f} +-{err:.1f}% is not within {sigmas} times its uncertainty "
                     f"and {most_pct}% of the {true} that ran")


def gpu_scaled(snaps, expected_path, scaled_by, lo_ratio, hi_ratio):
    """The process of EXPECTED_PATH has its sampled figures scaled by
    SCALED_BY (own_cpu, launch_probes or time) in the last snapshot, and its launches
    estimated at LO_RATIO to HI_RATIO times what it made."""
    want = [w for w in _lines(expected_path, "kernel totals") if "kernel" in w]
    p = _gpu_proc(snaps, want[0]["pid"])
    true = sum(w["calls"] for w in want)
    est = p["launches_est"] or 0
    print(f"  scaled by {p.get('scaled_by')}: launches {est:.0f} for {true} ({est / true:.3f}); own samples "
          f"{p.get('own_samples_traced')} of {p.get('own_samples')} traced, CUDA's {p.get('cuda_samples_traced')} "
          f"of {p.get('cuda_samples')}, time traced {p['traced_pct']:.2f}%; the launch probes counted "
          f"{p.get('probed_launches')} in {p.get('probed_pct') or 0:.2f}% of the time, "
          f"{p.get('probed_trap_pct') or 0:.2f}% of it in their traps, {p.get('probed_in_slices_pct') or 0:.2f}% in its slices")
    if p.get("scaled_by") != scaled_by:
        sys.exit(f"scaled by {p.get('scaled_by')}, not {scaled_by}")
    if not float(lo_ratio) <= est / true <= float(hi_ratio):
        sys.exit(f"launches estimated at {est / true:.3f} of what ran, not {lo_ratio} to {hi_ratio}")


def gpu_cpu_time(snaps, out_path, lo_ratio, hi_ratio):
    """The process of OUT_PATH (the stand-in's output: its kernel totals and
    launching_cpu_ns, its launching thread's CPU time from its first launch
    to its last) has the launch probes' count scaled by its CPU time
    (probed_scaled_by cpu_time) in the last snapshot, xputop's count of that
    CPU time (cpu_s) LO_RATIO to HI_RATIO times the thread's own, and a
    share of it in the probes' slices (probed_cpu_pct) within half and twice
    their share of the time."""
    lines = _lines(out_path, "the program's output")
    want = [w for w in lines if "launching_cpu_ns" in w]
    if not want:
        sys.exit(f"{out_path}: no launching_cpu_ns")
    p = _gpu_proc(snaps, want[0]["pid"])
    cpu, own = p.get("cpu_s") or 0, want[0]["launching_cpu_ns"] / 1e9
    share, tshare = p.get("probed_cpu_pct") or 0, p.get("probed_pct") or 0
    print(f"  probes' count scaled by {p.get('probed_scaled_by')}: its CPU time {cpu:.3f} s counted, "
          f"{own:.3f} s by the thread itself ({cpu / own if own else 0:.3f}); in the probes' slices "
          f"{share:.2f}% of it, {tshare:.2f}% of the time")
    if p.get("probed_scaled_by") != "cpu_time":
        sys.exit(f"the probes' count scaled by {p.get('probed_scaled_by')}, not cpu_time")
    if not own or not float(lo_ratio) <= cpu / own <= float(hi_ratio):
        sys.exit(f"CPU time counted {cpu:.3f} s, not {lo_ratio} to {hi_ratio} of the thread's {own:.3f} s")
    if not tshare / 2 <= share <= tshare * 2:
        sys.exit(f"{share:.2f}% of its CPU time in the probes' slices, {tshare:.2f}% of the time")


def _trap_cost(snaps, share, left_in, lo=False):
    """What a trap cost as xputop measured it at its start (LO: a
    launch-only one's, its call site hashed), and what the program's traps
    cost going by the estimate left in (its count low by their true share):
    where the two part, the correction is off by as much (CI beside other
    suites: measured about twice what they cost)."""
    m = re.search(r"(\d+) ns with the call site's hash" if lo else r"a trap (\d+) ns",
                  snaps[-1]["gpu"].get("status", ""))
    if not m or not share:
        return ""
    ns = int(m.group(1))
    return (f"; a trap {ns} ns as measured at the start, about {ns * (1 - left_in) * 100 / share:.0f} ns "
            f"as the program's count says")


def gpu_trap_share(snaps, expected_path, lo_pct):
    """The process of EXPECTED_PATH: the launch probes' traps took at least
    LO_PCT percent of their time (what the model took off it), so the
    estimate without that correction would have been as much lower."""
    want = [w for w in _lines(expected_path, "kernel totals") if "kernel" in w]
    p = _gpu_proc(snaps, want[0]["pid"])
    share = p.get("probed_trap_pct") or 0
    true = sum(w["calls"] for w in want)
    est = p["launches_est"] or 0
    left_in = est * (1 - share / 100) / true
    print(f"  the traps took {share:.2f}% of the probes' time; without taking it off, launches "
          f"{left_in:.3f} of what ran{_trap_cost(snaps, share, left_in)}")
    if share < float(lo_pct):
        sys.exit(f"the traps took {share:.2f}% of the probes' time, not {lo_pct}% or more")


def gpu_launch_trapped(snaps, pid, made, lo_pct, lo_ratio, hi_ratio):
    """PID's launch-only row in the last snapshot: the probes' traps took
    at least LO_PCT percent of their time, and its launches are estimated
    at LO_RATIO to HI_RATIO of MADE (where, that time left in, they would
    have come out as much lower)."""
    rows = [p for p in snaps[-1]["gpu"]["processes"] if p["pid"] == int(pid)]
    if len(rows) != 1:
        sys.exit(f"no single process row for {pid}: {snaps[-1]['gpu']['processes']}")
    p, made = rows[0], int(made)
    share, est = p.get("probed_trap_pct") or 0, p.get("launches_est") or 0
    left_in = est * (1 - share / 100) / made
    print(f"  launches {est:.0f} of {made} ({est / made:.3f}), the traps {share:.1f}% of the probes' time "
          f"(left in: {left_in:.3f}), stated +-{p.get('launches_est_err_pct')}"
          f"{_trap_cost(snaps, share, left_in, lo=True)}")
    if share < float(lo_pct):
        sys.exit(f"the traps took {share:.1f}% of the probes' time, not {lo_pct}% or more")
    if not float(lo_ratio) <= est / made <= float(hi_ratio):
        sys.exit(f"estimated {est:.0f} launches of {made}: not {lo_ratio} to {hi_ratio} of them")


def gpu_kernel_within_stated(snaps, expected_path, kernel, other, ratio_pct, most_pct):
    """KERNEL's calls, estimated in the last snapshot, are within twice the
    uncertainty its row states (calls_err_pct) and MOST_PCT percent of what
    the program reported (EXPECTED_PATH: its kernel totals), and its calls
    against OTHER's (launched in the same steps, so their estimates share
    the slices' luck) within RATIO_PCT percent of the true ratio."""
    want = {w["kernel"]: w for w in _lines(expected_path, "kernel totals") if "kernel" in w}
    rows = {k["mangled"]: k for k in snaps[-1]["gpu"]["kernels"]}
    for name in (kernel, other):
        if name not in rows or name not in want:
            sys.exit(f"kernel {name} missing: rows {sorted(rows)}, ran {sorted(want)}")
    k, true = rows[kernel], want[kernel]["calls"]
    est, err = k["calls"], k["calls_err_pct"]
    ratio = est / rows[other]["calls"] / (true / want[other]["calls"])
    print(f"  {kernel}: {est} calls +-{err}%, {true} ran ({100 * (est - true) / true:+.1f}%); "
          f"against {other}: {ratio:.3f} of the true ratio")
    if err is None or abs(est - true) > min(2 * est * err, float(most_pct) * true) / 100:
        sys.exit(f"{kernel}: {est} calls +-{err}% is not within twice its uncertainty and {most_pct}% of {true}")
    if abs(ratio - 1) > float(ratio_pct) / 100:
        sys.exit(f"{kernel}: {ratio:.3f} of the true ratio to {other}'s calls, not within {ratio_pct}%")


def stand(_, path, *exprs):
    """The stand-in CUPTI's counters (the program's {"stand_cupti": ...} line
    in PATH) make each of EXPRS true: Python expressions over their names."""
    c = _stand(path)
    for e in exprs:
        if not eval(e, {}, dict(c)):
            sys.exit(f"not {e}: {c}")


def gpu_proc(snaps, path, *exprs):
    """The GPU process row of the program whose counters are in PATH (its
    pid), in the last snapshot, makes each of EXPRS true: Python expressions
    over the row's fields, and states, the states it was shown in."""
    _row_holds(snaps, _stand(path)["pid"], exprs)


def gpu_comm_proc(snaps, comm, *exprs):
    """As gpu_proc, for the process named COMM in the last snapshot."""
    pids = [p["pid"] for p in snaps[-1]["gpu"]["processes"] if p["comm"] == comm]
    if len(pids) != 1:
        sys.exit(f"not one GPU process {comm}: {snaps[-1]['gpu']['processes']}")
    _row_holds(snaps, pids[0], exprs)


def _row_holds(snaps, pid, exprs):
    p = _gpu_proc(snaps, pid)
    states = {r["state"] for s in snaps for r in s["gpu"]["processes"] if r["pid"] == pid}
    for e in exprs:
        if not eval(e, {}, dict(p, states=states)):
            sys.exit(f"not {e}: {p}, shown {sorted(states)}")


def stand_account(snaps, path, most_pct="2"):
    """Every kernel record the stand-in CUPTI made (its counters in PATH) was
    handed over, none lost at a cuptiFinalize or left behind at the exit;
    xputop got no more kernels than it handed over complete, nor more of
    CUPTI's drops than it handed over without times or room; and each launch
    xputop counts has its kernel counted, arrived or dropped (the library
    leaves out the records of launches made outside its slices), but for at
    most MOST_PCT percent of them (made between the callbacks and kernel
    activity going on at a slice's start: a few at most each slice)."""
    c = _stand(path)
    p = _gpu_proc(snaps, c["pid"])
    got = p["kernels"] + p["kernels_dropped"] + p["cupti_dropped"]
    print(f"  {c['traced']} records: {c['complete']} complete, {c['incomplete']} incomplete, "
          f"{c['no_room']} without room, {c['lost']} lost; xputop: {p['launches']} launches, {p['kernels']} "
          f"kernels, {p['kernels_dropped']} dropped by the library, {p['cupti_dropped']} by CUPTI")
    if c["lost"] or c["complete"] + c["incomplete"] + c["no_room"] != c["traced"]:
        sys.exit(f"records made but never handed over: {c}")
    if p["kernels"] + p["kernels_dropped"] > c["complete"]:
        sys.exit(f"{c['complete']} complete records handed over, xputop counts {p['kernels']} kernels "
                 f"and {p['kernels_dropped']} dropped")
    if p["cupti_dropped"] > c["incomplete"] + c["no_room"]:
        sys.exit(f"{c['incomplete'] + c['no_room']} records without times or room, xputop counts "
                 f"{p['cupti_dropped']} dropped by CUPTI")
    if not 0 <= p["launches"] - got <= float(most_pct) * p["launches"] / 100:
        sys.exit(f"{p['launches']} launches, {got} kernels arrived or dropped: "
                 f"{p['launches'] - got} launches without their kernel (at most {most_pct}%)")


def gpu_graphs_joined(snaps):
    """The last snapshot counts kernels run by CUDA graphs, every one of them
    joined to the graph launch that replayed it."""
    g = snaps[-1]["gpu"]
    if not g["graph_kernels"] or g["graph_kernels_joined"] != g["graph_kernels"]:
        sys.exit(f"{g['graph_kernels_joined']} of {g['graph_kernels']} graph kernels joined to a graph launch")


def gpu_launches_within(snaps, pid, start_ns, limit_ms, *frames):
    """A snapshot taken within LIMIT_MS of START_NS (CLOCK_MONOTONIC) has a
    launch-only stack of PID holding FRAMES in order."""
    for s in snaps:
        if any(st["pid"] == int(pid) and _in_order(st["frames"], frames) for st in s["gpu"]["launch_stacks"]):
            late = (s["mono_ns"] - int(start_ns)) / 1e6
            if late > float(limit_ms):
                sys.exit(f"launches of {pid} first shown {late:.0f} ms after it started, limit {limit_ms} ms")
            return
    sys.exit(f"no launch stack of {pid} holds {frames}")


def gpu_launch_calls(snaps, pid, n, *frames):
    """The last snapshot's launch-only stacks of PID that hold FRAMES in order
    add up to N calls, and the process row counts as many launches when no
    frames are given."""
    s = snaps[-1]["gpu"]
    got = sum(st["calls"] for st in s["launch_stacks"]
              if st["pid"] == int(pid) and _in_order(st["frames"], frames))
    if got != int(n):
        sys.exit(f"launch stacks of {pid} with {frames} count {got} calls, expected {n}: "
                 f"{[(st['calls'], st['frames']) for st in s['launch_stacks'] if st['pid'] == int(pid)]}")
    rows = [p["launches"] for p in s["processes"] if p["pid"] == int(pid)]
    if not frames and rows != [int(n)]:
        sys.exit(f"the process row of {pid} counts {rows} launches, expected {n}")


def gpu_launch_estimate(snaps, pid, made, lo_pct, hi_pct, err_pct):
    """PID's process row in the last snapshot: the launches counted are
    between LO_PCT and HI_PCT percent of MADE (the probes were on that
    share of the time), it says so (tracing sampled, traced_pct in the same
    range) and that the process exited, the share counted is within a quarter of the share traced, and
    its estimate is within ERR_PCT percent of MADE, or within twice the
    uncertainty it states (launches_est_err_pct)."""
    rows = [p for p in snaps[-1]["gpu"]["processes"] if p["pid"] == int(pid)]
    if len(rows) != 1:
        sys.exit(f"no single process row for {pid}: {snaps[-1]['gpu']['processes']}")
    p, made = rows[0], int(made)
    got, est, err = p["launches"], p["launches_est"], p.get("launches_est_err_pct")
    print(f"  launches {est} +-{err}% of {made}; {got} counted in {p.get('traced_pct')}% of the time")
    if est is None or not isinstance(err, (int, float)) or err <= 0:
        sys.exit(f"no estimate with its uncertainty: launches_est {est}, launches_est_err_pct {err}")
    if not float(lo_pct) <= 100 * got / made <= float(hi_pct):
        sys.exit(f"{got} of {made} launches counted: not {lo_pct}-{hi_pct}%")
    if p.get("tracing") != "sampled" or not float(lo_pct) <= p.get("traced_pct", 0) <= float(hi_pct):
        sys.exit(f"the row says {p.get('tracing')} {p.get('traced_pct')}%")
    # it exited before xputop's last refresh: its time ended there
    if p.get("state") != "exited":
        sys.exit(f"the row says {p.get('state')!r}, not 'exited'")
    # The launches counted are those of the time the row says was traced,
    # not of the time the probes were in (they go in and out slowly), and
    # that time is the process's life, from its start (0.98-1.02 in nine
    # runs; 0.77-0.95 while it began at the first slice that counted it).
    if not 0.85 <= 100 * got / made / p["traced_pct"] <= 1.15:
        sys.exit(f"{100 * got / made:.1f}% of the launches counted in {p['traced_pct']:.1f}% of the time")
    # Within ERR_PCT, or within twice the uncertainty the estimate states
    # (on a loaded machine the launcher's pace under a few slices varies).
    if abs(est - made) > made * max(float(err_pct), 2 * err) / 100:
        sys.exit(f"estimated {est:.0f} +-{err:.0f}% launches of {made} ({got} counted, "
                 f"{p['traced_pct']:.1f}% of the time)")


def gpu_launch_whole(snaps, pid, made, whole_pct, err_pct):
    """PID's process row in the last snapshot: the launch probes were on
    throughout for at least WHOLE_PCT percent of its time, counted its
    launches then (probed_whole_launches), and its launches are estimated,
    with an uncertainty, within ERR_PCT percent of MADE or twice that
    uncertainty."""
    rows = [p for p in snaps[-1]["gpu"]["processes"] if p["pid"] == int(pid)]
    if len(rows) != 1:
        sys.exit(f"no single process row for {pid}: {snaps[-1]['gpu']['processes']}")
    p, made = rows[0], int(made)
    est, err = p.get("launches_est"), p.get("launches_est_err_pct")
    whole, counted = p.get("probed_whole_pct") or 0, p.get("probed_whole_launches") or 0
    print(f"  launches {est} +-{err}% of {made}; on throughout {whole:.1f}% of its time, "
          f"{counted} counted then; {p.get('launches')} counted in all")
    if whole < float(whole_pct) or not counted:
        sys.exit(f"on throughout {whole:.1f}% of its time, {counted} counted: not {whole_pct}%")
    if est is None or err is None:
        sys.exit(f"no estimate with its uncertainty: {est} +-{err}")
    if abs(est - made) > made * max(float(err_pct), 2 * err) / 100:
        sys.exit(f"estimated {est:.0f} +-{err:.1f}% launches of {made}: not within {err_pct}% or twice that")


def events_at_most(snaps, n):
    """The last snapshot counts at most N events since the start."""
    if snaps[-1]["events"] > int(n):
        sys.exit(f"{snaps[-1]['events']} events, expected at most {n}")


def gpu_status_had(snaps, text):
    """Some snapshot's GPU status holds TEXT."""
    if not any(text in s["gpu"]["status"] for s in snaps):
        sys.exit(f"no GPU status held {text!r}; the last: {snaps[-1]['gpu']['status']!r}")


def gpu_status_last(snaps, text):
    """The last snapshot's GPU status holds TEXT."""
    if text not in snaps[-1]["gpu"]["status"]:
        sys.exit(f"the last GPU status does not hold {text!r}: {snaps[-1]['gpu']['status']!r}")


def gpu_status_never(snaps, text):
    """No snapshot's GPU status holds TEXT (there are snapshots)."""
    if not snaps:
        sys.exit("no snapshots")
    for s in snaps:
        if text in s["gpu"]["status"]:
            sys.exit(f"a GPU status held {text!r}: {s['gpu']['status']!r}")


def gpu_status_lacks(snaps, text):
    """The last snapshot's GPU status does not hold TEXT."""
    if text in snaps[-1]["gpu"]["status"]:
        sys.exit(f"the last GPU status still holds {text!r}")


def dropped_at_least(snaps, n):
    """The last snapshot counts at least N dropped records."""
    if snaps[-1]["dropped"] < int(n):
        sys.exit(f"dropped is {snaps[-1]['dropped']}, expected at least {n}")


def npu_alerts(snaps, *rules):
    """The last snapshot's alerts are exactly RULES (as many of each), in any order."""
    got = sorted(a["rule"] for a in snaps[-1]["alerts"])
    if got != sorted(rules):
        sys.exit(f"alerts {got}, expected {sorted(rules)}: "
                 f"{[(a['severity'], a['message']) for a in snaps[-1]['alerts']]}")


def npu_alerts_within(snaps, onset_ns, limit_ms):
    """Every alert was raised no earlier than ONSET_NS and within LIMIT_MS of it."""
    for a in snaps[-1]["alerts"]:
        late = (a["mono_ns"] - int(onset_ns)) / 1e6
        if late < 0 or late > float(limit_ms):
            sys.exit(f"{a['rule']} raised {late:.0f} ms after the onset, limit {limit_ms} ms")


def npu_alerts_due(snaps, onset_ns, due_ms):
    """Every alert was raised no earlier than ONSET_NS, and at the latest by
    the first refresh after it was due (ONSET_NS + DUE_MS, and 50 ms for the
    stand-in's own timestamps), wherever that refresh fell: on time, that is
    within DUE_MS and one refresh; on a machine too loaded to refresh on
    time, no refresh went by without it once it was due."""
    onset, due = int(onset_ns), int(onset_ns) + (float(due_ms) + 50) * 1e6
    after = [s["mono_ns"] for s in snaps if s["mono_ns"] >= due]
    if not after:
        sys.exit(f"no refresh after the alerts were due ({float(due_ms):.0f} ms after the onset)")
    for a in snaps[-1]["alerts"]:
        late = (a["mono_ns"] - onset) / 1e6
        if late < 0:
            sys.exit(f"{a['rule']} raised {-late:.0f} ms before the onset")
        if a["mono_ns"] > after[0]:
            sys.exit(f"{a['rule']} raised {late:.0f} ms after the onset, by the refresh at "
                     f"{(a['mono_ns'] - after[0]) / 1e6:.0f} ms past the first one after it was due "
                     f"({float(due_ms):.0f} ms)")


def npu_alert_severity(snaps, rule, severity):
    """The alert RULE of the last snapshot has SEVERITY."""
    for a in snaps[-1]["alerts"]:
        if a["rule"] == rule:
            if a["severity"] != severity:
                sys.exit(f"{rule} is {a['severity']}, expected {severity}")
            return
    sys.exit(f"no alert {rule}")


def npu_call(snaps, pid, call, count, errors, errno):
    """The NPU calls table has PID's CALL with COUNT calls, ERRORS of them
    failing mostly with ERRNO, and latency percentiles."""
    for r in snaps[-1]["npu"]["calls"]:
        if r["pid"] == int(pid) and r["call"] == call:
            if (r["count"], r["errors"], r["errno"]) != (int(count), int(errors), errno):
                sys.exit(f"{call}: count {r['count']} errors {r['errors']} errno {r['errno']}")
            if r["p50_ns"] is None or r["p99_ns"] is None or r["p99_ns"] < r["p50_ns"]:
                sys.exit(f"{call}: latency p50 {r['p50_ns']} p99 {r['p99_ns']}")
            return
    sys.exit(f"no row {call} of pid {pid}: {[(r['pid'], r['call']) for r in snaps[-1]['npu']['calls']]}")


def npu_no_calls(snaps, pid):
    """No snapshot has an NPU calls row of PID."""
    for s in snaps:
        if any(r["pid"] == int(pid) for r in s["npu"]["calls"]):
            sys.exit(f"pid {pid} has NPU calls rows")


def npu_source(snaps, name, state, text=""):
    """The sources list has NAME in STATE, its detail holding TEXT."""
    for src in snaps[-1]["npu"]["sources"]:
        if src["name"] == name:
            if src["state"] != state or text not in src["detail"]:
                sys.exit(f"source {name}: {src['state']} {src['detail']!r}")
            return
    sys.exit(f"no source {name}: {[x['name'] for x in snaps[-1]['npu']['sources']]}")


def npu_value(snaps, path, op, value):
    """The last snapshot's npu.PATH (dotted) compares OP (eq, ge, le, null) to VALUE."""
    v = snaps[-1]["npu"]
    for k in path.split("."):
        v = v[k]
    ok = {"eq": lambda: str(v) == value, "ge": lambda: v is not None and v >= float(value),
          "le": lambda: v is not None and v <= float(value), "null": lambda: v is None}[op]()
    if not ok:
        sys.exit(f"npu.{path} is {v!r}, expected {op} {value}")


def first_refresh_bounded(snaps, pid=None):
    """The first snapshot counts no more samples than its interval allows:
    interval x Hz x CPUs machine-wide (+1 per CPU for where the interval's
    edges fall), and interval x Hz x threads (+1 each) for PID."""
    d = snaps[0]
    hz, ncpus, secs = d["cpu_info"]["hz"], d["cpu_info"]["ncpus"], d["interval_s"]
    most = secs * hz * ncpus + ncpus
    if d["cpu_info"]["samples_tick"] > most:
        sys.exit(f"the first refresh counts {d['cpu_info']['samples_tick']} samples in {secs:.3f} s, "
                 f"at most {most:.0f} at {hz} Hz on {ncpus} CPUs")
    for row in d["cpu"]:
        if pid is not None and row["pid"] == int(pid) and row["cpu_pct"] > 100 + 100 / (secs * hz):
            sys.exit(f"pid {pid} (one thread) at {row['cpu_pct']:.1f}% in the first refresh "
                     f"({row['samples']} samples in {secs:.3f} s at {hz} Hz)")


def self_cpu_honest(snaps, pid):
    """From the first snapshot to the last, the CPU time the samples give
    xputop (PID) is at most 1.5 times what the kernel counted for it
    (self_cpu_s, getrusage: the utime + stime of /proc/PID/stat) + 5 samples."""
    def samples(d):
        return sum(r["samples"] for r in d["cpu"] if r["pid"] == int(pid))
    a, b = snaps[0], snaps[-1]
    hz = b["cpu_info"]["hz"]
    sampled = (samples(b) - samples(a)) / hz
    kernel = b["self_cpu_s"] - a["self_cpu_s"]
    if sampled > 1.5 * kernel + 5 / hz:
        sys.exit(f"the samples charge xputop {sampled:.3f} CPU-s, the kernel counted {kernel:.3f} s")


def self_cpu_within(snaps, pid, points):
    """From the first snapshot to the last, xputop's (PID's) %CPU as its
    rows give it refresh by refresh (all its threads' in the thread table)
    is within POINTS of what the kernel counted for it (self_cpu_s), both
    over the same span."""
    a, b = snaps[0], snaps[-1]
    span = (b["mono_ns"] - a["mono_ns"]) / 1e9
    if span <= 0:
        sys.exit("fewer than two snapshots")
    cpu_s = sum(r["cpu_pct"] / 100 * d["interval_s"] for d in snaps[1:] for r in d["cpu"] if r["pid"] == int(pid))
    sampled = 100 * cpu_s / span
    kernel = 100 * (b["self_cpu_s"] - a["self_cpu_s"]) / span
    hz = b["cpu_info"]["hz"]
    # Samples are a count: what the kernel counted gives hz * cpu_s of them
    # on average, give or take their square root (Poisson); three of those
    # are allowed beyond POINTS (a bias, as issue 28's 40%, is far beyond).
    noise = 3 * 100 * math.sqrt(max(kernel / 100 * span * hz, 1)) / hz / span
    if abs(sampled - kernel) > float(points) + noise:
        sys.exit(f"at {hz} Hz the samples give xputop {sampled:.2f}% over {span:.1f} s, the kernel {kernel:.2f}% "
                 f"(allowed: {points} + {noise:.2f} of sampling noise)")
    print(f"{hz} Hz: samples {sampled:.2f}%, kernel {kernel:.2f}% over {span:.1f} s (noise {noise:.2f})")


def cpu_sorted_by(snaps, key, order):
    """The last snapshot's CPU rows are in ORDER (desc or asc) of KEY, those
    with KEY unknown (null) last."""
    vals = [r[key] for r in snaps[-1]["cpu"]]
    if len(vals) < 2:
        sys.exit(f"only {len(vals)} CPU rows")
    known = [v for v in vals if v is not None]
    if vals != sorted(known, reverse=order == "desc") + [None] * (len(vals) - len(known)):
        sys.exit(f"CPU rows not in {order} order of {key}: {vals[:10]}")


def cpu_view(snaps, view):
    """The CPU table shows VIEW (processes or threads), its rows with tids for threads."""
    d = snaps[-1]
    if d["cpu_info"]["view"] != view:
        sys.exit(f"the CPU view shows {d['cpu_info']['view']}, not {view}")
    if view == "threads" and not all("tid" in r for r in d["cpu"]):
        sys.exit("a thread row without its tid")


def hot_function(snaps, name):
    """The last snapshot's machine-wide hottest functions start with NAME,
    their percentages adding up to at most 100."""
    hot = snaps[-1].get("cpu_functions")
    if not hot:
        sys.exit("no cpu_functions")
    if hot[0]["function"] != name:
        sys.exit(f"the hottest function is {hot[0]['function']!r}, not {name!r}: {hot[:3]}")
    if sum(h["pct"] for h in hot) > 100.01:
        sys.exit("the percentages add up to more than 100")


def npu_category(snaps, category, total, share):
    """The last snapshot's driver function category CATEGORY counts TOTAL calls
    since the start, SHARE percent of all (rounded; "<1" for under one)."""
    for c in snaps[-1]["npu"]["functions"]["categories"]:
        if c["category"] == category:
            pct = c["share_total_pct"]
            ok = pct < 1 if share == "<1" else round(pct) == int(share)
            if c["total"] != int(total) or not ok:
                sys.exit(f"{category}: {c['total']} calls, {pct:.2f}%; expected {total}, {share}%")
            return
    sys.exit(f"no category {category}")


def npu_top_functions(snaps, *expected):
    """The driver functions table of the last snapshot, by calls since the
    start, begins with EXPECTED ("name=total" each, in order; equal totals in
    any order)."""
    rows = sorted(snaps[-1]["npu"]["functions"]["rows"], key=lambda r: -r["total"])
    got = [(r["function"], r["total"]) for r in rows[:len(expected)]]
    want = [(e.split("=")[0], int(e.split("=")[1])) for e in expected]
    if sorted(got, key=lambda x: (-x[1], x[0])) != sorted(want, key=lambda x: (-x[1], x[0])) or \
            [n for _, n in got] != [n for _, n in want]:
        sys.exit(f"top functions {got}, expected {want}")


def npu_chain(snaps, pid, l0, ioctl, function, at_least):
    """The chains table has PID's FUNCTION inside L0 and IOCTL, called at least AT_LEAST times."""
    for c in snaps[-1]["npu"]["functions"]["chains"]:
        if (c["pid"], c["l0"], c["ioctl"], c["function"]) == (int(pid), l0, ioctl, function):
            if c["total"] < int(at_least):
                sys.exit(f"chain {l0} -> {ioctl} -> {function}: {c['total']} calls")
            return
    sys.exit(f"no chain {pid} {l0} -> {ioctl} -> {function}: "
             f"{[(c['pid'], c['l0'], c['ioctl'], c['function']) for c in snaps[-1]['npu']['functions']['chains']]}")


def _stat(path):
    """The fields of a /proc stat file after the name (which may hold ')'):
    the state first, utime and stime at 11 and 12 (clock ticks)."""
    with open(path) as f:
        return f.read().rsplit(")", 1)[1].split()


def _cpu_ns(fields):
    import os
    return (int(fields[11]) + int(fields[12])) * 10**9 // os.sysconf("SC_CLK_TCK")


def _proc(pid):
    fields = _stat(f"/proc/{pid}/stat")
    with open(f"/proc/{pid}/statm") as f:
        resident = int(f.read().split()[1])
    import os
    hz = os.sysconf("SC_CLK_TCK")
    return (resident * os.sysconf("SC_PAGE_SIZE"), fields[0],
            (int(fields[11]) + int(fields[12])) / hz)


def proc_stat(snaps, pid, state, lag_s="1.5"):
    """PID's row in the last snapshot has RES within 10% (or 1 MiB) of /proc's now,
    and TIME+ at most /proc's now and within LAG_S of it (read right after
    xputop's last refresh); its row shows the state STATE in at least one
    snapshot (a process that sleeps 90% of the time is running now and then,
    and waits to run for longer on a loaded machine)."""
    rows = [r for r in snaps[-1]["cpu"] if r["pid"] == int(pid)]
    if not rows:
        sys.exit(f"no row for {pid}")
    r = rows[0]
    res, st, cpu_s = _proc(pid)
    if r["res_bytes"] is None or abs(r["res_bytes"] - res) > max(res / 10, 1 << 20):
        sys.exit(f"RES {r['res_bytes']}, /proc says {res}")
    seen = [x["state"] for sn in snaps for x in sn["cpu"] if x["pid"] == int(pid)]
    if state not in seen:
        sys.exit(f"states {seen}, expected {state} in one (/proc says {st} now)")
    got = r["cpu_time_ns"] / 1e9 if r["cpu_time_ns"] is not None else None
    if got is None or got > cpu_s + 0.02 or cpu_s - got > float(lag_s):
        sys.exit(f"TIME+ {got} s, /proc says {cpu_s} s")


def thread_stats(snaps, pid, nthreads):
    """The last snapshot's thread table (-H) has NTHREADS rows, each a
    running thread of PID with its own TIME+: 0.5-4 s, at most the thread's
    count in /proc now (read right after xputop), and under 0.75 of the
    process's (the sum of its threads: equally busy threads may show equal
    TIME+, a count of clock ticks, so equality proves nothing); no RES (it is
    the process's)."""
    rows = snaps[-1]["cpu"]
    if len(rows) != int(nthreads):
        sys.exit(f"{len(rows)} thread rows: {rows}")
    proc = _cpu_ns(_stat(f"/proc/{pid}/stat"))
    for r in rows:
        if r.get("state") not in ("R",):
            sys.exit(f"thread {r['tid']}: state {r.get('state')!r}")
        t = r.get("cpu_time_ns")
        if t is None or not 0.5e9 < t < 4e9:
            sys.exit(f"thread {r['tid']}: TIME+ {t} ns, expected about 2.5 s")
        if "res_bytes" in r:
            sys.exit("RES is the process's, not a thread's")
        try:
            own = _cpu_ns(_stat(f"/proc/{pid}/task/{r['tid']}/stat"))
        except FileNotFoundError:
            own = None
        if own is None or t > own:
            sys.exit(f"thread {r['tid']}: TIME+ {t} ns, its own count read after xputop {own}")
        if t > 0.75 * proc:
            sys.exit(f"thread {r['tid']}: TIME+ {t} ns of the process's {proc}: the process's?")


def system_matches(snaps):
    """The last snapshot's machine figures: loads within 0.5 (or 25%) of
    /proc/loadavg now, memory total equal to MemTotal, used within 5% of the
    total of htop's used now, CPU busy a percentage."""
    y = snaps[-1]["system"]
    with open("/proc/loadavg") as f:
        load = [float(x) for x in f.read().split()[:3]]
    for got, now in zip(y["load"], load):
        if abs(got - now) > max(0.5, now / 4):
            sys.exit(f"load {y['load']}, /proc/loadavg says {load}")
    mem = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, v = line.split(":")
            mem[k] = int(v.split()[0]) * 1024
    used = mem["MemTotal"] - mem["MemFree"] - mem["Buffers"] - mem["Cached"] - mem["SReclaimable"]
    if y["mem_total_bytes"] != mem["MemTotal"]:
        sys.exit(f"memory total {y['mem_total_bytes']}, /proc/meminfo says {mem['MemTotal']}")
    if abs(y["mem_used_bytes"] - used) > mem["MemTotal"] / 20:
        sys.exit(f"memory used {y['mem_used_bytes']}, /proc/meminfo says {used}")
    if y["cpu_busy_pct"] is None or not 0 <= y["cpu_busy_pct"] <= 100:
        sys.exit(f"CPU busy {y['cpu_busy_pct']}")


def cpu_busy_at_least(snaps, pct):
    """Every snapshot's machine-wide CPU busy is at least PCT %."""
    got = [s["system"]["cpu_busy_pct"] for s in snaps]
    if any(g is None or g < float(pct) for g in got):
        sys.exit(f"CPU busy {got}, expected at least {pct}%")


def gpu_peers_refused(snaps, reason, op, n, uid=None, comm=None):
    """The last snapshot's gpu.peers counts, for REASON, a number that compares
    OP (eq, ge, le) to N: in all, or for UID, or for the process named COMM."""
    p = snaps[-1]["gpu"]["peers"]
    if comm is not None:
        rows = [r["refused"] for r in p["processes"] if r["comm"] == comm]
        got = sum(r[reason] for r in rows) if rows else None
    elif uid is not None:
        got = next((u["refused"][reason] for u in p["uids"] if u["uid"] == int(uid)), None)
    else:
        got = p["refused"][reason]
    want = int(n)
    ok = got is not None and {"eq": got == want, "ge": got >= want, "le": got <= want}[op]
    if not ok:
        sys.exit(f"refused {reason} of {comm or uid or 'all'}: {got}, expected {op} {want}; peers: {p}")


def gpu_devices_below(snaps, n):
    """Every kernel row of every snapshot is on a device below N."""
    bad = {k["device"] for s in snaps for k in s["gpu"]["kernels"] if k["device"] >= int(n)}
    if bad:
        sys.exit(f"kernel rows on devices {sorted(bad)[:10]}")


CHECKS = {f.__name__: f for f in (gpu_peers_refused, gpu_devices_below, top_comm, top_tier, stack_has, has_kernel_frames, only_pids, count, same_as,
                                  gpu_kernels, gpu_stack_pct, gpu_path, gpu_stitched, gpu_stitched_mostly, gpu_stacks_lack, gpu_pid_kernels, gpu_kernel_names, gpu_process,
                                  gpu_no_process, gpu_launch_path, gpu_account, gpu_graphs_joined,
                                  gpu_traced_pct, gpu_traced_whole, gpu_within_stated, gpu_scaled, gpu_trap_share, gpu_cpu_time, gpu_launch_trapped, gpu_kernel_within_stated, stand, gpu_proc, gpu_comm_proc, stand_account,
                                  gpu_launches_within, gpu_launch_calls, gpu_launch_estimate, gpu_launch_whole,
                                  events_at_most,
                                  gpu_status_had, gpu_status_last, gpu_status_never, gpu_status_lacks,
                                  gpu_estimates, gpu_modes,
                                  dropped_at_least, first_refresh_bounded, self_cpu_honest, self_cpu_within,
                                  cpu_sorted_by, cpu_view, hot_function, proc_stat, thread_stats, system_matches, cpu_busy_at_least,
                                  gpu_only_pids, stacks_distinct, npu_alerts, npu_alerts_within, npu_alerts_due, npu_alert_severity, npu_call,
                                  npu_no_calls, npu_source, npu_value, npu_category,
                                  npu_top_functions, npu_chain, chrome_trace)}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in CHECKS:
        sys.exit(f"usage: jsonq.py {{{','.join(CHECKS)}}} [ARGS...]")
    check = CHECKS[sys.argv[1]]
    check(None if check in (chrome_trace, stand) else snapshots(), *sys.argv[2:])
