// SPDX-License-Identifier: GPL-2.0-only
/*
 * The id the kernel's hooks see for a cgroup directory (cgroup.h), one
 * implementation for the agent and for bpfwarden-hook, which links no more
 * of the agent than this.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>

#include "cgroup.h"

int bw_cgroup_id(const char *dir, uint64_t *id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = {.fh.handle_bytes = sizeof(uint64_t)};
	int mount_id;

	/* kernfs hands out the cgroup id as the file handle of its directory. */
	if (name_to_handle_at(AT_FDCWD, dir, &h.fh, &mount_id, 0))
		return -errno;
	*id = h.id;
	return 0;
}
