/* SPDX-License-Identifier: GPL-2.0-only */
#include "units.h"

#include <stdio.h>

void xpu_fmt_bytes(char *buf, size_t size, double bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;
	while (bytes >= 1023.5 && u < 4) {
		bytes /= 1024;
		u++;
	}
	if (u == 0 || bytes >= 99.95)
		snprintf(buf, size, "%.0f %s", bytes, unit[u]);
	else if (bytes >= 9.995)
		snprintf(buf, size, "%.1f %s", bytes, unit[u]);
	else
		snprintf(buf, size, "%.2f %s", bytes, unit[u]);
}

void xpu_fmt_byte_rate(char *buf, size_t size, double bytes_per_s)
{
	char b[32];
	xpu_fmt_bytes(b, sizeof(b), bytes_per_s);
	snprintf(buf, size, "%s/s", b);
}
