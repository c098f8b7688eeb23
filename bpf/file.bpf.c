// SPDX-License-Identifier: GPL-2.0-only
/*
 * File enforcement: file_open, the path_* hooks that change a file or a
 * directory entry, and the hooks that change a file's attributes (times,
 * xattrs, ACLs, inode flags). Each hook names the object as (mount, dentry) and the
 * access it needs (r or w); bw_file_check() builds the object's path, looks
 * up the most specific rule of the governing policy, consults the deny pins
 * (device + inode), and refuses, audits or lets it pass.
 *
 * Processes outside every governed cgroup cost one hash lookup. For governed
 * processes every internal failure fails closed (-EACCES).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "path.bpf.h"
#include "decide.bpf.h"
#include "kernel.bpf.h"
#include "cgtree.bpf.h"
#include "dcache.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* A path_* hook: (mnt, dentry) names the object; NULL mnt for attribute changes. */
static __always_inline int bw_file_check(struct vfsmount *mnt, struct dentry *dentry, __u8 op,
					 __u8 access)
{
	struct bw_cgroup *cg;
	union bw_cgroup_copy cg_copy;
	__u64 cgid;

	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	return bw_decide_path(cgid, cg, mnt, dentry, op, access);
}

SEC("lsm/file_open")
int BPF_PROG(bw_file_open, struct file *file, int ret)
{
	struct bw_cgroup *cg;
	union bw_cgroup_copy cg_copy;
	__u8 keep = BW_DC_NONE;
	struct bw_dc_snap snap;
	unsigned int fmode;
	__u8 access = 0;
	__u64 cgid;

	if (ret)
		return ret;
	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	fmode = file->f_mode;
	if (fmode & FMODE_READ)
		access |= BW_ACC_R;
	if ((fmode & FMODE_WRITE) || (file->f_flags & O_TRUNC))
		access |= BW_ACC_W;
	if (!access)
		return 0;
	if (bw_dc_hit(file, cgid, cg, access))
		return 0;
	bw_dc_begin(&snap);
	ret = bw_decide_file(cgid, cg, file, &bw_file_rules, BW_CAT_PIN_FILE, BW_OP_OPEN, access,
			     &keep);
	if (!ret && (access & BW_ACC_W))
		ret = bw_cg_door(cgid, cg, file);
	if (!ret && keep != BW_DC_NONE && bw_dc_keepable(file, &snap))
		bw_dc_fill(file, cgid, cg->policy, access, keep, &snap);
	if (ret || !(file->f_flags & __FMODE_EXEC) || !bw_layer_file(file))
		return ret;
	/*
	 * A program in an overlay: bprm_check sees the overlay's file, whose
	 * path and dentries are not the layer's. The layer's file is opened
	 * here for the exec, so its exec rules and pins decide here.
	 */
	return bw_decide_file(cgid, cg, file, &bw_exec_rules, BW_CAT_PIN_EXEC, BW_OP_EXEC, BW_ACC_X,
			      NULL);
}

SEC("lsm/path_truncate")
int BPF_PROG(bw_path_trunc, const struct path *path, int ret)
{
	if (ret)
		return ret;
	return bw_file_check(path->mnt, path->dentry, BW_OP_TRUNCATE, BW_ACC_W);
}

/* mknod, mkfifo and open(O_CREAT) of a new name. */
SEC("lsm/path_mknod")
int BPF_PROG(bw_path_mknod, const struct path *dir, struct dentry *dentry, umode_t mode,
	     unsigned int dev, int ret)
{
	if (ret)
		return ret;
	return bw_file_check(dir->mnt, dentry, BW_OP_CREATE, BW_ACC_W);
}

SEC("lsm/path_mkdir")
int BPF_PROG(bw_path_mkdir, const struct path *dir, struct dentry *dentry, umode_t mode, int ret)
{
	if (ret)
		return ret;
	return bw_file_check(dir->mnt, dentry, BW_OP_MKDIR, BW_ACC_W);
}

SEC("lsm/path_rmdir")
int BPF_PROG(bw_path_rmdir, const struct path *dir, struct dentry *dentry, int ret)
{
	if (ret)
		return ret;
	return bw_file_check(dir->mnt, dentry, BW_OP_RMDIR, BW_ACC_W);
}

SEC("lsm/path_unlink")
int BPF_PROG(bw_path_unlink, const struct path *dir, struct dentry *dentry, int ret)
{
	if (ret)
		return ret;
	return bw_file_check(dir->mnt, dentry, BW_OP_UNLINK, BW_ACC_W);
}

SEC("lsm/path_symlink")
int BPF_PROG(bw_path_symlink, const struct path *dir, struct dentry *dentry, const char *old_name,
	     int ret)
{
	if (ret)
		return ret;
	return bw_file_check(dir->mnt, dentry, BW_OP_SYMLINK, BW_ACC_W);
}

/* A new name for an existing file changes both the file (its link count) and the directory. */
SEC("lsm/path_link")
int BPF_PROG(bw_path_link, struct dentry *old_dentry, const struct path *new_dir,
	     struct dentry *new_dentry, int ret)
{
	struct vfsmount *mnt;

	if (ret)
		return ret;
	mnt = new_dir->mnt;
	/* A second name gives all the access of the first: it needs both. */
	ret = bw_file_check(mnt, old_dentry, BW_OP_LINK, BW_ACC_R | BW_ACC_W);
	if (ret)
		return ret;
	return bw_file_check(mnt, new_dentry, BW_OP_LINK, BW_ACC_W);
}

SEC("lsm/path_rename")
int BPF_PROG(bw_path_rename, const struct path *old_dir, struct dentry *old_dentry,
	     const struct path *new_dir, struct dentry *new_dentry, unsigned int flags, int ret)
{
	if (ret)
		return ret;
	ret = bw_file_check(old_dir->mnt, old_dentry, BW_OP_RENAME_FROM, BW_ACC_W);
	if (ret)
		return ret;
	return bw_file_check(new_dir->mnt, new_dentry, BW_OP_RENAME_TO, BW_ACC_W);
}

SEC("lsm/path_chmod")
int BPF_PROG(bw_path_chmod, const struct path *path, umode_t mode, int ret)
{
	if (ret)
		return ret;
	return bw_file_check(path->mnt, path->dentry, BW_OP_CHMOD, BW_ACC_W);
}

SEC("lsm/path_chown")
/* kuid_t and kgid_t arrive as plain integers in the context. */
int BPF_PROG(bw_path_chown, const struct path *path, unsigned int uid, unsigned int gid, int ret)
{
	if (ret)
		return ret;
	return bw_file_check(path->mnt, path->dentry, BW_OP_CHOWN, BW_ACC_W);
}

/*
 * utimes and friends reach no path hook. Mode, owner and size changes are
 * decided by path_chmod, path_chown and path_truncate; what is left here is
 * a time change, decided without a mount (see bw_path_build).
 */
static __always_inline int bw_setattr(struct dentry *dentry, struct iattr *attr)
{
	unsigned int valid = BPF_CORE_READ(attr, ia_valid);

	if (valid & (ATTR_MODE | ATTR_UID | ATTR_GID | ATTR_SIZE))
		return 0;
	if (!(valid & (ATTR_ATIME | ATTR_MTIME)))
		return 0;
	return bw_file_check(NULL, dentry, BW_OP_UTIMES, BW_ACC_W);
}

/* The hook gained an idmap argument in 6.3: the loader picks one of these. */
SEC("lsm/inode_setattr")
int BPF_PROG(bw_setattr_idmap, struct mnt_idmap *idmap, struct dentry *dentry, struct iattr *attr,
	     int ret)
{
	if (ret)
		return ret;
	return bw_setattr(dentry, attr);
}

SEC("lsm/inode_setattr")
int BPF_PROG(bw_setattr_plain, struct dentry *dentry, struct iattr *attr, int ret)
{
	if (ret)
		return ret;
	return bw_setattr(dentry, attr);
}

/*
 * xattrs and POSIX ACLs: changes of the file, `w` whatever the descriptor
 * or name they come through. Their hooks get a dentry but no mount: decided
 * like utimes, by the pins (bw_setattr). Up to 6.1 an ACL is its xattr
 * (system.posix_acl_access, _default); later kernels call inode_set_acl
 * and inode_remove_acl instead, which the loader attaches where they exist.
 */
static __always_inline __u8 bw_xattr_op(const char *name, __u8 op)
{
	static const char acl[] = "system.posix_acl_";
	char buf[sizeof(acl)];
	int i;

	if (bpf_probe_read_kernel_str(buf, sizeof(buf), name) != sizeof(buf))
		return op;
#pragma unroll
	for (i = 0; i < sizeof(acl) - 1; i++)
		if (buf[i] != acl[i])
			return op;
	return BW_OP_SETACL;
}

/* The first argument is a user_namespace up to 6.2, an mnt_idmap after: unused. */
SEC("lsm/inode_setxattr")
int BPF_PROG(bw_setxattr, void *idmap, struct dentry *dentry, const char *name, const void *value,
	     size_t size, int flags, int ret)
{
	if (ret)
		return ret;
	return bw_file_check(NULL, dentry, bw_xattr_op(name, BW_OP_SETXATTR), BW_ACC_W);
}

SEC("lsm/inode_removexattr")
int BPF_PROG(bw_rmxattr, void *idmap, struct dentry *dentry, const char *name, int ret)
{
	if (ret)
		return ret;
	return bw_file_check(NULL, dentry, bw_xattr_op(name, BW_OP_REMOVEXATTR), BW_ACC_W);
}

SEC("lsm/inode_set_acl")
int BPF_PROG(bw_set_acl, void *idmap, struct dentry *dentry, const char *acl_name, void *kacl,
	     int ret)
{
	if (ret)
		return ret;
	return bw_file_check(NULL, dentry, BW_OP_SETACL, BW_ACC_W);
}

SEC("lsm/inode_remove_acl")
int BPF_PROG(bw_remove_acl, void *idmap, struct dentry *dentry, const char *acl_name, int ret)
{
	if (ret)
		return ret;
	return bw_file_check(NULL, dentry, BW_OP_SETACL, BW_ACC_W);
}

/*
 * Inode flags (chattr: immutable, append-only...) and a few other inode
 * attributes change through an ioctl on any descriptor of the file,
 * read-only ones too. Here the file names its mount: decided like a write
 * through a path hook (trie and pins).
 */
static __always_inline bool bw_attr_ioctl(unsigned int cmd)
{
	return cmd == FS_IOC_SETFLAGS || cmd == FS_IOC32_SETFLAGS || cmd == FS_IOC_FSSETXATTR ||
	       cmd == FS_IOC_SETVERSION || cmd == FS_IOC32_SETVERSION ||
	       cmd == FS_IOC_ENABLE_VERITY || cmd == FS_IOC_SET_ENCRYPTION_POLICY;
}

static __always_inline int bw_flags_ioctl(struct file *file, unsigned int cmd)
{
	if (!bw_attr_ioctl(cmd))
		return 0;
	return bw_file_check(file->f_path.mnt, file->f_path.dentry, BW_OP_SETFLAGS, BW_ACC_W);
}

SEC("lsm/file_ioctl")
int BPF_PROG(bw_ioctl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	if (ret)
		return ret;
	return bw_flags_ioctl(file, cmd);
}

/* 32-bit processes (FS_IOC32_SETFLAGS); the hook came in 6.7 and to 6.1.74. */
SEC("lsm/file_ioctl_compat")
int BPF_PROG(bw_ioctl_compat, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	if (ret)
		return ret;
	return bw_flags_ioctl(file, cmd);
}
