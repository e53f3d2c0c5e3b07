/* SPDX-License-Identifier: GPL-2.0-only */
/* The symbolizer: maps parsing, ELF symbol tables (live processes, fixtures,
 * debug files, broken files), kernel symbols, perf maps and their
 * ownership rule, and process lifetimes.
 *
 * Fixture programs are built from tests/progs/sym_fixture.c (run from the
 * repository root) into a temporary directory; several tests need root, as
 * in CI.
 */
#include "check.h"

#include "dict.h"
#include "err.h"
#include "symbolize.h"
#include "addrcache.h"
#include "symtab.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdarg.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FIXTURE_SRC "tests/progs/sym_fixture.c"
/* The flags the Makefile builds tests/progs with. */
#define FIXTURE_CFLAGS "-O1 -g -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls"
#define NOBODY 65534

/* ---- helpers ---- */

static char tmp[64];

static void remove_tmp(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "  cannot remove %s\n", tmp);
}

static const char *tmpdir(void)
{
	if (!tmp[0]) {
		strcpy(tmp, "/tmp/xpu_symtest.XXXXXX");
		if (!mkdtemp(tmp)) {
			perror("mkdtemp");
			abort();
		}
		atexit(remove_tmp);
	}
	return tmp;
}

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int r = system(cmd);
	if (r != 0)
		fprintf(stderr, "  command failed: %s\n", cmd);
	return r;
}

/* Builds a fixture variant once; returns its path or NULL. */
static const char *fixture(const char *variant)
{
	static char paths[8][128];
	static const char *names[8];
	int i;
	for (i = 0; i < 8 && names[i]; i++)
		if (strcmp(names[i], variant) == 0)
			return paths[i][0] ? paths[i] : NULL;
	if (i == 8)
		return NULL;
	names[i] = variant;
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	char *p = paths[i];
	snprintf(p, sizeof(paths[i]), "%s/%s", tmpdir(), variant);
	int r;
	if (strcmp(variant, "sym_fixture") == 0)
		r = run("%s %s %s -o %s", cc, FIXTURE_CFLAGS, FIXTURE_SRC, p);
	else if (strcmp(variant, "sym_fixture_nopie") == 0)
		r = run("%s %s -no-pie %s -o %s", cc, FIXTURE_CFLAGS, FIXTURE_SRC, p);
	else if (strcmp(variant, "sym_fixture_stripped") == 0)
		r = !fixture("sym_fixture") || run("objcopy --strip-all %s %s", fixture("sym_fixture"), p);
	else if (strcmp(variant, "sym_fixture_noid") == 0)
		r = run("%s %s -Wl,--build-id=none %s -o %s", cc, FIXTURE_CFLAGS, FIXTURE_SRC, p);
	else
		r = -1;
	if (r != 0)
		p[0] = '\0';
	return p[0] ? p : NULL;
}

struct child {
	pid_t pid;
	int in;			/* its stdin: closing it lets it exit */
	int n;
	char name[8][64];
	uint64_t addr[8];
};

/* Starts a fixture and reads the "NAME ADDRESS" lines it prints. */
static int spawn(const char *path, struct child *c)
{
	int in[2], out[2];
	memset(c, 0, sizeof(*c));
	if (!path || pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -1;
	c->pid = fork();
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in = in[1];
	FILE *f = fdopen(out[0], "r");
	char line[256], name[64];
	unsigned long long a;
	while (f && fgets(line, sizeof(line), f) && strcmp(line, "end\n") != 0)
		if (c->n < 8 && sscanf(line, "%63s %llx", name, &a) == 2) {
			strcpy(c->name[c->n], name);
			c->addr[c->n++] = a;
		}
	if (f)
		fclose(f);
	return c->n ? 0 : -1;
}

static void finish(struct child *c)
{
	close(c->in);
	waitpid(c->pid, NULL, 0);
}

static uint64_t addr_of(const struct child *c, const char *name)
{
	for (int i = 0; i < c->n; i++)
		if (strcmp(c->name[i], name) == 0)
			return c->addr[i];
	return 0;
}

static const char *fname(const struct xpu_dict *d, uint32_t f)
{
	const struct xpu_frame *fr = xpu_dict_frame_get(d, f);
	return fr ? xpu_dict_str_get(d, fr->name) : "(no frame)";
}

static const char *fmodule(const struct xpu_dict *d, uint32_t f)
{
	const struct xpu_frame *fr = xpu_dict_frame_get(d, f);
	return fr ? xpu_dict_str_get(d, fr->module) : "(no frame)";
}

static int fkind(const struct xpu_dict *d, uint32_t f)
{
	const struct xpu_frame *fr = xpu_dict_frame_get(d, f);
	return fr ? (int)fr->kind : -1;
}

static uint32_t sym1(struct xpu_symbolizer *s, uint32_t pid, uint64_t addr)
{
	uint32_t f = 0;
	xpu_sym_user(s, pid, &addr, 1, &f);
	return f;
}

/* The address of a named symbol in a loaded ELF, or 0. */
static uint64_t elf_addr(const struct xpu_elf *e, const char *name)
{
	const struct xpu_symtab *t = xpu_elf_symtab(e);
	char buf[256];
	for (size_t i = 0; i < t->n; i++)
		if (xpu_elf_sym_name(e, (uint32_t)i, buf, sizeof(buf)) && strcmp(buf, name) == 0)
			return t->v[i].start;
	return 0;
}

static char lookup_buf[256];
#define LOOKUP(e, vaddr, start) xpu_elf_lookup(e, vaddr, start, lookup_buf, sizeof(lookup_buf))

static int write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	ssize_t w = write(fd, buf, len);
	close(fd);
	return w == (ssize_t)len ? 0 : -1;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;
	if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) == (size_t)n)
		*len = (size_t)n;
	else {
		free(buf);
		buf = NULL;
	}
	if (f)
		fclose(f);
	return buf;
}

/* ---- maps ---- */

static const char maps_text[] =
	"55d0c8a00000-55d0c8a02000 r--p 00000000 fd:01 1234567                    /usr/bin/cat\n"
	"55d0c8a02000-55d0c8a06000 r-xp 00002000 fd:01 1234567                    /usr/bin/cat\n"
	"7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"
	"7f0000001000-7f0000002000 r-xp 00001000 103:05 42                         /opt/my app/lib foo.so\n"
	"7f0000003000-7f0000004000 r-xp 00000000 00:01 77                          /memfd:jit (deleted)\n"
	"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";

TEST(maps_parse_normal_lines)
{
	struct xpu_maps m;
	size_t bad = 99;
	REQUIRE(xpu_maps_parse(maps_text, strlen(maps_text), &m, &bad) == 0);
	CHECK_INT(bad, ==, 0);
	REQUIRE(m.n == 7);
	CHECK(m.v[1].start == 0x55d0c8a02000ull && m.v[1].end == 0x55d0c8a06000ull);
	CHECK_INT(m.v[1].pgoff, ==, 0x2000);
	CHECK_STR(m.v[1].perms, "r-xp");
	CHECK_INT(m.v[1].dev_major, ==, 0xfd);
	CHECK_INT(m.v[1].dev_minor, ==, 1);
	CHECK_INT(m.v[1].inode, ==, 1234567);
	CHECK_STR(m.v[1].path, "/usr/bin/cat");
	CHECK_INT(m.v[3].dev_major, ==, 0x103);
	CHECK_STR(m.v[5].path, "[stack]");
	CHECK_STR(m.v[6].path, "[vsyscall]");	/* last line without a newline */
	xpu_maps_free(&m);
}

TEST(maps_parse_path_with_spaces)
{
	struct xpu_maps m;
	REQUIRE(xpu_maps_parse(maps_text, strlen(maps_text), &m, NULL) == 0);
	REQUIRE(m.n == 7);
	CHECK_STR(m.v[3].path, "/opt/my app/lib foo.so");
	CHECK_INT(m.v[3].deleted, ==, 0);
	xpu_maps_free(&m);
}

TEST(maps_parse_deleted_suffix_is_cut_and_flagged)
{
	struct xpu_maps m;
	REQUIRE(xpu_maps_parse(maps_text, strlen(maps_text), &m, NULL) == 0);
	REQUIRE(m.n == 7);
	CHECK_STR(m.v[4].path, "/memfd:jit");
	CHECK_INT(m.v[4].deleted, ==, 1);
	xpu_maps_free(&m);
}

TEST(maps_parse_line_without_path)
{
	struct xpu_maps m;
	REQUIRE(xpu_maps_parse(maps_text, strlen(maps_text), &m, NULL) == 0);
	REQUIRE(m.n == 7);
	CHECK_STR(m.v[2].path, "");
	CHECK_INT(m.v[2].inode, ==, 0);
	xpu_maps_free(&m);
}

TEST(maps_parse_counts_garbage_lines)
{
	static const char text[] =
		"hello world\n"
		"1000-2000 r-xp\n"
		"2000-1000 r-xp 00000000 00:00 0\n"		/* start after end */
		"1000-2000 rwzp 00000000 00:00 0\n"		/* bad permissions */
		"12345678901234567-2 r-xp 00000000 00:00 0\n"	/* 17 hex digits */
		"1000-2000 r-xp 00000000 00:00 12x /bin/x\n"	/* bad inode */
		"\n"
		"3000-4000 r-xp 00000000 08:01 5 /bin/ok\n";
	struct xpu_maps m;
	size_t bad = 0;
	REQUIRE(xpu_maps_parse(text, sizeof(text) - 1, &m, &bad) == 0);
	CHECK_INT(bad, ==, 6);
	REQUIRE(m.n == 1);
	CHECK_STR(m.v[0].path, "/bin/ok");
	xpu_maps_free(&m);
}

TEST(maps_find_respects_boundaries_and_sorts)
{
	static const char text[] = "5000-6000 r-xp 00000000 00:00 0 /b\n"
				   "1000-2000 r-xp 00000000 00:00 0 /a\n";
	struct xpu_maps m;
	REQUIRE(xpu_maps_parse(text, sizeof(text) - 1, &m, NULL) == 0);
	CHECK(xpu_maps_find(&m, 0xfff) == NULL);
	CHECK(xpu_maps_find(&m, 0x1000) == &m.v[0]);
	CHECK(xpu_maps_find(&m, 0x1fff) == &m.v[0]);
	CHECK(xpu_maps_find(&m, 0x2000) == NULL);
	CHECK(xpu_maps_find(&m, 0x5800) == &m.v[1]);
	CHECK_STR(m.v[0].path, "/a");
	xpu_maps_free(&m);
}

/* ---- the test's own process ---- */

__attribute__((noinline)) int xpu_test_sym_target_one(int x)
{
	return x * 7 + 3;
}

__attribute__((noinline)) int xpu_test_sym_target_two(int x)
{
	return xpu_test_sym_target_one(x) * 5;
}

extern void cxx_std_terminate(void) __asm__("_ZSt9terminatev");

static const char *self_name(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
	return strrchr(buf, '/') ? strrchr(buf, '/') + 1 : buf;
}

TEST(sym_user_names_own_functions)
{
	struct xpu_dict d;
	char exe[4096];
	uint32_t out[3];
	xpu_dict_init(&d);
	struct xpu_symbolizer *s = xpu_sym_new(&d, NULL);
	REQUIRE(s);
	/* ips[1..] are return addresses: one past the call, looked up at -1. */
	uint64_t ips[3] = { (uint64_t)(uintptr_t)xpu_test_sym_target_one + 2,
			    (uint64_t)(uintptr_t)xpu_test_sym_target_two + 1,
			    (uint64_t)(uintptr_t)xpu_test_sym_target_one + 3 };
	CHECK_INT(xpu_sym_user(s, (uint32_t)getpid(), ips, 3, out), ==, 3);
	CHECK_STR(fname(&d, out[0]), "xpu_test_sym_target_one");
	CHECK_STR(fname(&d, out[1]), "xpu_test_sym_target_two");
	CHECK_STR(fname(&d, out[2]), "xpu_test_sym_target_one");
	CHECK_INT(fkind(&d, out[0]), ==, XPU_FRAME_USER);
	CHECK_STR(fmodule(&d, out[0]), self_name(exe, sizeof(exe)));
	xpu_sym_free(s);
	xpu_dict_free(&d);
}

TEST(sym_user_warm_lookup_is_a_cache_hit)
{
	struct xpu_dict d;
	struct xpu_sym_stats st;
	xpu_dict_init(&d);
	struct xpu_symbolizer *s = xpu_sym_new(&d, NULL);
	REQUIRE(s);
	uint64_t a = (uint64_t)(uintptr_t)xpu_test_sym_target_two;
	uint32_t f1 = sym1(s, (uint32_t)getpid(), a), f2 = sym1(s, (uint32_t)getpid(), a);
	CHECK_INT(f1, ==, f2);
	xpu_sym_stats(s, &st);
	CHECK_INT(st.lookups, ==, 2);
	CHECK_INT(st.cache_hits, ==, 1);
	CHECK_INT(st.elf_loaded, ==, 1);
	CHECK_INT(st.maps_reads, ==, 1);
	xpu_sym_free(s);
	xpu_dict_free(&d);
}

TEST(sym_user_names_shared_library_functions)
{
	struct xpu_dict d;
	uint32_t out[2];
	xpu_dict_init(&d);
	struct xpu_symbolizer *s = xpu_sym_new(&d, NULL);
	REQUIRE(s);
	uint64_t ips[2] = { (uint64_t)(uintptr_t)elf_begin + 4,
			    (uint64_t)(uintptr_t)cxx_std_terminate + 1 };
	xpu_sym_user(s, (uint32_t)getpid(), ips, 2, out);
	CHECK_STR(fname(&d, out[0]), "elf_begin");
	CHECK(strncmp(fmodule(&d, out[0]), "libelf", 6) == 0);
	/* from .dynsym of libstdc++, demangled */
	CHECK_STR(fname(&d, out[1]), "std::terminate()");
	CHECK(strncmp(fmodule(&d, out[1]), "libstdc++", 9) == 0);
	xpu_sym_free(s);
	xpu_dict_free(&d);
}

TEST(sym_elf_cache_keeps_within_its_byte_budget_and_reloads_what_it_dropped)
{
	struct xpu_dict d;
	struct xpu_sym_stats st;
	uint32_t out[1];
	xpu_dict_init(&d);
	struct xpu_symbolizer *s = xpu_sym_new(&d, NULL);
	REQUIRE(s);
	xpu_sym_set_elf_budget(s, 1);	/* room for the file in use only */
	uint64_t a = (uint64_t)(uintptr_t)elf_begin + 4, b = (uint64_t)(uintptr_t)cxx_std_terminate + 1,
		 c = (uint64_t)(uintptr_t)elf_end + 4;
	xpu_sym_user(s, (uint32_t)getpid(), &a, 1, out);
	CHECK_STR(fname(&d, out[0]), "elf_begin");
	xpu_sym_user(s, (uint32_t)getpid(), &b, 1, out);	/* libstdc++ pushes libelf out */
	CHECK_STR(fname(&d, out[0]), "std::terminate()");
	xpu_sym_stats(s, &st);
	CHECK(st.elf_evicted >= 1);
	CHECK_INT(st.elf_cached, ==, 1);
	xpu_sym_user(s, (uint32_t)getpid(), &c, 1, out);	/* libelf again: read anew */
	CHECK_STR(fname(&d, out[0]), "elf_end");
	xpu_sym_stats(s, &st);
	CHECK_INT(st.elf_cached, ==, 1);
	xpu_sym_free(s);
	xpu_dict_free(&d);
}

TEST(sym_user_exec_drops_maps)
{
	struct xpu_dict d;
	struct xpu_sym_stats st;
	xpu_dict_init(&d);
	struct xpu_symbolizer *s = xpu_sym_new(&d, NULL);
	REQUIRE(s);
	uint64_t a = (uint64_t)(uintptr_t)xpu_test_sym_target_one;
	sym1(s, (uint32_t)getpid(), a);
	xpu_sym_proc_exec(s, (uint32_t)getpid());
	CHECK_STR(fname(&d, sym1(s, (uint32_t)getpid(), a)), "xpu_test_sym_target_one");
	xpu_sym_stats(s, &st);
	CHECK_INT(st.maps_reads, ==, 2);
	CHECK_INT(st.cache_hits, ==, 0);
	CHECK_INT(st.elf_loaded, ==, 1);	/* the file stays cached */
	xpu_sym_free(s);
	xpu_dict_free(&d);
}

TEST(sym_user_maps_reread_on_miss_is_rate_limited)
{
	struct xpu_dict d;
	struct xpu_sym_stats st;
	xpu_dict_init(&d);
	struct xpu_symbolizer *s = xpu_sym_new(&d, NULL);
	REQUIRE(s);
	uint32_t pid = (uint32_t)getpid();
	for (int i = 0; i < 5; i++)
		CHECK_STR(fname(&d, sym1(s, pid, 0x10)), "[unknown]");
	xpu_sym_stats(s, &st);
	CHECK_INT(st.maps_reads, ==, 1);
	usleep(300 * 1000);	/* past the re-read rate limit */
	sym1(s, pid, 0x10);
	sym1(s, pid, 0x10);
	xpu_sym_stats(s, &st);
	CHECK_INT(st.maps_reads, ==, 2);
	CHECK_INT(st.unknown, ==, 7);
	xpu_sym_free(s);
	xpu_dict_free(&d);
}

TEST(sym_user_names_vdso_functions)
{
	struct xpu_dict d;
	struct xpu_maps m;
	char err[256];
	uint64_t base = getauxval(AT_SYSINFO_EHDR), v0;
	REQUIRE(base && xpu_maps_read((uint32_t)getpid(), &m, NULL) == 0);
	const struct xpu_map *v = xpu_maps_find(&m, base);
	REQUIRE(v && strcmp(v->path, "[vdso]") == 0);
	struct xpu_elf *e = xpu_elf_load_mem((const void *)(uintptr_t)base, v->end - v->start, err,
					     sizeof(err));
	xpu_maps_free(&m);
	REQUIRE(e);
	uint64_t fn = elf_addr(e, "__vdso_clock_gettime");
	REQUIRE(fn && xpu_elf_offset_to_vaddr(e, 0, &v0) == 0);
	xpu_elf_free(e);

	xpu_dict_init(&d);
	struct xpu_symbolizer *s = xpu_sym_new(&d, NULL);
	REQUIRE(s);
	uint32_t f = sym1(s, (uint32_t)getpid(), base + (fn - v0) + 2);
	const char *name = fname(&d, f);
	CHECK(strlen(name) >= 13 && strcmp(name + strlen(name) - 13, "clock_gettime") == 0);
	CHECK_INT(fkind(&d, f), ==, XPU_FRAME_USER);
	CHECK_STR(fmodule(&d, f), "[vdso]");
	xpu_sym_free(s);
	xpu_dict_free(&d);
}

/* ---- fixture processes ---- */

TEST(sym_user_names_fixture_process_functions)
{
	struct xpu_dict d;
	struct child c;
	xpu_dict_init(&d);
	struct xpu_symbolizer *s = xpu_sym_new(&d, NULL);
	REQUIRE(s);
	REQUIRE(spawn(fixture("sym_fixture"), &c) == 0);
	uint32_t pid = (uint32_t)c.pid;
	CHECK_STR(fname(&d, sym1(s, pid, addr_of(&c, "xpu_fixture_alpha"))), "xpu_fixture_alpha");
	/* static: only in .symtab */
	CHECK_STR(fname(&d, sym1(s, pid, addr_of(&c, "fixture_static_beta") + 1)),
		  "fixture_static_beta");
	CHECK_STR(fname(&d, sym1(s, pid, addr_of(&c, "_ZN3foo3barEi"))), "foo::bar(int)");
	/* the indirect function outranks its (local) resolver at one address */
	CHECK_STR(fname(&d, sym1(s, pid, addr_of(&c, "fixture_ifunc"))), "fixture_ifunc");
	CHECK_STR(fmodule(&d, sym1(s, pid, addr_of(&c, "xpu_fixture_alpha"))), "sym_fixture");
	finish(&c);
	xpu_sym_free(s);
	xpu_dict_free(&d);
}

TEST(sym_user_return_address_at_function_start_names_caller)
{
	struct xpu_dict d;
	struct child c;
	char err[256];
	uint32_t out[2];
	struct xpu_elf *e = xpu_elf_load(fixture("sym_fixture"), err, sizeof(err));
	REQUIRE(e);
	const struct xpu_symtab *t = xpu_elf_symtab(e);
	uint32_t a = xpu_symtab_find(t, elf_addr(e, "xpu_fixture_alpha"));
	REQUIRE(a != UINT32_MAX);
	/* built unaligned at -O1: beta starts where alpha ends */
	REQUIRE(t->v[a].start + t->v[a].size == elf_addr(e, "fixture_static_beta"));
	xpu_elf_free(e);

	xpu_dict_init(&d);
	struct xpu_symbolizer *s = xpu_sym_new(&d, NULL);
	REQUIRE(s);
	REQUIRE(spawn(fixture("sym_fixture"), &c) == 0);
	uint64_t beta = addr_of(&c, "fixture_static_beta");
	uint64_t ips[2] = { beta, beta };
	xpu_sym_user(s, (uint32_t)c.pid, ips, 2, out);
	CHECK_STR(fname(&d, out[0]), "fixture_static_beta");
	CHECK_STR(fname(&d, out[1]), "xpu_fixture_alpha");
	finish(&c);
	xpu_sym_free(s);
	xpu_dict_free(&d);
}

TEST(sym_user_names_non_pie_functions)
{
	struct xpu_dict d;
	struct child c;
	xpu_dict_init(&d);
	struct xpu_symbolizer *s = xpu_sym_new(&d, NULL);
	REQUIRE(s);
	REQUIRE(spawn(fixture("sym_fixture_nopie"), &c) == 0);
	uint64_t a = addr_of(&c, "xpu_fixture_alpha");
	CHECK(a < 0x10000000);	/* really linked at a fixed address */
	CHECK_STR(fname(&d, sym1(s, (uint32_t)c.pid, a)), "xpu_fixture_alpha");
	CHECK_STR(fname(&d, sym1(s, (uint32_t)c.pid, addr_of(&c, "_ZN3foo3barEi") + 3)),
		  "foo::bar(int)");
	finish(&c);
	xpu_sym_free(s);
	xpu_dict_free(&d);
}

TEST(sym_user_unknown_frame_carries_module)
{
	struct xpu_dict d;
	struct child c;
	char text[128];
	xpu_dict_init(&d);
	struct xpu_symbolizer *s = xpu_sym_new(&d, NULL);
	REQUIRE(s);
	/* stripped: no .symtab, and a PIE exports no functions in .dynsym */
	REQUIRE(spawn(fixture("sym_fixture_stripped"), &c) == 0);
	uint32_t f = sym1(s, (uint32_t)c.pid, addr_of(&c, "xpu_fixture_alpha"));
	CHECK_INT(fkind(&d, f), ==, XPU_FRAME_UNKNOWN);
	CHECK_STR(fname(&d, f), "[unknown]");
	CHECK_STR(fmodule(&d, f), "sym_fixture_stripped");
	xpu_frame_text(&d, f, text, sizeof(text));
	CHECK_STR(text, "[unknown] (sym_fixture_stripped)");
	finish(&c);
	xpu_sym_free(s);
	xpu_dict_free(&d);
}

TEST(sym_user_reloads_a_file_rewritten_in_place)
{
	struct xpu_dict d;
	struct xpu_sym_stats st;
	struct child c;
	struct stat before, after;
	char path[256];
	size_t len1, len2;
	char *pie = read_file(fixture("sym_fixture"), &len1);
	char *nopie = read_file(fixture("sym_fixture_nopie"), &len2);
	REQUIRE(pie && nopie);
	snprintf(path, sizeof(path), "%s/inplace", tmpdir());
	REQUIRE(write_file(path, pie, len1) == 0 && chmod(path, 0755) == 0 && stat(path, &before) == 0);
	xpu_dict_init(&d);
	struct xpu_symbolizer *s = xpu_sym_new(&d, NULL);
	REQUIRE(s);
	REQUIRE(spawn(path, &c) == 0);
	CHECK_STR(fname(&d, sym1(s, (uint32_t)c.pid, addr_of(&c, "_ZN3foo3barEi"))), "foo::bar(int)");
	finish(&c);
	/* same inode, new contents: as when a freed inode goes to a rebuilt file */
	usleep(10 * 1000);	/* file times tick by jiffies: let them move */
	REQUIRE(write_file(path, nopie, len2) == 0 && stat(path, &after) == 0);
	REQUIRE(after.st_ino == before.st_ino);
	REQUIRE(spawn(path, &c) == 0);
	CHECK_STR(fname(&d, sym1(s, (uint32_t)c.pid, addr_of(&c, "_ZN3foo3barEi"))), "foo::bar(int)");
	CHECK_STR(fname(&d, sym1(s, (uint32_t)c.pid, addr_of(&c, "xpu_fixture_alpha"))),
		  "xpu_fixture_alpha");
	finish(&c);
	xpu_sym_stats(s, &st);
	CHECK_INT(st.elf_loaded, ==, 2);
	xpu_sym_free(s);
	xpu_dict_free(&d);
	free(pie);
	free(nopie);
}

TEST(sym_user_exited_process_still_resolves)
{
	struct xpu_dict d;
	struct child c;
	struct xpu_sym_stats st;
	xpu_dict_init(&d);
	struct xpu_symbolizer *s = xpu_sym_new(&d, NULL);
	REQUIRE(s);
	REQUIRE(spawn(fixture("sym_fixture"), &c) == 0);
	uint32_t pid = (uint32_t)c.pid;
	CHECK_STR(fname(&d, sym1(s, pid, addr_of(&c, "xpu_fixture_alpha"))), "xpu_fixture_alpha");
	finish(&c);
	xpu_sym_proc_exit(s, pid);
	/* cached, and not yet looked up: maps and ELF are kept */
	CHECK_STR(fname(&d, sym1(s, pid, addr_of(&c, "xpu_fixture_alpha"))), "xpu_fixture_alpha");
	CHECK_STR(fname(&d, sym1(s, pid, addr_of(&c, "_ZN3foo3barEi"))), "foo::bar(int)");
	xpu_sym_stats(s, &st);
	CHECK_INT(st.procs_dead, ==, 1);
	CHECK_INT(st.maps_reads, ==, 1);
	xpu_sym_free(s);
	xpu_dict_free(&d);
}

TEST(sym_user_process_gone_before_maps_read_is_unknown_quietly)
{
	struct xpu_dict d;
	struct xpu_sym_stats st;
	xpu_dict_init(&d);
	struct xpu_symbolizer *s = xpu_sym_new(&d, NULL);
	REQUIRE(s);
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	unsigned warns = xpu_log_count(XPU_LOG_WARN) + xpu_log_count(XPU_LOG_ERR);
	uint64_t ips[3] = { 0x401000, 0x7f0000001234, 0x55d0c8a02000 };
	uint32_t out[3];
	xpu_sym_user(s, (uint32_t)pid, ips, 3, out);
	xpu_sym_user(s, (uint32_t)pid, ips, 3, out);
	for (int i = 0; i < 3; i++) {
		CHECK_INT(fkind(&d, out[i]), ==, XPU_FRAME_UNKNOWN);
		CHECK_INT(xpu_dict_frame_get(&d, out[i])->module, ==, 0);
	}
	CHECK_INT(xpu_log_count(XPU_LOG_WARN) + xpu_log_count(XPU_LOG_ERR), ==, warns);
	xpu_sym_stats(s, &st);
	CHECK_INT(st.maps_missing, ==, 1);
	CHECK_INT(st.maps_reads, ==, 1);
	CHECK_INT(st.unknown, ==, 6);
	xpu_sym_free(s);
	xpu_dict_free(&d);
}

TEST(sym_dead_processes_are_bounded)
{
	struct xpu_dict d;
	struct xpu_sym_stats st;
	xpu_dict_init(&d);
	struct xpu_symbolizer *s = xpu_sym_new(&d, NULL);
	REQUIRE(s);
	/* pids far above any in use: each is "gone" at once */
	for (uint32_t pid = 4100000; pid < 4100000 + 2 * XPU_SYM_DEAD_MAX; pid++) {
		sym1(s, pid, 0x1000);
		xpu_sym_proc_exit(s, pid);
	}
	xpu_sym_stats(s, &st);
	CHECK_INT(st.procs_dead, ==, XPU_SYM_DEAD_MAX);
	CHECK_INT(st.procs, ==, XPU_SYM_DEAD_MAX);
	xpu_sym_free(s);
	xpu_dict_free(&d);
}

/* ---- ELF files ---- */

TEST(elf_fixture_symbols_through_offsets)
{
	struct child c;
	struct xpu_maps m;
	char err[256] = "";
	size_t idlen;
	struct xpu_elf *e = xpu_elf_load(fixture("sym_fixture"), err, sizeof(err));
	REQUIRE(e);
	CHECK(xpu_elf_nsyms(e) >= 4);
	CHECK(xpu_elf_build_id(e, &idlen) != NULL);
	CHECK_INT(idlen, ==, 20);
	REQUIRE(spawn(fixture("sym_fixture"), &c) == 0);
	REQUIRE(xpu_maps_read((uint32_t)c.pid, &m, NULL) == 0);
	static const char *names[] = { "xpu_fixture_alpha", "fixture_static_beta", "_ZN3foo3barEi" };
	for (int i = 0; i < 3; i++) {
		uint64_t addr = addr_of(&c, names[i]), vaddr = 0, start = 0;
		const struct xpu_map *mp = xpu_maps_find(&m, addr);
		REQUIRE(mp);
		CHECK_INT(xpu_elf_offset_to_vaddr(e, addr - mp->start + mp->pgoff, &vaddr), ==, 0);
		CHECK_STR(LOOKUP(e, vaddr, &start), names[i]);
		CHECK_INT(start, ==, vaddr);
	}
	CHECK_INT(xpu_elf_offset_to_vaddr(e, 1ull << 40, &(uint64_t){ 0 }), ==, -1);
	xpu_maps_free(&m);
	finish(&c);
	xpu_elf_free(e);
}

TEST(elf_debug_file_found_by_build_id)
{
	char err[256], dbg[512], cmd_dir[512];
	size_t idlen;
	struct xpu_elf *full = xpu_elf_load(fixture("sym_fixture"), err, sizeof(err));
	const char *stripped = fixture("sym_fixture_stripped");
	REQUIRE(full && stripped);
	const uint8_t *id = xpu_elf_build_id(full, &idlen);
	REQUIRE(id && idlen == 20);
	snprintf(cmd_dir, sizeof(cmd_dir), "%s/debug/.build-id/%02x", tmpdir(), id[0]);
	int n = snprintf(dbg, sizeof(dbg), "%s/", cmd_dir);
	for (size_t i = 1; i < idlen; i++)
		n += snprintf(dbg + n, sizeof(dbg) - (size_t)n, "%02x", id[i]);
	snprintf(dbg + n, sizeof(dbg) - (size_t)n, ".debug");
	REQUIRE(run("mkdir -p %s && objcopy --only-keep-debug %s %s", cmd_dir,
		    fixture("sym_fixture"), dbg) == 0);

	struct xpu_elf *e = xpu_elf_load(stripped, err, sizeof(err));
	REQUIRE(e);
	CHECK_INT(xpu_elf_nsyms(e), ==, 0);	/* no debug directory yet */
	xpu_elf_free(e);

	char dir[256];
	snprintf(dir, sizeof(dir), "%s/debug", tmpdir());
	REQUIRE(xpu_elf_set_debug_dir(dir) == 0);
	e = xpu_elf_load(stripped, err, sizeof(err));
	xpu_elf_set_debug_dir("/usr/lib/debug");
	REQUIRE(e);
	uint64_t beta = elf_addr(full, "fixture_static_beta");
	REQUIRE(beta);
	CHECK_STR(LOOKUP(e, beta + 2, NULL), "fixture_static_beta");
	xpu_elf_free(e);
	xpu_elf_free(full);
}

TEST(elf_debug_file_found_by_debuglink_and_crc)
{
	char err[256], path[512], dir[512];
	const char *noid = fixture("sym_fixture_noid");
	REQUIRE(noid);
	snprintf(dir, sizeof(dir), "%s/debug2%s", tmpdir(), tmpdir());
	snprintf(path, sizeof(path), "%s/linked", tmpdir());
	REQUIRE(run("mkdir -p %s && cd %s && objcopy --only-keep-debug %s linked.dbg && "
		    "objcopy --strip-all --add-gnu-debuglink=linked.dbg %s %s && mv linked.dbg %s/",
		    dir, tmpdir(), noid, noid, path, dir) == 0);
	struct xpu_elf *full = xpu_elf_load(noid, err, sizeof(err));
	REQUIRE(full);
	size_t idlen;
	CHECK(xpu_elf_build_id(full, &idlen) == NULL);
	uint64_t beta = elf_addr(full, "fixture_static_beta");

	snprintf(err, sizeof(err), "%s/debug2", tmpdir());
	REQUIRE(xpu_elf_set_debug_dir(err) == 0);
	struct xpu_elf *e = xpu_elf_load(path, err, sizeof(err));
	CHECK(e && LOOKUP(e, beta, NULL) && strcmp(LOOKUP(e, beta, NULL), "fixture_static_beta") == 0);
	xpu_elf_free(e);
	/* a debug file whose CRC does not match is someone else's */
	REQUIRE(run("printf x >> %s/linked.dbg", dir) == 0);
	e = xpu_elf_load(path, err, sizeof(err));
	CHECK(e && xpu_elf_nsyms(e) == 0);
	xpu_elf_free(e);
	xpu_elf_set_debug_dir("/usr/lib/debug");
	xpu_elf_free(full);
}

TEST(elf_not_an_elf_fails_with_reason)
{
	char err[256] = "", path[256];
	snprintf(path, sizeof(path), "%s/text", tmpdir());
	REQUIRE(write_file(path, "hello, world\n", 13) == 0);
	CHECK(xpu_elf_load(path, err, sizeof(err)) == NULL);
	CHECK_STR(err, "not an ELF file");
	snprintf(path, sizeof(path), "%s/missing", tmpdir());
	CHECK(xpu_elf_load(path, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "No such file") != NULL);
}

TEST(elf_truncated_copies_fail_cleanly)
{
	char err[256], path[256];
	size_t len;
	char *buf = read_file(fixture("sym_fixture"), &len);
	REQUIRE(buf);
	snprintf(path, sizeof(path), "%s/truncated", tmpdir());
	size_t cuts[] = { 0, 1, 16, 63, 64, 200, len / 4, len / 2, len - 700, len - 64, len - 1 };
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		REQUIRE(write_file(path, buf, cuts[i]) == 0);
		err[0] = '\0';
		struct xpu_elf *e = xpu_elf_load(path, err, sizeof(err));
		if (e)
			fprintf(stderr, "  cut at %zu of %zu loaded\n", cuts[i], len);
		CHECK(e == NULL);
		CHECK(err[0] != '\0');
		xpu_elf_free(e);
	}
	free(buf);
}

/* Points the .symtab section header past the end of the file. */
static int corrupt_symtab_offset(char *buf, size_t len)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	if (len < sizeof(*eh) || eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > len)
		return -1;
	for (int i = 0; i < eh->e_shnum; i++) {
		Elf64_Shdr *sh = (Elf64_Shdr *)(buf + eh->e_shoff) + i;
		if (sh->sh_type == SHT_SYMTAB) {
			sh->sh_offset = len + 4096;
			return 0;
		}
	}
	return -1;
}

TEST(elf_corrupted_copies_fail_cleanly)
{
	char err[256], path[256];
	size_t len;
	char *buf = read_file(fixture("sym_fixture"), &len);
	REQUIRE(buf);
	char *copy = malloc(len);
	REQUIRE(copy);
	snprintf(path, sizeof(path), "%s/corrupt", tmpdir());

	memcpy(copy, buf, len);
	REQUIRE(corrupt_symtab_offset(copy, len) == 0);
	REQUIRE(write_file(path, copy, len) == 0);
	err[0] = '\0';
	CHECK(xpu_elf_load(path, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "symbol table") != NULL);

	/* Random damage to the headers: either loads or fails with a reason. */
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	srand(1234);
	int failed = 0;
	for (int round = 0; round < 300; round++) {
		memcpy(copy, buf, len);
		for (int k = 0; k < 8; k++) {
			size_t at = rand() % 2 ? (size_t)rand() % 128 :
						 eh->e_shoff + (size_t)rand() % (len - eh->e_shoff);
			copy[at] = (char)rand();
		}
		REQUIRE(write_file(path, copy, len) == 0);
		err[0] = '\0';
		struct xpu_elf *e = xpu_elf_load(path, err, sizeof(err));
		if (e) {
			LOOKUP(e, 0x1179, NULL);
			xpu_elf_free(e);
		} else {
			failed++;
			CHECK(err[0] != '\0');
		}
	}
	CHECK(failed > 0);
	free(copy);
	free(buf);
}

/* ---- symbol tables ---- */

TEST(symtab_gap_after_sized_symbol_is_unknown)
{
	struct xpu_symtab t;
	xpu_symtab_init(&t);
	CHECK(xpu_symtab_add(&t, 0x2000, 0x10, "two", 3, 0, 0) == 0);
	CHECK(xpu_symtab_add(&t, 0x1000, 0x10, "one", 3, 0, 0) == 0);
	CHECK(xpu_symtab_add(&t, 0x3000, 0, "unsized", 7, 0, 0) == 0);
	xpu_symtab_finish(&t);
	CHECK_INT(xpu_symtab_find(&t, 0xfff), ==, UINT32_MAX);
	CHECK_STR(xpu_symtab_name(&t, xpu_symtab_find(&t, 0x100f)), "one");
	CHECK_INT(xpu_symtab_find(&t, 0x1010), ==, UINT32_MAX);
	CHECK_STR(xpu_symtab_name(&t, xpu_symtab_find(&t, 0x2000)), "two");
	CHECK_STR(xpu_symtab_name(&t, xpu_symtab_find(&t, 0x9000)), "unsized");
	xpu_symtab_free(&t);
}

TEST(symtab_aliases_keep_the_best_name)
{
	struct xpu_symtab t;
	xpu_symtab_init(&t);
	const char *names[] = { "__libc_malloc", "malloc", "__malloc" };
	for (int i = 0; i < 3; i++)
		xpu_symtab_add(&t, 0x1000, 8, names[i], strlen(names[i]), 0,
			       xpu_symtab_name_rank(names[i], strlen(names[i]), 1));
	xpu_symtab_add(&t, 0x2000, 8, "local_first", 11, 0, xpu_symtab_name_rank("local_first", 11, 0));
	xpu_symtab_add(&t, 0x2000, 8, "global_wins", 11, 0, xpu_symtab_name_rank("global_wins", 11, 1));
	xpu_symtab_finish(&t);
	CHECK_INT(t.n, ==, 2);
	CHECK_STR(xpu_symtab_name(&t, xpu_symtab_find(&t, 0x1004)), "malloc");
	CHECK_STR(xpu_symtab_name(&t, xpu_symtab_find(&t, 0x2004)), "global_wins");
	xpu_symtab_free(&t);
}

/* ---- text from outside ---- */

/* Random lines built from the characters the formats use: every parser must
 * stay in its buffer (run under the sanitizers) and keep what it accepts sane. */
TEST(text_parsers_survive_random_input)
{
	static const char alphabet[] = "0123456789abcdefx-: \t\n[]/rwxsp()delt";
	char buf[512];
	srand(99);
	for (int round = 0; round < 3000; round++) {
		size_t len = (size_t)rand() % sizeof(buf), bad;
		for (size_t i = 0; i < len; i++)
			buf[i] = rand() % 50 ? alphabet[rand() % (sizeof(alphabet) - 1)] : (char)rand();
		struct xpu_maps m;
		if (xpu_maps_parse(buf, len, &m, &bad) == 0) {
			for (size_t i = 0; i < m.n; i++)
				CHECK(m.v[i].start < m.v[i].end && (i == 0 || m.v[i - 1].start <= m.v[i].start));
			xpu_maps_free(&m);
		}
		struct xpu_perfmap *pm = xpu_perfmap_parse(buf, len, &bad);
		CHECK(pm != NULL);
		if (pm)
			xpu_perfmap_lookup(pm, 0x1234);
		xpu_perfmap_free(pm);
		struct xpu_kallsyms *k = xpu_kallsyms_parse(buf, len, &bad);
		const char *mod;
		CHECK(k != NULL);
		if (k)
			xpu_kallsyms_lookup(k, 0x1234, &mod);
		xpu_kallsyms_free(k);
	}
}

/* ---- address cache ---- */

TEST(addrcache_evicts_oldest_beyond_its_bound)
{
	struct xpu_addrcache c;
	xpu_addrcache_init(&c, 4);
	for (uint64_t a = 1; a <= 6; a++)
		xpu_addrcache_put(&c, a * 0x1000, (uint32_t)a + 100);
	CHECK_INT(xpu_addrcache_get(&c, 0x1000), ==, 0);
	CHECK_INT(xpu_addrcache_get(&c, 0x2000), ==, 0);
	for (uint64_t a = 3; a <= 6; a++)
		CHECK_INT(xpu_addrcache_get(&c, a * 0x1000), ==, a + 100);
	CHECK_INT(c.n, ==, 4);
	xpu_addrcache_clear(&c);
	CHECK_INT(xpu_addrcache_get(&c, 0x6000), ==, 0);
}

/* ---- kernel ---- */

static uint64_t kallsyms_addr(const char *want)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], type, name[256];
	unsigned long long a, found = 0;
	while (f && !found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 && strcmp(name, want) == 0)
			found = a;
	if (f)
		fclose(f);
	return found;
}

TEST(sym_kernel_names_a_real_kallsyms_address)
{
	struct xpu_dict d;
	uint32_t out[2];
	xpu_dict_init(&d);
	struct xpu_symbolizer *s = xpu_sym_new(&d, NULL);
	REQUIRE(s);
	uint64_t a = kallsyms_addr("vfs_read");
	REQUIRE(a);	/* needs root: addresses read 0 otherwise */
	uint64_t ips[2] = { a + 4, a + 1 };
	xpu_sym_kernel(s, ips, 2, out);
	CHECK_STR(fname(&d, out[0]), "vfs_read");
	CHECK_INT(fkind(&d, out[0]), ==, XPU_FRAME_KERNEL);
	CHECK_INT(xpu_dict_frame_get(&d, out[0])->module, ==, 0);
	CHECK_INT(out[1], ==, out[0]);
	/* a return address at the start belongs to the function before */
	ips[1] = a;
	xpu_sym_kernel(s, ips, 2, out);
	CHECK(strcmp(fname(&d, out[1]), "vfs_read") != 0);
	/* below the first kernel symbol */
	uint64_t low = 0x1000;
	xpu_sym_kernel(s, &low, 1, out);
	CHECK_STR(fname(&d, out[0]), "[unknown]");
	CHECK_INT(fkind(&d, out[0]), ==, XPU_FRAME_KERNEL);
	xpu_sym_free(s);
	xpu_dict_free(&d);
}

TEST(kallsyms_parse_modules_and_bad_lines)
{
	static const char text[] = "ffffffff81000000 T _stext\n"
				   "ffffffff81000000 T _text\n"
				   "ffffffff81001000 t helper\n"
				   "ffffffff81002000 D some_data\n"
				   "ffffffffc0001000 t mod_fn\t[mymod]\n"
				   "ffffffffc0002000 T other_fn\t[other]\n"
				   "garbage\n"
				   "ffffffffc0003000 t\n"
				   "zzzz T x\n"
				   "ffffffffc0004000 t bad_mod\t[unterminated\n";
	size_t bad = 0;
	const char *mod;
	struct xpu_kallsyms *k = xpu_kallsyms_parse(text, sizeof(text) - 1, &bad);
	REQUIRE(k);
	CHECK_INT(bad, ==, 4);
	CHECK_INT(xpu_kallsyms_hidden(k), ==, 0);
	CHECK_INT(xpu_kallsyms_nsyms(k), ==, 4);
	CHECK_STR(xpu_kallsyms_lookup(k, 0xffffffff81000010ull, &mod), "_text");
	CHECK(mod == NULL);
	CHECK_STR(xpu_kallsyms_lookup(k, 0xffffffff81002010ull, &mod), "helper");
	CHECK_STR(xpu_kallsyms_lookup(k, 0xffffffffc0001004ull, &mod), "mod_fn");
	CHECK_STR(mod, "mymod");
	CHECK_STR(xpu_kallsyms_lookup(k, 0xffffffffc0002004ull, &mod), "other_fn");
	CHECK_STR(mod, "other");
	CHECK(xpu_kallsyms_lookup(k, 0xffffffff80000000ull, &mod) == NULL);
	xpu_kallsyms_free(k);
}

TEST(kallsyms_all_zero_addresses_are_hidden)
{
	static const char text[] = "0000000000000000 T _stext\n"
				   "0000000000000000 t helper\n"
				   "0000000000000000 t mod_fn\t[mymod]\n";
	const char *mod;
	struct xpu_kallsyms *k = xpu_kallsyms_parse(text, sizeof(text) - 1, NULL);
	REQUIRE(k);
	CHECK_INT(xpu_kallsyms_hidden(k), ==, 1);
	CHECK_INT(xpu_kallsyms_nsyms(k), ==, 0);
	CHECK(xpu_kallsyms_lookup(k, 0, &mod) == NULL);
	xpu_kallsyms_free(k);
}

/* ---- perf maps ---- */

TEST(perfmap_parse_good_and_bad_lines)
{
	static const char text[] = "1000 100 jit_one\n"
				   "0x2000 10 jit two with spaces\n"
				   "3000 0 zero_size\n"
				   "nothex 10 bad\n"
				   "4000 20\n"
				   "5000 ffffffffffffffff overflow\n"
				   "1000 100 jit_one_again\n"
				   "\n"
				   "6000\t8\tjit_tab\r\n"
				   "7000 10 last_line_without_newline";
	size_t bad = 0;
	struct xpu_perfmap *m = xpu_perfmap_parse(text, sizeof(text) - 1, &bad);
	REQUIRE(m);
	CHECK_INT(bad, ==, 4);
	CHECK_INT(xpu_perfmap_nsyms(m), ==, 4);
	CHECK_STR(xpu_perfmap_lookup(m, 0x1050), "jit_one_again");	/* the later line wins */
	CHECK(xpu_perfmap_lookup(m, 0x1100) == NULL);
	CHECK(xpu_perfmap_lookup(m, 0xfff) == NULL);
	CHECK_STR(xpu_perfmap_lookup(m, 0x2005), "jit two with spaces");
	CHECK_STR(xpu_perfmap_lookup(m, 0x6007), "jit_tab");
	CHECK(xpu_perfmap_lookup(m, 0x6008) == NULL);
	CHECK_STR(xpu_perfmap_lookup(m, 0x700f), "last_line_without_newline");
	xpu_perfmap_free(m);
}

/* A child running as `nobody` with a page of anonymous executable memory. */
struct jit_child {
	pid_t pid;
	int hold;		/* closing it lets the child exit */
	uint64_t code;
	char map[64];
};

static int start_jit_child(struct jit_child *j)
{
	int p[2];
	void *code = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED || pipe(p))
		return -1;
	j->code = (uint64_t)(uintptr_t)code;
	j->pid = fork();
	if (j->pid == 0) {
		char c;
		close(p[1]);
		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(1);
		while (read(p[0], &c, 1) > 0)
			;
		_exit(0);
	}
	munmap(code, 4096);
	close(p[0]);
	j->hold = p[1];
	snprintf(j->map, sizeof(j->map), "/tmp/perf-%d.map", j->pid);
	/* wait until the child runs as nobody */
	for (int i = 0; i < 1000; i++) {
		char path[64], line[256];
		snprintf(path, sizeof(path), "/proc/%d/status", j->pid);
		FILE *f = fopen(path, "r");
		int done = 0;
		while (f && fgets(line, sizeof(line), f))
			done |= strncmp(line, "Uid:\t65534\t65534", 16) == 0;
		if (f)
			fclose(f);
		if (done)
			return 0;
		usleep(1000);
	}
	return -1;
}

static void stop_jit_child(struct jit_child *j)
{
	unlink(j->map);
	close(j->hold);
	waitpid(j->pid, NULL, 0);
}

TEST(perfmap_used_only_when_owned_by_the_process_user)
{
	struct xpu_dict d;
	struct xpu_sym_stats st;
	struct jit_child j;
	char line[128];
	REQUIRE(geteuid() == 0);
	xpu_dict_init(&d);
	struct xpu_symbolizer *s = xpu_sym_new(&d, NULL);
	REQUIRE(s);
	REQUIRE(start_jit_child(&j) == 0);
	/* one line for the child's anonymous code, one for an unmapped address */
	int n = snprintf(line, sizeof(line), "%llx 40 jitted_function\n10000 100 unmapped_code\n",
			 (unsigned long long)j.code);
	REQUIRE(write_file(j.map, line, (size_t)n) == 0);	/* owned by root */

	uint32_t f = sym1(s, (uint32_t)j.pid, j.code + 8);
	CHECK_INT(fkind(&d, f), ==, XPU_FRAME_UNKNOWN);
	CHECK_STR(fname(&d, f), "[unknown]");
	xpu_sym_stats(s, &st);
	CHECK_INT(st.perfmap_rejected, ==, 1);
	CHECK_INT(st.perfmap_loaded, ==, 0);

	REQUIRE(chown(j.map, NOBODY, NOBODY) == 0);
	usleep(300 * 1000);	/* past the re-read rate limit */
	f = sym1(s, (uint32_t)j.pid, j.code + 8);
	CHECK_INT(fkind(&d, f), ==, XPU_FRAME_JIT);
	CHECK_STR(fname(&d, f), "jitted_function");
	f = sym1(s, (uint32_t)j.pid, 0x10010);
	CHECK_INT(fkind(&d, f), ==, XPU_FRAME_JIT);
	CHECK_STR(fname(&d, f), "unmapped_code");
	xpu_sym_stats(s, &st);
	CHECK_INT(st.perfmap_loaded, ==, 1);
	CHECK_INT(st.perfmap_rejected, ==, 1);
	stop_jit_child(&j);
	xpu_sym_free(s);
	xpu_dict_free(&d);
}

TEST(perfmap_symlink_is_not_followed)
{
	struct jit_child j;
	struct stat st;
	char target[256], line[128];
	REQUIRE(geteuid() == 0);
	REQUIRE(start_jit_child(&j) == 0);
	snprintf(target, sizeof(target), "%s/planted.map", tmpdir());
	int n = snprintf(line, sizeof(line), "%llx 40 planted\n", (unsigned long long)j.code);
	REQUIRE(write_file(target, line, (size_t)n) == 0);
	REQUIRE(chown(target, NOBODY, NOBODY) == 0);
	REQUIRE(symlink(target, j.map) == 0);
	CHECK_INT(xpu_perfmap_open((uint32_t)j.pid, &st), ==, -EINVAL);
	unlink(j.map);
	REQUIRE(rename(target, j.map) == 0);
	int fd = xpu_perfmap_open((uint32_t)j.pid, &st);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	stop_jit_child(&j);
}
