/* SPDX-License-Identifier: GPL-2.0-only */
/* The recording reader (core/stream/record.c): one input is one file given to
 * `xputop -r`.  Each input is read twice: as it is, and with its header and
 * block checksums recomputed, since random bytes almost never pass a CRC and
 * everything behind the checksums would otherwise go unfuzzed.
 *
 * Checks the reader's promises: opening fails only with a message; the
 * metadata strings are terminated; xpu_rec_verify and reading to the end
 * agree (a file verify refuses never reads cleanly to its end); every event
 * returned passes xpu_event_check against the dictionary it was read into;
 * an error, once returned, stays.  fuzz_replay takes the events on into the
 * models. */
#include "fuzz.h"

#include <string.h>

#include "checksums.h"
#include "dict.h"
#include "event.h"
#include "record.h"

static void check_meta(const struct xpu_rec_meta *m)
{
	FUZZ_CHECK(memchr(m->host, '\0', sizeof(m->host)));
	FUZZ_CHECK(memchr(m->kernel, '\0', sizeof(m->kernel)));
	FUZZ_CHECK(memchr(m->version, '\0', sizeof(m->version)));
}

/* xpu_rec_verify on its own reader and dictionary: 0 or -1. */
static int verify(const uint8_t *buf, size_t size)
{
	char err[512] = "";
	struct xpu_dict d;
	xpu_dict_init(&d);
	struct xpu_rec_reader *r = xpu_rec_open_mem(buf, size, &d, err, sizeof(err));
	FUZZ_CHECK(r);
	int rc = xpu_rec_verify(r);
	if (rc < 0)
		FUZZ_CHECK(xpu_rec_error(r)[0]);
	xpu_rec_close_reader(r);
	xpu_dict_free(&d);
	return rc;
}

static void read_file(const uint8_t *buf, size_t size)
{
	char err[512] = "";
	struct xpu_dict dict;
	struct xpu_event ev;
	const char *why;
	int rc;

	xpu_dict_init(&dict);
	struct xpu_rec_reader *r = xpu_rec_open_mem(buf, size, &dict, err, sizeof(err));
	if (!r) {
		FUZZ_CHECK(err[0]);
		xpu_dict_free(&dict);
		return;
	}
	check_meta(xpu_rec_meta(r));
	int verified = verify(buf, size) == 0;
	while ((rc = xpu_rec_next(r, &ev)) > 0)
		FUZZ_CHECK(xpu_event_check(&ev, &dict, &why) == 0);
	if (rc < 0)
		FUZZ_CHECK(xpu_rec_error(r)[0]);
	/* Verify walks the same framing that reading checks as it goes. */
	FUZZ_CHECK(verified || rc < 0);
	FUZZ_CHECK(xpu_rec_next(r, &ev) == rc);
	xpu_rec_close_reader(r);
	xpu_dict_free(&dict);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_recording(data, size, read_file);
	return 0;
}
