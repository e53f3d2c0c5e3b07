/* SPDX-License-Identifier: GPL-2.0-only */
/* Budgets of the GPU socket's peers (core/sources/gpu_peers.c). */
#include "check.h"

#include "gpu_peers.h"

#define S 1000000000ULL

static struct xpu_peers peers(void)
{
	struct xpu_peers p;
	if (xpu_peers_init(&p, 2, 10 * S) < 0)
		abort();
	return p;
}

TEST(a_uid_has_at_most_its_quota_of_connections_and_root_its_own)
{
	struct xpu_peers p = peers();
	struct xpu_peer_uid *u = xpu_peers_uid(&p, 1000), *r = xpu_peers_uid(&p, 0);
	for (int i = 0; i < XPU_PEER_CONNS_PER_UID; i++)
		CHECK_INT(xpu_peers_conn_open(&p, u), ==, 0);
	CHECK_INT(xpu_peers_conn_open(&p, u), ==, -1);
	CHECK_INT(u->refused[XPU_PEER_CONNS], ==, 1);
	CHECK_INT(xpu_peers_conn_open(&p, r), ==, 0);
	xpu_peers_conn_close(&p, u, 0, 0);
	CHECK_INT(xpu_peers_conn_open(&p, u), ==, 0);
	CHECK_INT(p.refused[XPU_PEER_CONNS], ==, 1);
	xpu_peers_free(&p);
}

TEST(new_names_are_charged_to_the_uid_and_one_uid_cannot_spend_the_others_budget)
{
	struct xpu_peers p = peers();
	struct xpu_peer_uid *a = xpu_peers_uid(&p, 1000);
	int took = 0;
	while (xpu_peers_new_str(&p, a, 4096) == 0)
		took++;
	CHECK_INT(took, ==, XPU_PEER_STR_BYTES_UID / 4096);
	CHECK_INT(a->refused[XPU_PEER_NAMES], ==, 1);
	/* The next uid still has its own. */
	CHECK_INT(xpu_peers_new_str(&p, xpu_peers_uid(&p, 1001), 4096), ==, 0);
	xpu_peers_free(&p);
}

TEST(users_together_stop_at_the_total_and_root_keeps_its_budget)
{
	struct xpu_peers p = peers();
	uint32_t uid = 2000;
	while (p.users.str_bytes + 4096 <= XPU_PEER_STR_BYTES_ALL) {
		struct xpu_peer_uid *u = xpu_peers_uid(&p, uid++);
		while (xpu_peers_new_str(&p, u, 4096) == 0)
			;
	}
	CHECK_INT(p.users.str_bytes, <=, XPU_PEER_STR_BYTES_ALL);
	CHECK_INT(xpu_peers_new_str(&p, xpu_peers_uid(&p, uid + 1), 10), ==, -1);
	CHECK_INT(xpu_peers_new_str(&p, xpu_peers_uid(&p, 0), 4096), ==, 0);
	xpu_peers_free(&p);
}

TEST(series_are_bounded_per_connection_and_uid_and_come_back_a_window_after_a_close)
{
	struct xpu_peers p = peers();
	struct xpu_peer_uid *u = xpu_peers_uid(&p, 1000);
	uint32_t held = 0;
	while (xpu_peers_new_series(&p, u, held) == 0)
		held++;
	CHECK_INT(held, ==, XPU_PEER_SERIES_CONN);
	uint32_t second = 0;
	while (xpu_peers_new_series(&p, u, second) == 0)
		second++;
	CHECK_INT(held + second, ==, XPU_PEER_SERIES_UID);
	xpu_peers_conn_close(&p, u, held, 5 * S);
	xpu_peers_tick(&p, 14 * S);
	CHECK_INT(xpu_peers_new_series(&p, u, 0), ==, -1);	/* the model still has the rows */
	xpu_peers_tick(&p, 15 * S);
	CHECK_INT(xpu_peers_new_series(&p, u, 0), ==, 0);
	CHECK_INT(u->series, ==, second + 1);
	xpu_peers_free(&p);
}

TEST(records_past_the_uids_rate_are_refused_until_it_refills)
{
	struct xpu_peers p = peers();
	struct xpu_peer_uid *u = xpu_peers_uid(&p, 1000);
	CHECK_INT(xpu_peers_records(&p, u, XPU_PEER_RECORDS_PER_S, 1 * S), ==, 0);
	CHECK_INT(xpu_peers_records(&p, u, 100, 1 * S), ==, -1);
	CHECK_INT(u->refused[XPU_PEER_RECORDS], ==, 100);
	CHECK_INT(xpu_peers_records(&p, u, 100, 1 * S + S / 1000), ==, 0);
	xpu_peers_free(&p);
}

TEST(one_warning_per_uid_every_ten_seconds_saying_how_many_were_held)
{
	struct xpu_peers p = peers();
	struct xpu_peer_uid *u = xpu_peers_uid(&p, 1000);
	uint64_t held = 99;
	CHECK_INT(xpu_peers_warn_due(u, 1 * S, &held), ==, 1);
	CHECK_INT(held, ==, 0);
	for (int i = 0; i < 500; i++)
		CHECK_INT(xpu_peers_warn_due(u, 2 * S, &held), ==, 0);
	CHECK_INT(xpu_peers_warn_due(xpu_peers_uid(&p, 1001), 2 * S, &held), ==, 1);
	CHECK_INT(xpu_peers_warn_due(u, 11 * S, &held), ==, 1);
	CHECK_INT(held, ==, 500);
	xpu_peers_free(&p);
}

TEST(uids_past_the_limit_share_one_entry)
{
	struct xpu_peers p = peers();
	for (uint32_t i = 0; i < XPU_PEER_UIDS_MAX + 10; i++)
		REQUIRE(xpu_peers_uid(&p, 10000 + i));
	struct xpu_peer_uid *a = xpu_peers_uid(&p, 900000), *b = xpu_peers_uid(&p, 900001);
	CHECK(a == b);
	CHECK_INT(a->uid, ==, UINT32_MAX);
	CHECK(xpu_peers_uid(&p, 10000)->uid == 10000);
	xpu_peers_free(&p);
}

TEST(what_is_shown_lists_the_uids_refused_most_and_the_recent_processes)
{
	struct xpu_peers p = peers();
	struct xpu_gpu_peers out;
	char text[200];
	xpu_peers_publish(&p, &out);
	CHECK_INT(xpu_peers_text(&out, text, sizeof(text)), ==, 0);
	xpu_peers_refuse(&p, xpu_peers_uid(&p, 5), XPU_PEER_DEVICES, 3);
	xpu_peers_refuse(&p, xpu_peers_uid(&p, 6), XPU_PEER_NAMES, 7);
	for (uint32_t pid = 1; pid <= XPU_PEER_SHOWN + 2; pid++)
		xpu_peers_note_proc(&p, 6, pid, "prog", XPU_PEER_NAMES, 1);
	xpu_peers_note_proc(&p, 6, XPU_PEER_SHOWN + 2, "prog", XPU_PEER_NAMES, 1);
	xpu_peers_publish(&p, &out);
	CHECK_INT(out.nuids, ==, 2);
	CHECK_INT(out.uids[0].uid, ==, 6);
	CHECK_INT(out.nprocs, ==, XPU_PEER_SHOWN);
	CHECK_INT(out.procs[0].pid, ==, XPU_PEER_SHOWN + 2);
	CHECK_INT(out.procs[0].n[XPU_PEER_NAMES], ==, 2);
	CHECK_INT(out.devices, ==, 2);
	xpu_peers_text(&out, text, sizeof(text));
	CHECK_STR(text, "refused from peers: 7 names, 3 records of unknown devices (most from uid 6)");
	xpu_peers_free(&p);
}
