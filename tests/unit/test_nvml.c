/* SPDX-License-Identifier: GPL-2.0-only */
/* NVML through the stand-in libraries the build makes (tests/fake/fake_nvml.c),
 * loaded with dlopen as the real one is, and the events a poll becomes. */
#include "check.h"

#include <libgen.h>
#include <limits.h>
#include <unistd.h>

#include "dict.h"
#include "event.h"
#include "nvml.h"
#include "source_nvml.h"

static char scenario[] = "/tmp/xputop-nvml-XXXXXX";
static struct xpu_nvml_sample smp;

/* A stand-in library next to this test binary. */
static const char *lib(const char *name)
{
	static char path[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dirname(exe), name);
	return path;
}

static void drop_scenario(void)
{
	unlink(scenario);
}

static void play(const char *text)
{
	static int fd = -1;
	if (fd < 0) {
		fd = mkstemp(scenario);
		setenv("FAKE_NVML", scenario, 1);
		atexit(drop_scenario);
	}
	FILE *f = fopen(scenario, "w");
	fputs(text, f);
	fclose(f);
}

/* Opens the stand-in on text and polls it once into smp. */
static struct xpu_nvml *poll_once(const char *name, const char *text)
{
	char why[256];
	int absent;
	play(text);
	struct xpu_nvml *n = xpu_nvml_open(lib(name), why, sizeof(why), &absent);
	if (!n) {
		fprintf(stderr, "  cannot open %s: %s\n", name, why);
		return NULL;
	}
	if (xpu_nvml_poll(n, &smp, why, sizeof(why)) < 0)
		fprintf(stderr, "  poll: %s\n", why);
	return n;
}

TEST(the_newest_versioned_functions_are_the_ones_called)
{
	/* The stand-in's unversioned functions fail: only _v2/_v3 succeed. */
	struct xpu_nvml *n = poll_once("libfake_nvml.so",
				       "device\nname A\nmemory 1000 400\nproc compute 7 300\n");
	REQUIRE(n);
	REQUIRE(smp.ndev == 1);
	CHECK_INT(smp.dev[0].err, ==, 0);
	CHECK_INT(smp.dev[0].mem_used, ==, 400);
	REQUIRE(smp.nproc == 1);
	CHECK_INT(smp.proc[0].pid, ==, 7);
	CHECK_INT(smp.proc[0].mem, ==, 300);
	xpu_nvml_close(n);
}

TEST(an_old_drivers_process_layout_is_read_with_its_own_size)
{
	struct xpu_nvml *n = poll_once("libfake_nvml_v1.so", "device\nname K80\nmemory 1000 10\n"
				       "proc compute 7 300\nproc compute 8 500\nproc graphics 9 1\n");
	REQUIRE(n);
	REQUIRE(smp.nproc == 3);
	CHECK_INT(smp.proc[1].pid, ==, 8);
	CHECK_INT(smp.proc[1].mem, ==, 500);
	CHECK_INT(smp.proc[2].flags & XPU_GPU_DEVPROC_GRAPHICS, !=, 0);
	CHECK_INT(smp.proc[2].flags & XPU_GPU_DEVPROC_MIG, ==, 0);
	CHECK_INT(smp.dev[0].mem_used, ==, 10);
	xpu_nvml_close(n);
}

TEST(init_failure_gives_nvmls_sentence)
{
	char why[256];
	int absent = 1;
	play("init 9\n");
	CHECK(xpu_nvml_open(lib("libfake_nvml.so"), why, sizeof(why), &absent) == NULL);
	CHECK(strstr(why, "nvmlInit failed: Driver Not Loaded") != NULL);
	CHECK_INT(absent, ==, 0);
}

TEST(a_named_library_that_is_not_there_is_a_failure_not_an_absence)
{
	char why[256];
	int absent = 1;
	CHECK(xpu_nvml_open("/nonexistent/libnvidia-ml.so.1", why, sizeof(why), &absent) == NULL);
	CHECK_INT(absent, ==, 0);
	CHECK(strstr(why, "cannot load /nonexistent/libnvidia-ml.so.1") != NULL);
}

TEST(without_a_named_library_the_drivers_is_searched)
{
	char why[256];
	int absent = 0;
	struct xpu_nvml *n = xpu_nvml_open(NULL, why, sizeof(why), &absent);
	/* CI machines have no NVIDIA driver; where one is, it opens. */
	if (n)
		xpu_nvml_close(n);
	else
		CHECK(absent ? strstr(why, "libnvidia-ml.so.1 is not installed") != NULL : why[0] != '\0');
}

TEST(a_library_without_nvml_is_refused_by_name)
{
	char why[256];
	int absent;
	CHECK(xpu_nvml_open(lib("libxputop_inject_fake.so"), why, sizeof(why), &absent) == NULL);
	CHECK(strstr(why, "has no nvmlInit_v2") != NULL);
}

TEST(an_unsupported_field_is_not_an_error)
{
	struct xpu_nvml *n = poll_once("libfake_nvml.so", "device\nname A\n");
	REQUIRE(n);
	/* A device without NVLink says so: its link count is known, 0. */
	CHECK_INT(smp.dev[0].flags, ==, XPU_GPU_DEV_NVLINKS);
	CHECK_INT(smp.dev[0].nvlinks, ==, 0);
	CHECK_INT(smp.dev[0].err, ==, 0);
	CHECK_STR(smp.dev[0].name, "A");
	CHECK_STR(smp.dev[0].bus, "");
	xpu_nvml_close(n);
}

TEST(the_first_error_of_a_device_is_kept_with_its_function)
{
	struct xpu_nvml *n = poll_once("libfake_nvml.so", "device\nname A\ntemp 50\npower 1\n"
				       "fail nvmlDeviceGetTemperature 15\nfail nvmlDeviceGetPowerUsage 999\n");
	REQUIRE(n);
	CHECK_INT(smp.dev[0].err, ==, 999);
	CHECK_STR(smp.dev[0].err_fn, "nvmlDeviceGetPowerUsage");
	CHECK_INT(smp.dev[0].flags & (XPU_GPU_DEV_POWER | XPU_GPU_DEV_TEMP), ==, 0);
	CHECK_STR(xpu_nvml_error(n, 15), "GPU is lost");
	xpu_nvml_close(n);
}

TEST(no_device_is_an_empty_poll)
{
	struct xpu_nvml *n = poll_once("libfake_nvml.so", "driver 1.2\n");
	REQUIRE(n);
	CHECK_INT(smp.count, ==, 0);
	CHECK_INT(smp.ndev, ==, 0);
	CHECK(strstr(xpu_nvml_describe(n), "driver 1.2") != NULL);
	xpu_nvml_close(n);
}

TEST(a_list_longer_than_the_first_buffer_is_read_whole)
{
	char text[8192] = "device\nname A\n";
	for (int i = 0; i < 100; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "proc compute %d %d\n", 1000 + i, i);
	struct xpu_nvml *n = poll_once("libfake_nvml.so", text);
	REQUIRE(n);
	REQUIRE(smp.nproc == 100);
	CHECK_INT(smp.proc[99].pid, ==, 1099);
	CHECK_INT(smp.proc[99].mem, ==, 99);
	xpu_nvml_close(n);
}

TEST(one_pid_in_both_lists_is_one_process_with_its_larger_memory)
{
	struct xpu_nvml *n = poll_once("libfake_nvml.so", "device\nname A\nproc compute 5 100\n"
				       "proc graphics 5 300\nproc compute 6 na\n");
	REQUIRE(n);
	REQUIRE(smp.nproc == 2);
	CHECK_INT(smp.proc[0].flags & (XPU_GPU_DEVPROC_COMPUTE | XPU_GPU_DEVPROC_GRAPHICS), ==,
		  XPU_GPU_DEVPROC_COMPUTE | XPU_GPU_DEVPROC_GRAPHICS);
	CHECK_INT(smp.proc[0].mem, ==, 300);
	CHECK_INT(smp.proc[1].flags & XPU_GPU_DEVPROC_MEM, ==, 0);
	xpu_nvml_close(n);
}

TEST(each_process_keeps_its_newest_utilization_sample)
{
	/* The stand-in gives each process a 100% sample, then a newer one. */
	struct xpu_nvml *n = poll_once("libfake_nvml.so", "device\nname A\nproc compute 5 1\n"
				       "proc compute 6 1\nprocutil 5 37 21 3 4\n");
	REQUIRE(n);
	CHECK_INT(smp.proc[0].flags & XPU_GPU_DEVPROC_UTIL, !=, 0);
	CHECK_INT(smp.proc[0].sm, ==, 37);
	CHECK_INT(smp.proc[0].mem_util, ==, 21);
	CHECK_INT(smp.proc[0].dec, ==, 4);
	CHECK_INT(smp.proc[1].flags & XPU_GPU_DEVPROC_UTIL, ==, 0);
	xpu_nvml_close(n);
}

TEST(mig_instances_and_no_process_utilization)
{
	struct xpu_nvml *n = poll_once("libfake_nvml.so", "device\nname A100\nmig\nproc compute 5 1 3 1\n"
				       "procutil 5 50 50 0 0\n");
	REQUIRE(n);
	CHECK_INT(smp.dev[0].flags & XPU_GPU_DEV_MIG, !=, 0);
	CHECK_INT(smp.dev[0].err, ==, 0);
	CHECK_INT(smp.proc[0].flags & XPU_GPU_DEVPROC_UTIL, ==, 0);
	CHECK_INT(smp.proc[0].flags & XPU_GPU_DEVPROC_MIG, !=, 0);
	CHECK_INT(smp.proc[0].gi, ==, 3);
	CHECK_INT(smp.proc[0].ci, ==, 1);
	xpu_nvml_close(n);
}

TEST(nvlink_counters_are_read_over_all_links)
{
	struct xpu_nvml *n = poll_once("libfake_nvml.so", "device\nname A\nnvlink 12 100 200\n");
	REQUIRE(n);
	CHECK_INT(smp.dev[0].nvlinks, ==, 12);
	CHECK_INT(smp.dev[0].flags & (XPU_GPU_DEV_NVLINK_RX | XPU_GPU_DEV_NVLINK_TX), ==,
		  XPU_GPU_DEV_NVLINK_RX | XPU_GPU_DEV_NVLINK_TX);
	CHECK_INT(smp.dev[0].nvlink_rx_kib, >=, 1ULL << 40);
	xpu_nvml_close(n);
}

/* ---- the events of a poll ---- */

static struct xpu_event got[64];
static int ngot;

static void sink(void *ctx, const struct xpu_event *ev)
{
	const char *why;
	if (xpu_event_check(ev, ctx, &why))
		fprintf(stderr, "  event of type %u refused: %s\n", ev->type, why), check_failed++;
	if (ngot < 64)
		got[ngot++] = *ev;
}

static void events(struct xpu_dict *d, uint64_t *refused)
{
	ngot = 0;
	*refused = 0;
	xpu_nvml_events(&smp, d, sink, d, refused);
}

static void one_device(void)
{
	memset(&smp, 0, sizeof(smp));
	smp.ndev = smp.count = 1;
	smp.time = 5;
	snprintf(smp.dev[0].name, sizeof(smp.dev[0].name), "NVIDIA H100");
}

TEST(a_poll_is_dev_then_link_then_its_processes)
{
	struct xpu_dict d;
	uint64_t refused;
	xpu_dict_init(&d);
	one_device();
	smp.dev[0].index = 3;
	smp.dev[0].flags = XPU_GPU_DEV_MEM | XPU_GPU_DEV_PCIE_RX;
	smp.dev[0].mem_used = 3ULL << 30;
	smp.dev[0].mem_total = 80ULL << 30;
	smp.dev[0].pcie_rx_kbs = 77;
	smp.nproc = 1;
	smp.proc[0] = (struct xpu_nvml_proc){ .dev = 0, .pid = 42, .flags = XPU_GPU_DEVPROC_MEM, .mem = 9 };
	events(&d, &refused);
	REQUIRE(ngot == 3);
	CHECK_INT(got[0].type, ==, XPU_EV_GPU_DEV);
	CHECK_INT(got[0].gdev.index, ==, 3);
	CHECK_STR(xpu_dict_str_get(&d, got[0].gdev.name), "NVIDIA H100");
	CHECK_INT(got[0].gdev.bus, ==, 0);
	CHECK_INT(got[0].gdev.mem_used_mib, ==, 3072);
	CHECK_INT(got[0].gdev.mem_total_mib, ==, 81920);
	CHECK_INT(got[1].type, ==, XPU_EV_GPU_DEV_LINK);
	CHECK_INT(got[1].glink.flags, ==, XPU_GPU_DEV_PCIE_RX);
	CHECK_INT(got[1].glink.pcie_rx_kbs, ==, 77);
	CHECK_INT(got[2].type, ==, XPU_EV_GPU_DEV_PROC);
	CHECK_INT(got[2].pid, ==, 42);
	CHECK_INT(got[2].gdproc.index, ==, 3);
	CHECK_INT(got[2].gdproc.comm, ==, 0);	/* not looked up in /proc */
	CHECK_INT(refused, ==, 0);
	xpu_dict_free(&d);
}

TEST(values_out_of_range_are_left_out_and_counted)
{
	struct xpu_dict d;
	uint64_t refused;
	xpu_dict_init(&d);
	one_device();
	struct xpu_nvml_dev *v = &smp.dev[0];
	v->flags = XPU_GPU_DEV_UTIL | XPU_GPU_DEV_MEM_UTIL | XPU_GPU_DEV_MEM | XPU_GPU_DEV_TEMP |
		   XPU_GPU_DEV_SM_CLOCK | XPU_GPU_DEV_POWER;
	v->util_gpu = 101;
	v->util_mem = 100;
	v->mem_used = 2;
	v->mem_total = 1;
	v->temp_c = 70000;
	v->sm_mhz = 65535;
	v->power_mw = 5;
	smp.nproc = 1;
	smp.proc[0] = (struct xpu_nvml_proc){ .flags = XPU_GPU_DEVPROC_UTIL | XPU_GPU_DEVPROC_MIG,
					      .dec = 300, .gi = 70000 };
	events(&d, &refused);
	REQUIRE(ngot == 3);
	CHECK_INT(got[0].gdev.flags, ==, XPU_GPU_DEV_MEM_UTIL | XPU_GPU_DEV_SM_CLOCK | XPU_GPU_DEV_POWER);
	CHECK_INT(got[0].gdev.util_gpu, ==, 0);
	CHECK_INT(got[0].gdev.util_mem, ==, 100);
	CHECK_INT(got[2].gdproc.flags, ==, 0);
	CHECK_INT(refused, ==, 5);
	xpu_dict_free(&d);
}

TEST(strings_without_their_nul_are_cut_to_their_buffers)
{
	struct xpu_dict d;
	uint64_t refused;
	xpu_dict_init(&d);
	one_device();
	memset(smp.dev[0].name, 'N', sizeof(smp.dev[0].name));
	memset(smp.dev[0].bus, 'B', sizeof(smp.dev[0].bus));
	smp.nproc = 1;
	smp.proc[0] = (struct xpu_nvml_proc){ .pid = 1, .flags = XPU_GPU_DEVPROC_NSPID };
	memset(smp.proc[0].ns.comm, 'C', sizeof(smp.proc[0].ns.comm));
	events(&d, &refused);
	REQUIRE(ngot == 3);
	CHECK_INT(xpu_dict_str_len(&d, got[0].gdev.name), ==, XPU_NVML_NAME - 1);
	CHECK_INT(xpu_dict_str_len(&d, got[0].gdev.bus), ==, XPU_NVML_BUS - 1);
	CHECK_INT(xpu_dict_str_len(&d, got[2].gdproc.comm), ==, XPU_PIDNS_COMM - 1);
	xpu_dict_free(&d);
}

TEST(a_device_index_past_63_and_a_process_of_no_device_are_dropped)
{
	struct xpu_dict d;
	uint64_t refused;
	xpu_dict_init(&d);
	one_device();
	smp.dev[0].index = XPU_GPU_DEV_MAX;
	smp.nproc = 1;
	smp.proc[0] = (struct xpu_nvml_proc){ .dev = 0, .pid = 1 };
	events(&d, &refused);
	CHECK_INT(ngot, ==, 0);
	CHECK_INT(refused, ==, 1);
	xpu_dict_free(&d);
}
