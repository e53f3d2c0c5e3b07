/* SPDX-License-Identifier: GPL-2.0-only */
/* What `xputop -r FILE -b -j` does around the readers, for fuzz_replay: the
 * options, a session configured as core/app/start.c's app_start_replay()
 * and start_import() configure it (from the file's metadata, or from the options),
 * and each view built and written out as JSON and text. */
#ifndef XPU_FUZZ_REPLAY_H
#define XPU_FUZZ_REPLAY_H

#include "fuzz.h"

#include "batch.h"
#include "opts.h"
#include "session.h"
#include "snapshot.h"

static struct xpu_opts replay_opts;
static FILE *replay_null;

/* The options of `xputop -r FILE -b -j`; call once. */
static void replay_init(void)
{
	char *argv[] = { "xputop", "-r", "FILE", "-b", "-j", NULL };
	FUZZ_CHECK(xpu_opts_parse(&replay_opts, 5, argv) == 0);
	replay_null = fopen("/dev/null", "w");
	FUZZ_CHECK(replay_null);
}

/* As core/app/start.c's app_session_cfg(). */
static struct xpu_session_cfg replay_cfg(uint32_t hz, uint64_t interval_ns)
{
	const struct xpu_opts *o = &replay_opts;
	struct xpu_session_cfg c = {
		.sample_hz = hz,
		.interval_ns = interval_ns,
		.window_ns = (uint64_t)(o->window_s * 1e9),
		.npu = { .tdr_ms = o->npu_tdr_ms, .storm_factor = o->npu_storm,
			 .silence_ms = o->npu_silence_ms },
	};
	return c;
}

/* Every view as the batch front-end shows it. */
static void replay_show(struct xpu_session *sess)
{
	struct xpu_viewstate vs;
	struct xpu_snapshot snap;
	xpu_viewstate_init(&vs);
	xpu_snapshot_init(&snap);
	for (int v = 0; v < XPU_VIEW_MAX; v++) {
		vs.view = (enum xpu_view)v;
		vs.window = v == XPU_VIEW_CPU ? XPU_WIN_ALL : XPU_WIN_RECENT;
		FUZZ_CHECK(xpu_snapshot_build(&snap, sess, &vs) == 0);
		xpu_batch_json(replay_null, &snap, sess, &vs);
		xpu_batch_text(replay_null, &snap);
	}
	xpu_snapshot_free(&snap);
}

#endif
