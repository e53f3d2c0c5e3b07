/* SPDX-License-Identifier: GPL-2.0-only */
/* Sizes and byte rates for people: "12.0 GiB", "340 MiB/s".  Shared by the
 * text front-ends (batch text, the TUI), which print the same quantities. */
#ifndef XPU_UNITS_H
#define XPU_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Binary units from B to TiB, three significant digits ("1.50 GiB", "512 MiB"). */
void xpu_fmt_bytes(char *buf, size_t size, double bytes);
/* The same with "/s". */
void xpu_fmt_byte_rate(char *buf, size_t size, double bytes_per_s);

#endif
