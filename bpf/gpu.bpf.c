/* GPU launch probes.
 *
 * gpu_site: a uprobe on xputop_launch_site() in libxputop_inject.so, called
 * by the library on the launching thread the first time a call site launches.
 * It captures the frame-pointer stack and, for DWARF unwinding in user space
 * (PyTorch's libraries have no frame pointers), the registers and the top of
 * the user stack.
 * gpu_launch: uprobes on the CUDA runtime/driver launch entry points, for
 * processes that run without the library ("launches only"); the bpf cookie
 * says which function fired. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "gpu.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);	/* 64 site captures of 256 KiB */
} gpu_events SEC(".maps");

/* Processes whose library is connected: their launches come through CUPTI,
 * so the launch-only probes leave them alone. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} injected SEC(".maps");

__u64 dropped_sites = 0;
__u64 dropped_launches = 0;

static __always_inline void fill_hdr(struct xpu_gpu_rec_hdr *h, void *ctx, __u32 type)
{
	__u64 id = bpf_get_current_pid_tgid();
	h->type = type;
	h->pid = id >> 32;
	h->tid = (__u32)id;
	h->time_ns = bpf_ktime_get_ns();
	h->copied = 0;
	bpf_get_current_comm(h->comm, sizeof(h->comm));
	h->ulen = bpf_get_stack(ctx, h->ustack, sizeof(h->ustack), BPF_F_USER_STACK);
}

/* Copies the stack from sp up, page by page, so the copy stops cleanly at the
 * top of the stack (the first unmapped page) instead of failing whole. */
static __always_inline __u32 copy_stack(struct xpu_gpu_site *s, __u64 sp)
{
	__u32 first = 4096 - (sp & 4095);
	__u32 done;

	if (bpf_probe_read_user(s->stack, first & 4095 ? first & 4095 : 4096, (void *)sp) < 0)
		return 0;
	done = first;
	for (int i = 0; i < XPU_GPU_STACK_PAGES; i++) {
		if (done > XPU_GPU_STACK_COPY - 4096)
			break;
		if (bpf_probe_read_user(s->stack + (done & (XPU_GPU_STACK_COPY - 1)), 4096,
					(void *)(sp + done)) < 0)
			break;
		done += 4096;
	}
	return done;
}

SEC("uprobe")
int BPF_KPROBE(gpu_site, __u32 site, __u32 corr, __u32 cbid)
{
	struct xpu_gpu_site *s = bpf_ringbuf_reserve(&gpu_events, sizeof(*s), 0);
	if (!s) {
		__sync_fetch_and_add(&dropped_sites, 1);
		return 0;
	}
	fill_hdr(&s->h, ctx, XPU_GPU_REC_SITE);
	s->h.site = site;
	s->h.corr = corr;
	s->h.api = cbid;
	/* DWARF register numbers: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip */
	s->regs[0] = ctx->ax;
	s->regs[1] = ctx->dx;
	s->regs[2] = ctx->cx;
	s->regs[3] = ctx->bx;
	s->regs[4] = ctx->si;
	s->regs[5] = ctx->di;
	s->regs[6] = ctx->bp;
	s->regs[7] = ctx->sp;
	s->regs[8] = ctx->r8;
	s->regs[9] = ctx->r9;
	s->regs[10] = ctx->r10;
	s->regs[11] = ctx->r11;
	s->regs[12] = ctx->r12;
	s->regs[13] = ctx->r13;
	s->regs[14] = ctx->r14;
	s->regs[15] = ctx->r15;
	s->regs[16] = ctx->ip;
	s->h.copied = copy_stack(s, ctx->sp);
	bpf_ringbuf_submit(s, 0);
	return 0;
}

SEC("uprobe")
int gpu_launch(struct pt_regs *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct xpu_gpu_rec_hdr *h;

	if (bpf_map_lookup_elem(&injected, &pid))
		return 0;
	h = bpf_ringbuf_reserve(&gpu_events, sizeof(*h), 0);
	if (!h) {
		__sync_fetch_and_add(&dropped_launches, 1);
		return 0;
	}
	fill_hdr(h, ctx, XPU_GPU_REC_LAUNCH);
	h->site = 0;
	h->corr = 0;
	h->api = (__u32)bpf_get_attach_cookie(ctx);
	bpf_ringbuf_submit(h, 0);
	return 0;
}
