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
#include "event_line.h"
#include "jsonw.h"
#include "version.h"
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
	struct jw *w; /* --json: the object being written, else NULL (text) */
	int shown, total;
};

/* One walk over the tree lists the governed cgroups in tree order, parents first. */
static int show_one(const char *path, uint64_t id, void *arg)
{
	struct show_arg *a = arg;
	struct bw_policy p = {};
	struct bw_cgroup v;

	char name[128];

	if (bw_governor(a->m, id, &v))
		return 0;
	bpf_map_lookup_elem(a->m->policies, &v.policy, &p);
	bw_slot_name_get(v.policy, name, sizeof(name), NULL);
	a->shown++;
	if (a->w) {
		jw_obj(a->w, NULL);
		jw_str(a->w, "cgroup", bw_cgroup_rel(path));
		jw_u64(a->w, "cgroup_id", id);
		jw_str(a->w, "profile", name);
		jw_str(a->w, "mode", bw_mode_name(v.mode));
		jw_u64(a->w, "slot", v.policy);
		jw_u64(a->w, "agent_pid", p.owner_pid);
		jw_end(a->w);
		return 0;
	}
	printf("  %-40s %-20s %-8s slot %-3u agent pid %u\n", bw_cgroup_rel(path),
	       name[0] ? name : "?", bw_mode_name(v.mode), v.policy, p.owner_pid);
	return 0;
}

static int count_one(uint64_t id, const struct bw_cgroup *v, void *arg)
{
	((struct show_arg *)arg)->total++;
	return 0;
}

static void sum_counters(const struct bw_counters *c, int ncpu, struct bw_counters *sum)
{
	int i;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < ncpu; i++) {
		sum->denied += c[i].denied;
		sum->audited += c[i].audited;
		sum->learned += c[i].learned;
		sum->lost += c[i].lost;
		sum->throttled += c[i].throttled;
		sum->truncated += c[i].truncated;
		sum->pins_lost += c[i].pins_lost;
		sum->kept += c[i].kept;
	}
}

static void json_slot(struct jw *w, uint32_t slot, const char *name, const struct bw_policy *p,
		      const struct bw_counters *sum, long long made)
{
	jw_obj(w, NULL);
	jw_u64(w, "slot", slot);
	jw_str(w, "profile", name);
	jw_u64(w, "agent_pid", p->owner_pid);
	jw_u64(w, "denied", sum->denied);
	jw_u64(w, "audited", sum->audited);
	jw_u64(w, "learned", sum->learned);
	jw_u64(w, "lost", sum->lost);
	jw_u64(w, "throttled", sum->throttled);
	jw_u64(w, "paths_too_long", sum->truncated);
	jw_u64(w, "pins_lost", sum->pins_lost);
	jw_u64(w, "cgroups_made", made > 0 ? (uint64_t)made : 0);
	jw_u64(w, "verdicts_kept", sum->kept);
	jw_end(w);
}

/*
 * The daemon's `match cgroup=` selectors in the kernel (bw_cg_select): they
 * govern cgroups as they are made, even while the daemon is down.
 */
static void show_selectors(struct bw_maps *m, struct jw *w)
{
	char name[128];
	uint32_t k;
	int n = 0;

	if (w)
		jw_arr(w, "service_selectors");
	else
		printf("service selectors (cgroups governed as they are made):\n");
	for (k = 0; m->cg_select >= 0 && k < BW_CG_SELECT_MAX; k++) {
		struct bw_cg_select e;

		if (bpf_map_lookup_elem(m->cg_select, &k, &e) || !e.glob[0])
			continue;
		bw_slot_name_get(e.v.policy, name, sizeof(name), NULL);
		n++;
		if (w) {
			jw_obj(w, NULL);
			jw_str(w, "glob", e.glob);
			jw_str(w, "profile", name);
			jw_u64(w, "slot", e.v.policy);
			jw_str(w, "mode", bw_mode_name(e.v.mode));
			jw_bool(w, "from_first_exec", e.pending);
			jw_u64(w, "missed", e.missed);
			jw_end(w);
			continue;
		}
		printf("  %-40s %-20s %-8s slot %-3u %s%s\n", e.glob, name[0] ? name : "?",
		       bw_mode_name(e.v.mode), e.v.policy,
		       e.pending ? "from the first exec" : "from mkdir",
		       e.missed ? ", some made ungoverned (limits): see the daemon's log" : "");
	}
	if (w)
		jw_end_arr(w);
	else if (!n)
		printf("  none\n");
}

/* What is governed, by which profile, and each slot's counters: as text, or into w. */
static void show_governed(struct jw *w)
{
	struct bw_maps m = BW_MAPS_INIT;
	struct show_arg a = {.m = &m, .w = w};
	struct bw_cg_fill fill = {};
	char root[PATH_MAX], name[128];
	int ncpu;

	if (bw_open_pinned(&m)) {
		if (w) {
			jw_arr(w, "governed");
			jw_end_arr(w);
			jw_arr(w, "slots");
			jw_end_arr(w);
			jw_arr(w, "service_selectors");
			jw_end_arr(w);
		} else {
			printf("governed: nothing (no pinned state under %s)\n", BW_PIN_ROOT);
		}
		return;
	}
	if (w)
		jw_arr(w, "governed");
	else
		printf("governed cgroups:\n");
	if (!bw_cgroup_root(root, sizeof(root)))
		bw_cgroup_walk(root, show_one, &a);
	bw_governed_each(&m, count_one, &a);
	if (w)
		jw_end_arr(w);
	else if (a.total > a.shown)
		printf("  %d more, removed from the tree meanwhile\n", a.total - a.shown);
	if (!w && !a.total)
		printf("  none\n");
	if (!bw_cgroups_fill(&m, &fill)) {
		if (w) {
			jw_obj(w, "cgroup_map");
			jw_u64(w, "entries", a.total);
			jw_u64(w, "capacity", BW_CGROUPS_MAP);
			jw_u64(w, "governed_by_agents", fill.agent > 0 ? fill.agent : 0);
			jw_u64(w, "made_below_governed", fill.made > 0 ? fill.made : 0);
			jw_end(w);
		} else {
			printf("governed-cgroup map: %d entries (room for %d)\n", a.total,
			       BW_CGROUPS_MAP);
			printf("  governed by agents            %lld of at most %d\n",
			       (long long)fill.agent, BW_MAX_CGROUPS);
			printf(
			    "  made below governed cgroups   %lld of at most %u on this host, %u "
			    "per profile slot\n",
			    (long long)fill.made, fill.made_max, fill.per_slot);
		}
	}
	ncpu = libbpf_num_possible_cpus();
	if (w)
		jw_arr(w, "slots");
	if (ncpu > 0) {
		struct bw_counters *c = calloc(ncpu, sizeof(*c));
		uint32_t slot;

		if (!w)
			printf("policy slots in use (counters since the slot was filled):\n");
		for (slot = 0; c && slot < BW_MAX_POLICIES; slot++) {
			struct bw_counters sum;
			struct bw_policy p;

			if (bpf_map_lookup_elem(m.policies, &slot, &p) || !p.in_use ||
			    bpf_map_lookup_elem(m.counters, &slot, c))
				continue;
			sum_counters(c, ncpu, &sum);
			bw_slot_name_get(slot, name, sizeof(name), NULL);
			if (w) {
				json_slot(w, slot, name, &p, &sum, fill.made_by_slot[slot]);
				continue;
			}
			printf("  slot %-3u %-20s agent pid %-7u %llu denied, %llu audited, %llu "
			       "learned, %llu lost, %llu throttled, %llu paths too long, %llu pins "
			       "lost, %lld cgroups made, %llu verdicts kept\n",
			       slot, name[0] ? name : "?", p.owner_pid,
			       (unsigned long long)sum.denied, (unsigned long long)sum.audited,
			       (unsigned long long)sum.learned, (unsigned long long)sum.lost,
			       (unsigned long long)sum.throttled, (unsigned long long)sum.truncated,
			       (unsigned long long)sum.pins_lost,
			       (long long)fill.made_by_slot[slot], (unsigned long long)sum.kept);
		}
		free(c);
	}
	if (w)
		jw_end_arr(w);
	show_selectors(&m, w);
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

/*
 * status --json: one object (docs/operations.md, "status --json"). The tier
 * is "lsm" when BPF LSM enforces, "network" when only the cgroup programs
 * can, "none" when neither.
 */
static int status_json(const struct bw_support *s, const char *why, const char *net_why,
		       const char *unrefused)
{
	struct jw w;
	int ret;

	jw_init(&w);
	jw_begin(&w);
	jw_str(&w, "version", BW_VERSION);
	jw_str(&w, "node", bw_event_node());
	jw_str(&w, "tier", !why ? "lsm" : !net_why ? "network" : "none");
	jw_obj(&w, "kernel");
	jw_bool(&w, "btf", s->btf);
	jw_bool(&w, "cgroup2", s->cgroup2);
	jw_str(&w, "cgroup2_mount", s->cgroup2 ? s->cgroup_root : "");
	jw_str(&w, "lsm", s->lsm_list);
	jw_bool(&w, "bpf_lsm_listed", s->lsm_listed);
	jw_bool(&w, "bpf_lsm_attaches", !s->lsm_attach_err);
	jw_bool(&w, "tp_btf_attaches", !s->tp_attach_err);
	jw_end(&w);
	jw_obj(&w, "enforcement");
	jw_bool(&w, "file", !why);
	jw_bool(&w, "exec", !why);
	jw_bool(&w, "net", !net_why);
	jw_bool(&w, "unix_and_packet", !why);
	jw_bool(&w, "net_raw", !net_why);
	jw_bool(&w, "net_admin", !why);
	jw_bool(&w, "view", !why && !unrefused);
	jw_bool(&w, "cgroup_tree", !why);
	if (why)
		jw_str(&w, "why_not_lsm", why);
	if (unrefused)
		jw_str(&w, "not_refused", unrefused);
	jw_end(&w);
	show_governed(&w);
	jw_end(&w);
	ret = w.oom ? -ENOMEM : jw_write_line(&w, STDOUT_FILENO);
	jw_free(&w);
	if (ret) {
		bw_err("cannot write the status: %s", strerror(-ret));
		return 1;
	}
	return why ? 3 : 0;
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
	unrefused = bw_view_unrefused();
	if (o->json)
		return status_json(s, why, net_why, unrefused);
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
	if (unrefused)
		snprintf(detail, sizeof(detail), "not refused on this kernel: %s", unrefused);
	else
		snprintf(detail, sizeof(detail), "unless the profile allows them");
	yesno("mount, chroot, userns refused", !why && !unrefused, why ? why : detail);
	yesno("no way out of the governed cgroups", !why,
	      why ? why : "cgroup migrations and the limits on made cgroups");
	yesno("net admin refused", !why,
	      why ? why : "the host's network configuration, unless the profile allows it");
	show_governed(NULL);
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
static const struct argp_option status_options[] = {
    {"json", BW_KEY_JSON, 0, 0,
     "One JSON object: tier, kernel, enforcement, governed, slots, service selectors", 0},
    BW_OPTS_COMMON,
};

static const struct argp status_argp = {
    status_options, bw_parse_opt, NULL,
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
