/* SPDX-License-Identifier: GPL-2.0-only */
/* Kernel names shortened by keeping what distinguishes them (kname.h).
 *
 * The demangler's output is read as words: a word is a qualified name, a
 * list of components joined by "::", each an identifier, an operator,
 * "(anonymous namespace)" or a brace group ("{lambda(float)#1}"), optionally
 * with template arguments <...> and a parameter list (...).  Template
 * arguments and lambda parameters are lists of types, read as words again, so
 * every rule applies at every nesting level.  Nothing here trusts the input
 * to be well formed: kernel names come from other processes, and a name cut
 * short ends every group it left open. */
#include "kname.h"

#include <ctype.h>
#include <fnmatch.h>
#include <string.h>

#define MAX_COMPS 32	/* components kept per word; later ones replace the last */
#define MAX_DEPTH 48	/* nesting rendered; deeper text shows as "..." */

/* Template arguments that only say how a kernel moves its data, never which
 * operation it runs: the short form leaves them out.  base is matched against
 * the argument's name up to its template arguments, args (when set) against
 * those arguments, both with fnmatch(3). */
static const struct {
	const char *base, *args;
} plumbing[] = {
	/* the operands' pointers, as many as the functor has operands */
	{ "std::array", "<char[*], *>" },
	/* index arithmetic over the operands' strides (Trivial... when contiguous) */
	{ "*OffsetCalculator", NULL },
	/* element loads and stores, with or without a dtype cast */
	{ "at::native::memory::Load*", NULL },
	{ "at::native::memory::Store*", NULL },
};

enum comp_kind { COMP_NAME, COMP_OPERATOR, COMP_ANON, COMP_LAMBDA, COMP_BRACES };

struct comp {
	const char *s, *base_end;	/* the name (with ABI tags), or the whole brace group */
	const char *targs, *targs_end;	/* inside <...>, or NULL */
	const char *params;		/* its "(", or NULL */
	enum comp_kind kind;
};

struct out {
	char *buf;
	size_t size, n;
	int depth;
	int cut;	/* text was left out for want of room */
};

static void put(struct out *o, const char *s, size_t n)
{
	size_t room = o->size - 1 - o->n;
	if (n > room) {
		n = room;
		o->cut = 1;
	}
	memcpy(o->buf + o->n, s, n);
	o->n += n;
	o->buf[o->n] = '\0';
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static int starts(const char *p, const char *end, const char *s)
{
	size_t n = strlen(s);
	return (size_t)(end - p) >= n && memcmp(p, s, n) == 0;
}

static int is_open(char c)
{
	return c == '<' || c == '(' || c == '{' || c == '[';
}

static int is_close(char c)
{
	return c == '>' || c == ')' || c == '}' || c == ']';
}

static int is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '.';
}

/* p is at an opening bracket: just past the one closing it, or end. */
static const char *skip_group(const char *p, const char *end)
{
	int depth = 0;
	for (; p < end; p++) {
		if (is_open(*p))
			depth++;
		else if (is_close(*p) && --depth == 0)
			return p + 1;
	}
	return end;
}

/* The next top-level "," of a list, or end. */
static const char *arg_end(const char *p, const char *end)
{
	while (p < end && *p != ',')
		p = is_open(*p) ? skip_group(p, end) : p + 1;
	return p;
}

/* After "operator": the operator's own characters. */
static const char *operator_end(const char *p, const char *end)
{
	if (starts(p, end, "()") || starts(p, end, "[]"))
		return p + 2;
	if (p < end && *p == ' ') {	/* new, delete, a conversion */
		p++;
		while (p < end && is_ident(*p))
			p++;
		return p;
	}
	while (p < end && strchr("+-*/%^&|~!=<>,", *p))
		p++;
	return p;
}

/* The end of a component's name at p, or p when none starts there. */
static const char *parse_base(const char *p, const char *end, enum comp_kind *kind)
{
	static const char anon[] = "(anonymous namespace)";
	if (starts(p, end, anon)) {
		*kind = COMP_ANON;
		return p + sizeof(anon) - 1;
	}
	if (p < end && *p == '{') {
		*kind = starts(p, end, "{lambda(") ? COMP_LAMBDA : COMP_BRACES;
		return skip_group(p, end);
	}
	const char *q = p;
	if (q < end && (*q == '~' || (*q == '-' && q + 1 < end && isdigit((unsigned char)q[1]))))
		q++;	/* a destructor, a negative number */
	while (q < end && is_ident(*q))
		q++;
	if (q == p || !is_ident(q[-1]))
		return p;
	*kind = COMP_NAME;
	if (q - p == 8 && memcmp(p, "operator", 8) == 0) {
		*kind = COMP_OPERATOR;
		q = operator_end(q, end);
	}
	while (starts(q, end, "[abi:"))
		q = skip_group(q, end);
	return q;
}

/* " const", " volatile", " &", " &&" after a parameter list. */
static const char *skip_cv(const char *p, const char *end)
{
	static const char *const cv[] = { " const", " volatile", " &&", " &" };
	for (int again = 1; again;) {
		again = 0;
		for (size_t i = 0; i < sizeof(cv) / sizeof(cv[0]); i++) {
			const char *q = p + strlen(cv[i]);
			if (starts(p, end, cv[i]) && (q == end || !is_ident(*q))) {
				p = q;
				again = 1;
			}
		}
	}
	return p;
}

/* One word at p: its components in c (*n of them); returns where it ends,
 * p itself when no name starts there. */
static const char *parse_word(const char *p, const char *end, struct comp *c, int *n)
{
	*n = 0;
	for (;;) {
		struct comp k = { .s = p };
		const char *q = parse_base(p, end, &k.kind);
		if (q == p)
			return p;
		k.base_end = q;
		if (q < end && *q == '<' && k.kind != COMP_BRACES && k.kind != COMP_LAMBDA) {
			k.targs = q + 1;
			q = skip_group(q, end);
			k.targs_end = q[-1] == '>' ? q - 1 : q;
		}
		if (q < end && *q == '(' && k.kind != COMP_ANON) {
			k.params = q;
			q = skip_cv(skip_group(q, end), end);
		}
		c[*n < MAX_COMPS ? (*n)++ : MAX_COMPS - 1] = k;
		if (!starts(q, end, "::"))
			return q;
		p = q + 2;
	}
}

static void render_type(struct out *o, const char *p, const char *end);

static int is_plumbing(const char *p, const char *end)
{
	char base[256], args[256];
	const char *lt = memchr(p, '<', (size_t)(end - p));
	size_t nb = (size_t)((lt ? lt : end) - p), na = lt ? (size_t)(end - lt) : 0;
	if (nb >= sizeof(base) || na >= sizeof(args))
		return 0;
	memcpy(base, p, nb);
	base[nb] = '\0';
	memcpy(args, lt ? lt : "", na);
	args[na] = '\0';
	for (size_t i = 0; i < sizeof(plumbing) / sizeof(plumbing[0]); i++)
		if (fnmatch(plumbing[i].base, base, 0) == 0 &&
		    (!plumbing[i].args || fnmatch(plumbing[i].args, args, 0) == 0))
			return 1;
	return 0;
}

/* A comma-separated list of types, less the plumbing ones. */
static void render_list(struct out *o, const char *p, const char *end)
{
	int first = 1;
	while (p < end) {
		while (p < end && *p == ' ')
			p++;
		const char *e = arg_end(p, end), *t = e;
		while (t > p && t[-1] == ' ')
			t--;
		if (t > p && !is_plumbing(p, t)) {
			if (!first)
				puts_(o, ", ");
			render_type(o, p, t);
			first = 0;
		}
		p = e < end ? e + 1 : end;
	}
}

/* A component's name and its template arguments ("<...>" left out when none
 * is kept; a cut text is only ever cut, so that it starts as the whole would). */
static void render_comp(struct out *o, const struct comp *c)
{
	put(o, c->s, (size_t)(c->base_end - c->s));
	if (!c->targs)
		return;
	size_t before = o->n;
	puts_(o, "<");
	render_list(o, c->targs, c->targs_end);
	if (o->n == before + 1 && !o->cut)
		o->buf[o->n = before] = '\0';
	else
		puts_(o, ">");
}

/* "{lambda(float)#1}", its parameter types shortened too. */
static void render_lambda(struct out *o, const struct comp *c)
{
	const char *open = c->s + strlen("{lambda"), *close = skip_group(open, c->base_end);
	puts_(o, "{lambda(");
	render_list(o, open + 1, close > open + 1 && close[-1] == ')' ? close - 1 : close);
	puts_(o, ")");
	put(o, close, (size_t)(c->base_end - close));
}

/* Component i with the qualifiers that are not namespaces: classes with
 * template arguments (sum_functor<float>::operator()), and the class of an
 * operator. */
static void render_scoped(struct out *o, const struct comp *c, int i)
{
	int from = i;
	while (from > 0 && c[from - 1].kind == COMP_NAME &&
	       (c[from - 1].targs || (from == i && c[i].kind == COMP_OPERATOR)))
		from--;
	for (int k = from; k <= i; k++) {
		if (k > from)
			puts_(o, "::");
		render_comp(o, &c[k]);
	}
}

/* A word: its last component, or for a lambda the function it is defined in
 * (the outermost one, whose name says what the code does) and the innermost
 * lambda (whose parameter types tell dtype variants apart). */
static void render_word(struct out *o, const struct comp *c, int n)
{
	int lambda = -1, fn = -1;
	for (int i = 0; i < n; i++)
		if (c[i].kind == COMP_LAMBDA)
			lambda = i;
	if (lambda < 0) {
		render_scoped(o, c, n - 1);
		return;
	}
	for (int i = 0; i < lambda && fn < 0; i++)
		if (c[i].params)
			fn = i;
	if (fn >= 0) {
		render_scoped(o, c, fn);
		puts_(o, "::");
	}
	render_lambda(o, &c[lambda]);
}

/* A type: words ("unsigned int", "long const*"), punctuation, and groups
 * such as a function type's "(int)". */
static void render_type(struct out *o, const char *p, const char *end)
{
	if (++o->depth > MAX_DEPTH) {
		puts_(o, "...");
		o->depth--;
		return;
	}
	while (p < end) {
		struct comp c[MAX_COMPS];
		int n;
		const char *q = parse_word(p, end, c, &n);
		if (n) {
			render_word(o, c, n);
		} else if (*p == '(') {
			q = skip_group(p, end);
			puts_(o, "(");
			render_list(o, p + 1, q > p + 1 && q[-1] == ')' ? q - 1 : q);
			puts_(o, ")");
		} else {
			q = is_open(*p) ? skip_group(p, end) : p + 1;
			put(o, p, (size_t)(q - p));
		}
		p = q;
	}
	o->depth--;
}

/* The kernel's own word: the first one with a parameter list, or the one that
 * ends the name; what comes before it is the return type. */
static const char *main_word(const char *p, const char *end, struct comp *c, int *n)
{
	while (p < end) {
		if (*p == ' ') {
			p++;
			continue;
		}
		const char *q = parse_word(p, end, c, n);
		if (!*n) {
			p++;	/* the return type's "*" or "&" */
			continue;
		}
		if (q == end || c[*n - 1].params)
			return q;
		p = q;
	}
	return NULL;
}

/* Whether name is C++ as demangled; other names are kept as they are. */
static int is_cxx(const char *name)
{
	return strpbrk(name, "<(: ") != NULL;
}

/* name's own word written to out in the short or the qualified form; a name
 * that is not C++ as it is. */
static size_t write_form(const char *name, char *out, size_t size, int qualified)
{
	struct out o = { .buf = out, .size = size };
	struct comp c[MAX_COMPS];
	int n;
	if (!size)
		return 0;
	out[0] = '\0';
	const char *end = is_cxx(name) ? main_word(name, name + strlen(name), c, &n) : NULL;
	if (!end)
		puts_(&o, name);
	else if (qualified)
		put(&o, c[0].s, (size_t)((c[n - 1].params ? c[n - 1].params : end) - c[0].s));
	else
		render_word(&o, c, n);
	return o.n;
}

size_t xpu_kname_short(const char *name, char *out, size_t size)
{
	return write_form(name, out, size, 0);
}

size_t xpu_kname_qualified(const char *name, char *out, size_t size)
{
	return write_form(name, out, size, 1);
}
