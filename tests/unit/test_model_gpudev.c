/* SPDX-License-Identifier: GPL-2.0-only */
/* The GPU device model, fed device samples through the event seam. */
#include "check.h"

#include "event.h"
#include "model_gpudev.h"

#define S 1000000000ULL

static struct xpu_event dev(uint32_t index, uint64_t time, uint32_t flags)
{
	struct xpu_event ev = { .type = XPU_EV_GPU_DEV, .source = XPU_SRC_GPU, .time = time };
	ev.gdev.index = index;
	ev.gdev.flags = flags;
	ev.gdev.util_gpu = 45;
	ev.gdev.util_mem = 12;
	ev.gdev.temp_c = 63;
	ev.gdev.sm_mhz = 1980;
	ev.gdev.mem_mhz = 2619;
	ev.gdev.mem_used_mib = 20480;
	ev.gdev.mem_total_mib = 81920;
	ev.gdev.power_mw = 312500;
	ev.gdev.power_limit_mw = 700000;
	return ev;
}

static struct xpu_event link(uint32_t index, uint64_t time, uint32_t flags, uint64_t rx_kib, uint64_t tx_kib)
{
	struct xpu_event ev = { .type = XPU_EV_GPU_DEV_LINK, .source = XPU_SRC_GPU, .time = time };
	ev.glink.index = index;
	ev.glink.flags = flags;
	ev.glink.pcie_rx_kbs = 1000;
	ev.glink.pcie_tx_kbs = 2000;
	ev.glink.nvlink_rx_kib = rx_kib;
	ev.glink.nvlink_tx_kib = tx_kib;
	ev.glink.nvlinks = 18;
	return ev;
}

static struct xpu_event proc(uint32_t index, uint32_t pid, uint64_t mem, uint32_t flags)
{
	struct xpu_event ev = { .type = XPU_EV_GPU_DEV_PROC, .source = XPU_SRC_GPU, .pid = pid };
	ev.gdproc.index = index;
	ev.gdproc.mem = mem;
	ev.gdproc.flags = flags;
	ev.gdproc.sm_pct = 30;
	return ev;
}

static void feed(struct xpu_gpudev_model *m, struct xpu_event ev)
{
	xpu_gpudev_model_event(m, &ev);
}

static struct xpu_gpudev_snap snap;

static const struct xpu_gpudev_snap *snapshot(struct xpu_gpudev_model *m, uint64_t now)
{
	xpu_gpudev_model_tick(m, now, S);
	xpu_gpudev_model_snapshot(m, &snap);
	return &snap;
}

TEST(a_device_sample_sets_the_fields_it_flags_and_only_those)
{
	struct xpu_gpudev_model m;
	xpu_gpudev_model_init(&m);
	feed(&m, dev(0, S, XPU_GPU_DEV_UTIL | XPU_GPU_DEV_MEM | XPU_GPU_DEV_POWER));
	const struct xpu_gpudev_snap *s = snapshot(&m, S);
	REQUIRE(s->ndev == 1);
	const struct xpu_gpudev *d = &s->dev[0];
	CHECK_INT(d->valid, ==, XPU_GPU_DEV_UTIL | XPU_GPU_DEV_MEM | XPU_GPU_DEV_POWER);
	CHECK(d->util_gpu == 45);
	CHECK_INT(d->mem_used, ==, 20480ULL << 20);
	CHECK_INT(d->mem_total, ==, 81920ULL << 20);
	CHECK(d->mem_pct == 25);
	CHECK(d->power_w == 312.5);
	CHECK(!d->mig && !d->stale);
}

TEST(a_memory_total_of_zero_is_no_memory_figure)
{
	struct xpu_gpudev_model m;
	xpu_gpudev_model_init(&m);
	struct xpu_event ev = dev(0, S, XPU_GPU_DEV_MEM);
	ev.gdev.mem_used_mib = ev.gdev.mem_total_mib = 0;
	feed(&m, ev);
	CHECK_INT(snapshot(&m, S)->dev[0].valid & XPU_GPU_DEV_MEM, ==, 0);
}

TEST(devices_are_kept_in_index_order)
{
	struct xpu_gpudev_model m;
	xpu_gpudev_model_init(&m);
	feed(&m, dev(5, S, 0));
	feed(&m, dev(0, S, 0));
	feed(&m, dev(2, S, 0));
	feed(&m, dev(0, S, 0));
	const struct xpu_gpudev_snap *s = snapshot(&m, S);
	REQUIRE(s->ndev == 3);
	CHECK_INT(s->dev[0].index, ==, 0);
	CHECK_INT(s->dev[1].index, ==, 2);
	CHECK_INT(s->dev[2].index, ==, 5);
}

TEST(a_new_sample_replaces_the_devices_processes_only)
{
	struct xpu_gpudev_model m;
	xpu_gpudev_model_init(&m);
	feed(&m, dev(0, S, 0));
	feed(&m, proc(0, 10, 1, XPU_GPU_DEVPROC_MEM));
	feed(&m, proc(0, 11, 1, XPU_GPU_DEVPROC_MEM));
	feed(&m, dev(1, S, 0));
	feed(&m, proc(1, 20, 1, XPU_GPU_DEVPROC_MEM));
	feed(&m, dev(0, 2 * S, 0));
	feed(&m, proc(0, 12, 1, XPU_GPU_DEVPROC_MEM));
	const struct xpu_gpudev_snap *s = snapshot(&m, 2 * S);
	REQUIRE(s->nproc == 2);
	CHECK_INT(s->proc[0].pid, ==, 12);
	CHECK_INT(s->proc[1].pid, ==, 20);
	CHECK_INT(s->dev[0].nprocs, ==, 1);
	CHECK_INT(s->dev[1].nprocs, ==, 1);
}

TEST(nvlink_rates_need_two_readings_of_the_counters)
{
	struct xpu_gpudev_model m;
	uint32_t all = XPU_GPU_DEV_LINK_BITS;
	xpu_gpudev_model_init(&m);
	feed(&m, dev(0, S, 0));
	feed(&m, link(0, S, all, 1000, 5000));
	const struct xpu_gpudev_snap *s = snapshot(&m, S);
	CHECK_INT(s->dev[0].valid & (XPU_GPU_DEV_NVLINK_RX | XPU_GPU_DEV_NVLINK_TX), ==, 0);
	CHECK_INT(s->dev[0].valid & XPU_GPU_DEV_NVLINKS, !=, 0);
	CHECK(s->dev[0].pcie_rx == 1000 * 1024.0);
	feed(&m, dev(0, 3 * S, 0));
	feed(&m, link(0, 3 * S, all, 3000, 5000));
	s = snapshot(&m, 3 * S);
	CHECK_INT(s->dev[0].valid & (XPU_GPU_DEV_NVLINK_RX | XPU_GPU_DEV_NVLINK_TX), ==,
		  XPU_GPU_DEV_NVLINK_RX | XPU_GPU_DEV_NVLINK_TX);
	CHECK(s->dev[0].nvlink_rx == 1000 * 1024.0);	/* 2000 KiB in 2 s */
	CHECK(s->dev[0].nvlink_tx == 0);
	feed(&m, dev(0, 4 * S, 0));
	feed(&m, link(0, 4 * S, all, 10, 6000));	/* rx went backwards: reset */
	s = snapshot(&m, 4 * S);
	CHECK_INT(s->dev[0].valid & XPU_GPU_DEV_NVLINK_RX, ==, 0);
	CHECK(s->dev[0].nvlink_tx == 1000 * 1024.0);
}

TEST(an_nvlink_counter_the_last_sample_lacked_gives_no_rate)
{
	struct xpu_gpudev_model m;
	xpu_gpudev_model_init(&m);
	feed(&m, dev(0, S, 0));
	feed(&m, link(0, S, XPU_GPU_DEV_NVLINK_TX, 0, 100));
	feed(&m, dev(0, 2 * S, 0));
	feed(&m, link(0, 2 * S, XPU_GPU_DEV_NVLINK_RX | XPU_GPU_DEV_NVLINK_TX, 500, 200));
	const struct xpu_gpudev_snap *s = snapshot(&m, 2 * S);
	CHECK_INT(s->dev[0].valid & XPU_GPU_DEV_NVLINK_RX, ==, 0);
	CHECK(s->dev[0].nvlink_tx == 100 * 1024.0);
}

TEST(link_and_process_events_of_an_unknown_device_are_refused)
{
	struct xpu_gpudev_model m;
	xpu_gpudev_model_init(&m);
	feed(&m, link(3, S, 0, 0, 0));
	feed(&m, proc(3, 7, 1, 0));
	const struct xpu_gpudev_snap *s = snapshot(&m, S);
	CHECK_INT(s->ndev, ==, 0);
	CHECK_INT(s->nproc, ==, 0);
	CHECK_INT(s->refused, ==, 2);
}

TEST(a_device_not_sampled_for_three_polls_goes_stale)
{
	struct xpu_gpudev_model m;
	xpu_gpudev_model_init(&m);
	feed(&m, dev(0, S, XPU_GPU_DEV_UTIL));
	feed(&m, proc(0, 7, 1, XPU_GPU_DEVPROC_MEM));
	const struct xpu_gpudev_snap *s = snapshot(&m, 4 * S);
	CHECK(!s->dev[0].stale);
	CHECK(s->dev[0].age_s == 3.0);
	s = snapshot(&m, 4 * S + 1);
	CHECK(s->dev[0].stale);
	CHECK_INT(s->dev[0].valid, ==, 0);
	CHECK_INT(s->nproc, ==, 0);
	/* a refresh slower than the poll: its periods count */
	xpu_gpudev_model_tick(&m, 10 * S, 5 * S);
	xpu_gpudev_model_snapshot(&m, &snap);
	CHECK(!snap.dev[0].stale);
}

TEST(processes_sort_by_device_then_memory_unknown_last)
{
	struct xpu_gpudev_model m;
	xpu_gpudev_model_init(&m);
	feed(&m, dev(1, S, 0));
	feed(&m, proc(1, 30, 5, XPU_GPU_DEVPROC_MEM));
	feed(&m, dev(0, S, 0));
	feed(&m, proc(0, 10, 0, 0));
	feed(&m, proc(0, 11, 100, XPU_GPU_DEVPROC_MEM));
	feed(&m, proc(0, 12, 0, XPU_GPU_DEVPROC_MEM));
	const struct xpu_gpudev_snap *s = snapshot(&m, S);
	REQUIRE(s->nproc == 4);
	CHECK_INT(s->proc[0].pid, ==, 11);
	CHECK_INT(s->proc[1].pid, ==, 12);
	CHECK_INT(s->proc[2].pid, ==, 10);
	CHECK_INT(s->proc[3].pid, ==, 30);
}

TEST(processes_past_the_limit_are_counted_not_kept)
{
	struct xpu_gpudev_model m;
	xpu_gpudev_model_init(&m);
	feed(&m, dev(0, S, 0));
	for (uint32_t i = 0; i < XPU_GPUDEV_PROCS + 10; i++)
		feed(&m, proc(0, 100 + i, i, XPU_GPU_DEVPROC_MEM));
	const struct xpu_gpudev_snap *s = snapshot(&m, S);
	CHECK_INT(s->nproc, ==, XPU_GPUDEV_PROCS);
	CHECK_INT(s->dev[0].nprocs, ==, XPU_GPUDEV_PROCS + 10);
}

TEST(mig_mode_is_a_state_not_a_field)
{
	struct xpu_gpudev_model m;
	xpu_gpudev_model_init(&m);
	feed(&m, dev(0, S, XPU_GPU_DEV_MIG | XPU_GPU_DEV_TEMP));
	const struct xpu_gpudev_snap *s = snapshot(&m, S);
	CHECK(s->dev[0].mig);
	CHECK_INT(s->dev[0].valid, ==, XPU_GPU_DEV_TEMP);
}

TEST(the_status_line_is_kept_as_set)
{
	struct xpu_gpudev_model m;
	xpu_gpudev_model_init(&m);
	xpu_gpudev_model_status(&m, 3, "nvmlInit failed: %s", "Driver Not Loaded");
	const struct xpu_gpudev_snap *s = snapshot(&m, S);
	CHECK_INT(s->state, ==, 3);
	CHECK_STR(s->status, "nvmlInit failed: Driver Not Loaded");
}
