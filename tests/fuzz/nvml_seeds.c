/* SPDX-License-Identifier: GPL-2.0-only */
/* Writes a seed of fuzz_nvml: one real poll, made by the NVML layer
 * (core/sources/nvml.c) from the library LIB (the stand-in, playing the scenario
 * that FAKE_NVML names), its processes looked up in /proc (core/util/pidns.c),
 * and this process's /proc status, in the harness's format (fuzz_nvml.c).
 *
 *     FAKE_NVML=scenario build/fuzz/nvml_seeds build/tests/libfake_nvml.so FILE
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml.h"
#include "pidns.h"
#include "readfile.h"

static struct xpu_nvml_sample smp;

int main(int argc, char **argv)
{
	char why[256], *status;
	size_t len;
	int absent;
	if (argc != 3) {
		fprintf(stderr, "usage: nvml_seeds LIB FILE\n");
		return 2;
	}
	struct xpu_nvml *n = xpu_nvml_open(argv[1], why, sizeof(why), &absent);
	if (!n || xpu_nvml_poll(n, &smp, why, sizeof(why)) < 0 || smp.ndev > 4 || smp.nproc > 16) {
		fprintf(stderr, "nvml_seeds: %s\n", n ? "the poll fails or is too large for the harness" : why);
		return 1;
	}
	for (uint32_t i = 0; i < smp.nproc; i++)
		if (xpu_pidns_lookup(smp.proc[i].pid, &smp.proc[i].ns) == 0)
			smp.proc[i].flags |= XPU_GPU_DEVPROC_NSPID;
	for (uint32_t i = 0; i < smp.ndev; i++)
		smp.dev[i].err_fn = NULL;
	FILE *f = fopen(argv[2], "wb");
	if (!f || xpu_read_path("/proc/self/status", 8192, &status, &len) < 0)
		return 1;
	uint8_t counts[2] = { (uint8_t)smp.ndev, (uint8_t)smp.nproc };
	fwrite(counts, 1, 2, f);
	fwrite(smp.dev, sizeof(smp.dev[0]), smp.ndev, f);
	fwrite(smp.proc, sizeof(smp.proc[0]), smp.nproc, f);
	fwrite(status, 1, len, f);
	free(status);
	xpu_nvml_close(n);
	return fclose(f) ? 1 : 0;
}
