/* SPDX-License-Identifier: GPL-2.0-only */
#include "sparkline.h"

#include "draw.h"

int xpu_sparkline_levels(const double *v, uint32_t n, int w, uint8_t *levels, double *max)
{
	int k = w < 0 ? 0 : (uint32_t)w < n ? w : (int)n;
	const double *from = v + n - (uint32_t)k;
	double top = 0;

	for (int i = 0; i < k; i++)
		if (from[i] > top)
			top = from[i];
	for (int i = 0; i < k; i++) {
		int lv = 0;
		if (from[i] > 0 && top > 0) {
			lv = (int)(from[i] * 8 / top + 0.5);
			lv = lv < 1 ? 1 : lv > 8 ? 8 : lv;
		}
		levels[i] = (uint8_t)lv;
	}
	*max = top;
	return k;
}

int xpu_sparkline_draw(int y, int x, int w, const double *v, uint32_t n)
{
	static const char *const utf8[9] = { " ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	static const char *const ascii[9] = { " ", "_", ".", ":", "-", "=", "+", "*", "#" };
	const char *const *glyph = xpu_draw_utf8() ? utf8 : ascii;
	uint8_t levels[512];
	double max;

	if (w > (int)sizeof(levels))
		w = (int)sizeof(levels);
	int k = xpu_sparkline_levels(v, n, w, levels, &max);
	attr_t a = xpu_draw_attr(XPU_ROLE_SPARKLINE);
	for (int i = 0; i < k; i++)
		xpu_put_text(y, x + (w - k) + i, 1, glyph[levels[i]], a, 0);
	return w;
}
