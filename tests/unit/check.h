/* SPDX-License-Identifier: GPL-2.0-only */
/* A small test harness: TEST(name) { ... } registers a test; CHECK* record a
 * failure with file:line and the values involved and carry on; main() runs
 * every test (or those named on the command line) and prints one line each. */
#ifndef XPU_CHECK_H
#define XPU_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct check_test {
	const char *name;
	void (*fn)(void);
};

static struct check_test check_tests[256];
static int check_ntests;
static int check_failed;

#define TEST(name)                                                               \
	static void test_##name(void);                                           \
	__attribute__((constructor)) static void reg_##name(void)                \
	{                                                                        \
		if (check_ntests == (int)(sizeof(check_tests) / sizeof(*check_tests))) \
			abort(); /* raise check_tests' size */                    \
		check_tests[check_ntests++] = (struct check_test){ #name, test_##name }; \
	}                                                                        \
	static void test_##name(void)

#define CHECK(cond)                                                              \
	do {                                                                     \
		if (!(cond)) {                                                   \
			fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
			check_failed++;                                          \
		}                                                                \
	} while (0)

#define CHECK_INT(a, op, b)                                                      \
	do {                                                                     \
		long long va_ = (long long)(a), vb_ = (long long)(b);            \
		if (!(va_ op vb_)) {                                             \
			fprintf(stderr, "  %s:%d: %s %s %s failed (%lld vs %lld)\n", __FILE__, \
				__LINE__, #a, #op, #b, va_, vb_);                 \
			check_failed++;                                          \
		}                                                                \
	} while (0)

#define CHECK_STR(a, b)                                                          \
	do {                                                                     \
		const char *sa_ = (a), *sb_ = (b);                               \
		if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0) {                     \
			fprintf(stderr, "  %s:%d: %s == %s failed (\"%s\" vs \"%s\")\n", __FILE__, \
				__LINE__, #a, #b, sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)"); \
			check_failed++;                                          \
		}                                                                \
	} while (0)

/* Fatal: stop this test (the rest of it would only crash). */
#define REQUIRE(cond)                                                            \
	do {                                                                     \
		if (!(cond)) {                                                   \
			fprintf(stderr, "  %s:%d: REQUIRE(%s) failed\n", __FILE__, __LINE__, #cond); \
			check_failed++;                                          \
			return;                                                  \
		}                                                                \
	} while (0)

int main(int argc, char **argv)
{
	int bad = 0, ran = 0;
	/* A name that matches no test is a mistake, not an empty pass. */
	for (int a = 1; a < argc; a++) {
		int known = 0;
		for (int i = 0; i < check_ntests; i++)
			known |= strcmp(argv[a], check_tests[i].name) == 0;
		if (!known) {
			fprintf(stderr, "%s: no test named %s\n", argv[0], argv[a]);
			return 2;
		}
	}
	for (int i = 0; i < check_ntests; i++) {
		int want = argc < 2;
		for (int a = 1; a < argc; a++)
			want |= strcmp(argv[a], check_tests[i].name) == 0;
		if (!want)
			continue;
		int before = check_failed;
		check_tests[i].fn();
		ran++;
		int ok = check_failed == before;
		bad += !ok;
		printf("%s %s\n", ok ? "ok  " : "FAIL", check_tests[i].name);
		fflush(stdout);
	}
	printf("%d/%d passed\n", ran - bad, ran);
	return bad || !ran ? 1 : 0;
}

#endif
