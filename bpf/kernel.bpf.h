/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel constants that vmlinux.h cannot carry: BTF keeps types and enums,
 * not the macros of the kernel's headers. Their values are part of the
 * kernel's ABI (or, for FMODE_*, O_* and ATTR_*, have not changed in the
 * kernels we support). Enum constants (IPPROTO_*, SOCK_*) come from
 * vmlinux.h itself.
 */
#ifndef BW_KERNEL_BPF_H
#define BW_KERNEL_BPF_H

#define EPERM  1
#define EAGAIN 11
#define ENOMEM 12
#define EACCES 13
#define EEXIST 17

#define AF_UNIX	  1
#define AF_INET	  2
#define AF_INET6  10
#define AF_UNSPEC 0
#define AF_PACKET 17

/* mmap(2) and mprotect(2) protection, and the vma flag it sets */
#define PROT_EXEC 0x4
#define VM_EXEC	  0x4

#define FMODE_READ  0x1
#define FMODE_WRITE 0x2
#define O_TRUNC	    01000

/* file.f_flags of a file opened by exec (FMODE_EXEC's value) */
#define __FMODE_EXEC 0x20

/* mount.mnt_ns of a file system's internal mount (kern_mount, clone_private_mount) */
#define MNT_NS_INTERNAL ((void *)-22)
/* include/linux/proc_ns.h: the host's cgroup namespace. */
#define BW_INIT_CGROUP_NS_INO 0xEFFFFFFBU

/* struct dentry.d_flags: a dentry that exportfs could not connect to its parent */
#define DCACHE_DISCONNECTED 0x20

/* struct iattr.ia_valid */
#define ATTR_MODE  (1 << 0)
#define ATTR_UID   (1 << 1)
#define ATTR_GID   (1 << 2)
#define ATTR_SIZE  (1 << 3)
#define ATTR_ATIME (1 << 4)
#define ATTR_MTIME (1 << 5)

/* include/uapi/linux/capability.h */
#define CAP_SYS_MODULE 16
#define CAP_SYS_RAWIO  17
#define CAP_SYS_CHROOT 18
#define CAP_SYS_ADMIN  21
#define CAP_SYS_BOOT   22
#define CAP_NET_ADMIN  12
/* include/linux/security.h: capable()'s options */
#define CAP_OPT_NOAUDIT 0x2

/*
 * The new mount API's calls have the same numbers on every architecture
 * (and for 32-bit processes on x86-64): they came after the tables were
 * unified (include/uapi/asm-generic/unistd.h).
 */
#define NR_open_tree	 428
#define NR_fsopen	 430
#define NR_fsconfig	 431
#define NR_fsmount	 432
#define NR_fspick	 433
#define NR_mount_setattr 442
/* include/uapi/linux/mount.h: fsconfig's command that reconfigures a superblock */
#define FSCONFIG_CMD_RECONFIGURE 7
/* include/uapi/linux/mount.h: mount(2)'s flags */
#define MS_REMOUNT    32
#define MS_BIND	      4096
#define MS_UNBINDABLE (1 << 17)
#define MS_PRIVATE    (1 << 18)
#define MS_SLAVE      (1 << 19)
#define MS_SHARED     (1 << 20)
/* include/linux/fs.h: inode_permission()'s mask; file types */
#define MAY_WRITE 0x2
#define MAY_READ  0x4
#define S_IFMT	  00170000
#define S_IFREG	  0100000
#define S_IFSOCK  0140000

/* include/uapi/linux/tcp.h: getsockopt's option that maps received pages */
#define SOL_TCP		     6
#define TCP_ZEROCOPY_RECEIVE 35

#define CGROUP2_SUPER_MAGIC 0x63677270
#define BW_SOCKFS_MAGIC	    0x534f434b /* sockfs: the inodes of sockets */

/* include/uapi/linux/sched.h: clone3's flag that starts the child in another cgroup */
#define CLONE_INTO_CGROUP 0x200000000ULL

/* include/uapi/linux/fs.h: ioctls that change an inode's flags (chattr) and attributes */
#define FS_IOC_SETFLAGS		     0x40086602 /* _IOW('f', 2, long) */
#define FS_IOC32_SETFLAGS	     0x40046602 /* _IOW('f', 2, int): 32-bit processes */
#define FS_IOC_FSSETXATTR	     0x401c5820 /* _IOW('X', 32, struct fsxattr) */
#define FS_IOC_SETVERSION	     0x40087602 /* _IOW('v', 2, long): the inode generation */
#define FS_IOC32_SETVERSION	     0x40047602
#define FS_IOC_ENABLE_VERITY	     0x40806685 /* fsverity.h: the file becomes read-only */
#define FS_IOC_SET_ENCRYPTION_POLICY 0x800c6613 /* fscrypt.h: of an empty directory */

/*
 * The syscall a task is in, from its registers at entry; libbpf's
 * PT_REGS_PARMn_CORE_SYSCALL reads the arguments portably, but has nothing
 * for the number.
 */
#if defined(__TARGET_ARCH_x86)
#define NR_execve	59
#define NR_execveat	322
#define NR_setns	308
#define NR_setns_compat 346 /* a 32-bit process; 346 is unused by 64-bit ones */
/* x32 processes set bit 30 of the number (__X32_SYSCALL_BIT). */
#define bw_syscall_nr(regs) (BPF_CORE_READ(regs, orig_ax) & ~0x40000000L)
#elif defined(__TARGET_ARCH_arm64)
#define NR_execve	    221
#define NR_execveat	    281
#define NR_setns	    268
#define NR_setns_compat	    375 /* arm32 */
#define bw_syscall_nr(regs) BPF_CORE_READ(regs, syscallno)
#else
#error "bpfwarden: syscall numbers for this architecture are missing in bpf/kernel.bpf.h"
#endif

#endif /* BW_KERNEL_BPF_H */
