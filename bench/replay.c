/* SPDX-License-Identifier: GPL-2.0-only */
/* The event pipeline alone, on one core: a recording decoded and fed
 * through the session (recorder off, the CPU, GPU and NPU models, ticks) as
 * fast as it goes, with no front-end.  xputop -b -r does the same and also
 * builds and prints a snapshot at every tick.
 *
 *   replay FILE
 *
 * Prints "events N ticks T seconds S events_per_s R maxrss_kb M".
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "record.h"
#include "session.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static struct xpu_session sess;
	char err[512];

	if (argc != 2) {
		fprintf(stderr, "usage: replay FILE\n");
		return 2;
	}
	xpu_session_init(&sess);
	double t0 = now_s();
	struct xpu_rec_reader *r = xpu_rec_open(argv[1], &sess.dict, err, sizeof(err));
	if (!r || xpu_rec_verify(r) < 0) {
		fprintf(stderr, "replay: %s: %s\n", argv[1], r ? xpu_rec_error(r) : err);
		return 1;
	}
	/* As xputop -r configures it: the recorded rate and refresh, a 10 s window. */
	const struct xpu_rec_meta *m = xpu_rec_meta(r);
	struct xpu_session_cfg cfg = { .sample_hz = m->sample_hz, .interval_ns = m->interval_ns,
				       .window_ns = 10000000000ULL };
	if (xpu_session_start(&sess, &cfg) < 0)
		return 1;
	sess.replay = 1;
	struct xpu_event ev;
	int rc;
	while ((rc = xpu_rec_next(r, &ev)) > 0)
		xpu_session_emit(&sess, &ev);
	double secs = now_s() - t0;
	if (rc < 0) {
		fprintf(stderr, "replay: %s: %s\n", argv[1], xpu_rec_error(r));
		return 1;
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("events %llu ticks %llu seconds %.3f events_per_s %.0f maxrss_kb %ld\n",
	       (unsigned long long)sess.events_total, (unsigned long long)sess.ticks, secs,
	       (double)sess.events_total / secs, ru.ru_maxrss);
	xpu_rec_close_reader(r);
	xpu_session_free(&sess);
	return 0;
}
