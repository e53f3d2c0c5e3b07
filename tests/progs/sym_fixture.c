/* SPDX-License-Identifier: GPL-2.0-only */
/* A program with known symbols for the symbolizer tests (test_symbolize).
 *
 * It prints "NAME ADDRESS" for each of its functions, then waits until its
 * standard input closes, so a test can symbolize a live process, then let it
 * exit and symbolize the same addresses again.  One function has a C++ mangled
 * name, one is static (only in .symtab), one is a GNU indirect function.
 */
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) int xpu_fixture_alpha(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static int fixture_static_beta(int x)
{
	return xpu_fixture_alpha(x) - 2;
}

/* foo::bar(int), written in C. */
int fixture_cxx(int x) __asm__("_ZN3foo3barEi");
__attribute__((noinline)) int fixture_cxx(int x)
{
	return fixture_static_beta(x) ^ 5;
}

static int ifunc_impl(void)
{
	return 7;
}

static int (*resolve_fixture_ifunc(void))(void)
{
	return ifunc_impl;
}

int fixture_ifunc(void) __attribute__((ifunc("resolve_fixture_ifunc")));

int main(void)
{
	char c;
	printf("xpu_fixture_alpha %p\n", (void *)xpu_fixture_alpha);
	printf("fixture_static_beta %p\n", (void *)fixture_static_beta);
	printf("_ZN3foo3barEi %p\n", (void *)fixture_cxx);
	/* the symbol's address is its resolver's */
	printf("fixture_ifunc %p\n", (void *)resolve_fixture_ifunc);
	printf("end\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return fixture_cxx(1) + fixture_ifunc() == 0;
}
