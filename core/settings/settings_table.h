/* SPDX-License-Identifier: GPL-2.0-only */
/* The table of settings: one entry per command-line option, saying its long
 * and short name, kind, range, default, --help line, field of struct
 * xpu_opts and, for an option that is also a key of the settings file, that
 * key's field of struct xpu_settings.  The options (opts.c), --help, the
 * settings file (config.c) and the bash completion (xputop --list-options)
 * all read it; tests/cli/cli.sh holds the man page to --help and to
 * xputop --list-keys. */
#ifndef XPU_SETTINGS_TABLE_H
#define XPU_SETTINGS_TABLE_H

#include <stddef.h>

struct xpu_opts;

enum xpu_setting_kind {
	XPU_SK_FLAG,	/* no argument: the int becomes 1 */
	XPU_SK_COUNT,	/* no argument: the int counts them (-v -v) */
	XPU_SK_U32,	/* a whole number lo..hi, a uint32_t */
	XPU_SK_LONG,	/* a whole number lo..hi, a long */
	XPU_SK_DOUBLE,	/* a decimal number lo..hi, a double */
	XPU_SK_STRING,	/* the argument itself, a const char * */
	XPU_SK_ENUM,	/* one of names[], its index, an int */
	XPU_SK_HOOK,	/* parse() reads it (and may use lo, hi, unit, off) */
};

enum {
	XPU_SF_OPEN = 1,	/* no maximum worth saying: "expected LO or more" */
	XPU_SF_UNSET = 2,	/* ENUM: -1 until given (else names[0]) */
	XPU_SF_MODEL_DEFAULT = 4,	/* the field stays 0 until given: the model's
					 * default, which def only documents */
};

struct xpu_setting {
	const char *name;	/* long option without dashes, and the file's key */
	char shrt;		/* short letter or 0 */
	const char *arg;	/* --help's argument; NULL: none; "[=X]": optional */
	enum xpu_setting_kind kind;
	double lo, hi;		/* U32, LONG, DOUBLE */
	const char *unit;	/* what follows the range: "OPT: expected LO to HI UNIT" */
	const char *const *names;	/* ENUM: NULL-terminated */
	const char *def;	/* the default as --help and the file show it; numbers start there */
	unsigned flags;		/* XPU_SF_* */
	size_t off;		/* the field in struct xpu_opts */
	/* HOOK: returns 0, -1 after reporting the error, or 1 when the option
	 * was all there was to do (--help: exit 0). */
	int (*parse)(struct xpu_opts *o, const struct xpu_setting *e, const char *arg);
	unsigned bit;		/* XPU_SET_* (config.h): also a key of the settings file, or 0 */
	size_t soff;		/* ... its field in struct xpu_settings */
	const char *zero;	/* ... the file's word for 0 ("driver"), or NULL */
	const char *help;	/* NULL: not in --help, the man page or the completion */
};

extern const struct xpu_setting xpu_settings_table[];
extern const unsigned xpu_nsettings;

/* The entry whose settings file key is key (any case), or NULL. */
const struct xpu_setting *xpu_setting_key(const char *key);

/* "-d" or "--window": how messages name the option. */
const char *xpu_setting_optname(const struct xpu_setting *e, char *buf, size_t size);

/* The values an entry takes, as messages say them: "0.05 to 3600",
 * "0.1 or more", "gpu, npu or cpu". */
void xpu_setting_expect(const struct xpu_setting *e, char *buf, size_t size);

/* Stores the option's argument (NULL for none) in o, or reports
 * "OPT: expected ..." and returns -1; HOOK entries return what parse does. */
int xpu_setting_parse(const struct xpu_setting *e, struct xpu_opts *o, const char *arg);

/* Puts each entry's starting value in o and, for the file's keys, in the
 * struct xpu_settings at s (either may be NULL). */
void xpu_setting_defaults(struct xpu_opts *o, void *s);

#endif
