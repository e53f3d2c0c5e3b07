/* SPDX-License-Identifier: GPL-2.0-only */
/* The copy of the injection library made for a user who cannot load the
 * original (core/app/inject_lib.c), whether a library loads (core/util/loadable.c,
 * as ourselves: taking on another user needs root, which tests/bpf/gpu.sh
 * has), and a process's credentials (core/util/creds.c). */
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include "creds.h"
#include "inject_lib.h"
#include "loadable.h"

struct fixture {
	char top[64], lib[96], dir[96], copy[4200], why[600];
};

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd >= 0) {
		(void)!write(fd, text, strlen(text));
		close(fd);
	}
}

static char *read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;
	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	return buf;
}

/* A library (any bytes will do) and where copies go, not made yet. */
static int setup(struct fixture *f, const char *content)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->top, sizeof(f->top), "/tmp/xputop-libcopy.XXXXXX");
	if (!mkdtemp(f->top))
		return -1;
	snprintf(f->lib, sizeof(f->lib), "%s/libxputop_inject.so", f->top);
	snprintf(f->dir, sizeof(f->dir), "%s/run", f->top);
	write_file(f->lib, content, 0755);
	return 0;
}

static void teardown(struct fixture *f)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->top);
	(void)!system(cmd);
}

static int copy(struct fixture *f)
{
	return xpu_inject_lib_copy(f->lib, f->dir, f->copy, sizeof(f->copy), f->why, sizeof(f->why));
}

TEST(a_copy_is_the_librarys_bytes_read_only_and_ours)
{
	struct fixture f;
	struct stat st;
	char buf[64];
	REQUIRE(setup(&f, "ELF one build") == 0);
	mode_t old = umask(077);	/* whatever the umask, others must be able to load it */
	CHECK_INT(copy(&f), ==, 0);
	umask(old);
	CHECK(strncmp(f.copy, f.dir, strlen(f.dir)) == 0);
	CHECK(strstr(f.copy, "/libxputop_inject-") && strlen(strrchr(f.copy, '-')) == strlen("-0123456789abcdef.so"));
	CHECK_STR(read_file(f.copy, buf, sizeof(buf)), "ELF one build");
	REQUIRE(lstat(f.copy, &st) == 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_INT(st.st_mode & 07777, ==, 0644);
	CHECK_INT(st.st_uid, ==, geteuid());
	REQUIRE(stat(f.dir, &st) == 0);
	CHECK_INT(st.st_mode & 07777, ==, 0755);
	teardown(&f);
}

TEST(the_same_library_finds_its_copy_and_another_build_gets_its_own)
{
	struct fixture f;
	struct stat a, b;
	char first[4200], buf[64];
	REQUIRE(setup(&f, "ELF one build") == 0);
	REQUIRE(copy(&f) == 0);
	snprintf(first, sizeof(first), "%s", f.copy);
	REQUIRE(stat(first, &a) == 0);
	CHECK_INT(copy(&f), ==, 0);
	CHECK_STR(f.copy, first);
	REQUIRE(stat(f.copy, &b) == 0);
	CHECK_INT(a.st_ino, ==, b.st_ino);
	write_file(f.lib, "ELF another build", 0755);
	CHECK_INT(copy(&f), ==, 0);
	CHECK(strcmp(f.copy, first) != 0);
	CHECK_STR(read_file(f.copy, buf, sizeof(buf)), "ELF another build");
	CHECK_STR(read_file(first, buf, sizeof(buf)), "ELF one build");	/* a program may be loading it */
	teardown(&f);
}

TEST(a_symlink_in_the_copys_place_is_removed_never_followed)
{
	struct fixture f;
	char victim[128], buf[64];
	struct stat st;
	REQUIRE(setup(&f, "ELF one build") == 0);
	REQUIRE(copy(&f) == 0);
	snprintf(victim, sizeof(victim), "%s/victim", f.top);
	write_file(victim, "precious", 0644);
	unlink(f.copy);
	REQUIRE(symlink(victim, f.copy) == 0);
	CHECK_INT(copy(&f), ==, 0);
	CHECK_STR(read_file(victim, buf, sizeof(buf)), "precious");
	REQUIRE(lstat(f.copy, &st) == 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_STR(read_file(f.copy, buf, sizeof(buf)), "ELF one build");
	teardown(&f);
}

TEST(an_entry_with_other_bytes_another_mode_or_another_name_is_replaced)
{
	struct fixture f;
	char other[128], buf[64];
	struct stat st;
	REQUIRE(setup(&f, "ELF one build") == 0);
	REQUIRE(copy(&f) == 0);
	unlink(f.copy);
	write_file(f.copy, "ELF one bui1d", 0644);	/* same size, other bytes */
	CHECK_INT(copy(&f), ==, 0);
	CHECK_STR(read_file(f.copy, buf, sizeof(buf)), "ELF one build");
	chmod(f.copy, 0666);
	CHECK_INT(copy(&f), ==, 0);
	REQUIRE(stat(f.copy, &st) == 0);
	CHECK_INT(st.st_mode & 07777, ==, 0644);
	/* A second name for the copy's inode: writes through either would show. */
	snprintf(other, sizeof(other), "%s/other-name", f.top);
	REQUIRE(link(f.copy, other) == 0);
	CHECK_INT(copy(&f), ==, 0);
	REQUIRE(stat(f.copy, &st) == 0);
	CHECK_INT(st.st_nlink, ==, 1);
	teardown(&f);
}

TEST(a_directory_others_can_write_into_or_a_symlink_to_one_is_refused)
{
	struct fixture f;
	char link_dir[128];
	REQUIRE(setup(&f, "ELF one build") == 0);
	REQUIRE(mkdir(f.dir, 0755) == 0);
	chmod(f.dir, 0777);
	CHECK_INT(copy(&f), ==, -1);
	CHECK(strstr(f.why, "not a directory of root's alone") != NULL);
	chmod(f.dir, 0755);
	snprintf(link_dir, sizeof(link_dir), "%s/link", f.top);
	REQUIRE(symlink(f.dir, link_dir) == 0);
	CHECK_INT(xpu_inject_lib_copy(f.lib, link_dir, f.copy, sizeof(f.copy), f.why, sizeof(f.why)), ==, -1);
	CHECK(strncmp(f.why, link_dir, strlen(link_dir)) == 0);
	teardown(&f);
}

TEST(a_library_that_cannot_be_read_is_said_and_nothing_is_made)
{
	struct fixture f;
	struct stat st;
	REQUIRE(setup(&f, "ELF one build") == 0);
	unlink(f.lib);
	CHECK_INT(copy(&f), ==, -1);
	CHECK(strstr(f.why, "cannot read") && strstr(f.why, "No such file"));
	CHECK(stat(f.dir, &st) < 0);
	teardown(&f);
}

TEST(a_library_loads_and_what_does_not_is_named)
{
	struct xpu_creds me = { .keep = 1 };
	char why[600], text[128], exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	REQUIRE(n > 0);
	exe[n] = '\0';
	CHECK_INT(xpu_loadable(exe, 0, &me, why, sizeof(why)), ==, 0);
	snprintf(text, sizeof(text), "/tmp/xputop-notelf.%d", (int)getpid());
	write_file(text, "not a library", 0644);
	CHECK_INT(xpu_loadable(text, 0, &me, why, sizeof(why)), ==, -1);
	CHECK(strstr(why, "is not a shared library") != NULL);
	unlink(text);
	CHECK_INT(xpu_loadable(text, 0, &me, why, sizeof(why)), ==, -1);
	CHECK(strstr(why, "No such file or directory") != NULL);
	/* A prefix is left out of what is said (another process's root). */
	snprintf(exe, sizeof(exe), "/proc/self/root%s", text);
	CHECK_INT(xpu_loadable(exe, strlen("/proc/self/root"), &me, why, sizeof(why)), ==, -1);
	CHECK(strncmp(why, text, strlen(text)) == 0);
}

TEST(a_processs_credentials_are_its_own)
{
	struct xpu_creds c;
	gid_t groups[256];
	int n = getgroups(256, groups);
	REQUIRE(xpu_creds_of_pid((uint32_t)getpid(), &c) == 0);
	CHECK_INT(c.uid, ==, geteuid());
	CHECK_INT(c.gid, ==, getegid());
	CHECK_INT(c.ngroups, ==, n);
	for (int i = 0; i < n && i < c.ngroups; i++)
		CHECK_INT(c.groups[i], ==, groups[i]);
	xpu_creds_free(&c);
	CHECK_INT(xpu_creds_of_pid(0x7ffffff0, &c), ==, -1);
}
