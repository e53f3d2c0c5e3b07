/* C++ (Itanium ABI) names through the C++ runtime's own demangler. */
#include "symbolize.h"

#include <stdlib.h>
#include <string.h>

extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* The demangler keeps arrays sized by the name's length on the stack; names
 * from a hostile file could be megabytes long, so longer ones stay mangled.
 * Real names this long are rare and still readable mangled. */
#define DEMANGLE_MAX_LEN 8192

static size_t copy_out(const char *s, char *buf, size_t size)
{
	size_t n = strlen(s);
	if (!size)
		return 0;
	if (n >= size)
		n = size - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return n;
}

size_t xpu_demangle(const char *name, char *buf, size_t size)
{
	if (strncmp(name, "_Z", 2) != 0 || strnlen(name, DEMANGLE_MAX_LEN + 1) > DEMANGLE_MAX_LEN)
		return copy_out(name, buf, size);
	int status = 0;
	char *d = __cxa_demangle(name, NULL, NULL, &status);
	size_t n = copy_out(status == 0 && d ? d : name, buf, size);
	free(d);
	return n;
}
