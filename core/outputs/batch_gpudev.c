/* SPDX-License-Identifier: GPL-2.0-only */
#include "batch_gpudev.h"

#include <inttypes.h>

#include "batch_fmt.h"
#include "dict.h"
#include "json.h"
#include "snapshot.h"
#include "units.h"

/* A value, or null when the driver did not give it. */
static void num(struct xpu_json *j, const char *key, uint32_t known, double v)
{
	if (known)
		xpu_json_num(j, key, v);
	else
		xpu_json_null(j, key);
}

/* Bytes are integers: a double would round them. */
static void bytes_or_null(struct xpu_json *j, const char *key, uint32_t known, uint64_t v)
{
	if (known)
		xpu_json_uint(j, key, v);
	else
		xpu_json_null(j, key);
}

static void str(struct xpu_json *j, const char *key, const struct xpu_dict *d, uint32_t id)
{
	if (id)
		xpu_json_str(j, key, xpu_dict_str_get(d, id));
	else
		xpu_json_null(j, key);
}

static void json_proc(struct xpu_json *j, const struct xpu_snapshot *s, const struct xpu_gpudev_proc *p)
{
	uint32_t ns = p->valid & XPU_GPU_DEVPROC_NSPID, u = p->valid & XPU_GPU_DEVPROC_UTIL;
	uint32_t mig = p->valid & XPU_GPU_DEVPROC_MIG;
	xpu_json_obj(j, NULL);
	xpu_json_uint(j, "pid", p->pid);
	num(j, "container_pid", ns, p->nspid);
	str(j, "comm", s->dict, p->comm);
	str(j, "user", s->dict, p->user);
	xpu_json_str(j, "type", xpu_gpudev_proc_type(p->valid));
	bytes_or_null(j, "gpu_mem_bytes", p->valid & XPU_GPU_DEVPROC_MEM, p->mem);
	num(j, "sm_pct", u, p->sm_pct);
	num(j, "mem_pct", u, p->mem_pct);
	num(j, "enc_pct", u, p->enc_pct);
	num(j, "dec_pct", u, p->dec_pct);
	num(j, "mig_gpu_instance", mig, p->gi);
	num(j, "mig_compute_instance", mig, p->ci);
	xpu_json_end(j, '}');
}

static void json_device(struct xpu_json *j, const struct xpu_snapshot *s, const struct xpu_gpudev *d)
{
	const struct xpu_gpudev_snap *g = &s->gpu.dev;
	uint32_t v = d->valid, shown = 0;
	xpu_json_obj(j, NULL);
	xpu_json_uint(j, "index", d->index);
	str(j, "name", s->dict, d->name);
	str(j, "bus_id", s->dict, d->bus);
	xpu_json_bool(j, "mig", d->mig);
	xpu_json_bool(j, "stale", d->stale);
	xpu_json_num(j, "age_s", d->age_s);
	num(j, "gpu_util_pct", v & XPU_GPU_DEV_UTIL, d->util_gpu);
	num(j, "mem_util_pct", v & XPU_GPU_DEV_MEM_UTIL, d->util_mem);
	bytes_or_null(j, "mem_used_bytes", v & XPU_GPU_DEV_MEM, d->mem_used);
	bytes_or_null(j, "mem_total_bytes", v & XPU_GPU_DEV_MEM, d->mem_total);
	num(j, "mem_used_pct", v & XPU_GPU_DEV_MEM, d->mem_pct);
	num(j, "power_w", v & XPU_GPU_DEV_POWER, d->power_w);
	num(j, "power_limit_w", v & XPU_GPU_DEV_POWER_LIMIT, d->power_limit_w);
	num(j, "temp_c", v & XPU_GPU_DEV_TEMP, d->temp_c);
	num(j, "sm_clock_mhz", v & XPU_GPU_DEV_SM_CLOCK, d->sm_mhz);
	num(j, "mem_clock_mhz", v & XPU_GPU_DEV_MEM_CLOCK, d->mem_mhz);
	num(j, "pcie_rx_bytes_per_s", v & XPU_GPU_DEV_PCIE_RX, d->pcie_rx);
	num(j, "pcie_tx_bytes_per_s", v & XPU_GPU_DEV_PCIE_TX, d->pcie_tx);
	num(j, "nvlinks", v & XPU_GPU_DEV_NVLINKS, d->nvlinks);
	num(j, "nvlink_rx_bytes_per_s", v & XPU_GPU_DEV_NVLINK_RX, d->nvlink_rx);
	num(j, "nvlink_tx_bytes_per_s", v & XPU_GPU_DEV_NVLINK_TX, d->nvlink_tx);
	xpu_json_arr(j, "processes");
	for (uint32_t i = 0; i < g->nproc; i++)
		if (g->proc[i].index == d->index) {
			json_proc(j, s, &g->proc[i]);
			shown++;
		}
	xpu_json_end(j, ']');
	xpu_json_uint(j, "processes_not_shown", d->nprocs > shown ? d->nprocs - shown : 0);
	xpu_json_end(j, '}');
}

void xpu_batch_gpudev_json(struct xpu_json *j, const struct xpu_snapshot *s)
{
	const struct xpu_gpudev_snap *g = &s->gpu.dev;
	xpu_json_obj(j, "gpu_devices");
	xpu_json_str(j, "state", xpu_batch_state_name(g->state));
	xpu_json_str(j, "status", g->status);
	xpu_json_uint(j, "refused", g->refused);
	xpu_json_arr(j, "devices");
	for (uint32_t i = 0; i < g->ndev; i++)
		json_device(j, s, &g->dev[i]);
	xpu_json_end(j, ']');
	xpu_json_end(j, '}');
}

/* v as fmt prints it, or "N/A" when the driver did not give it. */
static const char *val(char *buf, size_t size, uint32_t known, const char *fmt, double v)
{
	if (!known)
		return "N/A";
	snprintf(buf, size, fmt, v);
	return buf;
}

static const char *bytes(char *buf, size_t size, uint32_t known, double v, int rate)
{
	if (!known)
		return "N/A";
	(rate ? xpu_fmt_byte_rate : xpu_fmt_bytes)(buf, size, v);
	return buf;
}

static void text_device(FILE *f, const struct xpu_snapshot *s, const struct xpu_gpudev *d)
{
	char a[32], b[32], c[32];
	uint32_t v = d->valid;
	fprintf(f, "  GPU%u %s [%s]%s%s:", d->index, d->name ? xpu_dict_str_get(s->dict, d->name) : "(name N/A)",
		d->bus ? xpu_dict_str_get(s->dict, d->bus) : "bus N/A", d->mig ? " MIG" : "",
		d->stale ? " (no recent sample)" : "");
	fprintf(f, " util %s, memory util %s", val(a, sizeof(a), v & XPU_GPU_DEV_UTIL, "%.0f%%", d->util_gpu),
		val(b, sizeof(b), v & XPU_GPU_DEV_MEM_UTIL, "%.0f%%", d->util_mem));
	fprintf(f, ", memory %s of %s", bytes(a, sizeof(a), v & XPU_GPU_DEV_MEM, (double)d->mem_used, 0),
		bytes(b, sizeof(b), v & XPU_GPU_DEV_MEM, (double)d->mem_total, 0));
	fprintf(f, ", power %s of %s, temperature %s", val(a, sizeof(a), v & XPU_GPU_DEV_POWER, "%.0f W", d->power_w),
		val(b, sizeof(b), v & XPU_GPU_DEV_POWER_LIMIT, "%.0f W", d->power_limit_w),
		val(c, sizeof(c), v & XPU_GPU_DEV_TEMP, "%.0f C", d->temp_c));
	fprintf(f, ", SM %s, memory clock %s", val(a, sizeof(a), v & XPU_GPU_DEV_SM_CLOCK, "%.0f MHz", d->sm_mhz),
		val(b, sizeof(b), v & XPU_GPU_DEV_MEM_CLOCK, "%.0f MHz", d->mem_mhz));
	fprintf(f, ", PCIe rx %s tx %s", bytes(a, sizeof(a), v & XPU_GPU_DEV_PCIE_RX, d->pcie_rx, 1),
		bytes(b, sizeof(b), v & XPU_GPU_DEV_PCIE_TX, d->pcie_tx, 1));
	if ((v & XPU_GPU_DEV_NVLINKS) && !d->nvlinks)
		fprintf(f, ", no NVLink\n");
	else
		fprintf(f, ", NVLinks %s rx %s tx %s\n", val(c, sizeof(c), v & XPU_GPU_DEV_NVLINKS, "%.0f", d->nvlinks),
			bytes(a, sizeof(a), v & XPU_GPU_DEV_NVLINK_RX, d->nvlink_rx, 1),
			bytes(b, sizeof(b), v & XPU_GPU_DEV_NVLINK_TX, d->nvlink_tx, 1));
}

static void text_proc(FILE *f, const struct xpu_snapshot *s, const struct xpu_gpudev_proc *p)
{
	char ns[48] = "", mem[32], sm[16], mu[16];
	uint32_t u = p->valid & XPU_GPU_DEVPROC_UTIL;
	if ((p->valid & XPU_GPU_DEVPROC_NSPID) && p->nspid != p->pid)
		snprintf(ns, sizeof(ns), " (pid %u in its container)", p->nspid);
	fprintf(f, "    pid %u%s %s %s %s: GPU memory %s, SM %s, memory %s\n", p->pid, ns,
		p->comm ? xpu_dict_str_get(s->dict, p->comm) : "(not visible here)",
		p->user ? xpu_dict_str_get(s->dict, p->user) : "-", xpu_gpudev_proc_type(p->valid),
		bytes(mem, sizeof(mem), p->valid & XPU_GPU_DEVPROC_MEM, (double)p->mem, 0),
		val(sm, sizeof(sm), u, "%.0f%%", p->sm_pct), val(mu, sizeof(mu), u, "%.0f%%", p->mem_pct));
}

void xpu_batch_gpudev_text(FILE *f, const struct xpu_snapshot *s)
{
	const struct xpu_gpudev_snap *g = &s->gpu.dev;
	fprintf(f, "GPU devices: %s\n", g->status[0] ? g->status : "no data");
	for (uint32_t i = 0; i < g->ndev; i++) {
		text_device(f, s, &g->dev[i]);
		for (uint32_t k = 0; k < g->nproc; k++)
			if (g->proc[k].index == g->dev[i].index)
				text_proc(f, s, &g->proc[k]);
	}
}
