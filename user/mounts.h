/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The mounts of our mount namespace, as /proc/self/mountinfo lists them,
 * read with libmount (which decodes escaped names and the optional fields)
 * rather than by hand.
 */
#ifndef BW_MOUNTS_H
#define BW_MOUNTS_H

#include <sys/types.h>

struct bw_mount {
	const char *target; /* where it is mounted */
	const char *root;   /* the directory of its file system mounted there ("/": all of it) */
	const char *fstype;
	dev_t dev;
	const char *source; /* a path ("/dev/vda1"), or NULL ("overlay", "tmpfs") */
};

/*
 * Call fn for each mount, in mountinfo order (parents before children). A
 * non-zero return from fn stops the walk and is returned; otherwise 0, or
 * -errno when mountinfo cannot be read. The strings live until fn returns.
 */
int bw_mounts_each(int (*fn)(const struct bw_mount *m, void *arg), void *arg);
/* The same for another process's table ("/proc/PID/mountinfo"). */
int bw_mounts_each_in(const char *mountinfo, int (*fn)(const struct bw_mount *m, void *arg),
		      void *arg);

#endif
