# SPDX-License-Identifier: GPL-2.0-only
"""One line for bench/gpu/variants.sh: a sampled run (RUN.json, RUN.err)
against the exact run (EXACT.json): launches, kernels and GPU time of the
busiest process estimated, against exact, with the uncertainty stated; the
time and the own CPU time traced; what the library's switching took
(XPUTOP_INJECT_STATS).  Where both runs' workload lines (RUN.w, EXACT.w) say
how many steps they did, the exact figures are taken times the run's steps
over the exact run's: a workload that runs for a time (shapes.py) does as
many steps as its pace under each mode allows.

  python3 bench/gpu/variants_sum.py RUN EXACT
"""
import json
import sys

from snapjson import last_gpu as last


def busiest(g):
    procs = [p for p in g.get("processes", []) if p.get("kernels", 0) or p.get("launches", 0)]
    return max(procs, key=lambda p: p.get("launches", 0)) if procs else {}


def pct(est, true):
    return f"{100 * (est / true - 1):+.1f}%" if est is not None and true else "?"


def steps(path):
    try:
        lines = [json.loads(l) for l in open(path + ".w") if l.startswith("{")]
        return lines[-1].get("steps") if lines else None
    except (OSError, ValueError):
        return None


run, exact = sys.argv[1], sys.argv[2]
ge = last(exact + ".json")
ps, pe = busiest(last(run + ".json")), busiest(ge)
sr, se = steps(run), steps(exact)
f = sr / se if sr and se else 1.0
truth = {"launches_est": (pe.get("launches") or 0) * f, "kernels_est": (pe.get("kernels") or 0) * f,
         "gpu_ns_est": f * sum(k.get("total_ns", 0) for k in ge.get("kernels", []))}
stats = {}
try:
    for line in open(run + ".err", errors="replace"):
        if line.startswith('{"xputop_inject"'):
            stats = json.loads(line)["xputop_inject"]
except OSError:
    pass
out = [run.rsplit("/", 1)[-1] + (f" steps {sr}/{se}" if f != 1.0 else "")]
for key, true in truth.items():
    err = ps.get(key + '_err_pct')
    out.append(f"{key.split('_')[0]} {pct(ps.get(key), true)} +-" + (f"{err:.1f}" if err is not None else "?"))
out.append(f"by {ps.get('scaled_by')} traced {ps.get('traced_pct') or 0:.2f}% own {ps.get('own_traced_pct') or 0:.2f}%"
           f" ({ps.get('own_samples_traced')}/{ps.get('own_samples')})"
           + (f" throughout {ps['traced_whole_pct']:.1f}%" if 'traced_whole_pct' in ps else "")
           + (f" probed {ps.get('probed_launches')} in {ps.get('probed_pct'):.2f}%" if 'probed_pct' in ps else "")
           + (f" probes throughout {ps['probed_whole_pct']:.1f}%" if 'probed_whole_pct' in ps else "")
           + (f" traps {ps.get('probed_trap_pct'):.2f}% in slices {ps.get('probed_in_slices_pct', 0):.2f}%"
              if 'probed_trap_pct' in ps else ""))
# The probes' count scaled by CPU time (probed_scaled_by cpu_time): the
# launches as scaling by the probes' time would have put them, from the same
# run's figures (their traps' share taken as of the time: about so where the
# process is on CPU in the slices), beside it.
if ps.get('probed_scaled_by') == 'cpu_time' and ps.get('probed_pct'):
    pw, pwp = ps.get('probed_whole_launches') or 0, (ps.get('probed_whole_pct') or 0) / 100
    rest = (ps.get('probed_launches') or 0) * (1 - pwp) / (ps['probed_pct'] / 100 *
                                                          (1 - (ps.get('probed_trap_pct') or 0) / 100))
    out.append(f"cpu {ps.get('probed_cpu_pct', 0):.2f}% of {ps.get('cpu_s', 0):.1f} s"
               f" (by time: launches {pct(pw + rest, truth['launches_est'])})")
if stats:
    out.append(f"attach {stats.get('attach_ms_avg')}/{stats.get('attach_ms_max')} ms enable "
               f"{stats.get('enable_ms_avg', '-')}/{stats.get('enable_ms_max', '-')} ms detach "
               f"{stats.get('detach_ms_avg')} ms x{stats.get('detaches')}")
print("  ".join(out))
