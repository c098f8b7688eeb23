/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The decision cache: a governed open of a regular file that its policy
 * allowed leaves the verdict on the file's inode (inode local storage), and
 * the next open of the same file by the same name, from the same root,
 * under the same policy, is let through without building the path again
 * (bpf_d_path is most of a governed open's cost: docs/enforcement.md,
 * "The decision cache").
 *
 * An entry remembers the verdict of one name, as the kernel's own pointers
 * (dentry, mount, the task's root and mount namespace), and the states it
 * was decided in; it is used only while none of them has changed:
 *  - rename_lock's sequence: every change of any dentry's name or parent
 *    (d_move, d_exchange) on the host takes it for writing;
 *  - mount_lock's sequence: every change of any mount tree, and the freeing
 *    of any mount (so no mount or namespace pointer is reused) takes it;
 *  - bw_dc_gen: bumped by every agent after each change it makes to policy
 *    state, and by the kernel after it writes a pin (bpf/ident.bpf.c);
 *  - the entry itself is deleted whenever another dentry is given the
 *    inode (d_instantiate: a hard link, a lookup after the old dentry was
 *    freed), so its dentry pointer can only ever be the dentry it was
 *    decided for, never a new one at the same address.
 * Each of these is read before the slow path decides: a change that lands
 * while it decides leaves an entry that no later open will match.
 *
 * What is kept: an allow verdict of the policy (valid in every mode), or,
 * in learn mode, an access let through as learned (valid for that cgroup
 * while it learns: its learn record went out the first time). Only for
 * regular files with one link on local file systems (tmpfs, ext4, xfs,
 * btrfs: no rename or link happens behind the dcache's back), and never for
 * an exec's open, a deleted file, a path decided by identity, or a task
 * whose root is not a mount's root. A refusal and an audit are decided
 * again every time, with their events.
 *
 * Reads of the entry are lock-free: an entry is never written in place but
 * deleted and created whole (bpf_inode_storage_get copies the new value in
 * before it publishes it), so a reader sees one decision or none.
 */
#ifndef BW_DCACHE_BPF_H
#define BW_DCACHE_BPF_H

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "kernel.bpf.h"
#include "event.bpf.h"

#define BW_TMPFS_MAGIC 0x01021994
#define BW_EXT4_MAGIC  0xef53
#define BW_XFS_MAGIC   0x58465342
#define BW_BTRFS_MAGIC 0x9123683e

/* What a decision leaves to keep (bw_decide's *keep). */
enum bw_keep {
	BW_DC_NONE,
	BW_DC_ALLOW,   /* the policy allowed it: the same in every mode */
	BW_DC_LEARNED, /* learn mode let it through, learned: for that cgroup, in learn mode */
};

struct bw_dc_entry {
	__u64 dentry; /* the name decided ... */
	__u64 mnt;    /* ... through this mount */
	__u64 root_mnt;
	__u64 root_dentry;
	__u64 mnt_ns;
	__u64 gen;    /* bw_dc_gen */
	__u64 cgroup; /* BW_DC_LEARNED: the cgroup whose learn record it was */
	__u32 rename_seq;
	__u32 mount_seq;
	__u32 policy;
	__u8 access; /* BW_ACC_R | BW_ACC_W */
	__u8 kind;   /* enum bw_keep */
	__u8 pad[2];
};
_Static_assert(sizeof(struct bw_dc_entry) == 72, "bw_dc_entry size");

struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bw_dc_entry);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_dcache SEC(".maps");

/* Typeless: neither is in these kernels' BTF; weak: without them, no cache. */
extern const void rename_lock __ksym __weak;
extern const void mount_lock __ksym __weak;

/* What an entry is valid against, read before the slow path decides. */
struct bw_dc_snap {
	__u64 gen;
	__u32 rename_seq;
	__u32 mount_seq;
};

/*
 * A seqlock's sequence (its first word); odd while a writer is inside.
 * Where the kernel has bpf_rdonly_cast (6.2 on), a plain load; else a probe
 * read, a helper call (6.1).
 */
static __always_inline __u32 bw_dc_seq(const void *lock)
{
	const struct seqcount *sc;
	__u32 seq = 1;

	if (bpf_ksym_exists(bpf_rdonly_cast)) {
		sc = bpf_rdonly_cast(lock, bpf_core_type_id_kernel(struct seqcount));
		return sc->sequence;
	}
	bpf_probe_read_kernel(&seq, sizeof(seq), lock);
	return seq;
}

/*
 * Was this open's access decided before, by this name and root, in an
 * unchanged state: allowed, or (learn mode, the same cgroup) learned?
 */
static __always_inline bool bw_dc_hit(struct file *file, __u64 cgid, const struct bw_cgroup *cg,
				      __u8 access)
{
	struct task_struct *task;
	struct bw_dc_entry *e;
	struct dentry *d;

	if (!&rename_lock || !&mount_lock)
		return false;
	e = bpf_inode_storage_get(&bw_dcache, file->f_inode, 0, 0);
	if (!e)
		return false;
	d = file->f_path.dentry;
	if (e->dentry != (__u64)d || e->mnt != (__u64)file->f_path.mnt || e->policy != cg->policy ||
	    (e->access & access) != access || (file->f_flags & __FMODE_EXEC))
		return false;
	if (e->kind != BW_DC_ALLOW &&
	    (e->kind != BW_DC_LEARNED || cg->mode != BW_MODE_LEARN || e->cgroup != cgid))
		return false;
	/* Unlinked since (no sequence says so): its path now ends in " (deleted)". */
	if (!d->d_hash.pprev)
		return false;
	task = bpf_get_current_task_btf();
	if (e->root_mnt != (__u64)task->fs->root.mnt ||
	    e->root_dentry != (__u64)task->fs->root.dentry ||
	    e->mnt_ns != (__u64)task->nsproxy->mnt_ns)
		return false;
	if (e->gen != bw_dc_gen_now() || e->rename_seq != bw_dc_seq(&rename_lock) ||
	    e->mount_seq != bw_dc_seq(&mount_lock))
		return false;
	/* A verdict all the same (a learned one is still a deny verdict let through). */
	bw_opstat(cg->policy, BW_OP_OPEN, cg->mode, e->kind == BW_DC_ALLOW);
	return true;
}

/*
 * The states an open is decided in, read before its decision, whether or
 * not it may be kept (bw_dc_keepable, after): a test here would send the
 * verifier through the whole decision once for each answer.
 */
static __always_inline void bw_dc_begin(struct bw_dc_snap *snap)
{
	snap->gen = bw_dc_gen_now();
	/* Odd: as if a writer were inside, nothing is kept. */
	snap->rename_seq = snap->mount_seq = 1;
	if (!&rename_lock || !&mount_lock)
		return;
	snap->rename_seq = bw_dc_seq(&rename_lock);
	snap->mount_seq = bw_dc_seq(&mount_lock);
}

/* May this open's verdict, decided from snap, be kept? */
static __always_inline bool bw_dc_keepable(struct file *file, const struct bw_dc_snap *snap)
{
	struct inode *inode = file->f_inode;
	unsigned long magic;

	if (!&rename_lock || !&mount_lock)
		return false;
	if ((file->f_flags & __FMODE_EXEC) || (inode->i_mode & S_IFMT) != S_IFREG ||
	    inode->__i_nlink != 1)
		return false;
	magic = inode->i_sb->s_magic;
	if (magic != BW_TMPFS_MAGIC && magic != BW_EXT4_MAGIC && magic != BW_XFS_MAGIC &&
	    magic != BW_BTRFS_MAGIC)
		return false;
	return !((snap->rename_seq | snap->mount_seq) & 1);
}

/* Keep a decision decided from snap; its accesses join an entry of the same state. */
static __always_inline void bw_dc_fill(struct file *file, __u64 cgid, __u32 policy, __u8 access,
				       __u8 kind, const struct bw_dc_snap *snap)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct inode *inode = file->f_inode;
	struct dentry *d = file->f_path.dentry;
	struct vfsmount *root = task->fs->root.mnt;
	struct bw_dc_entry e = {}, *old;

	if (!d->d_hash.pprev || task->fs->root.dentry != root->mnt_root)
		return;
	e.dentry = (__u64)d;
	e.mnt = (__u64)file->f_path.mnt;
	e.root_mnt = (__u64)root;
	e.root_dentry = (__u64)root->mnt_root;
	e.mnt_ns = (__u64)task->nsproxy->mnt_ns;
	e.gen = snap->gen;
	e.rename_seq = snap->rename_seq;
	e.mount_seq = snap->mount_seq;
	e.policy = policy;
	e.access = access;
	e.kind = kind;
	if (kind == BW_DC_LEARNED)
		e.cgroup = cgid;
	old = bpf_inode_storage_get(&bw_dcache, inode, 0, 0);
	if (old) {
		if (old->dentry == e.dentry && old->mnt == e.mnt && old->root_mnt == e.root_mnt &&
		    old->root_dentry == e.root_dentry && old->mnt_ns == e.mnt_ns &&
		    old->gen == e.gen && old->rename_seq == e.rename_seq &&
		    old->mount_seq == e.mount_seq && old->policy == policy && old->kind == kind &&
		    old->cgroup == e.cgroup) {
			if ((old->access & access) == access)
				return;
			e.access |= old->access;
		}
		bpf_inode_storage_delete(&bw_dcache, inode);
	}
	if (bpf_inode_storage_get(&bw_dcache, inode, &e, BPF_LOCAL_STORAGE_GET_F_CREATE)) {
		struct bw_counters *c = bpf_map_lookup_elem(&bw_counters, &policy);

		if (c)
			c->kept++;
	}
}

/* Another name for the inode, or a pin written: no verdict of it stands. */
static __always_inline void bw_dc_forget(struct inode *inode)
{
	if (inode)
		bpf_inode_storage_delete(&bw_dcache, inode);
}

/* After a pin is written: every verdict kept before it is decided again. */
static __always_inline void bw_dc_invalidate(void)
{
	__u32 zero = 0;
	__u64 *gen = bpf_map_lookup_elem(&bw_dc_gen, &zero);

	if (gen)
		__sync_fetch_and_add(gen, 1);
}

#endif /* BW_DCACHE_BPF_H */
