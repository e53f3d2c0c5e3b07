/* SPDX-License-Identifier: GPL-2.0-only */
#include "health.h"

#include <stdio.h>
#include <string.h>

#include "batch_fmt.h"
#include "session.h"

static void line(char *out, size_t size, size_t *n, const char *name, int state, const char *text)
{
	if (*n >= size)
		return;
	int w = snprintf(out + *n, size - *n, "%s %s: %s\n", name, xpu_batch_state_name(state),
			 text[0] ? text : "-");
	if (w > 0)
		*n += (size_t)w < size - *n ? (size_t)w : size - *n - 1;
}

int xpu_health_text(const struct xpu_session *s, char *out, size_t size)
{
	static const char *const names[XPU_SRC_MAX] = { "cpu", "gpu", "npu" };
	size_t n = 0;
	int failed = 0;
	out[0] = '\0';
	for (int i = 0; i < XPU_SRC_MAX; i++) {
		line(out, size, &n, names[i], s->status[i].state, s->status[i].text);
		failed |= s->status[i].state == XPU_SRC_FAILED;
	}
	line(out, size, &n, "nvml", s->gpudev.s.state, s->gpudev.s.status);
	failed |= s->gpudev.s.state == XPU_SRC_FAILED;
	return failed;
}
