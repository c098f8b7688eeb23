/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One record as one JSON line (schema and an example of every kind:
 * docs/events.md). Pure: the caller looks up what the kernel's bytes do not
 * say (the executable, the cgroup's path, the wall clock) and passes it in,
 * so tests/unit/test_event_line.c checks every kind against the doc.
 */
#ifndef BW_EVENT_LINE_H
#define BW_EVENT_LINE_H

#include <stdint.h>

#include "bpfwarden.h"
#include "jsonw.h"
#include "profile.h"
#include "proto.h"

/* Where a record comes from, beyond the kernel's record. */
struct bw_event_src {
	const struct bw_profile *profile; /* rule ids index its rules; may be NULL */
	uint64_t cgroup_id;
	const char *cgroup_path; /* below the cgroup2 mount */
	/* On a Kubernetes node (the daemon): the container's identity, else NULL. */
	const struct bw_k8s_id *k8s;
	/* The object as the agent sees it, when the process named it otherwise; else NULL. */
	const char *real_path;
	/* The parent's command name and executable when the agent could read them; else NULL. */
	const char *parent_comm, *parent_exe;
};

/*
 * A kernel record: ev, then at data its ev->path_len bytes of path (or of a
 * struct bw_net_obj, or of a unix name) and ev->args_len bytes of
 * NUL-terminated arguments. exe is the process's executable ("" when gone);
 * boot_to_real_ns turns the boot-time stamp into wall time. src->cgroup_id
 * is not used: the record carries its own.
 */
void bw_event_format(struct jw *w, const struct bw_event *ev, const char *data, const char *exe,
		     int64_t boot_to_real_ns, const struct bw_event_src *src);

/* A `lost` record: count events not written, for reason, at real_ns (wall time). */
void bw_event_format_lost(struct jw *w, int64_t real_ns, uint64_t count, const char *reason,
			  const struct bw_event_src *src);

/* An `agent` record: what the agent itself did, at real_ns. */
void bw_event_format_agent(struct jw *w, int64_t real_ns, const char *msg,
			   const struct bw_event_src *src);

/*
 * The `node` of every record: $NODE_NAME when set (the DaemonSet sets it
 * from spec.nodeName), else the host name; bw_event_set_node overrides it.
 */
const char *bw_event_node(void);
void bw_event_set_node(const char *name);

/* The `op` of a record (enum bw_op): "open", "rename", ... */
const char *bw_op_name(unsigned op);

#endif
