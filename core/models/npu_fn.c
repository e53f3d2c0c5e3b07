/* SPDX-License-Identifier: GPL-2.0-only */
/* What a driver function's name says: its category (the rule xputop(8)
 * documents under NPU VIEW) and, for an ioctl handler, the ioctl it serves.
 * Shared by the NPU source, the bpftrace importer and the model. */
#include "model_npu.h"

#include <stdio.h>
#include <string.h>

static const char *const cat_names[XPU_NPU_NCAT] = {
	[XPU_NPU_CAT_MM] = "memory management", [XPU_NPU_CAT_IPC] = "IPC",
	[XPU_NPU_CAT_BO] = "buffer management", [XPU_NPU_CAT_JOBS] = "jobs",
	[XPU_NPU_CAT_POWER] = "power", [XPU_NPU_CAT_OTHER] = "other",
};

const char *xpu_npu_cat_name(uint32_t cat)
{
	return cat < XPU_NPU_NCAT ? cat_names[cat] : "other";
}

void xpu_npu_share_text(char *buf, size_t size, double pct)
{
	if (pct > 0 && pct < 1)
		snprintf(buf, size, "<1%%");
	else if (pct > 99 && pct < 100)
		snprintf(buf, size, ">99%%");
	else
		snprintf(buf, size, "%.0f%%", pct);
}

static int has(const char *name, const char *part)
{
	return strstr(name, part) != NULL;
}

static int begins(const char *name, const char *prefix)
{
	return strncmp(name, prefix, strlen(prefix)) == 0;
}

static int ends(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);
	return n >= k && strcmp(name + n - k, suffix) == 0;
}

/* The first rule that matches wins: a job's wait on a buffer
 * (ivpu_bo_wait_ioctl) is about the job, not the buffer.  Setting up and
 * tearing down a client's MMU context (ivpu_mmu_context_init/_fini) is part
 * of opening and closing the device, not memory management: the tutorial's
 * table counts only the mapping and freeing of pages there. */
uint32_t xpu_npu_fn_category(const char *name)
{
	if (has(name, "job") || has(name, "submit") || has(name, "cmdq") || has(name, "_db_") ||
	    has(name, "bo_wait"))
		return XPU_NPU_CAT_JOBS;
	if (has(name, "ipc") || has(name, "jsm"))
		return XPU_NPU_CAT_IPC;
	if ((begins(name, "ivpu_mmu_") && !(begins(name, "ivpu_mmu_context_") &&
					     (ends(name, "_init") || ends(name, "_fini")))) ||
	    has(name, "pgtable"))
		return XPU_NPU_CAT_MM;
	if (begins(name, "ivpu_bo_") || begins(name, "ivpu_gem_") || has(name, "_bo_"))
		return XPU_NPU_CAT_BO;
	if (begins(name, "ivpu_pm_") || begins(name, "ivpu_rpm_") || begins(name, "vpu:pm") ||
	    has(name, "suspend") ||
	    has(name, "resume") || has(name, "power") || has(name, "d0i3") || has(name, "recovery") ||
	    has(name, "boot"))
		return XPU_NPU_CAT_POWER;
	return XPU_NPU_CAT_OTHER;
}

static const struct { const char *name; uint16_t cmd; } handlers[] = {
	{ "ivpu_get_param_ioctl", 0x6440 }, { "ivpu_set_param_ioctl", 0x6441 },
	{ "ivpu_bo_create_ioctl", 0x6442 }, { "ivpu_bo_info_ioctl", 0x6443 },
	{ "ivpu_submit_ioctl", 0x6445 }, { "ivpu_bo_wait_ioctl", 0x6446 },
	{ "ivpu_ms_start_ioctl", 0x6447 }, { "ivpu_ms_stop_ioctl", 0x6448 },
	{ "ivpu_ms_get_data_ioctl", 0x6449 }, { "ivpu_ms_get_info_ioctl", 0x644a },
	{ "ivpu_cmdq_create_ioctl", 0x644b }, { "ivpu_cmdq_destroy_ioctl", 0x644c },
	{ "ivpu_cmdq_submit_ioctl", 0x644d }, { "ivpu_bo_create_from_userptr_ioctl", 0x644e },
};

uint32_t xpu_npu_fn_ioctl(const char *name)
{
	for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
		if (strcmp(handlers[i].name, name) == 0)
			return handlers[i].cmd;
	return 0;
}
