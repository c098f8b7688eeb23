// SPDX-License-Identifier: GPL-2.0-only
/*
 * Services: the cgroups that a profile's `match cgroup=GLOB` line without
 * other keys selects, whoever makes them and whenever (a systemd unit's
 * cgroup, made before its first exec). No runtime asks for them, so the
 * selection is the kernel's: the daemon writes the selectors into
 * bw_cg_select, bpf/cgroup.bpf.c matches every cgroup made outside the
 * governed ones and makes the first match wait for its first exec
 * (bw_pending, the containers' path), which bpf/exec.bpf.c then decides
 * under the profile. Selectors stay in the kernel while the daemon is
 * down; a restarted daemon rewrites them and takes over what they made.
 *
 * Cgroups that exist when a selector comes (the daemon's start, a profile
 * added) are governed here: from now if processes are in them (what they
 * opened before stays open, as with `attach`), else from their first exec.
 * The profile's pins are made in the daemon's own view (its root), the
 * host's when it runs as the systemd unit. docs/operations.md says how to
 * go from a running service to an enforced one.
 */
#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "cgroup.h"
#include "daemon.h"
#include "util.h"

/* A `match` line that names a cgroup and nothing a runtime says. */
static bool service_line(const struct bw_match *m)
{
	return m->cgroup && !m->namespace_ && !m->pod && !m->container;
}

bool d_profile_selects_services(const struct d_profile *p)
{
	size_t j;

	for (j = 0; j < p->in.profile->nmatches; j++)
		if (service_line(&p->in.profile->matches[j]))
			return true;
	return false;
}

/* What the kernel's matcher can do: fnmatch's '*', '?' and literal bytes, short enough. */
static const char *glob_unfit(const char *g)
{
	if (g[0] != '/' && g[0] != '*')
		return "a cgroup's path begins with /";
	if (strlen(g) >= BW_CG_GLOB_LEN)
		return "longer than the kernel's matcher takes (127 bytes)";
	if (strpbrk(g, "[\\"))
		return "bracket expressions and backslashes are not matched by the kernel";
	return NULL;
}

static int by_name(const void *a, const void *b)
{
	const struct d_profile *x = *(const struct d_profile *const *)a;
	const struct d_profile *y = *(const struct d_profile *const *)b;

	return strcmp(x->name, y->name);
}

struct sel {
	const struct d_profile *p;
	const char *glob;
};

/*
 * The selectors in force: profiles by name (the hook's order: the first by
 * name wins), lines in file order. Lines the kernel cannot match, or that
 * would select the daemon's own cgroup, are said once per load and left out.
 */
static size_t collect(struct daemon *d, struct sel *out, bool say)
{
	struct d_profile **v = calloc(d->nprofiles ? d->nprofiles : 1, sizeof(*v));
	char self[PATH_MAX];
	const char *own = NULL, *why;
	size_t i, j, n = 0, nv = 0;

	if (!v)
		return 0;
	if (!bw_cgroup_self(self, sizeof(self)))
		own = bw_cgroup_rel(self);
	for (i = 0; i < d->nprofiles; i++)
		if (!d->profiles[i]->removed && d->profiles[i]->in.installed)
			v[nv++] = d->profiles[i];
	qsort(v, nv, sizeof(*v), by_name);
	for (i = 0; i < nv; i++) {
		for (j = 0; j < v[i]->in.profile->nmatches; j++) {
			const struct bw_match *m = &v[i]->in.profile->matches[j];

			if (!service_line(m))
				continue;
			why = glob_unfit(m->cgroup);
			if (!why && own && !fnmatch(m->cgroup, own, 0))
				why = "it selects the daemon's own cgroup";
			if (!why && n == BW_CG_SELECT_MAX)
				why = "more than 32 service selectors";
			if (why) {
				if (say)
					d_agent(d, NULL,
						"profile %s: `match cgroup=%s` selects no service "
						"as it is made: %s",
						v[i]->name, m->cgroup, why);
				continue;
			}
			out[n++] = (struct sel){v[i], m->cgroup};
		}
	}
	free(v);
	return n;
}

/* The first selector of s[0..n) that path (from the cgroup2 root) matches. */
static const struct sel *first_match(const struct sel *s, size_t n, const char *rel)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!fnmatch(s[i].glob, rel, 0))
			return &s[i];
	return NULL;
}

struct adopt_arg {
	struct daemon *d;
	const struct sel *s;
	size_t n;
	int governed, moved;
};

static bool has_tasks(const char *dir)
{
	char path[PATH_MAX + 16], buf[16];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	return bw_read_file(path, buf, sizeof(buf)) > 0;
}

/*
 * One cgroup of the tree: governed by a selector that matches it and a
 * governing entry of no living agent's (a former daemon's) moved to it; one
 * that nothing governs, governed. What governs a cgroup governs its subtree.
 */
static int adopt_fn(const char *path, uint64_t id, void *arg)
{
	struct adopt_arg *a = arg;
	struct daemon *d = a->d;
	const char *rel = bw_cgroup_rel(path);
	const struct sel *m = first_match(a->s, a->n, rel);
	struct bw_cgroup cur;
	struct bw_policy pol;
	int ret, moved = 0;
	bool tasks;

	if (!bw_governor(&d->maps, id, &cur) || !bpf_map_lookup_elem(d->maps.pending, &id, &cur)) {
		if (!m || cur.policy == m->p->in.slot.id)
			return BW_WALK_PRUNE;
		if (bpf_map_lookup_elem(d->maps.policies, &cur.policy, &pol) ||
		    (pol.owner_pid && !kill(pol.owner_pid, 0)))
			return BW_WALK_PRUNE; /* a living agent's: its own */
		ret = bw_govern_repoint(&d->maps, path, cur.policy, m->p->in.slot.id, &moved);
		if (ret && ret != -ENOENT)
			d_agent(d, NULL, "service %s stays governed by its former slot %u: %s", rel,
				cur.policy, strerror(-ret));
		else
			d_agent(d, NULL,
				"service %s governed before this daemon started: now with profile "
				"%s (slot %u -> %u, %d cgroups)",
				rel, m->p->name, cur.policy, m->p->in.slot.id, moved);
		/* Its records first; the former slot goes with the last cgroup taken from it. */
		if (!ret) {
			d_slot_drain(d, cur.policy, m->p);
			bw_slot_put(&d->maps, cur.policy);
		}
		a->moved += moved;
		return BW_WALK_PRUNE;
	}
	/* The root is every process's, the daemon's too: never a service. */
	if (!m || !strcmp(rel, "/"))
		return 0;
	tasks = has_tasks(path);
	if (d->lsm && !tasks)
		ret = bw_govern_pending(&d->maps, path, m->p->in.slot.id, m->p->mode, &cur);
	else
		ret = bw_govern(&d->maps, path, m->p->in.slot.id, m->p->mode, &cur);
	if (ret && ret != -EEXIST) {
		d_agent(d, NULL, "service %s is not governed by profile %s: %s", rel, m->p->name,
			strerror(-ret));
		return BW_WALK_PRUNE;
	}
	d_agent(d, NULL, "service %s governed by profile %s %s", rel, m->p->name,
		tasks	 ? "from now: it was running when the profile came"
		: d->lsm ? "from its first exec"
			 : "from now: without BPF LSM no exec hook would start it");
	a->governed++;
	return BW_WALK_PRUNE;
}

/* What a selector could not govern: the kernel counts, the daemon tells. */
static void say_missed(struct daemon *d, const struct bw_cg_select *e)
{
	d_agent(d, NULL,
		"%u cgroups matching `match cgroup=%s` were made ungoverned: the agents' cgroups "
		"or the pending ones were at their limit",
		e->missed, e->glob);
}

int d_services_sync(struct daemon *d, bool say)
{
	struct sel s[BW_CG_SELECT_MAX];
	struct adopt_arg a = {.d = d, .s = s};
	char list[1024] = "";
	bool changed = false;
	size_t off = 0;
	uint32_t k;
	int ret;

	a.n = collect(d, s, say);
	for (k = 0; k < BW_CG_SELECT_MAX; k++) {
		struct bw_cg_select e = {}, old = {};

		if (!bpf_map_lookup_elem(d->maps.cg_select, &k, &old) && old.glob[0] && old.missed)
			say_missed(d, &old);
		if (k < a.n) {
			snprintf(e.glob, sizeof(e.glob), "%s", s[k].glob);
			e.v.policy = s[k].p->in.slot.id;
			e.v.mode = s[k].p->mode;
			/* Without the exec hook nothing would start it: governed at mkdir. */
			e.pending = d->lsm;
			if (off < sizeof(list))
				off += snprintf(list + off, sizeof(list) - off, "%s%s (%s)",
						k ? ", " : "", e.glob, s[k].p->name);
		}
		old.missed = 0;
		changed |= memcmp(&old, &e, sizeof(e)) != 0;
		if (bpf_map_update_elem(d->maps.cg_select, &k, &e, BPF_ANY)) {
			ret = -errno;
			d_agent(d, NULL, "cannot write the service selectors: %s", strerror(-ret));
			return ret;
		}
	}
	d->nservice_sels = a.n;
	/* Said once they are in force: a cgroup made from now is matched by these. */
	if (changed)
		d_agent(d, NULL, "service selectors in force: %s", a.n ? list : "none");
	if (!a.n)
		return 0;
	ret = bw_cgroup_walk(d->cgroot, adopt_fn, &a);
	return ret < 0 ? ret : 0;
}

void d_services_check(struct daemon *d)
{
	uint32_t k;

	for (k = 0; k < d->nservice_sels; k++) {
		struct bw_cg_select e;

		if (bpf_map_lookup_elem(d->maps.cg_select, &k, &e) || !e.missed)
			continue;
		say_missed(d, &e);
		e.missed = 0;
		bpf_map_update_elem(d->maps.cg_select, &k, &e, BPF_EXIST);
	}
}
