/* SPDX-License-Identifier: GPL-2.0-only */
/* DWARF unwinding of a captured stack through code without frame pointers. */
#include "check.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dict.h"
#include "symbolize.h"
#include "unwind_dwarf.h"

#define NOFP __attribute__((noinline, optimize("omit-frame-pointer"), optimize("no-optimize-sibling-calls")))

static uint64_t regs[XPU_UNWIND_NREGS];
static uint8_t stack_copy[64 << 10];
static size_t stack_len;
static volatile unsigned sink;	/* wraps: the pads' other bytes are whatever the stack held */

/* Copies raw stack memory as the BPF program does: byte by byte, outside the
 * sanitizer's view (the stack holds its redzones). */
__attribute__((no_sanitize_address, noinline)) static void copy_raw(uint8_t *dst, const uint8_t *src,
								     size_t n)
{
	for (size_t i = 0; i < n; i++)
		((volatile uint8_t *)dst)[i] = src[i];
}

/* Takes the registers and a copy of the stack at this point, as the BPF
 * program does at a uprobe. */
NOFP void unwind_capture_here(void)
{
	uint64_t sp, bp, ip, bx, r12, r13, r14, r15;
	__asm__ volatile("mov %%rsp, %0\n\tmov %%rbp, %1\n\tlea 0(%%rip), %2\n\t"
			 "mov %%rbx, %3\n\tmov %%r12, %4\n\tmov %%r13, %5\n\t"
			 "mov %%r14, %6\n\tmov %%r15, %7"
			 : "=m"(sp), "=m"(bp), "=r"(ip), "=m"(bx), "=m"(r12), "=m"(r13), "=m"(r14), "=m"(r15));
	regs[3] = bx;
	regs[6] = bp;
	regs[7] = sp;
	regs[12] = r12;
	regs[13] = r13;
	regs[14] = r14;
	regs[15] = r15;
	regs[16] = ip;
	pthread_attr_t a;
	void *lo;
	size_t size;
	pthread_getattr_np(pthread_self(), &a);
	pthread_attr_getstack(&a, &lo, &size);
	pthread_attr_destroy(&a);
	stack_len = (uintptr_t)lo + size - sp;
	if (stack_len > sizeof(stack_copy))
		stack_len = sizeof(stack_copy);
	copy_raw(stack_copy, (const uint8_t *)sp, stack_len);
}

NOFP void unwind_level_c(int n)
{
	volatile char pad[200];
	pad[n % 200] = (char)n;
	unwind_capture_here();
	sink += (unsigned char)pad[3];
}

NOFP void unwind_level_b(int n)
{
	volatile long pad[40];
	pad[n % 40] = n;
	unwind_level_c(n + 1);
	sink += (unsigned long)pad[1];
}

NOFP void unwind_level_a(int n)
{
	unwind_level_b(n + 1);
	sink++;
}

static int position(struct xpu_dict *d, const uint32_t *frames, int n, const char *name)
{
	for (int i = 0; i < n; i++) {
		const struct xpu_frame *f = xpu_dict_frame_get(d, frames[i]);
		if (f && strcmp(xpu_dict_str_get(d, f->name), name) == 0)
			return i;
	}
	return -1;
}

TEST(unwinds_through_functions_without_frame_pointers)
{
	uint64_t ips[128];
	uint32_t frames[128];
	struct xpu_dict d;
	unwind_level_a(1);
	int n = xpu_unwind(getpid(), (uint32_t)syscall(SYS_gettid), regs, stack_copy, stack_len, ips, 128);
	REQUIRE(n > 4);
	xpu_dict_init(&d);
	struct xpu_symbolizer *s = xpu_sym_new(&d, NULL);
	REQUIRE(s);
	xpu_sym_user(s, getpid(), ips, (uint32_t)n, frames);
	int c = position(&d, frames, n, "unwind_capture_here");
	int l3 = position(&d, frames, n, "unwind_level_c");
	int l2 = position(&d, frames, n, "unwind_level_b");
	int l1 = position(&d, frames, n, "unwind_level_a");
	int m = position(&d, frames, n, "test_unwinds_through_functions_without_frame_pointers");
	CHECK_INT(c, ==, 0);
	CHECK_INT(l3, ==, 1);
	CHECK_INT(l2, ==, 2);
	CHECK_INT(l1, ==, 3);
	CHECK_INT(m, ==, 4);
	CHECK(position(&d, frames, n, "main") > m);
	xpu_sym_free(s);
	xpu_dict_free(&d);
}

TEST(a_short_copy_ends_the_walk_without_error)
{
	uint64_t ips[128];
	unwind_level_a(1);
	int n = xpu_unwind(getpid(), (uint32_t)syscall(SYS_gettid), regs, stack_copy, 64, ips, 128);
	CHECK(n >= 1 && n < 4);
	CHECK_INT(xpu_unwind(getpid(), (uint32_t)syscall(SYS_gettid), regs, stack_copy, 0, ips, 128), <=, 1);
}

TEST(an_exited_process_unwinds_to_nothing)
{
	uint64_t ips[8];
	CHECK_INT(xpu_unwind(4194303, 4194303, regs, stack_copy, stack_len, ips, 8), ==, 0);
}
