/* SPDX-License-Identifier: GPL-2.0-only */
/* The bpftrace-log importer (core/sources/import_bpftrace.c): one input is the text
 * of a file given to `xputop -r` that is not a recording.  Checks the
 * importer's promises: it fails only with a reason and only when no line is a
 * probe call; its counts add up; events come in time order, ticks one
 * interval apart; every event is one the models accept (xpu_event_check).
 * fuzz_replay takes the events on into the models.
 *
 * A log's ticks span its timestamps, which a damaged line can push to 2^63
 * ns: the replay of such a log takes that long in real time, paced at -d,
 * and is not a fault.  The harness follows the first ticks only. */
#include "fuzz.h"

#include <string.h>

#include "dict.h"
#include "event.h"
#include "import_bpftrace.h"

#define INTERVAL_NS 1000000000ULL	/* -d 1, the default */
#define END_WALL_NS (1700000000ULL * 1000000000ULL)
#define MAX_TICKS 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256] = "";
	char *text = malloc(size ? size : 1);
	FUZZ_CHECK(text);
	memcpy(text, data, size);
	struct xpu_dict dict;	/* the importer's only entries are function names */
	xpu_dict_init(&dict);
	struct xpu_import *im = xpu_import_bpftrace_text(text, size, INTERVAL_NS, END_WALL_NS, &dict, err,
							 sizeof(err));
	free(text);	/* the import must not keep pointers into the text */
	if (!im) {
		FUZZ_CHECK(err[0]);
		xpu_dict_free(&dict);
		return 0;
	}
	const struct xpu_import_stats *st = xpu_import_stats(im);
	FUZZ_CHECK(st->calls > 0);
	FUZZ_CHECK(st->mapped + st->other == st->calls);
	/* calls may be counts (uniq -c, @calls): the lines are what add up */
	FUZZ_CHECK(st->call_lines + st->header + st->summary + st->bad <= st->lines);
	FUZZ_CHECK(st->untimed || st->call_lines == st->calls);
	FUZZ_CHECK(!st->bad == !st->first_bad && st->first_bad <= st->lines);
	FUZZ_CHECK(st->first_ms <= st->last_ms);

	struct xpu_event ev;
	const char *why;
	uint64_t last_time = 0, last_tick = 0, ticks = 0, events = 0;
	while (ticks < MAX_TICKS && xpu_import_next(im, &ev) == 1) {
		FUZZ_CHECK(xpu_event_check(&ev, &dict, &why) == 0);
		FUZZ_CHECK(ev.time >= last_time);
		last_time = ev.time;
		if (ev.type == XPU_EV_TICK) {
			FUZZ_CHECK(ev.tick.interval_ns == INTERVAL_NS);
			FUZZ_CHECK(!ticks || ev.time == last_tick + INTERVAL_NS);
			last_tick = ev.time;
			ticks++;
		} else {
			events++;
		}
	}
	/* A FUNC event per call and at most two more per mapped call, and one
	 * DROP for what bpftrace lost. */
	FUZZ_CHECK(events <= st->calls + 2 * st->mapped + 1);
	xpu_dict_free(&dict);
	xpu_import_free(im);
	return 0;
}
