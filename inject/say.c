/* SPDX-License-Identifier: GPL-2.0-only */
/* Messages on the host's stderr, each at most once per process (inject.h).
 * Apart from the agent (inject.c) so that CUPTI's side (cupti.c) can speak
 * without calling back into the agent that drives it. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "inject.h"

void xpu_inj_say_once(int *said, const char *fmt, ...)
{
	va_list ap;
	if (__atomic_exchange_n(said, 1, __ATOMIC_RELAXED))
		return;
	char msg[512];
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "xputop-inject[%d]: %s\n", (int)getpid(), msg);
}
