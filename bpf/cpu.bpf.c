/* SPDX-License-Identifier: GPL-2.0-only */
/* On-CPU sampling: a perf cpu-clock event on every CPU runs cpu_sample, which
 * captures the user and kernel stacks of the interrupted task into the ring.
 * exec/exit of thread groups are reported so user space can refresh or retire
 * its view of a process's memory maps. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cpu.h"

char LICENSE[] SEC("license") = "GPL";

/* Only sample these thread groups (set by -p, or the command xputop runs,
 * and the -p of the xputops attached to this one).  Not read-only: the
 * collector widens and narrows as its clients come and go. */
bool filter_pids = false;
/* Children of watched processes are watched too (xputop -- CMD). */
bool follow_forks = false;
/* User space is woken only once this much waits in the ring; it drains the
 * ring on a timer of its own anyway.  Waking it for each sample made it run
 * right after samples, when the timers of the other CPUs (started together,
 * so in phase) fire: xputop was charged CPU time its victims lost. */
const volatile __u64 wakeup_bytes = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);	/* resized by user space */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);	/* 17 xputops' -p (share.h), their children */
	__type(key, __u32);
	__type(value, __u8);
} pids SEC(".maps");

/* Records lost because the ring was full, by kind. */
__u64 dropped_samples = 0;
__u64 dropped_procs = 0;

static __always_inline __u64 wakeup_flag(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
									      : BPF_RB_NO_WAKEUP;
}

static __always_inline bool wanted(__u32 pid)
{
	return !filter_pids || bpf_map_lookup_elem(&pids, &pid);
}

SEC("perf_event")
int cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;
	struct xpu_cpu_sample *s;
	struct task_struct *task;

	if (pid == 0 || !wanted(pid))	/* the idle task is not a process */
		return 0;
	s = bpf_ringbuf_reserve(&events, sizeof(*s), 0);
	if (!s) {
		__sync_fetch_and_add(&dropped_samples, 1);
		return 0;
	}
	s->type = XPU_CPU_REC_SAMPLE;
	s->pid = pid;
	s->tid = (__u32)id;
	s->uid = (__u32)bpf_get_current_uid_gid();
	s->cpu = bpf_get_smp_processor_id();
	s->pad = 0;
	s->time_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(s->tcomm, sizeof(s->tcomm));
	task = (struct task_struct *)bpf_get_current_task();
	if (BPF_CORE_READ_STR_INTO(&s->comm, task, group_leader, comm) < 0)
		__builtin_memcpy(s->comm, s->tcomm, sizeof(s->comm));
	s->klen = bpf_get_stack(ctx, s->kstack, sizeof(s->kstack), 0);
	s->ulen = bpf_get_stack(ctx, s->ustack, sizeof(s->ustack), BPF_F_USER_STACK);
	bpf_ringbuf_submit(s, wakeup_flag());
	return 0;
}

static __always_inline void report_proc(__u32 type, struct task_struct *task)
{
	struct xpu_cpu_proc *p = bpf_ringbuf_reserve(&events, sizeof(*p), 0);
	if (!p) {
		__sync_fetch_and_add(&dropped_procs, 1);
		return;
	}
	p->type = type;
	p->pid = BPF_CORE_READ(task, tgid);
	p->time_ns = bpf_ktime_get_ns();
	BPF_CORE_READ_STR_INTO(&p->comm, task, comm);
	bpf_ringbuf_submit(p, wakeup_flag());
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(cpu_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	if (wanted(BPF_CORE_READ(task, tgid)))
		report_proc(XPU_CPU_REC_EXEC, task);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(cpu_exit, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);

	/* One report per thread group: when its leader exits. */
	if (BPF_CORE_READ(task, pid) != tgid || !wanted(tgid))
		return 0;
	report_proc(XPU_CPU_REC_EXIT, task);
	if (follow_forks)
		bpf_map_delete_elem(&pids, &tgid);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(cpu_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = BPF_CORE_READ(parent, tgid), cpid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	if (follow_forks && ppid != cpid && bpf_map_lookup_elem(&pids, &ppid))
		bpf_map_update_elem(&pids, &cpid, &one, BPF_ANY);
	return 0;
}
