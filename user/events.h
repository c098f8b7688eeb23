/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The audit log side: reads a policy slot's ring buffer, writes each record
 * as one JSON line (user/event_line.c formats it; schema: docs/events.md),
 * and turns the kernel's drop counters into `lost` records. on-deny kill is
 * carried out here too.
 */
#ifndef BW_EVENTS_H
#define BW_EVENTS_H

#include <limits.h>
#include <stdint.h>

#include "bpfwarden.h"
#include "jsonw.h"
#include "loader.h"
#include "profile.h"

struct ring_buffer;

struct bw_events {
	int log_fd;
	const struct bw_profile *profile; /* rule ids index its rules */
	char cgroup_dir[PATH_MAX];	  /* the governed cgroup (absolute) */
	uint64_t cgroup_id;
	uint32_t slot;
	int kill_on_deny;
	struct bw_maps *maps;
	struct ring_buffer *rb;
	int64_t boot_to_real_ns; /* add to a boot-time stamp to get wall time */
	uint64_t lost_reported;
	uint64_t throttled_reported;
	uint64_t pins_lost_reported;
	uint64_t denials, audits, learned, lost;
	int killed;
	/*
	 * The daemon, whose profiles govern many cgroups: the governed cgroup
	 * (absolute) that on-deny kill ends for a record of cgroup_id (its
	 * container's, its service's), or -errno. Unset: cgroup_dir, once.
	 */
	int (*kill_target)(void *ctx, uint64_t cgroup_id, char *dir, size_t len);
	char killed_dir[PATH_MAX]; /* the last one it ended */
	/*
	 * Called for each learn record, after it is logged (run --mode learn
	 * --output). here: the agent sees the object at path too (the process's
	 * view is the agent's, or the agent found the same name for it).
	 */
	void (*on_learn)(void *ctx, const struct bw_event *ev, const char *path, const char *exe,
			 bool here);
	/* Likewise for deny records (with the same ctx), when set. */
	void (*on_deny)(void *ctx, const struct bw_event *ev, const char *path, const char *exe,
			bool here);
	void *learn_ctx;
	/*
	 * The daemon: a record's cgroup path below the cgroup2 mount and its
	 * container's identity (NULL when not a known container's). Unset:
	 * the path is found below cgroup_dir, and there is no identity.
	 */
	const struct bw_k8s_id *(*identify)(void *ctx, uint64_t cgroup_id, char *path, size_t len);
	void *identify_ctx;
	/*
	 * A record is built in line (kept from one record to the next) and
	 * waits in out until the poll that read it ends: one write(2) for all
	 * the records a wake-up reads, whole lines each.
	 */
	struct jw line, out;
};

int bw_events_open(struct bw_events *e, int rb_fd);
/* Consume what is there, waiting up to timeout_ms; returns records or -errno. */
int bw_events_poll(struct bw_events *e, int timeout_ms);
/* Emit a `lost` record if the kernel dropped events since the last call. */
void bw_events_check_lost(struct bw_events *e);
void bw_events_close(struct bw_events *e);

/* An `agent` record: what the agent itself did. */
void bw_events_agent(struct bw_events *e, const char *msg);

/* The path below the cgroup2 mount of a cgroup id seen in events (cached). */
const char *bw_events_cgroup_path(struct bw_events *e, uint64_t id);

#endif
