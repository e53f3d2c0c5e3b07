/* SPDX-License-Identifier: GPL-2.0-only */
/* A stand-in for CUDA's code in the own-time sampler's test
 * (tests/bpf/own.sh): built as a file named like CUDA's runtime, so that the
 * sampler counts the time spent in it as CUDA's.  No call leaves it while it
 * spins: a sample in it must find its pc in this file. */
#include <stdint.h>

__attribute__((visibility("default"), noinline)) void own_cuda_spin(uint64_t loops)
{
	for (volatile uint64_t i = 0; i < loops; i++)
		;
}
