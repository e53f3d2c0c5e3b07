/* SPDX-License-Identifier: GPL-2.0-only */
/* Finding the installation a binary belongs to (core/util/install.c). */
#include "check.h"

#include "install.h"

static const char *root_of(const char *exe_dir, const char *bindir)
{
	static char root[256];
	return xpu_install_root(exe_dir, bindir, root, sizeof(root)) == 0 ? root : NULL;
}

TEST(a_binary_in_bindir_is_the_installation_itself)
{
	CHECK_STR(root_of("/usr/local/sbin", "/usr/local/sbin"), "");
}

TEST(a_staged_binary_finds_the_root_it_was_staged_under)
{
	CHECK_STR(root_of("/tmp/stage/usr/local/sbin", "/usr/local/sbin"), "/tmp/stage");
	CHECK_STR(root_of("/tmp/stage/usr/local/sbin", "/usr/local/sbin/"), "/tmp/stage");
	CHECK_STR(root_of("/pkg/opt/x/bin", "/opt/x/bin"), "/pkg");
}

TEST(a_binary_elsewhere_belongs_to_no_installation)
{
	CHECK(root_of("/work/xputop/build", "/usr/local/sbin") == NULL);
	/* Only whole path components match. */
	CHECK(root_of("/opt/xusr/local/sbin", "usr/local/sbin") == NULL);
	CHECK(root_of("/tmp/usr/local/xsbin", "/usr/local/sbin") == NULL);
	CHECK(root_of("/sbin", "/usr/local/sbin") == NULL);
	CHECK(root_of("/usr/local/sbin", "") == NULL);
}

TEST(a_root_too_long_for_the_buffer_is_refused)
{
	char root[5];
	CHECK_INT(xpu_install_root("/tmp/stage/usr/sbin", "/usr/sbin", root, sizeof(root)), ==, -1);
	CHECK_INT(xpu_install_root("/abc/usr/sbin", "/usr/sbin", root, sizeof(root)), ==, 0);
	CHECK_STR(root, "/abc");
}
