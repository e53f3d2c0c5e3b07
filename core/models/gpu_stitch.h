/* SPDX-License-Identifier: GPL-2.0-only */
/* Stitched launch stacks (issue 26).  A kernel launched by a helper thread
 * (autograd's engine thread in backward(), a communication thread) on
 * behalf of a thread that waits for it in a known "waiter" function is shown
 * under the waiting thread's stack:
 *
 *   waiter's stack (root .. the waiter function) ; MARKER ; the launching
 *   thread's frames from its work on (thread start and engine plumbing
 *   dropped) ; launch API ; kernel
 *
 * The marker frame (an XPU_FRAME_INFO frame) says how it was stitched, so a
 * stack read back from a recording tells the same: "[backward of]" for
 * autograd's engine, "[launched for]" for any other waiter; a stack without
 * one was launched by the thread it shows ("same thread").
 *
 * With the node probes (--gpu-nodes), a kernel that a backward node
 * launches, while the engine runs it, is shown under the stack of the
 * forward call that made the node instead:
 *
 *   making thread's stack (root .. the function given the node) ;
 *   "[backward]" ; the launching thread's frames from its work on ;
 *   launch API ; kernel
 *
 * so the forward and backward kernels of one Python line sit side by side
 * ("forward site").  Nodes whose making was not seen keep the waiter's.
 *
 * The waiter list: comma-separated KIND:FILE:SYMBOL, KIND "backward" or
 * "for", FILE the start of a mapped file's base name, SYMBOL a function's
 * (mangled) name, or the start of one when it ends in '*'. */
#ifndef XPU_GPU_STITCH_H
#define XPU_GPU_STITCH_H

#include <stddef.h>
#include <stdint.h>

struct xpu_dict;

enum xpu_gpu_stitch {
	XPU_STITCH_SAME = 0,		/* launched by the thread it shows */
	XPU_STITCH_BACKWARD = 1,	/* by autograd's engine, for a thread in backward() */
	XPU_STITCH_FOR = 2,		/* by another thread, for a thread in a waiter */
	XPU_STITCH_NODE = 3,		/* by a backward node, under the forward call that made it */
	XPU_STITCH_KINDS
};

/* The defaults: autograd's Engine::execute (libtorch_cpu.so), in which the
 * thread that runs loss.backward() or torch.autograd.grad() waits while the
 * engine's threads run the backward nodes. */
#define XPU_GPU_WAITERS_DEFAULT "backward:libtorch_cpu.so:_ZN5torch8autograd6Engine7execute*"
#define XPU_GPU_MAX_WAITERS 16

struct xpu_gpu_waiter {
	int kind;		/* XPU_STITCH_BACKWARD or _FOR */
	int prefix;		/* sym is the start of the names */
	char file[64];
	char sym[256];
};

/* The node probes: where autograd makes a node and where its engine runs
 * one, each a function of a file and the argument that holds the node. */
struct xpu_gpu_node_fn {
	char file[64];
	char sym[256];
	int arg;		/* 0-5: rdi rsi rdx rcx r8 r9 */
	int deref;		/* the argument points to the node */
};

struct xpu_gpu_nodes {
	int on;
	struct xpu_gpu_node_fn create, run;
};

/* PyTorch's: set_gradient_edge(const Tensor&, Edge) gets the Edge by
 * reference, its first word the Node*; Engine::evaluate_function(graph_task,
 * Node*, ...) runs one node. */
#define XPU_GPU_NODES_DEFAULT                                                                  \
	"create=libtorch_cpu.so:_ZN5torch8autograd4impl17set_gradient_edgeERKN2at6TensorENS0_4EdgeE:*arg1," \
	"run=libtorch_cpu.so:_ZN5torch8autograd6Engine17evaluate_functionERSt10shared_ptrINS0_9GraphTaskEEPNS0_" \
	"4NodeERNS0_11InputBufferERKS2_INS0_10ReadyQueueEE:arg2"

/* Parses "create=FILE:SYMBOL:ARG,run=FILE:SYMBOL:ARG" (ARG argN or *argN,
 * N 0-5), or "off".  Returns 0, or -1 with why in err. */
int xpu_gpu_nodes_parse(const char *spec, struct xpu_gpu_nodes *n, char *err, size_t errlen);

/* JSON's name of a kind: "same thread", "backward of", "launched for",
 * "forward site". */
const char *xpu_gpu_stitch_name(int kind);
/* The marker frame's text of a kind ("[backward of]"), NULL for SAME. */
const char *xpu_gpu_stitch_marker(int kind);
/* How a stack was stitched, from its marker frame. */
int xpu_gpu_stack_stitch(const struct xpu_dict *d, uint32_t stack);

/* Parses a waiter list ("" or "none": no waiters).  Returns how many, or -1
 * with why in err. */
int xpu_gpu_waiters_parse(const char *spec, struct xpu_gpu_waiter *w, int max, char *err, size_t errlen);

#endif
