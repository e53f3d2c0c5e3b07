/* SPDX-License-Identifier: GPL-2.0-only */
/* The one normalized event type that flows from every source to the models.
 *
 * Sources (BPF rings, the injection channel, a replay file) decode their raw
 * records into struct xpu_event; the recorder writes them as they are; models
 * only ever see this.  Strings, frames and stacks travel as ids into the
 * session's dictionary (core/util/dict.h), so an event has a fixed size.
 */
#ifndef XPU_EVENT_H
#define XPU_EVENT_H

#include <stdint.h>

struct xpu_dict;

enum xpu_ev_type {
	XPU_EV_NONE = 0,
	XPU_EV_TICK = 1,	/* a refresh boundary: models close their buckets */
	XPU_EV_CPU_SAMPLE = 2,	/* one on-CPU sample with its stack */
	XPU_EV_DROP = 3,	/* a source lost records (count since the last DROP) */
	XPU_EV_PROC_EXIT = 4,	/* a process (thread group) exited */
	XPU_EV_GPU_LAUNCH = 5,	/* a kernel launch API call with its CPU stack */
	XPU_EV_GPU_KERNEL = 6,	/* one GPU kernel execution (CUPTI activity) */
	XPU_EV_GPU_MEMCPY = 7,	/* one GPU memory copy or set (CUPTI activity) */
	XPU_EV_GPU_PROC = 8,	/* an injected process connected, left or reported */
	XPU_EV_NPU_IOCTL = 9,	/* one ioctl on an accel device: nr, result, latency */
	XPU_EV_NPU_IPC = 10,	/* firmware IPC message sent or received */
	XPU_EV_NPU_JOB = 11,	/* job submitted, completed or aborted */
	XPU_EV_NPU_MEM = 12,	/* buffer create, MMU map/unmap, bind */
	XPU_EV_NPU_PM = 13,	/* power management, recovery, reset */
	XPU_EV_NPU_L0 = 14,	/* a Level Zero API call */
	XPU_EV_NPU_BUSY = 15,	/* device busy time read from sysfs */
	XPU_EV_GPU_SLICE = 16,	/* a span traced: an injected process, or (pid 0) the launch probes */
	XPU_EV_PROC_STAT = 17,	/* a shown process's memory, state and CPU time from /proc */
	XPU_EV_SYS_STAT = 18,	/* load, CPU busy and memory of the whole machine */
	XPU_EV_NPU_FUNC = 19,	/* calls of one NPU driver function (model_npu.h) */
	XPU_EV_NPU_DEV = 20,	/* one NPU's state as its driver reports it in sysfs */
	XPU_EV_NPU_CLIENT = 21,	/* an open NPU file as DRM fdinfo reports it (pid: the holder) */
	XPU_EV_GPU_DEV = 22,	/* one GPU's state as its driver (NVML) reports it */
	XPU_EV_GPU_DEV_LINK = 23, /* one GPU's PCIe and NVLink traffic, from NVML */
	XPU_EV_GPU_DEV_PROC = 24, /* a process on one GPU, from NVML (pid: the host's) */
	XPU_EV_THREAD_STAT = 25, /* a shown thread's state and CPU time from /proc (pstat, rss 0) */
	XPU_EV_CPU_STAT = 26,	/* one CPU's busy share (sys, XPU_SYS_BUSY only; tid: the CPU's number) */
	XPU_EV_PROC_CMDLINE = 27, /* a shown process's command line from /proc (pcmd) */
	XPU_EV_NPU_FUNC_LAT = 28, /* how long calls of one NPU driver function took (model_npu.h) */
	XPU_EV_GPU_OWN = 29,	/* CPU samples of an injected process's launching threads (gown) */
	XPU_EV_GPU_CPU = 30,	/* an injected process's CPU time by the launch probes' state (gcpu) */
	XPU_EV_GPU_BORN = 31,	/* a process the launch probes count started at time (no payload) */
	XPU_EV_TYPE_MAX
};

/* Which source produced an event; indexes per-source counters. */
enum xpu_src_id {
	XPU_SRC_CPU = 0,
	XPU_SRC_GPU = 1,
	XPU_SRC_NPU = 2,
	XPU_SRC_MAX
};

struct xpu_ev_tick {
	uint64_t wall_ns;	/* CLOCK_REALTIME at the tick, for display */
	uint64_t interval_ns;	/* time since the previous tick */
	/* How the stream was collected at the tick (recording minor 5; 0 in
	 * older ones: the header's rate, mode unknown).  Lets an xputop that
	 * reads another's stream say what is in force (core/sources/share.h). */
	uint32_t sample_hz;	/* the CPU sampling rate of the samples */
	uint32_t collect;	/* XPU_TICK_* */
};

enum {
	XPU_TICK_KNOWN = 1 << 0,	/* collect is set */
	XPU_TICK_GPU_EXACT = 1 << 1,	/* every GPU kernel traced, else sampled */
	XPU_TICK_ALL_PIDS = 1 << 2,	/* every process collected, else a set of them */
};
#define XPU_TICK_BITS 7u

struct xpu_ev_cpu_sample {
	uint32_t stack;		/* dict stack id, root -> leaf (user then kernel) */
	uint32_t comm;		/* dict string: process (group leader) name */
	uint32_t tcomm;		/* dict string: thread name */
	uint32_t uid;
	uint32_t user;		/* dict string: user name resolved at capture */
	uint32_t cpu;
};

struct xpu_ev_drop {
	uint32_t source;	/* enum xpu_src_id */
	uint32_t what;		/* XPU_DROP_*, else source-specific; 0 = ring full */
	uint64_t count;
};

/* No xputop watched for a while (a collector left, core/sources/share.h): count is
 * the samples that would have been taken. */
enum { XPU_DROP_GAP = 0x100 };

/* GPU payloads: time is the launch time (LAUNCH) or kernel start (KERNEL). */
struct xpu_ev_gpu_launch {
	uint32_t corr;		/* CUPTI correlation id */
	uint32_t stack;		/* dict stack of the launching thread, 0 = none */
	uint32_t api;		/* dict string: launch API name */
	uint32_t comm;
	uint32_t flags;		/* XPU_GPU_LAUNCH_* */
	uint32_t count;		/* launches this event stands for (LAUNCH_ONLY); 0 reads as 1,
				 * but for PROBED, where it is the count */
	uint32_t trap_ns;	/* PROBED, LAUNCH_ONLY: the time the probes' traps took from
				 * the process (launch_probes.h), clamped; 0 in older
				 * recordings */
};

struct xpu_ev_gpu_kernel {
	uint64_t end;		/* CLOCK_MONOTONIC ns */
	uint32_t corr;
	uint32_t name;		/* dict string: kernel name (mangled) */
	uint32_t device;
	uint32_t stream;
	uint32_t graph;		/* CUDA graph id, 0 = not a graph launch */
	uint32_t comm;
};

struct xpu_ev_gpu_memcpy {
	uint64_t end;
	uint64_t bytes;
	uint32_t device;
	uint32_t kind;		/* CUPTI memcpy kind, or XPU_GPU_MEMSET */
	uint32_t corr;
	uint32_t comm;
};

struct xpu_ev_gpu_proc {
	uint32_t state;		/* XPU_GPU_PROC_* */
	uint32_t comm;
	uint64_t dropped;	/* records the library dropped since it connected */
	uint64_t cupti_dropped;	/* records CUPTI dropped or timed wrong (inject/gaps.c) */
	uint32_t detail;	/* the library's state: XPU_WIRE_STATE_*, and
				 * XPU_GPU_DETAIL_ATTACHED (format 1.5 on) */
	uint32_t sites;		/* call sites the library knows */
	uint64_t kernels_dropped;	/* kernel records dropped, of `dropped` (0 before format 1.2) */
};

/* time: the slice's start; in sampled mode the process traced only such
 * slices, so its figures cover their share of the time (model_gpu.h). */
struct xpu_ev_gpu_slice {
	uint64_t end;
	uint32_t mode;		/* the library's mode: XPU_GPU_MODE_* */
	uint32_t comm;
};

/* WHOLE: a span on throughout, not sampled: the launch probes' (pid 0),
 * every launch of any process counted (XPU_GPU_LAUNCH_PROBED|WHOLE), or a
 * process's library's in sampled mode, every launch and kernel it made
 * there traced (XPU_GPU_LAUNCH_WHOLE alone). */
enum { XPU_GPU_MODE_EXACT = 0, XPU_GPU_MODE_SAMPLED = 1, XPU_GPU_MODE_WHOLE = 2 };

/* CPU samples of an injected process's launching threads, cumulative since
 * xputop began watching the process (core/sources/gpu_own.h): where each
 * landed, the process's own code or CUDA's (libcuda, libcudart, libcupti,
 * the injection library, and the kernel on their behalf), and whether the
 * library was tracing then ([1]) or not ([0]).  Tracing slows a launching
 * thread inside CUDA's code; its own code runs as fast, so the launches
 * outside a slice are those inside it times own[0] / own[1] (model_gpu.c). */
struct xpu_ev_gpu_own {
	uint64_t own[2];	/* samples in the process's own code: [0] not tracing, [1] tracing */
	uint64_t cuda[2];	/* samples in CUDA's code */
	uint32_t hz;		/* the sampling rate of each thread */
	uint32_t threads;	/* launching threads watched */
};
/* The CPU time of an injected process's launching threads (a counter
 * each) since the last such event: while the launch probes
 * counted in a sampled slice, while they counted on throughout, and in
 * all (core/sources/launch_probes.h).  The probes' count scales by it
 * where it can: a slice that falls where the process idles sees as little
 * CPU time as launches (model_gpu.c). */
struct xpu_ev_gpu_cpu {
	uint64_t slice_ns;
	uint64_t whole_ns;
	uint64_t all_ns;	/* at least the two */
};
/* xpu_ev_gpu_launch.flags: LAUNCH_ONLY seen by uprobes, no CUPTI; PROBED:
 * count launches of an injected process the launch probes counted while
 * they were on (its pace untraced by CUPTI; no stack, no API); with WHOLE:
 * of any process, counted while the probes were on throughout (with
 * LAUNCH_ONLY too, a launch-only process's, which are in its LAUNCH_ONLY
 * events as well, their trap_ns likewise); WHOLE alone: a launch the
 * library traced while on throughout (it and its kernels are counted as
 * they are) */
enum { XPU_GPU_LAUNCH_ONLY = 1, XPU_GPU_LAUNCH_PROBED = 2, XPU_GPU_LAUNCH_WHOLE = 4 };
enum { XPU_GPU_PROC_CONNECTED = 1, XPU_GPU_PROC_LEFT = 2, XPU_GPU_PROC_STATUS = 3 };
/* xpu_ev_gpu_proc.detail: CUPTI stays attached between slices (CUDA graphs
 * seen, XPUTOP_CUPTI_DETACH=0, exact mode), paying its cost on every launch */
#define XPU_GPU_DETAIL_ATTACHED 0x80000000u
#define XPU_GPU_DETAIL_STATE 0xffffu
/* The state XPU_WIRE_STATE_IDS_STUCK: CUPTI's correlation ids stuck in the
 * process and its library could not detach CUPTI to start afresh; nothing
 * it traces can be joined (inject/cupti.c). */
#define XPU_GPU_DETAIL_IDS_STUCK 3u
#define XPU_GPU_MEMSET 0x100u	/* xpu_ev_gpu_memcpy.kind of a memset */

/* GPU device payloads (NVML, sampled about once a second).  A DEV event
 * starts a device's sample: the LINK and PROC events of the same device that
 * follow it complete it, and replace what the previous sample said. */
#define XPU_GPU_DEV_MAX 64	/* device indexes 0-63 */

/* Which fields the driver gave; the others are unknown (shown N/A). */
enum {
	XPU_GPU_DEV_UTIL = 1 << 0,		/* util_gpu */
	XPU_GPU_DEV_MEM_UTIL = 1 << 1,		/* util_mem */
	XPU_GPU_DEV_MEM = 1 << 2,		/* mem_used_mib and mem_total_mib */
	XPU_GPU_DEV_POWER = 1 << 3,
	XPU_GPU_DEV_POWER_LIMIT = 1 << 4,
	XPU_GPU_DEV_TEMP = 1 << 5,
	XPU_GPU_DEV_SM_CLOCK = 1 << 6,
	XPU_GPU_DEV_MEM_CLOCK = 1 << 7,
	XPU_GPU_DEV_PCIE_RX = 1 << 8,		/* LINK: pcie_rx_kbs */
	XPU_GPU_DEV_PCIE_TX = 1 << 9,
	XPU_GPU_DEV_NVLINK_RX = 1 << 10,	/* LINK: nvlink_rx_kib */
	XPU_GPU_DEV_NVLINK_TX = 1 << 11,
	XPU_GPU_DEV_NVLINKS = 1 << 12,		/* LINK: nvlinks */
	XPU_GPU_DEV_MIG = 1 << 16,		/* not a field: MIG mode is on */
	XPU_GPU_DEV_STATE_BITS = 0xff,		/* the field bits of a DEV event */
	XPU_GPU_DEV_LINK_BITS = 0x1f00,		/* the field bits of a LINK event */
};

struct xpu_ev_gpu_dev {
	uint32_t index;		/* the driver's device index (nvidia-smi's) */
	uint32_t name;		/* dict string: product name, 0 = unknown */
	uint32_t bus;		/* dict string: PCI bus id, 0 = unknown */
	uint32_t flags;		/* XPU_GPU_DEV_* bits 0-7 and MIG */
	uint8_t util_gpu;	/* % of the driver's sample period a kernel ran */
	uint8_t util_mem;	/* % of it device memory was read or written */
	uint16_t temp_c;
	uint16_t sm_mhz, mem_mhz;
	uint32_t mem_used_mib, mem_total_mib;
	uint32_t power_mw, power_limit_mw;
};

struct xpu_ev_gpu_dev_link {
	uint32_t index;
	uint32_t flags;		/* XPU_GPU_DEV_PCIE_* and XPU_GPU_DEV_NVLINK* bits */
	uint32_t pcie_rx_kbs;	/* KiB/s over the driver's own 20 ms sample */
	uint32_t pcie_tx_kbs;
	uint64_t nvlink_rx_kib;	/* data received over all NVLinks since boot */
	uint64_t nvlink_tx_kib;
	uint32_t nvlinks;	/* NVLinks up */
	uint32_t pad;
};

/* xpu_ev_gpu_dev_proc.flags */
enum {
	XPU_GPU_DEVPROC_COMPUTE = 1 << 0,	/* a CUDA (compute) context */
	XPU_GPU_DEVPROC_GRAPHICS = 1 << 1,	/* a graphics context */
	XPU_GPU_DEVPROC_MEM = 1 << 2,		/* mem is known */
	XPU_GPU_DEVPROC_UTIL = 1 << 3,		/* sm_pct ... dec_pct: a utilization sample */
	XPU_GPU_DEVPROC_NSPID = 1 << 4,		/* nspid is known (the process was in /proc) */
	XPU_GPU_DEVPROC_MIG = 1 << 5,		/* gi and ci are known */
	XPU_GPU_DEVPROC_BITS = 0x3f,
};

struct xpu_ev_gpu_dev_proc {
	uint32_t index;		/* device */
	uint32_t comm;		/* dict string: name from /proc, 0 = unknown */
	uint32_t nspid;		/* the pid inside its own pid namespace (a container's) */
	uint32_t flags;		/* XPU_GPU_DEVPROC_* */
	uint64_t mem;		/* GPU memory it holds, bytes */
	uint8_t sm_pct, mem_pct, enc_pct, dec_pct;	/* its share of the device, latest sample */
	uint32_t user;		/* dict string: user name, 0 = unknown */
	uint16_t gi, ci;	/* MIG GPU and compute instance */
};

/* NPU payloads; see core/models/model_npu.h for the meaning of each field by type. */
struct xpu_ev_npu {
	uint32_t code;		/* ioctl command, IPC message type, job event, ... */
	int32_t result;		/* return value / status / errno (negative) */
	uint64_t dur_ns;	/* latency where known */
	uint64_t arg;		/* size, job key, address, heartbeat, ... */
	uint32_t comm;		/* dict string: process name, 0 = none */
	uint32_t aux;		/* queue, direction flags; NPU_PM: dict string */
	uint32_t count;		/* calls or messages this event stands for; 0 reads as 1 */
	uint32_t id;		/* NPU_JOB DONE: the job id the trace reported (0: none) */
};

/* NPU device payloads (sysfs and fdinfo, read about once a second); the
 * fields a flag does not mark are unknown (shown N/A). */
#define XPU_NPU_DEV_MAX 4	/* device indexes 0-3 */
enum {
	XPU_NPU_DEV_MEM = 1 << 0,	/* mem_bytes: npu_memory_utilization */
	XPU_NPU_DEV_CUR_MHZ = 1 << 1,	/* npu_current_frequency_mhz */
	XPU_NPU_DEV_MAX_MHZ = 1 << 2,	/* npu_max_frequency_mhz */
	XPU_NPU_DEV_POWER = 1 << 3,	/* power_mw: hwmon power1_input */
	XPU_NPU_DEV_BITS = 0xf,
};

struct xpu_ev_npu_dev {
	uint32_t index;		/* accel device, in the order found (< XPU_NPU_DEV_MAX) */
	uint32_t flags;		/* XPU_NPU_DEV_* */
	uint64_t mem_bytes;	/* NPU memory in use */
	uint32_t cur_mhz, max_mhz;
	uint32_t power_mw;
	uint32_t pad[3];
};

enum {
	XPU_NPU_CLIENT_TOTAL = 1 << 0,		/* drm-total-memory */
	XPU_NPU_CLIENT_RESIDENT = 1 << 1,	/* drm-resident-memory */
	XPU_NPU_CLIENT_ENGINE = 1 << 2,		/* drm-engine-*: busy time */
	XPU_NPU_CLIENT_BITS = 0x7,
};

struct xpu_ev_npu_client {
	uint32_t index;		/* device */
	uint32_t flags;		/* XPU_NPU_CLIENT_* */
	uint64_t total_bytes, resident_bytes;
	uint64_t engine_ns;	/* summed over its engines, since the file was opened */
	uint32_t comm;		/* dict string: the holder's name */
	uint32_t client_id;	/* drm-client-id */
};

/* /proc/PID/stat and statm of a process the CPU table shows (pid; tid 0),
 * read once a refresh, off the ingest path (core/sources/procstat.h). */
struct xpu_ev_proc_stat {
	uint64_t rss_bytes;	/* resident memory (htop's RES) */
	uint64_t cpu_ns;	/* user + system time of all its threads (TIME+) */
	uint32_t state;		/* the kernel's state letter: R, S, D, Z, T, t, X, I, ... */
	uint32_t threads;
	/* From minor 6 (flags 0 before: not known) */
	uint16_t flags;		/* XPU_PSTAT_* */
	int16_t nice;		/* NI: -20 .. 19 */
	uint32_t ppid;		/* the parent's pid (htop's tree) */
	uint64_t vsize_bytes;	/* VIRT */
};
enum { XPU_PSTAT_NICE_VIRT = 1 << 0 };	/* nice, ppid and vsize_bytes are known */

/* Which fields of a SYS_STAT are known. */
enum {
	XPU_SYS_LOAD = 1 << 0,		/* load[] */
	XPU_SYS_BUSY = 1 << 1,		/* busy_pct100 (needs two reads of /proc/stat) */
	XPU_SYS_MEM = 1 << 2,		/* mem_total_kib, mem_used_kib */
	XPU_SYS_BITS = 0x7,
	XPU_CPU_STAT_MAX = 1024,	/* CPU_STAT: CPU numbers below this */
};

struct xpu_ev_sys_stat {
	uint32_t flags;		/* XPU_SYS_* */
	uint32_t load100[3];	/* /proc/loadavg 1, 5, 15 min, times 100 */
	uint32_t busy_pct100;	/* all CPUs busy since the last SYS_STAT, % times 100 */
	uint32_t pad;
	uint64_t mem_total_kib;	/* MemTotal */
	uint64_t mem_used_kib;	/* htop's used: total - free - buffers - cached - sreclaimable */
};

/* A process's command line, its arguments joined by spaces (at most
 * XPU_CMDLINE_MAX bytes), read once for each name it has. */
struct xpu_ev_proc_cmd {
	uint32_t cmdline;	/* dict string */
};
#define XPU_CMDLINE_MAX 512

struct xpu_event {
	uint16_t type;		/* enum xpu_ev_type */
	uint16_t source;	/* enum xpu_src_id */
	uint32_t pid;		/* thread group id; 0 where not tied to a process */
	uint32_t tid;
	uint32_t pad;
	uint64_t time;		/* CLOCK_MONOTONIC ns, shared with bpf_ktime_get_ns() */
	union {
		struct xpu_ev_tick tick;
		struct xpu_ev_cpu_sample cpu;
		struct xpu_ev_drop drop;
		struct xpu_ev_gpu_launch launch;
		struct xpu_ev_gpu_kernel kernel;
		struct xpu_ev_gpu_memcpy memcpy;
		struct xpu_ev_gpu_proc gproc;
		struct xpu_ev_gpu_slice slice;
		struct xpu_ev_gpu_own gown;
		struct xpu_ev_gpu_cpu gcpu;
		struct xpu_ev_npu npu;
		struct xpu_ev_gpu_dev gdev;
		struct xpu_ev_gpu_dev_link glink;
		struct xpu_ev_gpu_dev_proc gdproc;
		struct xpu_ev_npu_dev ndev;
		struct xpu_ev_npu_client nclient;
		struct xpu_ev_proc_stat pstat;
		struct xpu_ev_sys_stat sys;
		struct xpu_ev_proc_cmd pcmd;
		uint8_t raw[40];
	};
};

_Static_assert(sizeof(struct xpu_event) == 64, "xpu_event is part of the recording format");

/* Checks an event's type, source and that every id it carries exists in dict.
 * Returns 0, or -1 with a reason in why. */
/* The dictionary ids an event carries, for checking and for renumbering. */
enum xpu_id_kind { XPU_ID_STRING = 0, XPU_ID_STACK = 1 };
typedef int (*xpu_event_id_fn)(void *ctx, uint32_t *id, int kind);
/* Calls fn on each id field of ev (it may change them).  Returns -1 for an
 * unknown event type, else the first nonzero value fn returned, or 0. */
int xpu_event_ids(struct xpu_event *ev, xpu_event_id_fn fn, void *ctx);
/* Whether this build knows event type `type` (below XPU_EV_TYPE_MAX, some
 * numbers are set aside for additions it lacks). */
int xpu_event_type_known(uint16_t type);
int xpu_event_check(const struct xpu_event *ev, const struct xpu_dict *dict, const char **why);

#endif
