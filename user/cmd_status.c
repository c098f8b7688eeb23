// SPDX-License-Identifier: GPL-2.0-only
/* bpfwarden status: what this kernel supports and what is governed now. */
#include <dirent.h>
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "govern.h"
#include "cli.h"
#include "loader.h"
#include "probe.h"
#include "session.h"
#include "util.h"

static void yesno(const char *what, int ok, const char *detail)
{
	printf("  %-30s %s%s%s\n", what, ok ? "yes" : "no", detail && *detail ? "  " : "",
	       detail ? detail : "");
}

struct show_arg {
	struct bw_maps *m;
	int shown, total;
};

/* One walk over the tree lists the governed cgroups in tree order, parents first. */
static int show_one(const char *path, uint64_t id, void *arg)
{
	struct show_arg *a = arg;
	struct bw_policy p = {};
	struct bw_cgroup v;

	if (bw_governor(a->m, id, &v))
		return 0;
	bpf_map_lookup_elem(a->m->policies, &v.policy, &p);
	printf("  %-40s slot %-3u %-8s agent pid %u\n", bw_cgroup_rel(path), v.policy,
	       bw_mode_name(v.mode), p.owner_pid);
	a->shown++;
	return 0;
}

static int count_one(uint64_t id, const struct bw_cgroup *v, void *arg)
{
	((struct show_arg *)arg)->total++;
	return 0;
}

static void show_governed(void)
{
	struct bw_maps m = BW_MAPS_INIT;
	struct show_arg a = {.m = &m};
	struct bw_cg_fill fill = {};
	char root[PATH_MAX];
	int ncpu;

	if (bw_open_pinned(&m)) {
		printf("governed: nothing (no pinned state under %s)\n", BW_PIN_ROOT);
		return;
	}
	printf("governed cgroups:\n");
	if (!bw_cgroup_root(root, sizeof(root)))
		bw_cgroup_walk(root, show_one, &a);
	bw_governed_each(&m, count_one, &a);
	if (a.total > a.shown)
		printf("  %d more, removed from the tree meanwhile\n", a.total - a.shown);
	if (!a.total)
		printf("  none\n");
	if (!bw_cgroups_fill(&m, &fill)) {
		printf("governed-cgroup map: %d entries (room for %d)\n", a.total, BW_CGROUPS_MAP);
		printf("  governed by agents            %lld of at most %d\n",
		       (long long)fill.agent, BW_MAX_CGROUPS);
		printf("  made below governed cgroups   %lld of at most %u on this host, %u per "
		       "profile slot\n",
		       (long long)fill.made, fill.made_max, fill.per_slot);
	}
	ncpu = libbpf_num_possible_cpus();
	if (ncpu > 0) {
		struct bw_counters *c = calloc(ncpu, sizeof(*c));
		uint32_t slot;

		printf("policy slots in use (counters since the slot was filled):\n");
		for (slot = 0; c && slot < BW_MAX_POLICIES; slot++) {
			struct bw_counters sum = {};
			struct bw_policy p;
			int i;

			if (bpf_map_lookup_elem(m.policies, &slot, &p) || !p.in_use ||
			    bpf_map_lookup_elem(m.counters, &slot, c))
				continue;
			for (i = 0; i < ncpu; i++) {
				sum.denied += c[i].denied;
				sum.audited += c[i].audited;
				sum.learned += c[i].learned;
				sum.lost += c[i].lost;
				sum.throttled += c[i].throttled;
				sum.truncated += c[i].truncated;
				sum.pins_lost += c[i].pins_lost;
				sum.kept += c[i].kept;
			}
			printf(
			    "  slot %-3u agent pid %-7u %llu denied, %llu audited, %llu learned, "
			    "%llu lost, %llu throttled, %llu paths too long, %llu pins lost, "
			    "%lld cgroups made, %llu verdicts kept\n",
			    slot, p.owner_pid, (unsigned long long)sum.denied,
			    (unsigned long long)sum.audited, (unsigned long long)sum.learned,
			    (unsigned long long)sum.lost, (unsigned long long)sum.throttled,
			    (unsigned long long)sum.truncated, (unsigned long long)sum.pins_lost,
			    (long long)fill.made_by_slot[slot], (unsigned long long)sum.kept);
		}
		free(c);
	}
	bw_maps_close(&m);
}

/* A trial's outcome: without the capabilities it takes, a refusal is not the kernel's. */
static const char *trial(int err, unsigned needs, const char *ok)
{
	if (!err)
		return ok;
	if (bw_caps_missing(BW_NEED_BPF | needs))
		return "not known: this process lacks a capability it takes (below)";
	return strerror(-err);
}

static int status(struct bw_opts *o)
{
	/* What each capability is for (probe.h says which stands in for which). */
	static const struct {
		int cap;
		const char *name, *what;
	} caps[] = {
	    {CAP_BPF, "CAP_BPF", "maps and programs"},
	    {CAP_PERFMON, "CAP_PERFMON", "tp_btf and BPF LSM programs"},
	    {CAP_NET_ADMIN, "CAP_NET_ADMIN", "cgroup network programs"},
	    {CAP_SYS_ADMIN, "CAP_SYS_ADMIN", "mounting bpffs; stands in for the three above"},
	};
	const struct bw_support *s;
	const char *why, *net_why, *unrefused;
	char detail[700];
	unsigned todo;
	size_t i;

	s = bw_probe();
	/* What is pinned already works, whatever this process may load itself. */
	todo = bw_load_needs(true);
	why = todo & BW_NEED_LSM ? bw_lsm_unavailable(s) : NULL;
	net_why = todo & (BW_NEED_TRACING | BW_NEED_NET) ? bw_net_unavailable(s) : NULL;
	printf("kernel support:\n");
	yesno("BTF (/sys/kernel/btf/vmlinux)", s->btf, NULL);
	yesno("cgroup v2", s->cgroup2, s->cgroup2 ? s->cgroup_root : "not mounted");
	snprintf(detail, sizeof(detail), "lsm=%s", s->lsm_list[0] ? s->lsm_list : "(unreadable)");
	yesno("bpf in the active LSM list", s->lsm_listed, detail);
	yesno("BPF LSM program attaches", !s->lsm_attach_err,
	      trial(s->lsm_attach_err, BW_NEED_LSM,
		    s->lsm_seen_pinned ? "bw_file_open is attached (pinned)"
				       : "trial attach of lsm/file_open"));
	yesno("tp_btf program attaches", !s->tp_attach_err,
	      trial(s->tp_attach_err, BW_NEED_TRACING,
		    s->tp_seen_pinned ? "bw_cg_mkdir is attached (pinned)"
				      : "trial attach of cgroup_mkdir"));
	printf("this process:\n");
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		yesno(caps[i].name, bw_cap(caps[i].cap), caps[i].what);
	printf("enforcement:\n");
	yesno("file rules", !why, why);
	yesno("exec rules", !why, why);
	yesno("net rules (tcp, udp)", !net_why,
	      net_why ? net_why : "cgroup connect/sendmsg/bind programs, with or without BPF LSM");
	yesno("net rules (unix, packet sockets)", !why, why);
	yesno("net raw (raw IP sockets)", !net_why,
	      net_why ? net_why : "cgroup sock_create program");
	/* What this kernel has no hook for goes unrefused: say so rather than pretend. */
	unrefused = bw_view_unrefused();
	if (unrefused)
		snprintf(detail, sizeof(detail), "not refused on this kernel: %s", unrefused);
	else
		snprintf(detail, sizeof(detail), "unless the profile allows them");
	yesno("mount, chroot, userns refused", !why && !unrefused, why ? why : detail);
	yesno("no way out of the governed cgroups", !why,
	      why ? why : "cgroup migrations and the limits on made cgroups");
	show_governed();
	return why ? 3 : 0;
}

/* Unpin everything: every governed cgroup is let go. For development and upgrades. */
static int reset(struct bw_opts *o)
{
	int ret = bw_unpin_all(BW_PIN_ROOT);

	if (ret && ret != -ENOENT) {
		bw_err("cannot remove %s: %s", BW_PIN_ROOT, strerror(-ret));
		return 1;
	}
	printf("removed %s: nothing is governed any more\n", BW_PIN_ROOT);
	return 0;
}

static const struct argp_option options[] = {BW_OPTS_COMMON};

static const struct argp status_argp = {
    options, bw_parse_opt, NULL,
    "Show what this kernel supports and what is governed. Which rules can be enforced here, "
    "and the cgroups governed now.\vExit status 3 when BPF LSM is not available (file and exec "
    "rules cannot be "
    "enforced)."};
static const struct argp reset_argp = {
    options, bw_parse_opt, NULL,
    "Unpin everything: nothing stays governed. Every program, link and map goes (for "
    "development and upgrades)."};

const struct bw_command bw_cmd_status = {"status", &status_argp, status, 0};
const struct bw_command bw_cmd_reset = {"reset", &reset_argp, reset, 0};
