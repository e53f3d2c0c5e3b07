/* SPDX-License-Identifier: GPL-2.0-only */
#include "unwind_dwarf.h"

#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"

struct unwind_ctx {
	uint32_t tid;
	int thread_done;	/* next_thread has given the one thread of this walk */
	const uint64_t *regs;
	const uint8_t *stack;
	size_t stack_len;
	uint64_t sp;
	uint64_t *ips;
	int n, max;
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct unwind_ctx *u = arg;
	if (u->thread_done)
		return 0;
	u->thread_done = 1;
	*thread_argp = arg;
	return (pid_t)u->tid;
}

/* Only the copied stack can be read: CFI rules read saved registers there. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct unwind_ctx *u = arg;
	if (addr < u->sp || addr - u->sp + sizeof(Dwarf_Word) > u->stack_len)
		return false;
	memcpy(result, u->stack + (addr - u->sp), sizeof(Dwarf_Word));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct unwind_ctx *u = arg;
	Dwarf_Word regs[XPU_UNWIND_NREGS];
	for (int i = 0; i < XPU_UNWIND_NREGS; i++)
		regs[i] = u->regs[i];
	return dwfl_thread_state_registers(thread, 0, XPU_UNWIND_NREGS, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwind_ctx *u = arg;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(state, &pc, &activation) || pc == 0)
		return DWARF_CB_ABORT;
	u->ips[u->n++] = pc;
	return u->n < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static char *debuginfo_path;

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

/* A process's DWARF state: libdwfl's module list and, within it, each
 * module's CFI, read once and reused for every site of the process. */
struct uproc {
	uint32_t pid;
	uint64_t start;		/* the process's start time: a reused pid is another process */
	uint64_t reported_ns;
	uint64_t last_use;
	Dwfl *dwfl;
	struct unwind_ctx ctx;	/* what the callbacks read; set before each walk */
};

struct xpu_unwinder {
	struct uproc procs[XPU_UNWIND_PROCS];
	uint64_t clock;
	struct xpu_unwind_stats st;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Field 22 of /proc/PID/stat, after the command name (which may hold
 * spaces and parentheses: the last ')' ends it). */
static uint64_t start_time(uint32_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	FILE *f = fopen(path, "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	unsigned long long t = 0;
	if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			&t) != 1)
		t = 0;
	return t;
}

static void uproc_drop(struct uproc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	memset(p, 0, sizeof(*p));
}

/* Reports pid's modules into a new Dwfl; 0 or -1. */
static int uproc_report(struct xpu_unwinder *u, struct uproc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = dwfl_begin(&proc_callbacks);
	p->reported_ns = now_ns();
	u->st.reports++;
	if (!p->dwfl || dwfl_linux_proc_report(p->dwfl, (pid_t)p->pid) != 0 ||
	    dwfl_report_end(p->dwfl, NULL, NULL) != 0 ||
	    !dwfl_attach_state(p->dwfl, NULL, (pid_t)p->pid, &thread_callbacks, &p->ctx)) {
		xpu_debug("unwind of pid %u: %s", p->pid, dwfl_errmsg(-1));
		uproc_drop(p);
		return -1;
	}
	return 0;
}

/* The cached state of pid, made (or made anew, if pid is another process now,
 * or its modules were read too long ago) as needed. */
static struct uproc *uproc_get(struct xpu_unwinder *u, uint32_t pid)
{
	uint64_t start = start_time(pid);
	struct uproc *p = NULL, *lru = &u->procs[0];
	for (int i = 0; i < XPU_UNWIND_PROCS; i++) {
		if (u->procs[i].dwfl && u->procs[i].pid == pid)
			p = &u->procs[i];
		if (u->procs[i].last_use < lru->last_use)
			lru = &u->procs[i];
	}
	if (p && (p->start != start || now_ns() - p->reported_ns > XPU_UNWIND_REPORT_NS))
		uproc_drop(p);
	else if (p)
		return p;
	p = p ? p : lru;
	uproc_drop(p);
	p->pid = pid;
	p->start = start;
	return uproc_report(u, p) == 0 ? p : NULL;
}

static int walk(struct uproc *p, uint32_t tid, const uint64_t regs[XPU_UNWIND_NREGS], const void *stack,
		size_t stack_len, uint64_t *ips, int max)
{
	p->ctx = (struct unwind_ctx){
		.tid = tid, .regs = regs, .stack = stack, .stack_len = stack_len,
		.sp = regs[7], .ips = ips, .max = max,
	};
	/* The walk ends where the copy or the CFI ends; what it found is kept. */
	dwfl_getthread_frames(p->dwfl, (pid_t)tid, frame_cb, &p->ctx);
	return p->ctx.n;
}

int xpu_unwinder_run(struct xpu_unwinder *u, uint32_t pid, uint32_t tid,
		     const uint64_t regs[XPU_UNWIND_NREGS], const void *stack, size_t stack_len,
		     uint64_t *ips, int max)
{
	if (max <= 0)
		return 0;
	struct uproc *p = uproc_get(u, pid);
	if (!p)
		return 0;
	p->last_use = ++u->clock;
	int n = walk(p, tid, regs, stack, stack_len, ips, max);
	/* Stopped in code the module list does not know (a library loaded since
	 * it was read): read it again, once. */
	if (n < max && (n == 0 || !dwfl_addrmodule(p->dwfl, ips[n - 1])) &&
	    now_ns() - p->reported_ns > XPU_UNWIND_RETRY_NS && uproc_report(u, p) == 0) {
		u->st.retries++;
		n = walk(p, tid, regs, stack, stack_len, ips, max);
	}
	u->st.unwinds++;
	return n;
}

struct xpu_unwinder *xpu_unwinder_new(void)
{
	return calloc(1, sizeof(struct xpu_unwinder));
}

void xpu_unwinder_free(struct xpu_unwinder *u)
{
	if (!u)
		return;
	for (int i = 0; i < XPU_UNWIND_PROCS; i++)
		uproc_drop(&u->procs[i]);
	free(u);
}

void xpu_unwinder_stats(const struct xpu_unwinder *u, struct xpu_unwind_stats *st)
{
	*st = u->st;
}

int xpu_unwind(uint32_t pid, uint32_t tid, const uint64_t regs[XPU_UNWIND_NREGS],
	       const void *stack, size_t stack_len, uint64_t *ips, int max)
{
	struct xpu_unwinder *u = xpu_unwinder_new();
	int n = u ? xpu_unwinder_run(u, pid, tid, regs, stack, stack_len, ips, max) : 0;
	xpu_unwinder_free(u);
	return n;
}
