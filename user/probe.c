// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "loader.h"
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

/*
 * An attach that gets E2BIG has passed every check but the count: the
 * trampoline of its hook already holds the most programs the kernel allows
 * (BPF_MAX_TRAMP_LINKS). That says the kernel attaches such programs, not
 * that it refuses them.
 */
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
		ret = link || errno == E2BIG ? 0 : -errno;
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

/*
 * One of our programs, attached and pinned by an earlier start, proves that
 * programs of its kind attach here: then no trial. Each trial takes a place
 * on its hook's trampoline for a moment, and concurrent starts found it full.
 */
static bool link_pinned(const char *prog, enum bpf_link_type type)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	char pin[128];
	bool attached;
	int fd;

	snprintf(pin, sizeof(pin), BW_PIN_ROOT "/links/%s", prog);
	fd = bpf_obj_get(pin);
	if (fd < 0)
		return false;
	/* tp_btf links are raw tracepoint links; LSM ones tracing links of BPF_LSM_MAC. */
	attached = !bpf_link_get_info_by_fd(fd, &info, &len) && info.type == type &&
		   (type != BPF_LINK_TYPE_TRACING || info.tracing.attach_type == BPF_LSM_MAC);
	close(fd);
	return attached;
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
	s->tp_seen_pinned = link_pinned("bw_cg_mkdir", BPF_LINK_TYPE_RAW_TRACEPOINT);
	s->tp_attach_err = s->tp_seen_pinned ? 0 : trial(pick_tp);
	if (s->lsm_listed) {
		s->lsm_seen_pinned = link_pinned("bw_file_open", BPF_LINK_TYPE_TRACING);
		s->lsm_attach_err = s->lsm_seen_pinned ? 0 : trial(pick_lsm);
	}
	return s;
}

/* Effective capabilities, and whether they count for BPF at all (not in a user namespace). */
static struct {
	bool read;
	uint64_t eff;
	bool userns;
} caps;

static void read_caps(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {};
	unsigned long inside = 0, outside = 0, count = 0;
	char map[256];

	if (caps.read)
		return;
	caps.read = true;
	/* Unreadable: assume every capability rather than blame a missing one wrongly. */
	caps.eff = ~0ULL;
	if (!syscall(SYS_capget, &h, d))
		caps.eff = d[0].effective | (uint64_t)d[1].effective << 32;
	/* The initial user namespace maps every uid to itself: "0 0 4294967295". */
	if (bw_read_file("/proc/self/uid_map", map, sizeof(map)) > 0 &&
	    sscanf(map, "%lu %lu %lu", &inside, &outside, &count) == 3)
		caps.userns = inside || outside || count != 4294967295UL;
}

bool bw_cap(int cap)
{
	read_caps();
	return caps.eff >> cap & 1;
}

/* What takes which capability; CAP_SYS_ADMIN stands in for all but itself. */
static const struct {
	unsigned need;
	int cap;
	const char *what;
} cap_needs[] = {
    {BW_NEED_BPF, CAP_BPF, "to create BPF maps and load any BPF program"},
    {BW_NEED_TRACING, CAP_PERFMON, "to load the cgroup tracking programs (tp_btf)"},
    {BW_NEED_LSM, CAP_PERFMON, "to load the BPF LSM programs (file, exec and unix socket rules)"},
    {BW_NEED_NET, CAP_NET_ADMIN, "to load the cgroup network programs (tcp, udp, raw sockets)"},
    {BW_NEED_MOUNT, CAP_SYS_ADMIN, "to mount bpffs and securityfs"},
};

static const struct {
	int cap;
	const char *name;
} cap_names[] = {
    {CAP_BPF, "CAP_BPF"},
    {CAP_PERFMON, "CAP_PERFMON"},
    {CAP_NET_ADMIN, "CAP_NET_ADMIN"},
    {CAP_SYS_ADMIN, "CAP_SYS_ADMIN"},
};

/* Append to msg, never past its end. */
static void add(char *msg, size_t size, size_t *len, const char *a, const char *b)
{
	int n = snprintf(msg + *len, size - *len, "%s%s", a, b);

	if (n > 0)
		*len = *len + n < size ? *len + n : size - 1;
}

const char *bw_caps_missing(unsigned needs)
{
	static char msg[1024];
	bool stand_in = false;
	size_t i, j, len = 0, n = 0;

	read_caps();
	if (caps.userns && (needs & ~BW_NEED_MOUNT))
		return "this process runs in a user namespace (/proc/self/uid_map), where the "
		       "kernel "
		       "counts none of its capabilities for BPF: run bpfwarden in the host's";
	add(msg, sizeof(msg), &len, "this process lacks ", "");
	for (i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++) {
		int cap = cap_names[i].cap;
		bool named = false;

		if (bw_cap(cap) || (cap != CAP_SYS_ADMIN && bw_cap(CAP_SYS_ADMIN)))
			continue;
		for (j = 0; j < sizeof(cap_needs) / sizeof(cap_needs[0]); j++) {
			if (!(needs & cap_needs[j].need) || cap_needs[j].cap != cap)
				continue;
			if (!named) {
				/* The first need of this capability names it. */
				add(msg, sizeof(msg), &len, n ? "; and " : "", cap_names[i].name);
				add(msg, sizeof(msg), &len, ", needed ", cap_needs[j].what);
				named = true;
				n++;
				stand_in |= cap != CAP_SYS_ADMIN;
			} else {
				add(msg, sizeof(msg), &len, " and ", cap_needs[j].what);
			}
		}
	}
	if (!n)
		return NULL;
	if (stand_in)
		add(msg, sizeof(msg), &len, "; CAP_SYS_ADMIN would stand in for ",
		    n > 1 ? "them" : "it");
	return msg;
}

/*
 * Why a trial (err) failed, or would: a capability the load takes and this
 * process lacks if there is one, since the trial then says nothing about
 * the kernel; else the kernel's refusal.
 */
static const char *refused(char *buf, size_t len, int err, unsigned needs, const char *what,
			   const char *kernel)
{
	const char *caps = bw_caps_missing(BW_NEED_BPF | needs);

	if (caps)
		snprintf(buf, len, "%s cannot be loaded: %s", what, caps);
	else
		snprintf(buf, len, "%s (%s)", kernel, strerror(-err));
	return buf;
}

const char *bw_lsm_unavailable(const struct bw_support *s)
{
	static char why[1536];

	if (!s->btf)
		return "this kernel has no BTF (/sys/kernel/btf/vmlinux), so no BPF LSM program "
		       "can load";
	if (!s->lsm_listed) {
		snprintf(
		    why, sizeof(why),
		    "BPF LSM is not active: `bpf` is not in /sys/kernel/security/lsm (\"%s\"); "
		    "boot with lsm=...,bpf",
		    s->lsm_list[0] ? s->lsm_list : "unreadable");
		return why;
	}
	if (!s->lsm_attach_err)
		return NULL;
	return refused(why, sizeof(why), s->lsm_attach_err, BW_NEED_LSM, "BPF LSM programs",
		       "BPF LSM is listed but this kernel refuses to attach an LSM program");
}

const char *bw_net_unavailable(const struct bw_support *s)
{
	static char why[1536];
	unsigned needs = BW_NEED_TRACING | BW_NEED_NET;

	if (!s->cgroup2)
		return "no cgroup2 hierarchy is mounted (see /proc/self/mountinfo)";
	if (!s->tp_attach_err && !bw_caps_missing(BW_NEED_BPF | needs))
		return NULL;
	return refused(why, sizeof(why), s->tp_attach_err, needs, "the network programs",
		       "this kernel refuses to attach a tp_btf program, which keeps track of new "
		       "cgroups");
}
