/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What this kernel supports and what this process may do, probed once and
 * cached: BTF, the cgroup2 mount, `bpf` among the active LSMs, whether an
 * LSM program and a tp_btf program really attach, and the capabilities
 * loading them takes. A refusal is explained in words, and a missing
 * capability is named before the kernel is blamed.
 */
#ifndef BW_PROBE_H
#define BW_PROBE_H

#include <limits.h>
#include <stdbool.h>

struct bw_support {
	bool btf;
	bool cgroup2;
	char cgroup_root[PATH_MAX];
	bool lsm_listed;
	char lsm_list[512];
	int lsm_attach_err; /* 0: an LSM program attached; else -errno */
	int tp_attach_err;
	/* Known from our own pinned, attached program rather than a trial attach. */
	bool lsm_seen_pinned, tp_seen_pinned;
};

const struct bw_support *bw_probe(void);
/* One sentence saying why file enforcement is unavailable, or NULL if it is. */
const char *bw_lsm_unavailable(const struct bw_support *s);
/* Likewise for the network rules (cgroup programs, with or without BPF LSM). */
const char *bw_net_unavailable(const struct bw_support *s);

/*
 * What the agent does that takes a capability. The kernel asks CAP_BPF to
 * create maps and load programs, CAP_PERFMON more for tracing programs
 * (tp_btf, lsm), CAP_NET_ADMIN more for cgroup network programs, and
 * CAP_SYS_ADMIN to mount; CAP_SYS_ADMIN also stands in for the first three.
 */
enum {
	BW_NEED_BPF = 1 << 0,	  /* maps, and any program */
	BW_NEED_TRACING = 1 << 1, /* the cgroup tracking programs (tp_btf) */
	BW_NEED_LSM = 1 << 2,	  /* the BPF LSM programs */
	BW_NEED_NET = 1 << 3,	  /* the cgroup network programs */
	BW_NEED_MOUNT = 1 << 4,	  /* mounting bpffs or securityfs */
};
/*
 * A sentence naming each capability that the operations in needs (BW_NEED_*)
 * take and this process lacks, and what needs it; NULL when none is missing.
 * Effective capabilities are read once (capget); in a user namespace the
 * kernel counts none of them for BPF, and the sentence says so.
 */
const char *bw_caps_missing(unsigned needs);
/* Does this process have capability cap (CAP_*) in effect? */
bool bw_cap(int cap);

#endif
