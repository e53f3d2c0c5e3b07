/* SPDX-License-Identifier: GPL-2.0-only */
#include "model_cpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dict.h"
#include "event.h"
#include "grow.h"
#include "table.h"
#include "trim.h"

const struct xpu_col xpu_cpu_cols[XPU_CPU_NCOLS] = {
	[XPU_CPU_COL_PID] = { "PID", "pid", XPU_CELL_INT, 7, 0 },
	[XPU_CPU_COL_TID] = { "TID", "tid", XPU_CELL_INT, 7, XPU_COL_HIDDEN },
	[XPU_CPU_COL_USER] = { "USER", "user", XPU_CELL_STR, 9, XPU_COL_LEFT },
	[XPU_CPU_COL_NI] = { "NI", "nice", XPU_CELL_INT, 3, XPU_COL_SPARE },
	[XPU_CPU_COL_VIRT] = { "VIRT", "virt_bytes", XPU_CELL_BYTES, 7, XPU_COL_SPARE },
	[XPU_CPU_COL_RES] = { "RES", "res_bytes", XPU_CELL_BYTES, 7, 0 },
	[XPU_CPU_COL_STATE] = { "S", "state", XPU_CELL_STR, 3, XPU_COL_LEFT },
	[XPU_CPU_COL_PCT] = { "%CPU", "cpu_pct", XPU_CELL_PCT, 6, 0 },
	[XPU_CPU_COL_MEM] = { "%MEM", "mem_pct", XPU_CELL_PCT, 6, XPU_COL_SPARE },
	[XPU_CPU_COL_AVG] = { "AVG%", "avg_pct", XPU_CELL_PCT, 6, 0 },
	[XPU_CPU_COL_TIME] = { "TIME+", "cpu_time_ns", XPU_CELL_CPUTIME, 9, 0 },
	[XPU_CPU_COL_SAMPLES] = { "SAMPLES", "samples", XPU_CELL_INT, 8, 0 },
	[XPU_CPU_COL_COMM] = { "COMMAND", "comm", XPU_CELL_STR, 16, XPU_COL_LEFT | XPU_COL_FLEX },
	[XPU_CPU_COL_PROC] = { "PROCESS", "process", XPU_CELL_STR, 16, XPU_COL_LEFT | XPU_COL_HIDDEN },
	[XPU_CPU_COL_CMDLINE] = { "CMDLINE", "cmdline", XPU_CELL_STR, 16, XPU_COL_LEFT | XPU_COL_JSON_ONLY },
	[XPU_CPU_COL_PPID] = { "PPID", "ppid", XPU_CELL_INT, 7, XPU_COL_JSON_ONLY },
};

const struct xpu_col xpu_cpu_thread_cols[XPU_CPU_NCOLS] = {
	[XPU_CPU_COL_PID] = { "PID", "pid", XPU_CELL_INT, 7, 0 },
	[XPU_CPU_COL_TID] = { "TID", "tid", XPU_CELL_INT, 7, 0 },
	[XPU_CPU_COL_USER] = { "USER", "user", XPU_CELL_STR, 9, XPU_COL_LEFT },
	[XPU_CPU_COL_NI] = { "NI", "nice", XPU_CELL_INT, 3, XPU_COL_SPARE },
	[XPU_CPU_COL_VIRT] = { "VIRT", "virt_bytes", XPU_CELL_BYTES, 7, XPU_COL_HIDDEN },
	[XPU_CPU_COL_RES] = { "RES", "res_bytes", XPU_CELL_BYTES, 7, XPU_COL_HIDDEN },
	[XPU_CPU_COL_STATE] = { "S", "state", XPU_CELL_STR, 3, XPU_COL_LEFT },
	[XPU_CPU_COL_PCT] = { "%CPU", "cpu_pct", XPU_CELL_PCT, 6, 0 },
	[XPU_CPU_COL_MEM] = { "%MEM", "mem_pct", XPU_CELL_PCT, 6, XPU_COL_HIDDEN },
	[XPU_CPU_COL_AVG] = { "AVG%", "avg_pct", XPU_CELL_PCT, 6, 0 },
	[XPU_CPU_COL_TIME] = { "TIME+", "cpu_time_ns", XPU_CELL_CPUTIME, 9, 0 },
	[XPU_CPU_COL_SAMPLES] = { "SAMPLES", "samples", XPU_CELL_INT, 8, 0 },
	[XPU_CPU_COL_COMM] = { "THREAD", "comm", XPU_CELL_STR, 16, XPU_COL_LEFT | XPU_COL_FLEX },
	[XPU_CPU_COL_PROC] = { "PROCESS", "process", XPU_CELL_STR, 16, XPU_COL_LEFT | XPU_COL_HIDDEN },
	[XPU_CPU_COL_CMDLINE] = { "CMDLINE", "cmdline", XPU_CELL_STR, 16, XPU_COL_LEFT | XPU_COL_JSON_ONLY },
	[XPU_CPU_COL_PPID] = { "PPID", "ppid", XPU_CELL_INT, 7, XPU_COL_JSON_ONLY },
};

struct key { uint32_t pid, tid; };

/* Samples in the window or the open tick. */
static int in_window(const struct xpu_cpu_task *t)
{
	return t->samples.recent || t->samples.open;
}

static int task_eq(const void *ctx, uint32_t i, const void *k)
{
	const struct xpu_cpu_model *m = ctx;
	const struct key *key = k;
	return m->tasks[i].pid == key->pid && m->tasks[i].tid == key->tid;
}

static uint64_t task_hash(uint32_t pid, uint32_t tid)
{
	return xpu_hash_u64(((uint64_t)pid << 32) | tid);
}

int xpu_cpu_model_init(struct xpu_cpu_model *m, uint32_t hz, uint32_t window_ticks)
{
	memset(m, 0, sizeof(*m));
	m->hz = hz ? hz : 1;
	m->max_tasks = XPU_CPU_MAX_TASKS;
	xpu_htab_init(&m->idx);
	if (xpu_ticks_init(&m->ticks, window_ticks) < 0 ||
	    xpu_stacks_init(&m->stacks, m->ticks.window) < 0) {
		xpu_cpu_model_free(m);
		return -ENOMEM;
	}
	return 0;
}

void xpu_cpu_model_free(struct xpu_cpu_model *m)
{
	for (uint32_t i = 0; i < m->ntasks; i++)
		xpu_win_count_free(&m->tasks[i].samples);
	free(m->tasks);
	xpu_ticks_free(&m->ticks);
	xpu_htab_free(&m->idx);
	xpu_stacks_free(&m->stacks);
	memset(m, 0, sizeof(*m));
}

static struct xpu_cpu_task *task_get(struct xpu_cpu_model *m, uint32_t pid, uint32_t tid)
{
	struct key k = { pid, tid };
	uint64_t h = task_hash(pid, tid);
	uint32_t i = xpu_htab_find(&m->idx, h, task_eq, m, &k);
	if (i != UINT32_MAX)
		return &m->tasks[i];
	if (xpu_grow((void **)&m->tasks, &m->cap, m->ntasks + 1, sizeof(*m->tasks)))
		return NULL;
	struct xpu_cpu_task *t = &m->tasks[m->ntasks];
	*t = (struct xpu_cpu_task){ .pid = pid, .tid = tid };
	if (xpu_win_count_init(&t->samples, m->ticks.window) < 0 || xpu_htab_put(&m->idx, h, m->ntasks) < 0) {
		xpu_win_count_free(&t->samples);
		return NULL;
	}
	m->ntasks++;
	return t;
}

int xpu_cpu_model_sample(struct xpu_cpu_model *m, const struct xpu_event *ev)
{
	const struct xpu_ev_cpu_sample *s = &ev->cpu;
	struct xpu_cpu_task *p = task_get(m, ev->pid, 0);
	if (!p)
		return -ENOMEM;
	if (p->comm != s->comm)
		p->cmdline = 0;	/* a new name (exec): its command line is read again */
	p->comm = s->comm;
	p->user = s->user;
	p->uid = s->uid;
	/* The pid taken again.  Not by a sample taken before the exit and
	 * delivered after it (held for its stack's symbols), nor by one of the
	 * other threads of a process whose leader has exited: exit_group()
	 * ends them after it, later still under load. */
	if (p->exited && ev->time > p->exit_ns + XPU_CPU_EXIT_GRACE_NS)
		p->exited = 0;
	p->samples.open++;
	struct xpu_cpu_task *t = task_get(m, ev->pid, ev->tid);
	if (!t)
		return -ENOMEM;
	t->comm = s->tcomm;
	t->user = s->user;
	t->uid = s->uid;
	t->samples.open++;
	m->samples_open++;
	return xpu_stacks_add(&m->stacks, ev->pid, ev->tid, s->stack, s->comm, 1);
}

void xpu_cpu_model_exit(struct xpu_cpu_model *m, uint32_t pid, uint64_t time_ns)
{
	struct key k = { pid, 0 };
	uint32_t i = xpu_htab_find(&m->idx, task_hash(pid, 0), task_eq, m, &k);
	if (i == UINT32_MAX)
		return;
	m->tasks[i].exited = 1;
	m->tasks[i].exit_ns = time_ns;
	m->exits_pending = 1;
	xpu_stacks_retire(&m->stacks, pid);
}

void xpu_cpu_model_stat(struct xpu_cpu_model *m, const struct xpu_event *ev)
{
	if (ev->type == XPU_EV_CPU_STAT) {
		if (ev->tid < XPU_CPU_METERS) {
			m->sys.cpu_busy100[ev->tid] = (uint16_t)ev->sys.busy_pct100;
			if (ev->tid >= m->sys.ncpus)
				m->sys.ncpus = ev->tid + 1;
		}
		return;
	}
	if (ev->type == XPU_EV_SYS_STAT) {
		const struct xpu_ev_sys_stat *y = &ev->sys;
		struct xpu_cpu_sys *s = &m->sys;
		s->flags = y->flags & XPU_SYS_BITS;
		for (int i = 0; i < 3; i++)
			s->load[i] = y->load100[i] / 100.0;
		s->busy_pct = y->busy_pct100 / 100.0;
		s->mem_total = y->mem_total_kib * 1024;
		s->mem_used = y->mem_used_kib * 1024;
		return;
	}
	struct key k = { ev->pid, ev->tid };	/* tid 0: the process's row */
	uint32_t i = xpu_htab_find(&m->idx, task_hash(ev->pid, ev->tid), task_eq, m, &k);
	if (i == UINT32_MAX)
		return;
	struct xpu_cpu_task *t = &m->tasks[i];
	if (ev->type == XPU_EV_PROC_CMDLINE) {
		t->cmdline = ev->pcmd.cmdline;
		return;
	}
	t->has_stat = 1;
	t->state = ev->pstat.state;
	t->rss_bytes = ev->pstat.rss_bytes;
	t->cpu_ns = ev->pstat.cpu_ns;
	t->has_nice = (ev->pstat.flags & XPU_PSTAT_NICE_VIRT) != 0;
	t->nice = ev->pstat.nice;
	t->ppid = ev->pstat.ppid;
	t->vsize_bytes = ev->pstat.vsize_bytes;
}

int xpu_cpu_model_shown_pids(const struct xpu_cpu_model *m, uint32_t *out, int max)
{
	int n = 0;
	for (uint32_t i = 0; i < m->ntasks && n < max; i++) {
		const struct xpu_cpu_task *t = &m->tasks[i];
		if (!t->tid && !t->exited && in_window(t))
			out[n++] = t->pid;
	}
	return n;
}

int xpu_cpu_model_shown_threads(const struct xpu_cpu_model *m, uint32_t *pids, uint32_t *tids, int max)
{
	int n = 0;
	for (uint32_t i = 0; i < m->ntasks && n < max; i++) {
		const struct xpu_cpu_task *t = &m->tasks[i];
		if (t->tid && !t->exited && in_window(t)) {
			const struct xpu_cpu_task *proc = xpu_cpu_model_task(m, t->pid, 0);
			if (proc && proc->exited)	/* its threads go at the next tick */
				continue;
			pids[n] = t->pid;
			tids[n++] = t->tid;
		}
	}
	return n;
}

/* Removes the rows marked in go[], keeping the others in order, and rebuilds
 * the index.  Returns how many went. */
static uint32_t remove_tasks(struct xpu_cpu_model *m, const uint8_t *go)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < m->ntasks; i++) {
		if (go[i])
			xpu_win_count_free(&m->tasks[i].samples);
		else
			m->tasks[n++] = m->tasks[i];
	}
	uint32_t gone = m->ntasks - n;
	m->ntasks = n;
	xpu_htab_free(&m->idx);
	xpu_htab_init(&m->idx);
	for (uint32_t i = 0; i < n; i++)
		xpu_htab_put(&m->idx, task_hash(m->tasks[i].pid, m->tasks[i].tid), i);
	return gone;
}

/* Ages out rows with nothing in the window, the lightest first (model_cpu.h). */
static void trim_tasks(struct xpu_cpu_model *m)
{
	uint32_t nkeep = 0, ncand = 0;
	uint64_t *w = malloc((size_t)m->ntasks * sizeof(*w));
	uint8_t *go = calloc(m->ntasks ? m->ntasks : 1, 1);
	struct xpu_trim plan;

	if (!w || !go)
		goto out;
	for (uint32_t i = 0; i < m->ntasks; i++) {
		if (in_window(&m->tasks[i]))
			nkeep++;
		else
			w[ncand++] = m->tasks[i].samples.total;
	}
	if (!xpu_trim_plan(m->max_tasks, nkeep, w, ncand, &plan))
		goto out;
	for (uint32_t i = 0; i < m->ntasks; i++) {
		const struct xpu_cpu_task *t = &m->tasks[i];
		go[i] = !(in_window(t) || xpu_trim_keeps(&plan, t->samples.total));
	}
	m->tasks_aged_out += remove_tasks(m, go);
out:
	free(w);
	free(go);
}

/* The thread rows of an exited process go once idle: its process row keeps
 * their samples (model_cpu.h). */
static void drop_exited_threads(struct xpu_cpu_model *m)
{
	uint8_t *go = calloc(m->ntasks ? m->ntasks : 1, 1);
	uint32_t busy = 0, ngone = 0;
	if (!go)
		return;
	for (uint32_t i = 0; i < m->ntasks; i++) {
		const struct xpu_cpu_task *t = &m->tasks[i], *p;
		if (!t->tid || !(p = xpu_cpu_model_task(m, t->pid, 0)) || !p->exited)
			continue;
		if (in_window(t))
			busy++;
		else
			go[i] = 1, ngone++;
	}
	m->exits_pending = busy > 0;
	if (ngone)
		m->threads_dropped += remove_tasks(m, go);
	free(go);
}

void xpu_cpu_model_tick(struct xpu_cpu_model *m, uint64_t interval_ns)
{
	int full;
	uint32_t slot = xpu_ticks_close(&m->ticks, interval_ns, &full);

	for (uint32_t i = 0; i < m->ntasks; i++)
		xpu_win_count_close(&m->tasks[i].samples, slot, full);
	m->samples_last = m->samples_open;
	m->samples_total += m->samples_open;
	m->samples_open = 0;
	xpu_stacks_tick(&m->stacks);
	if (m->exits_pending)
		drop_exited_threads(m);
	if (m->max_tasks && m->ntasks > m->max_tasks)
		trim_tasks(m);
}

const struct xpu_cpu_task *xpu_cpu_model_task(const struct xpu_cpu_model *m, uint32_t pid,
					      uint32_t tid)
{
	struct key k = { pid, tid };
	uint32_t i = xpu_htab_find(&m->idx, task_hash(pid, tid), task_eq, m, &k);
	return i == UINT32_MAX ? NULL : &m->tasks[i];
}

/* Percent of one CPU: samples over what a fully busy CPU gives in ns. */
static double pct(uint64_t samples, uint32_t hz, uint64_t ns)
{
	if (!ns)
		return 0;
	return (double)samples * 1e11 / ((double)hz * (double)ns);
}

/* RES, S and TIME+ of a row: a process's, or a thread's own state and CPU
 * time (its memory is the process's: the thread table hides RES).  An
 * exited task is dead (X, the kernel's letter) with no memory, and keeps
 * the CPU time last read. */
static void stat_cells(struct xpu_table *t, const struct xpu_cpu_task *k, const struct xpu_cpu_sys *sys,
		       struct xpu_cell *c)
{
	char st[2] = { k ? (char)(k->exited ? 'X' : k->state) : 0, 0 };
	int na = !k || !k->has_stat;
	c[XPU_CPU_COL_RES].na = c[XPU_CPU_COL_STATE].na = c[XPU_CPU_COL_TIME].na = (uint8_t)na;
	c[XPU_CPU_COL_NI].na = c[XPU_CPU_COL_VIRT].na = c[XPU_CPU_COL_PPID].na =
		(uint8_t)(na || !k->has_nice || k->exited);
	c[XPU_CPU_COL_MEM].na = (uint8_t)(na || k->exited || !(sys->flags & XPU_SYS_MEM) || !sys->mem_total);
	if (na)
		return;
	c[XPU_CPU_COL_RES].na = (uint8_t)(k->exited != 0);
	c[XPU_CPU_COL_RES].i = (int64_t)k->rss_bytes;
	c[XPU_CPU_COL_STATE].s = xpu_table_strdup(t, st);
	c[XPU_CPU_COL_TIME].i = (int64_t)k->cpu_ns;
	c[XPU_CPU_COL_NI].i = k->nice;
	c[XPU_CPU_COL_PPID].i = k->ppid;
	c[XPU_CPU_COL_VIRT].i = (int64_t)k->vsize_bytes;
	if (!c[XPU_CPU_COL_MEM].na)
		c[XPU_CPU_COL_MEM].d = 100.0 * (double)k->rss_bytes / (double)sys->mem_total;
}

int xpu_cpu_model_table(const struct xpu_cpu_model *m, const struct xpu_dict *d,
			struct xpu_table *t, int how, enum xpu_window w)
{
	int threads = (how & XPU_CPU_TABLE_THREADS) != 0;
	uint64_t span = xpu_win_span(&m->ticks, w);

	xpu_table_reset(t);
	t->cols = threads ? xpu_cpu_thread_cols : xpu_cpu_cols;
	t->ncols = XPU_CPU_NCOLS;
	for (uint32_t i = 0; i < m->ntasks; i++) {
		const struct xpu_cpu_task *k = &m->tasks[i];
		uint64_t n = xpu_win_count_get(&k->samples, w);
		if (!n || (threads ? k->tid == 0 : k->tid != 0))
			continue;
		struct xpu_cell *c = xpu_table_add(t, threads ? k->tid : k->pid);
		if (!c)
			return -ENOMEM;
		c[XPU_CPU_COL_PID].i = k->pid;
		c[XPU_CPU_COL_TID].i = k->tid;
		c[XPU_CPU_COL_USER].s = xpu_table_strdup(t, xpu_dict_str_get(d, k->user));
		c[XPU_CPU_COL_PCT].d = pct(k->samples.last, m->hz, m->ticks.tick_ns);
		c[XPU_CPU_COL_AVG].d = pct(n, m->hz, span);
		c[XPU_CPU_COL_SAMPLES].i = (int64_t)n;
		stat_cells(t, k, &m->sys, c);
		const struct xpu_cpu_task *proc = threads ? xpu_cpu_model_task(m, k->pid, 0) : NULL;
		uint32_t cmd = threads ? 0 : k->cmdline;
		c[XPU_CPU_COL_COMM].s = xpu_table_strdup(t, xpu_dict_str_get(d, cmd && (how & XPU_CPU_TABLE_CMDLINE) ?
									     cmd : k->comm));
		c[XPU_CPU_COL_CMDLINE].na = !cmd;
		if (cmd)
			c[XPU_CPU_COL_CMDLINE].s = xpu_table_strdup(t, xpu_dict_str_get(d, cmd));
		if (proc)
			c[XPU_CPU_COL_PROC].s = xpu_table_strdup(t, xpu_dict_str_get(d, proc->comm));
		else
			c[XPU_CPU_COL_PROC].na = 1;
	}
	return 0;
}

struct hot_ctx {
	const struct xpu_dict *d;
	struct xpu_cpu_hot *v;
	size_t n, cap;
	uint64_t all;
};

static int hot_one(void *arg, const struct xpu_stack_entry *e, uint64_t weight)
{
	struct hot_ctx *c = arg;
	uint32_t n;
	const uint32_t *frames = xpu_dict_stack_get(c->d, e->stack, &n);
	c->all += weight;
	if (!frames || !n)
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		void *p = realloc(c->v, cap * sizeof(*c->v));
		if (!p)
			return -ENOMEM;
		c->v = p;
		c->cap = cap;
	}
	c->v[c->n++] = (struct xpu_cpu_hot){ frames[n - 1], weight };	/* root first: the leaf is last */
	return 0;
}

static int by_frame(const void *a, const void *b)
{
	const struct xpu_cpu_hot *x = a, *y = b;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

static int by_samples(const void *a, const void *b)
{
	const struct xpu_cpu_hot *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

int xpu_cpu_model_hot(const struct xpu_cpu_model *m, const struct xpu_dict *d, enum xpu_window w,
		      struct xpu_cpu_hot *out, int max, uint64_t *all)
{
	struct hot_ctx c = { .d = d };
	int rc = xpu_stacks_each(&m->stacks, w, 0, 0, hot_one, &c);
	*all = c.all;
	if (rc < 0) {
		free(c.v);
		return rc;
	}
	size_t k = 0;
	if (c.n)	/* no samples: no array (qsort's NULL is undefined) */
		qsort(c.v, c.n, sizeof(*c.v), by_frame);
	for (size_t i = 0; i < c.n; i++) {	/* one entry per frame */
		if (k && c.v[k - 1].frame == c.v[i].frame)
			c.v[k - 1].samples += c.v[i].samples;
		else
			c.v[k++] = c.v[i];
	}
	int n = k < (size_t)max ? (int)k : max;
	if (n > 0) {
		qsort(c.v, k, sizeof(*c.v), by_samples);
		memcpy(out, c.v, (size_t)n * sizeof(*out));
	}
	free(c.v);
	return n;
}
