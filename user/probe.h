/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What this kernel supports, probed once and cached: BTF, the cgroup2
 * mount, `bpf` among the active LSMs, and whether an LSM program and a
 * tp_btf program really attach.
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
};

const struct bw_support *bw_probe(void);
/* One sentence saying why file enforcement is unavailable, or NULL if it is. */
const char *bw_lsm_unavailable(const struct bw_support *s);

#endif
