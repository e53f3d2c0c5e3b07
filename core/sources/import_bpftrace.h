/* SPDX-License-Identifier: GPL-2.0-only */
/* Importing the text the NPU tutorial's bpftrace script prints,
 *
 *     bpftrace -e 'kprobe:intel_vpu:ivpu_* { printf("%-10llu %-40s\n",
 *                  nsecs / 1000000, probe); @calls[probe] = count(); }'
 *
 * one "<ms> kprobe:intel_vpu:ivpu_<function>" line per call, with or without
 * its header ("Attaching N probes...", column titles), its END text and the
 * "@calls[...]: N" summary; the same with pid and command columns ("<ms>
 * <pid> <comm> PROBE", per-process rows); and, with no times (counts only: no
 * rates, jobs or alerts), the quick one-liner's "PROBE" lines, `sort | uniq
 * -c` counts ("   4131 PROBE") or an @calls map alone; as a stream of NPU events with ticks synthesized every
 * interval_ns from the timestamps, so `xputop -r` replays it into the NPU
 * model: every call is one NPU_FUNC event (the driver functions table), and
 * the calls that say something of jobs, IPC, memory or power are also the
 * events the live sources give for them.  Lines that cannot be understood are counted, never fatal; the text
 * is untrusted (this parser is fuzzed).
 */
#ifndef XPU_IMPORT_BPFTRACE_H
#define XPU_IMPORT_BPFTRACE_H

#include <stddef.h>
#include <stdint.h>

struct xpu_dict;
struct xpu_event;
struct xpu_import;

/* Logs longer than this are cut (and the cut is reported). */
#define XPU_IMPORT_MAX_BYTES (512u << 20)
#define XPU_IMPORT_MAX_LINE 4096
#define XPU_IMPORT_MAX_NAME 128		/* a function's name is cut there */

struct xpu_import_stats {
	uint64_t lines;		/* all lines */
	uint64_t calls;		/* calls: "<ms> kprobe:...ivpu_*" lines, or the counts of a count listing or map */
	uint64_t call_lines;	/* the lines that gave them (0 for a map alone: its lines are summary) */
	uint64_t mapped;	/* calls that also say something of jobs, IPC, memory, power */
	uint64_t other;		/* calls only counted in the driver functions table, and returns */
	uint64_t header;	/* header lines before the first call */
	uint64_t summary;	/* "@calls[...]: N" lines */
	uint64_t summary_calls;	/* the sum of their counts */
	uint64_t summary_mismatch;	/* functions whose map count is not their number of lines */
	char first_mismatch[192];	/* the first of them, "fn: N in the map, M lines" */
	uint64_t titles;	/* the seed's BEGIN/END text ("=== ... ===", "Top functions ...:") */
	const char *form;	/* what the calls were given as ("timed calls", "call counts (uniq -c)", ...) */
	int untimed;		/* no times: counts only, no rates, jobs or alerts */
	uint64_t lost;		/* events bpftrace said it lost ("Lost N events") */
	uint64_t bad;		/* lines not understood (never fatal) */
	uint64_t first_bad;	/* line number of the first of them, 0 = none */
	uint64_t first_ms, last_ms;
	int truncated;		/* the text was cut at XPU_IMPORT_MAX_BYTES */
};

/* Parses a log held in memory (not kept).  end_wall_ns is the wall-clock time
 * of the last line (the file's mtime), from which tick wall times are derived.
 * Function names go into dict, which must outlive the import's events.
 * Returns the import, or NULL with a reason in err when the text holds no
 * probe line at all (it is not such a log) or memory runs out. */
struct xpu_import *xpu_import_bpftrace_text(const char *text, size_t len, uint64_t interval_ns,
					    uint64_t end_wall_ns, struct xpu_dict *dict, char *err,
					    size_t errlen);
/* The same for a file (its mtime is the end time). */
struct xpu_import *xpu_import_bpftrace(const char *path, uint64_t interval_ns, struct xpu_dict *dict,
					char *err, size_t errlen);
/* The next event or tick, in time order.  Returns 1, or 0 at the end. */
int xpu_import_next(struct xpu_import *im, struct xpu_event *ev);
const struct xpu_import_stats *xpu_import_stats(const struct xpu_import *im);
void xpu_import_free(struct xpu_import *im);

#endif
