/* SPDX-License-Identifier: GPL-2.0-only */
/* The one error channel.
 *
 * Outside curses messages go to stderr prefixed "xputop: "; while the TUI is up
 * it installs a sink that shows them on the status line.  Messages say what
 * failed and what to do about it.  Library code reports and returns an error;
 * it never exits.
 */
#ifndef XPU_ERR_H
#define XPU_ERR_H

enum xpu_log_level { XPU_LOG_ERR = 0, XPU_LOG_WARN = 1, XPU_LOG_INFO = 2, XPU_LOG_DEBUG = 3 };

typedef void (*xpu_log_sink)(void *ctx, int level, const char *msg);

void xpu_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define xpu_err(...) xpu_log(XPU_LOG_ERR, __VA_ARGS__)
#define xpu_warn(...) xpu_log(XPU_LOG_WARN, __VA_ARGS__)
#define xpu_info(...) xpu_log(XPU_LOG_INFO, __VA_ARGS__)
#define xpu_debug(...) xpu_log(XPU_LOG_DEBUG, __VA_ARGS__)

/* NULL restores stderr.  Returns the previous sink. */
void xpu_log_set_sink(xpu_log_sink sink, void *ctx);
/* Messages above this level are dropped (default XPU_LOG_INFO). */
void xpu_log_set_level(int level);
/* Number of errors and warnings reported so far. */
unsigned xpu_log_count(int level);

#endif
