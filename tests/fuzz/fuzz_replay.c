/* SPDX-License-Identifier: GPL-2.0-only */
/* `xputop -r FILE -b -j` from end to end: one input is a file given to -r,
 * read as core/app/start.c reads it (a recording, refused whole if
 * xpu_rec_verify fails, else a bpftrace log), its events emitted into a
 * session configured as start.c configures it, and every view built and
 * printed as JSON and text at the first refreshes and at the end.  What the
 * two readers let through must be safe for the models and front-ends behind
 * them.  Recordings are also read with their checksums recomputed, as in
 * fuzz_record.
 *
 * Slower than the readers' own harnesses: each input starts a session, and
 * the GPU model allocates its launch-join ring (24 MiB) up front. */
#include "fuzz.h"

#include <string.h>

#include "checksums.h"
#include "import_bpftrace.h"
#include "record.h"
#include "replay.h"

#define END_WALL_NS (1700000000ULL * 1000000000ULL)
#define SHOWN_TICKS 3	/* refreshes printed before the end */
#define MAX_TICKS 4096	/* a bpftrace log's ticks can span years */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	replay_init();
	return 0;
}

static void replay(const uint8_t *buf, size_t size)
{
	char err[512] = "";
	struct xpu_session sess;
	struct xpu_import *im = NULL;
	struct xpu_session_cfg cfg;
	struct xpu_event ev;
	uint64_t delay_ns = (uint64_t)(replay_opts.delay_s * 1e9);

	xpu_session_init(&sess);
	struct xpu_rec_reader *r = xpu_rec_open_mem(buf, size, &sess.dict, err, sizeof(err));
	if (r) {
		if (xpu_rec_verify(r) < 0)
			goto out;	/* refused before anything is shown */
		const struct xpu_rec_meta *m = xpu_rec_meta(r);
		cfg = replay_cfg(m->sample_hz, m->interval_ns);
		sess.ncpus = m->ncpus;
	} else {
		im = xpu_import_bpftrace_text((const char *)buf, size, delay_ns, END_WALL_NS, &sess.dict,
					      err, sizeof(err));
		if (!im)
			goto out;
		cfg = replay_cfg(replay_opts.hz, delay_ns);
	}
	FUZZ_CHECK(xpu_session_start(&sess, &cfg) == 0);
	sess.replay = 1;
	int ticks = 0;
	while (ticks < MAX_TICKS && (im ? xpu_import_next(im, &ev) : xpu_rec_next(r, &ev)) > 0) {
		xpu_session_emit(&sess, &ev);
		if (ev.type == XPU_EV_TICK && ticks++ < SHOWN_TICKS)
			replay_show(&sess);
	}
	replay_show(&sess);
out:
	xpu_rec_close_reader(r);
	xpu_import_free(im);
	xpu_session_free(&sess);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_recording(data, size, replay);
	return 0;
}
