/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The path of an object as the current task sees it (its mount namespace
 * and root), which is what file rules name.
 *
 * file_open, the hot path, asks the kernel with bpf_d_path. The path_* hooks
 * are not allowed bpf_d_path, so for them bw_path_build() walks from the
 * dentry up through d_parent and across mount points to the task's root,
 * building the path backwards in a per-CPU buffer. Both leave the path at
 * s->key.path, where the trie lookup and the event read it.
 *
 * Some objects have no path in the task's view, and a name relative to
 * another root would be a name the sandbox chose: a mount outside the task's
 * mount namespace (another namespace's, reached through /proc/PID/root or a
 * descriptor from outside; a detached tree from open_tree; an overlay's
 * layers on 6.12), a layer's file that overlayfs on 6.1 opens under the
 * overlay's path, a disconnected dentry from a file handle. These are
 * decided by identity (docs/enforcement.md, "Objects without a path in the
 * task's view"), and their path is built to their file system's root
 * (BW_EVF_FS_RELATIVE), which the agent prefixes with where it sees that
 * file system mounted.
 *
 * A path that does not fit BW_PATH_BUF, or a walk deeper than BW_PATH_DEPTH,
 * is flagged too long and refused in enforce mode.
 */
#ifndef BW_PATH_BPF_H
#define BW_PATH_BPF_H

#include "bpfwarden.h"
#include "kernel.bpf.h"

#define BW_BUF_MASK (BW_PATH_BUF - 1)
#define BW_NAME_MAX 255

/* Are n bytes equal (n a constant: memcmp is not there to call)? */
static __always_inline bool bw_bytes_eq(const char *a, const char *b, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

struct bw_scratch {
	struct bw_event ev;	    /* event head ... */
	char evpath[BW_PATH_BUF];   /* ... immediately followed by its path */
	struct bw_path_key key;	    /* the trie reads sizeof(key) bytes ... */
	char key_tail[BW_PATH_BUF]; /* ... the full path runs on into here */
	struct bw_path_key self_key; /* key with /proc/PID as /proc/self (decide.bpf.h) */
	char buf[2 * BW_PATH_BUF];   /* bw_path_build: path ends at BW_PATH_BUF */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bw_scratch);
} bw_scratch SEC(".maps");

struct bw_walk {
	struct dentry *dentry;
	struct mount *mnt; /* NULL: walk to the file system's root only */
	struct dentry *mnt_root;
	struct dentry *root_dentry; /* the task's root */
	struct vfsmount *root_mnt;
	struct bw_scratch *s;
	__u32 off;   /* path starts at s->buf[off] */
	__u32 flags; /* BW_EVF_* */
};

static __always_inline struct mount *bw_real_mount(struct vfsmount *vfsmnt)
{
	return container_of(vfsmnt, struct mount, mnt);
}

static long bw_walk_step(__u32 i, struct bw_walk *w)
{
	struct dentry *d = w->dentry, *parent;
	struct bw_scratch *s = w->s;
	const unsigned char *name;
	__u32 len, off;

	parent = BPF_CORE_READ(d, d_parent);
	if (!w->mnt) {
		/* Without a mount the walk ends at the file system's root. */
		if (d == parent) {
			w->flags |= BW_EVF_FS_RELATIVE;
			return 1;
		}
		goto prepend;
	}
	if (d == w->root_dentry && &w->mnt->mnt == w->root_mnt)
		return 1;
	if (d == w->mnt_root) {
		struct mount *cur = w->mnt, *up = BPF_CORE_READ(cur, mnt_parent);

		/* The global root: the object is outside the task's chroot. */
		if (up == cur)
			return 1;
		w->dentry = BPF_CORE_READ(cur, mnt_mountpoint);
		w->mnt = up;
		w->mnt_root = BPF_CORE_READ(up, mnt.mnt_root);
		return 0;
	}
	if (d == parent) {
		/*
		 * A root that no mount reaches: pipes, sockets, memfds and other
		 * pseudo files have no path for a rule to name.
		 */
		w->flags |= BW_EVF_UNREACHABLE;
		return 1;
	}
prepend:
	name = BPF_CORE_READ(d, d_name.name);
	len = BPF_CORE_READ(d, d_name.len);
	if (len > BW_NAME_MAX || w->off < len + 2) {
		w->flags |= BW_EVF_PATH_TOO_LONG;
		return 1;
	}
	off = w->off - len;
	bpf_probe_read_kernel(&s->buf[off & BW_BUF_MASK], len & BW_NAME_MAX, name);
	off--;
	s->buf[off & BW_BUF_MASK] = '/';
	w->off = off;
	w->dentry = parent;
	return 0;
}

/*
 * Walk from (vfsmnt, dentry) to the task's root, or with no vfsmnt to the
 * root of the dentry's file system, leaving the path at s->buf[*off] up to
 * BW_PATH_BUF. Returns its length; *flags says how it went.
 */
static __always_inline __u32 bw_path_walk(struct bw_scratch *s, struct vfsmount *vfsmnt,
					  struct dentry *dentry, __u32 *flags, __u32 *off)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct bw_walk w = {};
	long n;

	w.dentry = dentry;
	w.s = s;
	if (vfsmnt) {
		w.mnt = bw_real_mount(vfsmnt);
		w.mnt_root = BPF_CORE_READ(vfsmnt, mnt_root);
	}
	w.root_dentry = BPF_CORE_READ(task, fs, root.dentry);
	w.root_mnt = BPF_CORE_READ(task, fs, root.mnt);
	w.off = BW_PATH_BUF;

	n = bpf_loop(BW_PATH_DEPTH, bw_walk_step, &w, 0);
	if (n >= BW_PATH_DEPTH)
		w.flags |= BW_EVF_PATH_TOO_LONG;
	if (w.off == BW_PATH_BUF) {
		w.off = BW_PATH_BUF - 1;
		s->buf[BW_PATH_BUF - 1] = '/';
	}
	*flags |= w.flags;
	*off = w.off & BW_BUF_MASK;
	if (w.flags & BW_EVF_UNREACHABLE)
		return 0;
	return (BW_PATH_BUF - w.off) & BW_BUF_MASK;
}

/*
 * Walk from (vfsmnt, dentry) to the task's root, or with no vfsmnt (a hook
 * that gets only a dentry) to the root of the dentry's file system, and
 * leave the path at s->key.path. Returns its length; *flags says how it went.
 */
static __always_inline __u32 bw_path_build(struct bw_scratch *s, struct vfsmount *vfsmnt,
					   struct dentry *dentry, __u32 *flags)
{
	__u32 len, off;

	len = bw_path_walk(s, vfsmnt, dentry, flags, &off);
	bpf_probe_read_kernel(s->key.path, len, &s->buf[off & BW_BUF_MASK]);
	return len;
}

/*
 * The host's first process (PID 1 of the initial PID namespace), found up
 * the chain of parents; NULL when the chain is deeper than the walk.
 */
#define BW_PARENTS_MAX 64

static __always_inline struct task_struct *bw_first_process(void)
{
	struct task_struct *t = bpf_get_current_task_btf(), *parent;
	int i;

	for (i = 0; i < BW_PARENTS_MAX; i++) {
		parent = BPF_CORE_READ(t, real_parent);
		if (!parent || parent == t || !BPF_CORE_READ(parent, pid))
			return t;
		t = parent;
	}
	return NULL;
}

/*
 * Does the current task see names as the host does: the first process's
 * mount namespace and root? Not in a mount namespace of its own (`run`
 * gives one), a container or a chroot: there a path may name another object
 * than the same path on the host.
 */
static __always_inline bool bw_view_is_hosts(void)
{
	struct task_struct *first = bw_first_process(), *me = bpf_get_current_task_btf();

	return first && BPF_CORE_READ(first, nsproxy, mnt_ns) == BPF_CORE_READ(me, nsproxy, mnt_ns) &&
	       BPF_CORE_READ(first, fs, root.mnt) == BPF_CORE_READ(me, fs, root.mnt) &&
	       BPF_CORE_READ(first, fs, root.dentry) == BPF_CORE_READ(me, fs, root.dentry);
}

/*
 * An event's last part when the task's view is not the host's: at pos
 * bytes past s->evpath (after the path and the arguments), a struct
 * bw_real_name and dentry's path from its file system's root. Returns the
 * bytes added (0: nothing, the walk failed or it does not fit in front of
 * s->buf).
 */
static __always_inline __u32 bw_real_name_add(struct bw_scratch *s, struct dentry *dentry,
					      __u32 pos)
{
	struct bw_real_name rn = {};
	__u32 flags = 0, off, len;
	char *at;

	if (bw_view_is_hosts())
		return 0;
	len = bw_path_walk(s, NULL, dentry, &flags, &off);
	if (!len || (flags & (BW_EVF_PATH_TOO_LONG | BW_EVF_UNREACHABLE)) ||
	    pos + sizeof(rn) + len > 2 * BW_PATH_BUF)
		return 0;
	rn.dev = BPF_CORE_READ(dentry, d_sb, s_dev);
	rn.len = len;
	at = (char *)s->evpath + (pos & (2 * BW_PATH_BUF - 1));
	bpf_probe_read_kernel(at, sizeof(rn), &rn);
	bpf_probe_read_kernel(at + sizeof(rn), len & BW_BUF_MASK, &s->buf[off & BW_BUF_MASK]);
	return sizeof(rn) + len;
}

/*
 * Is the mount outside the current task's mount namespace? Another
 * namespace's mount, a detached tree (an anonymous namespace) and a file
 * system's internal mount (MNT_NS_INTERNAL) all are.
 */
static __always_inline bool bw_mnt_foreign(struct vfsmount *vfsmnt)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ(bw_real_mount(vfsmnt), mnt_ns) != BPF_CORE_READ(task, nsproxy, mnt_ns);
}

/* A file system's internal mount: from 6.6 on, where an overlay's layer files are. */
static __always_inline bool bw_mnt_internal(struct vfsmount *vfsmnt)
{
	return BPF_CORE_READ(bw_real_mount(vfsmnt), mnt_ns) ==
	       (struct mnt_namespace *)MNT_NS_INTERNAL;
}

/*
 * An overlay's layer file, opened by overlayfs for the overlay's file: on
 * 6.1 under the overlay's path, from 6.6 on a private clone of the layer's
 * mount (an internal mount).
 */
static __always_inline bool bw_layer_file(struct file *file)
{
	return file->f_inode != file->f_path.dentry->d_inode || bw_mnt_internal(file->f_path.mnt);
}

/*
 * Not an event flag (those fit the event's byte): the file is an overlay
 * layer's, whose overlay file was decided by its path just before.
 */
#define BW_DF_LAYER 0x100
/*
 * Not an event flag either: an open of a program for its exec (the kernel's
 * open_exec: the program, its `#!` interpreter, its ELF interpreter). It is
 * decided and counted as the read it is, and a refusal is told as an exec
 * with access r: the program was refused, not a read of it.
 */
#define BW_DF_EXEC 0x200

/* One of the inode's own dentries (any name of it will do for the pin climb), or NULL. */
static __always_inline struct dentry *bw_alias_of(struct inode *inode)
{
	struct hlist_node *first = BPF_CORE_READ(inode, i_dentry.first);

	if (!first)
		return NULL;
	return (struct dentry *)((void *)first - bpf_core_field_offset(struct dentry, d_u));
}

/*
 * file_open and bprm_check: the kernel's own d_path, allowed on these hooks,
 * for a file on a mount of the task's namespace whose path is its inode's.
 * *obj is the dentry to decide on: the file's, or for an overlay's layer
 * file on 6.1 one of the layer inode's own. Without a path in the task's
 * view the path is built to the file system's root (BW_EVF_FS_RELATIVE),
 * or there is none (BW_EVF_UNREACHABLE, BW_EVF_DISCONNECTED).
 */
static __always_inline __u32 bw_path_of_file(struct bw_scratch *s, struct file *file, __u32 *flags,
					     struct dentry **obj)
{
	struct dentry *d = file->f_path.dentry, *real;
	struct vfsmount *mnt = file->f_path.mnt;
	long n;

	*obj = d;
	if (d->d_parent == d && d != mnt->mnt_root) {
		/*
		 * A root dentry that is not its mount's root: a pseudo file
		 * (pipe, socket, memfd), or a file handle's dentry that exportfs
		 * left without a parent, which is never a pseudo file.
		 */
		*flags |=
		    (d->d_flags & DCACHE_DISCONNECTED) ? BW_EVF_DISCONNECTED : BW_EVF_UNREACHABLE;
		return 0;
	}
	if (file->f_inode != d->d_inode) {
		/* overlayfs before 6.6: the layer's inode under the overlay's path. */
		*flags |= BW_DF_LAYER;
		real = bw_alias_of(file->f_inode);
		if (!real) {
			*flags |= BW_EVF_DISCONNECTED;
			return 0;
		}
		*obj = real;
		return bw_path_build(s, NULL, real, flags);
	}
	if (bw_mnt_foreign(mnt)) {
		if (bw_mnt_internal(mnt))
			*flags |= BW_DF_LAYER;
		return bw_path_build(s, NULL, d, flags);
	}
	n = bpf_d_path((struct path *)&file->f_path, s->key.path, BW_PATH_BUF);
	if (n <= 0) {
		*flags |= BW_EVF_PATH_TOO_LONG;
		return 0;
	}
	return (n - 1) & BW_BUF_MASK; /* n counts the NUL */
}

#endif /* BW_PATH_BPF_H */
