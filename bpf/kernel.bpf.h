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
#define EACCES 13

#define AF_UNIX	  1
#define AF_INET	  2
#define AF_INET6  10
#define AF_PACKET 17

#define FMODE_READ  0x1
#define FMODE_WRITE 0x2
#define O_TRUNC	    01000

/* struct iattr.ia_valid */
#define ATTR_MODE  (1 << 0)
#define ATTR_UID   (1 << 1)
#define ATTR_GID   (1 << 2)
#define ATTR_SIZE  (1 << 3)
#define ATTR_ATIME (1 << 4)
#define ATTR_MTIME (1 << 5)

/* include/uapi/linux/capability.h */
#define CAP_SYS_CHROOT 18
#define CAP_SYS_ADMIN  21

/*
 * The new mount API's calls have the same numbers on every architecture
 * (and for 32-bit processes on x86-64): they came after the tables were
 * unified (include/uapi/asm-generic/unistd.h).
 */
#define NR_open_tree	 428
#define NR_fsopen	 430
#define NR_fsmount	 432
#define NR_fspick	 433
#define NR_mount_setattr 442

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
