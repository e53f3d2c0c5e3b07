/* SPDX-License-Identifier: GPL-2.0-only */
/* The service thread (service.h): a FIFO of jobs under one mutex, a
 * condition variable for the thread, and an eventfd that tells the main
 * loop finished jobs are waiting. */
#include "service.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "sys.h"

struct xpu_service {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct xpu_service_job *todo, *todo_tail;	/* waiting to run */
	struct xpu_service_job *finished, *finished_tail;
	uint32_t max_queued, queued;	/* queued: submitted, done() not run yet */
	int stop;
	int efd;
	struct xpu_service_stats st;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void push(struct xpu_service_job **head, struct xpu_service_job **tail,
		 struct xpu_service_job *job)
{
	job->next = NULL;
	if (*tail)
		(*tail)->next = job;
	else
		*head = job;
	*tail = job;
}

static struct xpu_service_job *pop(struct xpu_service_job **head, struct xpu_service_job **tail)
{
	struct xpu_service_job *job = *head;
	if (job && !(*head = job->next))
		*tail = NULL;
	return job;
}

static void *run(void *arg)
{
	struct xpu_service *s = arg;
	xpu_sys_thread_begin("xputop-service");
	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->todo && !s->stop)
			pthread_cond_wait(&s->wake, &s->lock);
		struct xpu_service_job *job = pop(&s->todo, &s->todo_tail);
		if (!job)
			break;	/* stopping, nothing left */
		pthread_mutex_unlock(&s->lock);
		uint64_t t0 = now_ns();
		job->work(job);
		job->ran = 1;
		uint64_t t1 = now_ns();
		pthread_mutex_lock(&s->lock);
		s->st.busy_ns += t1 - t0;
		push(&s->finished, &s->finished_tail, job);
		uint64_t one = 1;
		if (write(s->efd, &one, sizeof(one)) < 0) {
			/* the counter cannot overflow in practice; poll() still runs them */
		}
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

struct xpu_service *xpu_service_new(uint32_t max_queued)
{
	struct xpu_service *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->max_queued = max_queued ? max_queued : 1;
	s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	if (s->efd < 0 || pthread_create(&s->thread, NULL, run, s) != 0) {
		int err = errno;
		if (s->efd >= 0)
			close(s->efd);
		free(s);
		errno = err ? err : EAGAIN;
		return NULL;
	}
	return s;
}

int xpu_service_submit(struct xpu_service *s, struct xpu_service_job *job)
{
	pthread_mutex_lock(&s->lock);
	if (s->queued >= s->max_queued || s->stop) {
		s->st.refused++;
		pthread_mutex_unlock(&s->lock);
		return -1;
	}
	s->queued++;
	s->st.submitted++;
	job->ran = 0;
	push(&s->todo, &s->todo_tail, job);
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int xpu_service_fd(const struct xpu_service *s)
{
	return s->efd;
}

int xpu_service_poll(struct xpu_service *s)
{
	uint64_t n;
	if (read(s->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return 0;
	pthread_mutex_lock(&s->lock);
	struct xpu_service_job *list = s->finished;
	s->finished = s->finished_tail = NULL;
	pthread_mutex_unlock(&s->lock);
	int done = 0;
	while (list) {
		struct xpu_service_job *next = list->next;
		list->done(list);	/* frees it */
		list = next;
		done++;
	}
	pthread_mutex_lock(&s->lock);
	s->queued -= (uint32_t)done;
	s->st.done += (uint64_t)done;
	pthread_mutex_unlock(&s->lock);
	return done;
}

uint32_t xpu_service_drain(struct xpu_service *s, int ms)
{
	uint64_t end = now_ns() + (uint64_t)(ms > 0 ? ms : 0) * 1000000ULL;
	for (;;) {
		xpu_service_poll(s);
		pthread_mutex_lock(&s->lock);
		uint32_t left = s->queued;
		pthread_mutex_unlock(&s->lock);
		uint64_t now = now_ns();
		if (!left || now >= end)
			return left;
		struct pollfd p = { .fd = s->efd, .events = POLLIN };
		poll(&p, 1, (int)((end - now) / 1000000ULL) + 1);
	}
}

void xpu_service_free(struct xpu_service *s, int wait_ms)
{
	if (!s)
		return;
	xpu_service_drain(s, wait_ms);
	pthread_mutex_lock(&s->lock);
	/* What has not started is not run: its done() alone tidies it up. */
	struct xpu_service_job *unrun = s->todo;
	s->todo = s->todo_tail = NULL;
	s->stop = 1;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	while (unrun) {
		struct xpu_service_job *next = unrun->next;
		push(&s->finished, &s->finished_tail, unrun);
		unrun = next;
	}
	xpu_service_poll(s);
	close(s->efd);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->wake);
	free(s);
}

void xpu_service_stats(const struct xpu_service *s, struct xpu_service_stats *st)
{
	pthread_mutex_lock((pthread_mutex_t *)&s->lock);
	*st = s->st;
	st->queued = s->queued;
	pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
}
