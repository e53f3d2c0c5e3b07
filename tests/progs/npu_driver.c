/* SPDX-License-Identifier: GPL-2.0-only */
/* A stand-in for the intel_vpu driver: exports functions with the driver's
 * names and signatures (see shared NPU.md) and calls them the way the driver
 * would in a scenario, so xputop's ivpu_* BPF programs can be attached as
 * uprobes (--npu-probe-binary) on a machine with no NPU and no kprobes.
 *
 *   npu_driver SCENARIO [SECONDS]
 *
 * normal    inference bursts separated by quiet: jobs complete in ~3 ms,
 *           heartbeat queries advance, buffers are created and mapped
 * stall     a warm-up burst, then one job submitted that never completes;
 *           no IPC at all afterwards (firmware hung)
 * storm     a warm-up burst, then heartbeat queries retried ~2000 times a
 *           second, every reply timing out
 * recovery  a warm-up burst, two jobs submitted, a firmware watchdog
 *           recovery that aborts them, then normal work again
 *
 * latency   jobs back to back, each waited for in ivpu_bo_wait_ioctl, which
 *           sleeps 2 ms (the slow function); ivpu_hw_ip_db_set and the other
 *           calls return at once
 *
 * alloc     the tutorial's matmul set-up as the driver sees it: three
 *           zeMemAllocHost calls (the stand-in exports one, as the user-space
 *           driver would), each a DRM_IOCTL_IVPU_BO_CREATE handled by
 *           ivpu_bo_create_ioctl, which maps 1,377 pages
 *           (ivpu_mmu_context_map_page) and pins the buffer; then one job
 *           through ivpu_submit_ioctl, 40 IPC interrupts and its completion
 *
 * Prints "onset MONO_NS" (CLOCK_MONOTONIC) when the scenario's fault starts
 * (normal: when the first burst starts), then runs for SECONDS in all
 * (default 10), and last prints "done N": the jobs it completed.
 *
 *   npu_driver rate N SECONDS
 *
 * A probe storm for the benchmarks: jobs submitted and completed back to
 * back (three probed calls each: ivpu_hw_ip_db_set, ivpu_hw_ip_ipc_rx_addr_get,
 * ivpu_job_done_callback), N probed calls a second paced in 1 ms slices, or
 * as fast as it can with N = 0.  Prints "calls C wall_ns W cpu_ns T pid P".
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, used))

/* npu_driver_old.c: a driver from before 6.11, whose doorbell function has
 * another name, so jobs are seen only as submit ioctls. */
#ifdef NPU_DRIVER_NO_DOORBELL
#define ivpu_hw_ip_db_set stand_in_ring_doorbell
#endif

struct ivpu_device { int id; };
struct ivpu_ipc_consumer { int channel; };
struct ivpu_ipc_hdr { uint32_t data_addr, data_size, channel, src_node, dst_node, status; };
struct vpu_jsm_msg {
	uint64_t reserved_0;
	uint32_t type, status, request_id, result;
	uint64_t reserved_1;
	uint32_t payload[26];	/* @32 */
};
struct device { int id; };
struct drm_device { int id; };
struct drm_file { int id; };
struct drm_gem_object { size_t size; };
struct ivpu_bo { uint64_t vpu_addr; };
struct ivpu_mmu_context { int id; };
struct sg_table { int nents; };

#define JSM_JOB_DONE 0x2100
#define JSM_QUERY_ENGINE_HB 0x1104
#define JSM_QUERY_ENGINE_HB_DONE 0x2204
#define JOB_STATUS_ABORTED 256

static volatile int sink;
static int reply_timeout;	/* ivpu_ipc_receive times out */
static uint64_t heartbeat = 1000;

/* ---- the driver's functions (bodies only touch their arguments) ---- */

NOINLINE void ivpu_hw_ip_ipc_tx_set(struct ivpu_device *vdev, uint32_t vpu_addr) { sink = (int)vpu_addr; }
NOINLINE uint32_t ivpu_hw_ip_ipc_rx_addr_get(struct ivpu_device *vdev) { return (uint32_t)sink; }
NOINLINE void ivpu_hw_ip_db_set(struct ivpu_device *vdev, uint32_t db_id) { sink = (int)db_id; }

NOINLINE int ivpu_ipc_send(struct ivpu_device *vdev, struct ivpu_ipc_consumer *cons, struct vpu_jsm_msg *req)
{
	ivpu_hw_ip_ipc_tx_set(vdev, req->type);
	return 0;
}

NOINLINE int ivpu_ipc_receive(struct ivpu_device *vdev, struct ivpu_ipc_consumer *cons,
			      struct ivpu_ipc_hdr *ipc_buf, struct vpu_jsm_msg *jsm_msg,
			      unsigned long timeout_ms)
{
	if (reply_timeout)
		return -ETIMEDOUT;
	ivpu_hw_ip_ipc_rx_addr_get(vdev);
	memset(jsm_msg, 0, sizeof(*jsm_msg));
	jsm_msg->type = JSM_QUERY_ENGINE_HB_DONE;
	heartbeat += 17;
	memcpy(&jsm_msg->payload[2], &heartbeat, sizeof(heartbeat));	/* @40 */
	return 0;
}

NOINLINE void ivpu_job_done_callback(struct ivpu_device *vdev, struct ivpu_ipc_hdr *ipc_hdr,
				     struct vpu_jsm_msg *jsm_msg)
{
	sink = (int)jsm_msg->payload[2];
}

NOINLINE void ivpu_jobs_abort_all(struct ivpu_device *vdev) { sink = vdev->id; }
NOINLINE void ivpu_cmdq_abort_all_jobs(struct ivpu_device *vdev, uint32_t ctx_id, uint32_t cmdq_id) { sink = (int)ctx_id; }
NOINLINE void ivpu_pm_trigger_recovery(struct ivpu_device *vdev, const char *reason) { sink = reason[0]; }
NOINLINE int ivpu_pm_runtime_suspend_cb(struct device *dev) { return sink = 0; }
NOINLINE int ivpu_pm_runtime_resume_cb(struct device *dev) { return sink = 0; }

NOINLINE struct drm_gem_object *ivpu_gem_create_object(struct drm_device *dev, size_t size)
{
	static struct drm_gem_object obj;
	obj.size = size;
	return &obj;
}

NOINLINE int ivpu_bo_bind(struct ivpu_bo *bo) { return sink = (int)bo->vpu_addr; }

NOINLINE int ivpu_mmu_context_map_sgt(struct ivpu_device *vdev, struct ivpu_mmu_context *ctx,
				      uint64_t vpu_addr, struct sg_table *sgt, int llc_coherent)
{
	return sink = (int)vpu_addr;
}

NOINLINE void ivpu_mmu_context_unmap_sgt(struct ivpu_device *vdev, struct ivpu_mmu_context *ctx,
					 uint64_t vpu_addr, struct sg_table *sgt)
{
	sink = (int)vpu_addr;
}

NOINLINE void ivpu_mmu_irq_evtq_handler(struct ivpu_device *vdev) { sink = vdev->id; }

NOINLINE int ivpu_mmu_context_map_page(struct ivpu_device *vdev, struct ivpu_mmu_context *ctx,
				       uint64_t vpu_addr, uint64_t dma_addr, uint64_t prot)
{
	return sink = (int)(vpu_addr + dma_addr + prot);
}

NOINLINE int ivpu_bo_pin(struct ivpu_bo *bo) { return sink = (int)bo->vpu_addr; }
NOINLINE void ivpu_ipc_irq_handler(struct ivpu_device *vdev) { sink = vdev->id; }

#define ALLOC_PAGES 1377

/* DRM_IOCTL_IVPU_BO_CREATE's handler: the buffer is mapped page by page. */
NOINLINE int ivpu_bo_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct ivpu_bo bo = { 0x200000000ULL };
	struct ivpu_mmu_context ctx = { 1 };
	ivpu_gem_create_object(dev, (size_t)ALLOC_PAGES * 4096);
	for (uint64_t i = 0; i < ALLOC_PAGES; i++)
		ivpu_mmu_context_map_page((struct ivpu_device *)dev, &ctx, bo.vpu_addr + i * 4096, i * 4096, 3);
	return ivpu_bo_pin(&bo);
}

/* DRM_IOCTL_IVPU_SUBMIT's handler: one doorbell. */
NOINLINE int ivpu_submit_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	ivpu_hw_ip_db_set((struct ivpu_device *)dev, 1);
	return 0;
}

static void sleep_ms(double ms);

/* DRM_IOCTL_IVPU_BO_WAIT's handler: the job takes 2 ms. */
NOINLINE int ivpu_bo_wait_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	sleep_ms(2);
	return 0;
}

/* The Level Zero entry point of the user-space driver: one ioctl. */
NOINLINE int zeMemAllocHost(void *context, const void *desc, size_t size, size_t align, void **ptr)
{
	static struct drm_device dev = { 1 };
	*ptr = NULL;
	return ivpu_bo_create_ioctl(&dev, &size, NULL);
}

/* ---- scenario helpers ---- */

static struct ivpu_device vdev = { 1 };
static struct ivpu_ipc_consumer cons = { 0 };

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(double ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)((ms - (double)(long)(ms / 1000) * 1000) * 1e6) };
	nanosleep(&ts, NULL);
}

static void onset(void)
{
	printf("onset %llu\n", (unsigned long long)now_ns());
	fflush(stdout);
}

static uint32_t jobs_done;	/* printed at the end: what xputop must have counted */

static void job_done(uint32_t db, uint32_t job_id, uint32_t status)
{
	jobs_done++;
	struct ivpu_ipc_hdr hdr = { 0 };
	struct vpu_jsm_msg msg = { .type = JSM_JOB_DONE };
	msg.payload[0] = 0;		/* engine */
	msg.payload[1] = db;
	msg.payload[2] = job_id;
	msg.payload[3] = status;
	ivpu_hw_ip_ipc_rx_addr_get(&vdev);
	ivpu_job_done_callback(&vdev, &hdr, &msg);
}

static void heartbeat_query(void)
{
	struct vpu_jsm_msg req = { .type = JSM_QUERY_ENGINE_HB }, resp;
	struct ivpu_ipc_hdr hdr;
	ivpu_ipc_send(&vdev, &cons, &req);
	ivpu_ipc_receive(&vdev, &cons, &hdr, &resp, 500);
}

static void buffers(uint64_t addr)
{
	struct ivpu_bo bo = { addr };
	struct ivpu_mmu_context ctx = { 1 };
	struct sg_table sgt = { 1 };
	ivpu_gem_create_object((struct drm_device *)&vdev, 1 << 20);
	ivpu_bo_bind(&bo);
	ivpu_mmu_context_map_sgt(&vdev, &ctx, addr, &sgt, 0);
}

static void submit(void)
{
	static struct drm_device dev = { 1 };
	ivpu_submit_ioctl(&dev, NULL, NULL);
}

/* About 100 jobs a second on doorbell 1, each done in ~3 ms, with a
 * heartbeat query every 50 jobs and a buffer every 20. */
static uint32_t next_job = 1;

static void burst(double secs)
{
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	ivpu_pm_runtime_resume_cb((struct device *)&vdev);
	while (now_ns() < end) {
		uint32_t id = next_job++;
		if (id % 20 == 1)
			buffers(0x100000000ULL + (uint64_t)id * 4096);
		submit();
		sleep_ms(3);
		job_done(1, id, 0);
		if (id % 50 == 0)
			heartbeat_query();
		sleep_ms(7);
	}
	ivpu_pm_runtime_suspend_cb((struct device *)&vdev);
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int storm(long per_s, double secs)
{
	uint64_t start = now_ns(), end = start + (uint64_t)(secs * 1e9), c0 = cpu_ns(), done = 0, t;
	while ((t = now_ns()) < end) {
		uint64_t due = per_s ? (uint64_t)((double)(t - start) * (double)per_s / 1e9) : done + 3000;
		for (; done < due; done += 3) {
			uint32_t id = next_job++;
			ivpu_hw_ip_db_set(&vdev, 1);
			job_done(1, id, 0);
		}
		if (per_s) {
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, NULL);
		}
	}
	printf("calls %llu wall_ns %llu cpu_ns %llu pid %d\n", (unsigned long long)done,
	       (unsigned long long)(now_ns() - start), (unsigned long long)(cpu_ns() - c0), (int)getpid());
	return 0;
}

static void until(uint64_t end)
{
	while (now_ns() < end)
		sleep_ms(20);
}

int main(int argc, char **argv)
{
	const char *scenario = argc > 1 ? argv[1] : "normal";
	if (strcmp(scenario, "rate") == 0 && argc == 4)
		return storm(atol(argv[2]), atof(argv[3]));
	double secs = argc > 2 ? atof(argv[2]) : 10;
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);

	if (strcmp(scenario, "normal") == 0) {
		onset();
		while (now_ns() < end) {
			burst(2);
			sleep_ms(1500);	/* quiet and healthy: nothing outstanding */
		}
	} else if (strcmp(scenario, "stall") == 0) {
		burst(4);
		sleep_ms(300);
		onset();
		ivpu_pm_runtime_resume_cb((struct device *)&vdev);
		submit();	/* never completes */
		until(end);
	} else if (strcmp(scenario, "storm") == 0) {
		burst(4);
		onset();
		reply_timeout = 1;
		for (uint64_t stop = now_ns() + 3000000000ULL, i = 0; now_ns() < stop; i++) {
			heartbeat_query();
			if (i % 2)
				sleep_ms(0.9);
		}
		reply_timeout = 0;
		until(end);
	} else if (strcmp(scenario, "recovery") == 0) {
		burst(4);
		ivpu_hw_ip_db_set(&vdev, 1);
		ivpu_hw_ip_db_set(&vdev, 1);
		onset();
		sleep_ms(100);
		ivpu_pm_trigger_recovery(&vdev, "WDT NCE IRQ");
		ivpu_jobs_abort_all(&vdev);
		burst(3);
		until(end);
	} else if (strcmp(scenario, "latency") == 0) {
		static struct drm_device dev = { 1 };
		onset();
		while (now_ns() < end) {
			uint32_t id = next_job++;
			submit();
			ivpu_bo_wait_ioctl(&dev, NULL, NULL);
			job_done(1, id, 0);
		}
	} else if (strcmp(scenario, "alloc") == 0) {
		static struct drm_device dev = { 1 };
		void *ptr;
		onset();
		for (int i = 0; i < 3; i++)
			zeMemAllocHost(NULL, NULL, (size_t)ALLOC_PAGES * 4096, 4096, &ptr);
		ivpu_submit_ioctl(&dev, NULL, NULL);
		for (int i = 0; i < 40; i++)
			ivpu_ipc_irq_handler(&vdev);
		job_done(1, next_job++, 0);
		until(end);
	} else {
		fprintf(stderr, "usage: npu_driver normal|stall|storm|recovery|latency|alloc [SECONDS] | rate N SECONDS\n");
		return 2;
	}
	printf("done %u\n", jobs_done);
	return 0;
}
