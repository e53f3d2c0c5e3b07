/* SPDX-License-Identifier: GPL-2.0-only */
/* Calls the Level Zero entry points xputop probes, through Debian's real
 * loader (libze1).  Without an NPU driver every call fails
 * (ZE_RESULT_ERROR_UNINITIALIZED), but the uprobes on the loader fire.
 *
 *   npu_l0 [ROUNDS]   each of the seven probed APIs ROUNDS times (default 5)
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*ze_fn)(void *, void *, void *, void *, void *, void *, void *);

static const char *const apis[] = {
	"zeCommandQueueExecuteCommandLists", "zeCommandQueueSynchronize", "zeFenceHostSynchronize",
	"zeEventHostSynchronize", "zeMemAllocHost", "zeMemAllocDevice", "zeMemAllocShared",
};

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	void *lib = dlopen("libze_loader.so.1", RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "npu_l0: %s\n", dlerror());
		return 1;
	}
	int (*init)(int) = (int (*)(int))dlsym(lib, "zeInit");
	if (init)
		printf("zeInit 0x%x\n", (unsigned)init(0));
	for (size_t a = 0; a < sizeof(apis) / sizeof(apis[0]); a++) {
		ze_fn f = (ze_fn)dlsym(lib, apis[a]);
		if (!f) {
			fprintf(stderr, "npu_l0: no %s in the loader\n", apis[a]);
			return 1;
		}
		int r = 0;
		for (int i = 0; i < rounds; i++)
			r = f(NULL, NULL, NULL, NULL, NULL, NULL, NULL);
		printf("%s 0x%x\n", apis[a], (unsigned)r);
	}
	fflush(stdout);
	return 0;
}
