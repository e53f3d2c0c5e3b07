/* SPDX-License-Identifier: GPL-2.0-only */
#include "opts.h"

#include <getopt.h>
#include <string.h>

#include "err.h"

const struct xpu_keydoc xpu_keydocs[] = {
	{ NULL, "Views" },
	{ "g  n  c", "GPU, NPU or CPU view" },
	{ "Tab  Shift-Tab", "next or previous view" },
	{ NULL, "Table" },
	{ "Up Down  j", "move the selection (the flamegraph follows it)" },
	{ "PgUp  PgDn", "move the selection by a page" },
	{ "Home  End", "first or last row" },
	{ "<  >  F6", "sort by the previous or next column" },
	{ "r  I", "reverse the sort order" },
	{ "/  \\  F3  F4", "filter rows as you type; Enter keeps, Esc restores" },
	{ NULL, "Processes (CPU view)" },
	{ "k  F9", "send the selected process a signal: pick it (SIGTERM first), Enter, then y" },
	{ "F7  ]", "renice the selected process one step up (nice - 1; root only) after y" },
	{ "F8  [", "renice the selected process one step down (nice + 1) after y" },
	{ NULL, "Display" },
	{ "1", "a meter per CPU under the header, as top's 1" },
	{ "f", "show or hide the flamegraph" },
	{ "H", "processes or threads (CPU view)" },
	{ "p", "CPU view: the command line in COMMAND instead of the name (top's c)" },
	{ "t  F5", "CPU view: processes under their parents (htop's tree)" },
	{ "A", "CPU view: the flamegraph of all processes (under their names), or again the selected row's" },
	{ "o", "CPU view: the hottest functions machine-wide beside the flamegraph (perf top's list)" },
	{ "u", "CPU view: only one user's processes, picked from a menu (a letter jumps)" },
	{ "t", "NPU: table keys move functions, then chains, then calls" },
	{ "F", "follow the selected row as rows re-sort, until it ends (else the cursor keeps its place)" },
	{ "w", "recent window or since start" },
	{ "Space", "pause or resume the display" },
	{ "Right  Left", "replay: a refresh on or back (Shift: ten); the header says which of how many" },
	{ "b", "replay: go to a time (seconds or M:SS into the recording; +S, -S from here)" },
	{ "s", "export the current view to a file" },
	{ "e", "GPU: exact tracing of every kernel for a while (60 s, or --gpu-exact's), after a y; or back to sampled" },
	{ "T", "next colour theme" },
	{ "S", "save the settings (view, sort, theme...) in xputop.conf" },
	{ "F2", "no setup screen: says where the settings are kept (S saves them)" },
	{ "Ctrl-L", "redraw the screen" },
	{ "?  h  F1", "this help" },
	{ "q  F10", "quit" },
	{ NULL, "Flamegraph" },
	{ "Enter", "zoom onto the heaviest callee below (the hot path, while callees outweigh the frame)" },
	{ "Enter", "NPU: open or close the alert card (the top alert whole, its evidence)" },
	{ "z  Backspace", "zoom out one level" },
	{ NULL, "Mouse" },
	{ "click a tab", "switch to its view" },
	{ "click a row", "select it; on a heading: sort by it, again: reverse" },
	{ "click a frame", "zoom the flamegraph onto it; its title: zoom out" },
	{ "wheel", "move the selection" },
};
const unsigned xpu_nkeydocs = sizeof(xpu_keydocs) / sizeof(xpu_keydocs[0]);

/* An optional argument ("[=SECS]") follows its option without a space. */
static const char *space(const struct xpu_setting *e)
{
	return e->arg && strncmp(e->arg, "[=", 2) != 0 ? " " : "";
}

void xpu_opts_usage(FILE *f)
{
	fprintf(f, "Usage: xputop [OPTIONS] [-- CMD [ARGS...]]\n"
		   "A top-like live monitor for accelerators: GPU kernels and the CPU stacks that\n"
		   "launched them, Intel NPU driver and firmware activity, and on-CPU samples.\n\n"
		   "Options:\n");
	for (unsigned i = 0; i < xpu_nsettings; i++) {
		const struct xpu_setting *e = &xpu_settings_table[i];
		char left[64], def[64] = "";
		if (!e->help)
			continue;
		if (e->shrt)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", e->shrt, e->name, space(e),
				 e->arg ? e->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", e->name, space(e), e->arg ? e->arg : "");
		if (e->def)
			snprintf(def, sizeof(def), " (default %s)", e->def);
		fprintf(f, "  %-28s %s%s\n", left, e->help, def);
	}
	fprintf(f, "\nInteractive keys:\n");
	for (unsigned i = 0; i < xpu_nkeydocs; i++) {
		const struct xpu_keydoc *k = &xpu_keydocs[i];
		if (k->keys)
			fprintf(f, "  %-28s %s\n", k->keys, k->help);
	}
	fprintf(f, "\nExamples:\n"
		   "  sudo xputop                      watch this machine\n"
		   "  sudo xputop -b -j -n 3           three JSON snapshots, then exit\n"
		   "  sudo xputop -w run.xpr           watch and record\n"
		   "  xputop -r run.xpr                replay a recording\n"
		   "\nSee xputop(8) for the fields of each view and what the alerts mean.\n");
}

void xpu_opts_list(FILE *f)
{
	for (unsigned i = 0; i < xpu_nsettings; i++) {
		const struct xpu_setting *e = &xpu_settings_table[i];
		if (!e->help)
			continue;
		if (e->shrt)
			fprintf(f, "-%c", e->shrt);
		fprintf(f, "|--%s", e->name);
		if (e->arg && *space(e))
			fprintf(f, "=%s", e->arg);
		for (unsigned v = 0; e->kind == XPU_SK_ENUM && e->names[v]; v++)
			fprintf(f, " %s", e->names[v]);
		fputc('\n', f);
	}
}

/* The getopt_long option for entry i returns its short letter, or 256 + i. */
static const struct xpu_setting *entry(int c)
{
	if (c >= 256)
		return (unsigned)c - 256 < xpu_nsettings ? &xpu_settings_table[c - 256] : NULL;
	for (unsigned i = 0; i < xpu_nsettings; i++)
		if (xpu_settings_table[i].shrt == c)
			return &xpu_settings_table[i];
	return NULL;
}

/* Cross-option checks, once every option is read. */
static int check(const struct xpu_opts *o)
{
	if (o->replay && o->cmd)
		return xpu_err("a command to run (-- CMD) cannot be combined with replaying a recording "
			       "(-r)"), -1;
	if ((o->pprof_push || o->pprof_interval_s != 10) && !o->pprof_dir)
		return xpu_err("--pprof-push and --pprof-interval go with --pprof DIR"), -1;
	if (o->pprof_push_headers && !o->pprof_push)
		return xpu_err("--pprof-headers goes with --pprof-push URL"), -1;
	if (o->config && o->no_config)
		return xpu_err("--config and --no-config contradict each other"), -1;
	if (o->replay && o->record && strcmp(o->replay, o->record) == 0)
		return xpu_err("-r and -w name the same file"), -1;
	return 0;
}

int xpu_opts_parse(struct xpu_opts *o, int argc, char **argv)
{
	struct option longs[xpu_nsettings + 1];
	char shorts[2 * xpu_nsettings + 2];
	size_t ns = 0;
	int c;

	shorts[ns++] = '+';	/* options end at the first word that is not one: -- CMD */
	for (unsigned i = 0; i < xpu_nsettings; i++) {
		const struct xpu_setting *e = &xpu_settings_table[i];
		int has = !e->arg ? no_argument : *space(e) ? required_argument : optional_argument;
		longs[i] = (struct option){ e->name, has, NULL, e->shrt ? e->shrt : 256 + (int)i };
		if (e->shrt) {
			shorts[ns++] = e->shrt;
			if (has == required_argument)
				shorts[ns++] = ':';
		}
	}
	longs[xpu_nsettings] = (struct option){ 0 };
	shorts[ns] = '\0';

	memset(o, 0, sizeof(*o));
	xpu_setting_defaults(o, NULL);
	optind = 1;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct xpu_setting *e = c == '?' ? NULL : entry(c);
		int r = e ? xpu_setting_parse(e, o, optarg) : -1;
		if (r > 0)
			return 1;
		if (r < 0) {
			fprintf(stderr, "Try 'xputop --help' for more information.\n");
			return -1;
		}
	}
	if (optind < argc)
		o->cmd = argv + optind;
	return check(o);
}
