#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Writes bpftrace logs of the NPU tutorial's script (one
"<ms> kprobe:intel_vpu:<function>" line per call) for the scenarios the NPU
view must read right when they are replayed with `xputop -r`:

  tutorial  the tutorial's Lunar Lake matmul run rebuilt from its figures:
            8,198 calls, 4,131 ivpu_mmu_context_map_page, 517
            ivpu_pgtable_free_page (memory management 4,648, 57%), 946
            ivpu_ipc_irq_handler, 951 ivpu_hw_ip_ipc_rx_count_get, 945
            ivpu_ipc_receive (IPC 2,842, 35%), 24 ivpu_bo_create_ioctl, 25
            ivpu_gem_create_object, 25 ivpu_bo_pin (buffer management 74), one
            job (ivpu_submit_ioctl .. ivpu_job_done_callback) taking 1.4 s
  stall     ten jobs, then one submitted that never completes while the
            process polls ivpu_bo_wait_ioctl for 8 s and the firmware is silent
  recovery  ten jobs, two submitted, a recovery that aborts them, more jobs
  storm     jobs at 100/s for 4 s, then 3,000 IPC receives a second for 3 s
  longstorm one job for 15 s, the firmware's receives at 71/s, and from 10 s
            to 13 s at 2,070/s (29x): a storm inside one long job
  normal    bursts of jobs with quiet between

The tutorial's run also has the functions its text names beside the table's:
ivpu_mmu_context_init at open (not memory management: the table's 4,648 is
map_page and pgtable_free_page) and ivpu_rpm_get/put (power).

  npu_logs.py SCENARIO [FORMAT] > FILE   (prints the submit time of the
                                    stalled job, in ms, on stderr for `stall`)

FORMAT is how the seeds print the calls:
  timed     "<ms> PROBE" lines under the script's header (the default)
  script    the tutorial's whole script: its BEGIN text, "<ms> PROBE" lines,
            its END text and print(@calls, 20)
  procs     "<ms> <pid> <comm> PROBE": pid 4242 "matmul", and every fourth
            ivpu_ipc_irq_handler in pid 0 "swapper/0"
  oneliner  printf("%s\n", probe): "PROBE" lines, no times
  uniq      the one-liner's output through sort | uniq -c | sort -rn
  map       only the @calls map bpftrace prints at exit
"""
import sys

T0 = 5_000_000  # ms since boot of the first line
lines = []


def call(ms, fn, n=1):
    for _ in range(n):
        lines.append((ms, fn))


def spread(start, end, fn, n):
    """n calls of fn evenly over [start, end) ms."""
    for i in range(n):
        call(start + (end - start) * i // n, fn)


def job(ms, ipc=True):
    """A job as a kprobe-only trace shows it: 3 ms from submit to done."""
    call(ms, "ivpu_submit_ioctl")
    if ipc:
        call(ms + 3, "ivpu_ipc_irq_handler")
        call(ms + 3, "ivpu_ipc_receive")
    call(ms + 3, "ivpu_job_done_callback")
    call(ms + 3, "ivpu_bo_wait_ioctl")


def jobs(start, secs, per_s=100):
    for i in range(int(secs * per_s)):
        job(start + i * 1000 // per_s)


def tutorial():
    t = T0
    call(t, "ivpu_open", 2)
    call(t, "ivpu_mmu_context_init")
    call(t, "ivpu_rpm_get", 3)
    call(t + 2400, "ivpu_rpm_put", 3)
    call(t, "ivpu_boot")
    call(t, "ivpu_fw_boot_params_setup")
    call(t, "ivpu_hw_boot_fw")
    spread(t, t + 20, "ivpu_get_param_ioctl", 52)
    spread(t, t + 400, "ivpu_pm_runtime_resume_cb", 20)
    spread(t, t + 400, "ivpu_resume", 20)
    spread(t, t + 400, "ivpu_hw_power_up", 20)
    spread(t, t + 2300, "ivpu_hw_btrs_ratio_to_freq", 53)  # 60 less the 7 above: 8,198 in all
    spread(t, t + 2300, "ivpu_hw_btrs_wp_drive", 40)
    spread(t, t + 2300, "ivpu_irq_handler", 27)
    # zeMemAllocHost x 3, ~1,377 page mappings each; smaller buffers after
    for b in range(24):
        at = t + 100 + b * 12
        call(at, "ivpu_bo_create_ioctl")
        call(at, "ivpu_gem_create_object")
        if b < 3:
            spread(at, at + 10, "ivpu_mmu_context_map_page", 1377)
        call(at + 10, "ivpu_bo_pin")
    call(t + 99, "ivpu_gem_create_object")  # the context's own buffer
    call(t + 99, "ivpu_bo_pin")
    # zeCommandQueueExecuteCommandLists, then the firmware's IPC traffic
    # while zeFenceHostSynchronize polls GET_PARAM
    call(t + 500, "ivpu_submit_ioctl")
    spread(t + 501, t + 1900, "ivpu_ipc_irq_handler", 946)
    spread(t + 501, t + 1900, "ivpu_hw_ip_ipc_rx_count_get", 951)
    spread(t + 501, t + 1900, "ivpu_ipc_receive", 945)
    spread(t + 501, t + 1900, "ivpu_get_param_ioctl", 360)
    call(t + 1900, "ivpu_job_done_callback")
    # clean-up
    spread(t + 2000, t + 2300, "ivpu_pgtable_free_page", 517)
    call(t + 2300, "ivpu_postclose", 2)
    call(t + 2300, "ivpu_ms_cleanup", 2)
    call(t + 2300, "ivpu_file_priv_put", 4)
    call(t + 2400, "ivpu_pm_runtime_suspend_cb", 20)


def stall():
    jobs(T0, 0.1)
    onset = T0 + 300
    call(onset, "ivpu_submit_ioctl")
    spread(onset + 1, onset + 8000, "ivpu_bo_wait_ioctl", 800)
    print(onset, file=sys.stderr)


def recovery():
    jobs(T0, 0.1)
    call(T0 + 200, "ivpu_submit_ioctl", 2)
    call(T0 + 300, "ivpu_pm_trigger_recovery")
    call(T0 + 300, "ivpu_jobs_abort_all")
    jobs(T0 + 400, 0.1)


def storm():
    jobs(T0, 4)
    spread(T0 + 4000, T0 + 7000, "ivpu_ipc_irq_handler", 9000)
    spread(T0 + 4000, T0 + 7000, "ivpu_ipc_receive", 9000)


def longstorm():
    call(T0, "ivpu_submit_ioctl")
    spread(T0, T0 + 10000, "ivpu_ipc_receive", 710)
    spread(T0 + 10000, T0 + 13000, "ivpu_ipc_receive", 6210)
    spread(T0 + 13000, T0 + 15000, "ivpu_ipc_receive", 142)
    call(T0 + 15000, "ivpu_job_done_callback")


def normal():
    for b in range(4):
        jobs(T0 + b * 3500, 2)


SCENARIOS = {f.__name__: f for f in (tutorial, stall, recovery, storm, longstorm, normal)}


def counts():
    n = {}
    for _, fn in lines:
        n[fn] = n.get(fn, 0) + 1
    return n


def calls_map(top=None):
    """bpftrace's print(@calls[, top]): ascending by count, the top ones."""
    items = sorted(counts().items(), key=lambda x: (x[1], x[0]))
    if top:
        items = items[-top:]
    return [f"@calls[kprobe:intel_vpu:{fn}]: {n}" for fn, n in items]


def render(fmt):
    probe = "kprobe:intel_vpu:"
    if fmt == "timed":
        out = ["Attaching 223 probes...", f"{'TIME(ms)':<10} {'PROBE':<40}"]
        return out + [f"{ms:<10} {probe}{fn:<40}" for ms, fn in lines]
    if fmt == "script":
        out = ["Attaching 224 probes...", "Tracing Intel NPU kernel driver... Hit Ctrl-C to end.",
               f"{'TIME(ms)':<10} {'FUNCTION':<40}"]
        out += [f"{ms:<10} {probe}{fn:<40}" for ms, fn in lines]
        out += ["^C", "=== Intel NPU Function Call Statistics ===", "", "Top functions by call count:"]
        return out + calls_map(20)
    if fmt == "procs":
        out = ["Attaching 223 probes...", f"{'TIME(ms)':<10} {'PID':<7} {'COMM':<16} PROBE"]
        for i, (ms, fn) in enumerate(lines):
            pid, comm = (0, "swapper/0") if fn == "ivpu_ipc_irq_handler" and i % 4 == 0 else (4242, "matmul")
            out.append(f"{ms:<10} {pid:<7} {comm:<16} {probe}{fn}")
        return out
    if fmt == "oneliner":
        return ["Attaching 223 probes..."] + [f"{probe}{fn}" for _, fn in lines] + ["", ""]
    if fmt == "uniq":
        n = counts()
        return [f"{c:>7} {probe}{fn}" for fn, c in sorted(n.items(), key=lambda x: (-x[1], x[0]))]
    if fmt == "map":
        return ["Attaching 223 probes...", "", ""] + calls_map()
    sys.exit(f"no format {fmt}")


FORMATS = ("timed", "script", "procs", "oneliner", "uniq", "map")

if __name__ == "__main__":
    if len(sys.argv) not in (2, 3) or sys.argv[1] not in SCENARIOS or \
            (len(sys.argv) == 3 and sys.argv[2] not in FORMATS):
        sys.exit(f"usage: npu_logs.py {{{'|'.join(SCENARIOS)}}} [{'|'.join(FORMATS)}] > FILE")
    SCENARIOS[sys.argv[1]]()
    lines.sort(key=lambda x: x[0])
    print("\n".join(render(sys.argv[2] if len(sys.argv) == 3 else "timed")))
