/* SPDX-License-Identifier: GPL-2.0-only */
/* /proc/kallsyms: "ADDRESS TYPE NAME[\t[MODULE]]" per line.  Only text
 * symbols are kept; kernel stacks hold nothing else. */
#include "symfiles.h"

#include "readfile.h"
#include "symtab.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KALLSYMS_MAX_BYTES (256u << 20)
#define NAME_MAX_LEN 1024

struct xpu_kallsyms {
	struct xpu_symtab syms;	/* aux: module index + 1, 0 = the kernel image */
	char **mods;
	size_t nmods;
	int nonzero;		/* some address was not 0 */
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int parse_addr(const char **p, const char *e, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int d;
	while (s < e && (d = hexval(*s)) >= 0) {
		if (s - *p == 16)
			return -1;
		x = x << 4 | (uint64_t)d;
		s++;
	}
	if (s == *p)
		return -1;
	*p = s;
	*v = x;
	return 0;
}

/* Module index + 1 for name [p, p+len).  Lines of one module come together,
 * so searching from the newest module finds it at once. */
static uint32_t module_id(struct xpu_kallsyms *k, const char *p, size_t len)
{
	for (size_t i = k->nmods; i-- > 0;)
		if (strlen(k->mods[i]) == len && memcmp(k->mods[i], p, len) == 0)
			return (uint32_t)i + 1;
	char **v = realloc(k->mods, (k->nmods + 1) * sizeof(*v));
	if (!v)
		return 0;
	k->mods = v;
	if (!(v[k->nmods] = strndup(p, len)))
		return 0;
	return (uint32_t)++k->nmods;
}

/* Splits "name" or "name\t[module]"; returns 0 and the module in [*m, *m+*mlen). */
static int split_module(const char *p, const char *e, const char **name_end, const char **m,
			size_t *mlen)
{
	const char *tab = memchr(p, '\t', (size_t)(e - p));
	*m = NULL;
	*mlen = 0;
	*name_end = tab ? tab : e;
	if (!tab)
		return 0;
	if (e - tab < 4 || tab[1] != '[' || e[-1] != ']')
		return -1;
	*m = tab + 2;
	*mlen = (size_t)(e - 1 - *m);
	return 0;
}

static int parse_line(struct xpu_kallsyms *k, const char *p, const char *e)
{
	uint64_t addr;
	const char *name_end, *mod;
	size_t mlen;
	if (memchr(p, '\0', (size_t)(e - p)) || parse_addr(&p, e, &addr) || e - p < 4 ||
	    p[0] != ' ' || p[2] != ' ')
		return -EINVAL;
	char type = p[1];
	p += 3;
	if (split_module(p, e, &name_end, &mod, &mlen) || name_end == p ||
	    name_end - p > NAME_MAX_LEN)
		return -EINVAL;
	k->nonzero |= addr != 0;
	if (type != 'T' && type != 't' && type != 'W' && type != 'w')
		return 0;
	uint32_t aux = mod ? module_id(k, mod, mlen) : 0;
	if (mod && !aux)
		return -ENOMEM;
	size_t len = (size_t)(name_end - p);
	uint32_t rank = xpu_symtab_name_rank(p, len, type == 'T' ? 2 : type == 't' ? 1 : 0);
	return xpu_symtab_add(&k->syms, addr, 0, p, len, aux, rank);
}

struct xpu_kallsyms *xpu_kallsyms_parse(const char *text, size_t len, size_t *bad)
{
	struct xpu_kallsyms *k = calloc(1, sizeof(*k));
	size_t nbad = 0;
	if (!k)
		return NULL;
	for (const char *s = text, *end = text + len; s < end;) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		if (!e)
			e = end;
		int r = e > s ? parse_line(k, s, e) : 0;
		if (r == -ENOMEM) {
			xpu_kallsyms_free(k);
			return NULL;
		}
		nbad += r < 0;
		s = e + 1;
	}
	/* With every address hidden all symbols share address 0: keep none. */
	if (!k->nonzero)
		k->syms.n = 0;
	xpu_symtab_finish(&k->syms);
	if (bad)
		*bad = nbad;
	return k;
}

struct xpu_kallsyms *xpu_kallsyms_load(char *err, size_t errlen)
{
	char *text;
	size_t len;
	int r = xpu_read_path("/proc/kallsyms", KALLSYMS_MAX_BYTES, &text, &len);
	if (r < 0) {
		snprintf(err, errlen, "cannot read /proc/kallsyms: %s", strerror(-r));
		return NULL;
	}
	struct xpu_kallsyms *k = xpu_kallsyms_parse(text, len, NULL);
	free(text);
	if (!k)
		snprintf(err, errlen, "out of memory reading /proc/kallsyms");
	return k;
}

void xpu_kallsyms_free(struct xpu_kallsyms *k)
{
	if (!k)
		return;
	xpu_symtab_free(&k->syms);
	for (size_t i = 0; i < k->nmods; i++)
		free(k->mods[i]);
	free(k->mods);
	free(k);
}

const char *xpu_kallsyms_lookup(const struct xpu_kallsyms *k, uint64_t addr, const char **module)
{
	uint32_t i = xpu_symtab_find(&k->syms, addr);
	*module = NULL;
	if (i == UINT32_MAX)
		return NULL;
	uint32_t aux = k->syms.v[i].aux;
	if (aux)
		*module = k->mods[aux - 1];
	return xpu_symtab_name(&k->syms, i);
}

int xpu_kallsyms_hidden(const struct xpu_kallsyms *k)
{
	return !k->nonzero;
}

size_t xpu_kallsyms_nsyms(const struct xpu_kallsyms *k)
{
	return k->syms.n;
}
