/* SPDX-License-Identifier: GPL-2.0-only */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>

static xpu_log_sink sink;
static void *sink_ctx;
static int max_level = XPU_LOG_INFO;
static unsigned counts[XPU_LOG_DEBUG + 1];

void xpu_log_set_sink(xpu_log_sink s, void *ctx)
{
	sink = s;
	sink_ctx = ctx;
}

void xpu_log_set_level(int level)
{
	max_level = level;
}

unsigned xpu_log_count(int level)
{
	return level >= 0 && level <= XPU_LOG_DEBUG ? counts[level] : 0;
}

void xpu_log(int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (level < 0)
		level = XPU_LOG_ERR;
	if (level > XPU_LOG_DEBUG)
		level = XPU_LOG_DEBUG;
	counts[level]++;
	if (level > max_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (sink) {
		sink(sink_ctx, level, msg);
		return;
	}
	fprintf(stderr, "xputop: %s%s\n", level == XPU_LOG_WARN ? "warning: " : "", msg);
}
