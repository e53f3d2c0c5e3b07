/* SPDX-License-Identifier: GPL-2.0-only */
/* The service thread: slow work kept off the ingest path (docs/architecture.md,
 * rule 4).  Reading a large library's symbol table, naming symbols in bulk,
 * DWARF-unwinding a launch site's stack copy: each is a job whose work()
 * runs on the service thread and whose done() runs later on the main loop's
 * thread, inside xpu_service_poll(), where the dictionary and the models may
 * be touched.  work() must touch nothing the main thread uses.
 *
 * The queue is bounded: a job that does not fit is refused (submit returns
 * -1) and the caller keeps what it has (a frame stays "module+0xoffset").
 * Jobs run in the order submitted.
 */
#ifndef XPU_SERVICE_H
#define XPU_SERVICE_H

#include <stdint.h>

struct xpu_service;

struct xpu_service_job {
	void (*work)(struct xpu_service_job *job);	/* on the service thread */
	void (*done)(struct xpu_service_job *job);	/* on the main thread; frees the job */
	struct xpu_service_job *next;			/* the service's own */
	int ran;					/* work() ran (0: dropped at shutdown) */
};

struct xpu_service_stats {
	uint64_t submitted, refused, done;
	uint64_t busy_ns;	/* time spent in work() */
	uint32_t queued;	/* jobs waiting or running now */
};

/* Starts the thread; NULL on failure (errno set). */
struct xpu_service *xpu_service_new(uint32_t max_queued);
/* Lets the jobs already queued finish (up to wait_ms, then the rest are
 * dropped unrun), runs the done() of every job, and stops the thread. */
void xpu_service_free(struct xpu_service *s, int wait_ms);
/* Queues a job; returns 0, or -1 when the queue is full (job untouched). */
int xpu_service_submit(struct xpu_service *s, struct xpu_service_job *job);
/* A descriptor that becomes readable when finished jobs wait for done(). */
int xpu_service_fd(const struct xpu_service *s);
/* Runs done() of the finished jobs; returns how many. */
int xpu_service_poll(struct xpu_service *s);
/* Waits up to ms for the queue to empty, running done() as jobs finish.
 * Returns the jobs still unfinished. */
uint32_t xpu_service_drain(struct xpu_service *s, int ms);
void xpu_service_stats(const struct xpu_service *s, struct xpu_service_stats *st);

#endif
