// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <libmount.h>

#include "mounts.h"

int bw_mounts_each(int (*fn)(const struct bw_mount *m, void *arg), void *arg)
{
	return bw_mounts_each_in("/proc/self/mountinfo", fn, arg);
}

int bw_mounts_each_in(const char *mountinfo, int (*fn)(const struct bw_mount *m, void *arg),
		      void *arg)
{
	struct libmnt_table *tb;
	struct libmnt_iter *it;
	struct libmnt_fs *fs;
	int ret = 0;

	tb = mnt_new_table_from_file(mountinfo);
	if (!tb)
		return errno ? -errno : -EIO;
	it = mnt_new_iter(MNT_ITER_FORWARD);
	if (!it) {
		ret = -ENOMEM;
		goto out;
	}
	while (!ret && !mnt_table_next_fs(tb, it, &fs)) {
		struct bw_mount m = {
		    .target = mnt_fs_get_target(fs),
		    .root = mnt_fs_get_root(fs),
		    .fstype = mnt_fs_get_fstype(fs),
		    .dev = mnt_fs_get_devno(fs),
		    .source = mnt_fs_get_srcpath(fs),
		};

		if (m.target && m.root && m.fstype)
			ret = fn(&m, arg);
	}
	mnt_free_iter(it);
out:
	mnt_unref_table(tb);
	return ret;
}
