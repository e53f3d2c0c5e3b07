/* SPDX-License-Identifier: GPL-2.0-only */
/* The fake-CUPTI injection library (tests/fake/fake_cupti.c, built as
 * libxputop_inject_fake.so) as the stand-in programs load it in place of
 * CUDA: dlopen'ed, its entry points found by name, InitializeInjection
 * called, and xputop's connection awaited.  C and C++ include it. */
#ifndef XPU_TEST_FAKE_LIB_H
#define XPU_TEST_FAKE_LIB_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

struct fake_lib {
	int (*init)(void);
	int (*connected)(void);
	void (*launch)(uint32_t corr, uint32_t cbid, uint32_t domain, const char *api);
	void (*kernel)(const char *name, uint64_t start, uint64_t end, uint32_t corr, uint32_t device,
		       uint32_t stream, uint32_t graph);
};

/* Loads the library at path: 0, or -1 after saying why, as prog. */
static inline int fake_lib_load(struct fake_lib *f, const char *prog, const char *path)
{
	void *lib = dlopen(path, RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "%s: %s\n", prog, dlerror());
		return -1;
	}
	*(void **)&f->init = dlsym(lib, "InitializeInjection");
	*(void **)&f->connected = dlsym(lib, "fake_cuda_connected");
	*(void **)&f->launch = dlsym(lib, "fake_cuda_launch");
	*(void **)&f->kernel = dlsym(lib, "fake_cuda_kernel");
	if (!f->init || !f->connected || !f->launch || !f->kernel) {
		fprintf(stderr, "%s: %s is not the fake-CUPTI library\n", prog, path);
		return -1;
	}
	return 0;
}

/* InitializeInjection, then up to 5 s for an xputop to connect: 0, or -1
 * after saying so. */
static inline int fake_lib_connect(const struct fake_lib *f, const char *prog)
{
	f->init();
	for (int i = 0; i < 500 && !f->connected(); i++)
		usleep(10000);
	if (f->connected())
		return 0;
	fprintf(stderr, "%s: no xputop connected\n", prog);
	return -1;
}

#endif
