/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The place of a socket file (struct bw_unix_place_key): where a unix path
 * rule's socket is bound, decided at bind (bpf/unix.bpf.h) and followed
 * when a socket file is made or renamed there (bpf/ident.bpf.c).
 */
#ifndef BW_UNIXPLACE_BPF_H
#define BW_UNIXPLACE_BPF_H

#include "bpfwarden.h"
#include "maps.bpf.h"

/* Room after the key for a name read under a mask (as struct bw_unix_scratch). */
#define BW_UNIX_PLACE_MASK 127

struct bw_unix_place_scratch {
	struct bw_unix_place_key key;
	char slack[BW_UNIX_PLACE_MASK + 1 - BW_UNIX_NAME + 1];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bw_unix_place_scratch);
} bw_unix_place_scratch SEC(".maps");

/* The place of dentry (its directory and name) into pk; -1 for a name no rule can spell. */
static __always_inline int bw_unix_place_of(struct bw_unix_place_key *pk, struct dentry *dentry)
{
	struct inode *dir = BPF_CORE_READ(dentry, d_parent, d_inode);
	__u32 n = BPF_CORE_READ(dentry, d_name.len);

	if (!dir || n >= BW_UNIX_NAME)
		return -1;
	__builtin_memset(pk, 0, sizeof(*pk));
	pk->ino = BPF_CORE_READ(dir, i_ino);
	pk->dev = BPF_CORE_READ(dir, i_sb, s_dev);
	barrier_var(n);
	bpf_probe_read_kernel(pk->name, n & BW_UNIX_PLACE_MASK, BPF_CORE_READ(dentry, d_name.name));
	return 0;
}

#endif /* BW_UNIXPLACE_BPF_H */
