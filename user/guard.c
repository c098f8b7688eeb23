// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpfwarden.h"
#include "guard.h"
#include "loader.h"

/* The map and this process's pidfd, its key, while registered. */
static int agents_fd = -1, self_pidfd = -1;

static void close_fds(void)
{
	if (self_pidfd >= 0)
		close(self_pidfd);
	if (agents_fd >= 0)
		close(agents_fd);
	self_pidfd = agents_fd = -1;
}

int bw_agent_register(void)
{
	struct bw_agent a = {.pid = getpid()};
	int ret;

	if (agents_fd >= 0)
		return 0;
	agents_fd = bpf_obj_get(BW_PIN_ROOT "/bw_agents");
	if (agents_fd < 0)
		return errno == ENOENT ? 0 : -errno;
	/* A task storage map is keyed by a pidfd: its entry belongs to that task. */
	self_pidfd = syscall(SYS_pidfd_open, getpid(), 0);
	if (self_pidfd < 0 || bpf_map_update_elem(agents_fd, &self_pidfd, &a, BPF_ANY)) {
		ret = -errno;
		close_fds();
		return ret;
	}
	return 0;
}

void bw_agent_unregister(void)
{
	if (agents_fd >= 0 && self_pidfd >= 0)
		bpf_map_delete_elem(agents_fd, &self_pidfd);
	close_fds();
}
