#include "unwind_dwarf.h"

#include <elfutils/libdwfl.h>
#include <string.h>

#include "err.h"

struct unwind_ctx {
	uint32_t tid;
	int thread_done;
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

int xpu_unwind(uint32_t pid, uint32_t tid, const uint64_t regs[XPU_UNWIND_NREGS],
	       const void *stack, size_t stack_len, uint64_t *ips, int max)
{
	struct unwind_ctx u = {
		.tid = tid, .regs = regs, .stack = stack, .stack_len = stack_len,
		.sp = regs[7], .ips = ips, .max = max,
	};
	if (max <= 0)
		return 0;
	Dwfl *dwfl = dwfl_begin(&proc_callbacks);
	if (!dwfl)
		return 0;
	if (dwfl_linux_proc_report(dwfl, (pid_t)pid) != 0 || dwfl_report_end(dwfl, NULL, NULL) != 0 ||
	    !dwfl_attach_state(dwfl, NULL, (pid_t)pid, &thread_callbacks, &u)) {
		xpu_debug("unwind of pid %u: %s", pid, dwfl_errmsg(-1));
		dwfl_end(dwfl);
		return 0;
	}
	/* The walk ends where the copy or the CFI ends; what it found is kept. */
	dwfl_getthread_frames(dwfl, (pid_t)tid, frame_cb, &u);
	dwfl_end(dwfl);
	return u.n;
}
