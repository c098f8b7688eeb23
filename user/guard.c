// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpfwarden.h"
#include "bits.h"
#include "guard.h"
#include "loader.h"
#include "pins.h"

/* The map and this process's pidfd, its key, while registered. */
static int agents_fd = -1, self_pidfd = -1;

/* The files this agent keeps (bw_agent_file_keep): a log reopened adds one. */
#define BW_KEPT_FILES 8
static struct bw_agent_file_key kept[BW_KEPT_FILES];
static int nkept, files_fd = -1;

static void close_fds(void)
{
	if (self_pidfd >= 0)
		close(self_pidfd);
	if (agents_fd >= 0)
		close(agents_fd);
	if (files_fd >= 0)
		close(files_fd);
	self_pidfd = agents_fd = files_fd = -1;
	nkept = 0;
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
	int i;

	if (agents_fd >= 0 && self_pidfd >= 0)
		bpf_map_delete_elem(agents_fd, &self_pidfd);
	for (i = 0; files_fd >= 0 && i < nkept; i++)
		bpf_map_delete_elem(files_fd, &kept[i]);
	close_fds();
}

/* Entries of agents that died without bw_agent_unregister (SIGKILL). */
static void drop_orphans(void)
{
	struct bw_agent_file_key k, next;
	struct bw_agent a;
	void *prev = NULL;

	while (!bpf_map_get_next_key(files_fd, prev, &next)) {
		k = next;
		if (!bpf_map_lookup_elem(files_fd, &k, &a) && kill(a.pid, 0) && errno == ESRCH) {
			bpf_map_delete_elem(files_fd, &k);
			prev = NULL; /* start over: the walk's place is gone */
			continue;
		}
		prev = &k;
	}
}

int bw_agent_file_keep(struct bw_maps *m, int fd)
{
	struct bw_agent a = {.pid = getpid()};
	struct bw_agent_file_key k = {};
	struct stat st;
	__u64 *bits;
	int ret;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return 0;
	if (files_fd < 0) {
		files_fd = bpf_obj_get(BW_PIN_ROOT "/bw_agent_files");
		if (files_fd < 0)
			return errno == ENOENT ? 0 : -errno;
	}
	if (nkept == BW_KEPT_FILES)
		return -ENOSPC;
	k.ino = st.st_ino;
	k.dev = bw_dev_encode(major(st.st_dev), minor(st.st_dev));
	ret = bw_lock(m);
	if (ret)
		return ret;
	drop_orphans();
	/* The bitmap bit first: the kernel looks the file up only when it is set. */
	bits = bw_bits_map(m->pinbits);
	if (!bits) {
		ret = -errno;
		bw_unlock(m);
		return ret;
	}
	bw_bits_set(bits, k.ino);
	bw_bits_unmap(bits);
	/* Under the lock: bw_unlock ends any verdict kept for the file before. */
	ret = bpf_map_update_elem(files_fd, &k, &a, BPF_ANY) ? -errno : 0;
	bw_unlock(m);
	if (!ret)
		kept[nkept++] = k;
	return ret;
}
