// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "util.h"
#include "cgroup.skel.h"
#include "exec.skel.h"
#include "file.skel.h"

#define BPF_FS_MAGIC 0xcafe4a11

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && !bw_verbose)
		return 0;
	if (!bw_verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static int ensure_bpffs(void)
{
	struct statfs sfs;

	if (!statfs("/sys/fs/bpf", &sfs) && sfs.f_type == BPF_FS_MAGIC)
		goto mkdirs;
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
		bw_err("bpffs is not mounted on /sys/fs/bpf and mounting it failed: %s",
		       strerror(errno));
		return -errno;
	}
mkdirs:
	if (mkdir(BW_PIN_ROOT, 0700) && errno != EEXIST)
		return -errno;
	if (mkdir(BW_PIN_ROOT "/links", 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Attach and pin each program of obj that has no pinned link yet. */
static int attach_missing(struct bpf_object *obj)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
	{
		char pin[PATH_MAX];
		struct bpf_link *link;
		int ret;

		if (!bpf_program__autoload(prog))
			continue;
		snprintf(pin, sizeof(pin), BW_PIN_ROOT "/links/%s", bpf_program__name(prog));
		if (!access(pin, F_OK))
			continue;
		link = bpf_program__attach(prog);
		if (!link) {
			ret = -errno;
			bw_err("cannot attach %s: %s", bpf_program__name(prog), strerror(-ret));
			return ret;
		}
		ret = bpf_link__pin(link, pin);
		bpf_link__destroy(link); /* the pin keeps it attached */
		if (ret) {
			bw_err("cannot pin %s: %s", pin, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

static bool all_pinned(struct bpf_object *obj)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
	{
		char pin[PATH_MAX];

		if (!bpf_program__autoload(prog))
			continue;
		snprintf(pin, sizeof(pin), BW_PIN_ROOT "/links/%s", bpf_program__name(prog));
		if (access(pin, F_OK))
			return false;
	}
	return true;
}

static int load_cgroup_obj(void)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = BW_PIN_ROOT);
	struct cgroup_bpf *skel;
	int ret;

	skel = cgroup_bpf__open_opts(&opts);
	if (!skel)
		return -errno;
	if (all_pinned(skel->obj)) {
		ret = 0;
		goto out;
	}
	ret = cgroup_bpf__load(skel);
	if (ret) {
		bw_err("cannot load the cgroup tracking programs: %s (run with -v for the "
		       "verifier log; pins left by another version: `bpfwarden reset`)",
		       strerror(-ret));
		goto out;
	}
	ret = attach_missing(skel->obj);
out:
	cgroup_bpf__destroy(skel);
	return ret;
}

/* Kernels from 6.3 pass an idmap first to inode_setattr. */
static bool kernel_has_idmap(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool found;

	if (!btf)
		return false;
	found = btf__find_by_name_kind(btf, "mnt_idmap", BTF_KIND_STRUCT) > 0;
	btf__free(btf);
	return found;
}

static int load_file_obj(void)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = BW_PIN_ROOT);
	struct file_bpf *skel;
	bool idmap = kernel_has_idmap();
	int ret;

	skel = file_bpf__open_opts(&opts);
	if (!skel)
		return -errno;
	bpf_program__set_autoload(skel->progs.bw_setattr_idmap, idmap);
	bpf_program__set_autoload(skel->progs.bw_setattr_plain, !idmap);
	if (all_pinned(skel->obj)) {
		ret = 0;
		goto out;
	}
	ret = file_bpf__load(skel);
	if (ret) {
		bw_err("cannot load the file hooks: %s (run with -v for the verifier log)",
		       strerror(-ret));
		goto out;
	}
	ret = attach_missing(skel->obj);
out:
	file_bpf__destroy(skel);
	return ret;
}

static int load_exec_obj(void)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = BW_PIN_ROOT);
	struct exec_bpf *skel;
	int ret;

	skel = exec_bpf__open_opts(&opts);
	if (!skel)
		return -errno;
	if (all_pinned(skel->obj)) {
		ret = 0;
		goto out;
	}
	ret = exec_bpf__load(skel);
	if (ret) {
		bw_err("cannot load the exec hook: %s (run with -v for the verifier log)",
		       strerror(-ret));
		goto out;
	}
	ret = attach_missing(skel->obj);
out:
	exec_bpf__destroy(skel);
	return ret;
}

int bw_lock(struct bw_maps *m)
{
	if (m->lock_fd < 0) {
		if (mkdir(BW_RUN_DIR, 0700) && errno != EEXIST)
			return -errno;
		m->lock_fd = open(BW_RUN_DIR "/lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (m->lock_fd < 0)
			return -errno;
	}
	return flock(m->lock_fd, LOCK_EX) ? -errno : 0;
}

void bw_unlock(struct bw_maps *m)
{
	if (m->lock_fd >= 0)
		flock(m->lock_fd, LOCK_UN);
}

static int open_pin(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), BW_PIN_ROOT "/%s", name);
	return bpf_obj_get(path);
}

int bw_open_pinned(struct bw_maps *m)
{
	struct {
		int *fd;
		const char *name;
	} maps[] = {
		{&m->cgroups, "bw_cgroups"},	 {&m->policies, "bw_policies"},
		{&m->file_rules, "bw_file_rules"}, {&m->inodes, "bw_inodes"},
		{&m->exec_rules, "bw_exec_rules"},
		{&m->rbufs, "bw_rbufs"},		 {&m->counters, "bw_counters"},
		{&m->pinbits, "bw_pinbits"},
	};
	size_t i;

	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		*maps[i].fd = open_pin(maps[i].name);
		if (*maps[i].fd < 0) {
			int ret = -errno;

			bw_maps_close(m);
			return ret;
		}
	}
	return 0;
}

int bw_load(struct bw_maps *m, bool want_lsm)
{
	int ret;

	libbpf_set_print(libbpf_print);
	ret = ensure_bpffs();
	if (ret)
		return ret;
	ret = bw_lock(m);
	if (ret)
		return ret;
	ret = load_cgroup_obj();
	if (!ret && want_lsm)
		ret = load_file_obj();
	if (!ret && want_lsm)
		ret = load_exec_obj();
	if (!ret) {
		ret = bw_open_pinned(m);
		if (ret)
			bw_err("cannot open the pinned maps under %s: %s", BW_PIN_ROOT,
			       strerror(-ret));
	}
	bw_unlock(m);
	return ret;
}

void bw_maps_close(struct bw_maps *m)
{
	int *fds[] = {&m->cgroups, &m->policies, &m->file_rules, &m->exec_rules, &m->inodes,
		      &m->rbufs,   &m->counters, &m->pinbits};
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}
