// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "cgroup.h"
#include "probe.h"
#include "util.h"
#include "probe.skel.h"

static struct bw_support support;
static bool probed;

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return bw_verbose ? vfprintf(stderr, fmt, args) : 0;
}

static void read_lsm_list(struct bw_support *s)
{
	const char *path = "/sys/kernel/security/lsm";

	if (access(path, R_OK))
		mount("securityfs", "/sys/kernel/security", "securityfs", 0, NULL);
	if (bw_read_file(path, s->lsm_list, sizeof(s->lsm_list)) < 0) {
		s->lsm_list[0] = '\0';
		return;
	}
	s->lsm_list[strcspn(s->lsm_list, "\n")] = '\0';
	/* Match the whole word: "bpf" must not be found inside another name. */
	for (char *p = s->lsm_list; (p = strstr(p, "bpf")); p += 3) {
		bool start = p == s->lsm_list || p[-1] == ',';
		bool end = p[3] == '\0' || p[3] == ',';

		if (start && end) {
			s->lsm_listed = true;
			break;
		}
	}
}

static int trial(struct bpf_program *(*pick)(struct probe_bpf *))
{
	struct probe_bpf *skel;
	struct bpf_program *prog, *want;
	struct bpf_link *link;
	int ret;

	skel = probe_bpf__open();
	if (!skel)
		return -errno;
	want = pick(skel);
	bpf_object__for_each_program(prog, skel->obj) bpf_program__set_autoload(prog, prog == want);
	ret = probe_bpf__load(skel);
	if (!ret) {
		link = bpf_program__attach(want);
		ret = link ? 0 : -errno;
		bpf_link__destroy(link);
	}
	probe_bpf__destroy(skel);
	return ret;
}

static struct bpf_program *pick_lsm(struct probe_bpf *s)
{
	return s->progs.bw_probe_lsm;
}

static struct bpf_program *pick_tp(struct probe_bpf *s)
{
	return s->progs.bw_probe_tp;
}

const struct bw_support *bw_probe(void)
{
	struct bw_support *s = &support;

	if (probed)
		return s;
	probed = true;
	libbpf_set_print(libbpf_quiet);
	s->btf = !access("/sys/kernel/btf/vmlinux", R_OK);
	s->cgroup2 = !bw_cgroup_root(s->cgroup_root, sizeof(s->cgroup_root));
	read_lsm_list(s);
	s->lsm_attach_err = -ENOTSUP;
	s->tp_attach_err = -ENOTSUP;
	if (!s->btf)
		return s;
	s->tp_attach_err = trial(pick_tp);
	if (s->lsm_listed)
		s->lsm_attach_err = trial(pick_lsm);
	return s;
}

const char *bw_lsm_unavailable(const struct bw_support *s)
{
	static char why[768];

	if (!s->btf)
		return "this kernel has no BTF (/sys/kernel/btf/vmlinux), so no BPF LSM program "
		       "can "
		       "load";
	if (!s->lsm_listed) {
		snprintf(
		    why, sizeof(why),
		    "BPF LSM is not active: `bpf` is not in /sys/kernel/security/lsm (\"%s\"); "
		    "boot with lsm=...,bpf",
		    s->lsm_list[0] ? s->lsm_list : "unreadable");
		return why;
	}
	if (s->lsm_attach_err) {
		snprintf(why, sizeof(why),
			 "BPF LSM is listed but this kernel refuses to attach an LSM program (%s)",
			 strerror(-s->lsm_attach_err));
		return why;
	}
	return NULL;
}
