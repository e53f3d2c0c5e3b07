/* SPDX-License-Identifier: GPL-2.0-only */
/* A stand-in for the CUDA runtime, built as tests/fake_cudart/libcudart.so.13:
 * its cudaLaunchKernel calls the driver's cuLaunchKernel, as the real runtime
 * does on a machine with a GPU (without one the real runtime fails before it
 * reaches the driver).  The driver is the CUDA toolkit's stub libcuda.so,
 * named by XPU_TEST_LIBCUDA.  It tests the launch-only probes' rule that a
 * driver launch made by the runtime is not counted a second time. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

struct dim3 { unsigned x, y, z; };
typedef int (*cu_launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			    unsigned bz, unsigned shmem, void *stream, void **params, void **extra);

static cu_launch_fn driver_launch(void)
{
	static cu_launch_fn fn;
	const char *path = getenv("XPU_TEST_LIBCUDA");
	void *lib = !fn && path ? dlopen(path, RTLD_NOW) : NULL;
	if (lib)
		fn = (cu_launch_fn)dlsym(lib, "cuLaunchKernel");
	return fn;
}

__attribute__((visibility("default"))) int cudaLaunchKernel(const void *f, struct dim3 grid, struct dim3 block,
							    void **args, size_t shmem, void *stream)
{
	cu_launch_fn launch = driver_launch();
	if (!launch)
		return 35;	/* cudaErrorInsufficientDriver */
	return launch((void *)f, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned)shmem, stream,
		      args, NULL);
}
