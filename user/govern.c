// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfwarden.h"
#include "cgroup.h"
#include "govern.h"
#include "util.h"

int bw_governed_each(struct bw_maps *m, bw_governed_fn fn, void *arg)
{
	uint64_t key, next;
	struct bw_cgroup v;
	int first = 1, ret;

	while (!bpf_map_get_next_key(m->cgroups, first ? NULL : &key, &next)) {
		first = 0;
		key = next;
		if (bpf_map_lookup_elem(m->cgroups, &key, &v))
			continue; /* let go meanwhile */
		ret = fn(key, &v, arg);
		if (ret)
			return ret;
	}
	return 0;
}

int bw_governor(struct bw_maps *m, uint64_t cgroup_id, struct bw_cgroup *out)
{
	return bpf_map_lookup_elem(m->cgroups, &cgroup_id, out) ? -ENOENT : 0;
}

/*
 * The agents' half of count idx of bw_cgroups entries (include/bpfwarden.h):
 * only agents write it, under bw_lock, so read, add and write back is safe;
 * the kernel's half is another element, which this never writes.
 */
static int count_add(struct bw_maps *m, uint32_t idx, int64_t delta)
{
	uint32_t key = BW_CG_AGENT_HALF + idx;
	int64_t v;

	if (bpf_map_lookup_elem(m->cg_count, &key, &v))
		return -errno;
	v += delta;
	return bpf_map_update_elem(m->cg_count, &key, &v, BPF_ANY) ? -errno : 0;
}

/* Count idx: both halves. */
static int64_t count_get(struct bw_maps *m, uint32_t idx)
{
	uint32_t agent = BW_CG_AGENT_HALF + idx;
	int64_t k = 0, a = 0;

	bpf_map_lookup_elem(m->cg_count, &idx, &k);
	bpf_map_lookup_elem(m->cg_count, &agent, &a);
	return k + a;
}

/* An entry deleted by an agent: uncounted where it was counted. */
static void uncount(struct bw_maps *m, const struct bw_cgroup *v)
{
	if (v->charged) {
		count_add(m, v->charged - 1, -1);
		count_add(m, BW_CG_MADE, -1);
	} else {
		count_add(m, BW_CG_AGENT, -1);
	}
}

int bw_cgroups_fill(struct bw_maps *m, struct bw_cg_fill *f)
{
	struct bw_cg_limits l = {};
	uint32_t zero = 0, i;

	memset(f, 0, sizeof(*f));
	if (bpf_map_lookup_elem(m->cg_limits, &zero, &l))
		return -errno;
	f->per_slot = l.per_slot ? l.per_slot : BW_CGROUPS_MADE_PER_SLOT;
	f->made_max = l.made && l.made < BW_MAX_CGROUPS_MADE ? l.made : BW_MAX_CGROUPS_MADE;
	f->agent = count_get(m, BW_CG_AGENT);
	f->made = count_get(m, BW_CG_MADE);
	for (i = 0; i < BW_MAX_POLICIES; i++)
		f->made_by_slot[i] = count_get(m, i);
	return 0;
}

/* What a walk over a subtree does to each cgroup's entry. */
struct govern_arg {
	struct bw_maps *m;
	struct bw_cgroup v; /* the entry to write */
	uint64_t skip_id;   /* govern_all: left alone */
	const char *skip;   /* govern_all: a subtree left alone */
	uint32_t slot;	    /* ungovern: whose entries go; UINT32_MAX: the first found's */
	int n;		    /* entries written or removed */
};

/*
 * Point one cgroup at the slot. An entry there already (another slot's,
 * or one the kernel made at mkdir) is replaced when replace (govern) or
 * left alone (govern_all); a replaced entry keeps `charged`: it stays
 * counted where it was. A new entry is an agent's, at most BW_MAX_CGROUPS
 * of them, so that made cgroups and governed ones never crowd each other out.
 */
static int put(struct govern_arg *a, const char *path, uint64_t id, bool replace)
{
	struct bw_cgroup v = a->v, old;
	int tries, err = EAGAIN, ret;

	/* The bit first: an entry whose bit is clear is not seen (bw_may_govern). */
	ret = bw_gov_mark(a->m, id);
	if (ret)
		return ret;
	for (tries = 0; tries < 3; tries++) {
		if (!bw_governor(a->m, id, &old)) {
			if (!replace)
				return 0;
			v.charged = old.charged;
			if (!bpf_map_update_elem(a->m->cgroups, &id, &v, BPF_EXIST)) {
				a->n++;
				return 0;
			}
			/* Gone: the cgroup was removed since the walk saw it. */
			err = errno;
			if (err == ENOENT)
				return 0;
			break;
		}
		if (count_get(a->m, BW_CG_AGENT) >= BW_MAX_CGROUPS) {
			bw_err("cannot govern %s: agents govern %d cgroups already, the most they "
			       "may",
			       path, BW_MAX_CGROUPS);
			return -ENOSPC;
		}
		v.charged = 0;
		if (!bpf_map_update_elem(a->m->cgroups, &id, &v, BPF_NOEXIST)) {
			count_add(a->m, BW_CG_AGENT, 1);
			a->n++;
			return 0;
		}
		/* EEXIST: made at mkdir below a cgroup governed meanwhile; go again. */
		err = errno;
		if (err != EEXIST)
			break;
	}
	bw_err("cannot govern %s: %s", path, strerror(err));
	return -err;
}

static int govern_fn(const char *path, uint64_t id, void *arg)
{
	return put(arg, path, id, true);
}

/* Govern dir's subtree now, or dir from its first exec (pending). */
static int govern(struct bw_maps *m, const char *dir, uint32_t slot, enum bw_mode mode,
		  struct bw_cgroup *cur, bool pending)
{
	struct govern_arg a = {.m = m, .v = {.policy = slot, .mode = mode}};
	struct bw_cgroup v;
	uint64_t id;
	int ret;

	ret = bw_cgroup_id(dir, &id);
	if (ret)
		return ret;
	ret = bw_lock(m);
	if (ret)
		return ret;
	if (!bw_governor(m, id, &v) || !bpf_map_lookup_elem(m->pending, &id, &v)) {
		if (cur)
			*cur = v;
		ret = -EEXIST;
	} else if (!pending) {
		ret = bw_cgroup_walk(dir, govern_fn, &a);
	} else if (count_get(m, BW_CG_AGENT) >= BW_MAX_CGROUPS) {
		bw_err("cannot govern %s: agents govern %d cgroups already, the most they may", dir,
		       BW_MAX_CGROUPS);
		ret = -ENOSPC;
	} else if ((ret = bw_gov_mark(m, id))) {
		/* Said. The bit first: the kernel moves the entry into bw_cgroups. */
	} else if (bpf_map_update_elem(m->pending, &id, &a.v, BPF_NOEXIST)) {
		ret = -errno;
		bw_err("cannot govern %s from its first exec: %s (at most %d wait at once)", dir,
		       strerror(-ret), BW_MAX_PENDING);
	} else {
		/*
		 * Counted as an agent's entry from now: its move into bw_cgroups at
		 * the first exec changes no count, and rmdir uncounts it either way
		 * (bpf/cgroup.bpf.c), so agents never take more than their room.
		 */
		count_add(m, BW_CG_AGENT, 1);
	}
	bw_unlock(m);
	return ret;
}

int bw_govern(struct bw_maps *m, const char *dir, uint32_t slot, enum bw_mode mode,
	      struct bw_cgroup *cur)
{
	return govern(m, dir, slot, mode, cur, false);
}

int bw_govern_pending(struct bw_maps *m, const char *dir, uint32_t slot, enum bw_mode mode,
		      struct bw_cgroup *cur)
{
	return govern(m, dir, slot, mode, cur, true);
}

/* Governed already (by anyone) stays as it is: another session's cgroups stay its own. */
static int govern_all_fn(const char *path, uint64_t id, void *arg)
{
	struct govern_arg *a = arg;

	if (!strcmp(path, a->skip))
		return BW_WALK_PRUNE;
	if (id == a->skip_id)
		return 0;
	return put(a, path, id, false);
}

int bw_govern_all(struct bw_maps *m, const char *root, uint32_t slot, enum bw_mode mode,
		  const char *skip_subtree, uint64_t skip_cgroup, int *n)
{
	struct govern_arg a = {.m = m,
			       .v = {.policy = slot, .mode = mode},
			       .skip_id = skip_cgroup,
			       .skip = skip_subtree ? skip_subtree : ""};
	int ret = bw_lock(m);

	if (ret)
		return ret;
	ret = bw_cgroup_walk(root, govern_all_fn, &a);
	bw_unlock(m);
	*n = a.n;
	return ret;
}

/* Each entry is one value written at once: the kernel sees the old mode or the new. */
static int mode_fn(const char *path, uint64_t id, void *arg)
{
	struct govern_arg *a = arg;
	struct bw_cgroup v;

	if (bw_governor(a->m, id, &v))
		return 0;
	v.mode = a->v.mode;
	if (bpf_map_update_elem(a->m->cgroups, &id, &v, BPF_EXIST))
		return errno == ENOENT ? 0 : -errno;
	a->n++;
	return 0;
}

int bw_govern_set_mode(struct bw_maps *m, const char *dir, enum bw_mode mode, int *n)
{
	struct govern_arg a = {.m = m, .v = {.mode = mode}};
	int ret = bw_lock(m);

	if (ret)
		return ret;
	ret = bw_cgroup_walk(dir, mode_fn, &a);
	bw_unlock(m);
	*n = a.n;
	return ret ? ret : a.n ? 0 : -ENOENT;
}

/* Point the entries of the replaced slot at the new one; other slots' entries stay. */
static int replace_fn(const char *path, uint64_t id, void *arg)
{
	struct govern_arg *a = arg;
	struct bw_cgroup v, nv = a->v;

	if (bw_governor(a->m, id, &v) || v.policy != a->slot)
		return 0;
	nv.charged = v.charged; /* still counted where it was */
	if (bpf_map_update_elem(a->m->cgroups, &id, &nv, BPF_EXIST))
		return errno == ENOENT ? 0 : -errno;
	a->n++;
	return 0;
}

/* Wake the agent of a slot that lost cgroups (BW_NUDGE_SIGNAL). */
static void nudge_owner(struct bw_maps *m, uint32_t id)
{
	struct bw_policy p;

	if (bpf_map_lookup_elem(m->policies, &id, &p) || !p.in_use || !p.owner_pid ||
	    (pid_t)p.owner_pid == getpid())
		return;
	kill(p.owner_pid, BW_NUDGE_SIGNAL);
}

int bw_govern_replace(struct bw_maps *m, const char *dir, uint32_t slot, enum bw_mode mode,
		      uint32_t *old)
{
	struct govern_arg a = {.m = m, .v = {.policy = slot, .mode = mode}};
	struct bw_cgroup top;
	uint64_t id;
	int ret, pass;

	ret = bw_cgroup_id(dir, &id);
	if (ret)
		return ret;
	ret = bw_lock(m);
	if (ret)
		return ret;
	if (bw_governor(m, id, &top)) {
		ret = -ENOENT;
		goto out;
	}
	if (top.policy == slot) {
		ret = -EALREADY;
		goto out;
	}
	a.slot = top.policy;
	/*
	 * A cgroup made during a pass, below one not replaced yet, copies the
	 * old entry; the next pass finds it. One that still escapes keeps the
	 * old slot, which then stays (bw_slot_put: -EBUSY): it is never let go.
	 */
	for (pass = 0; pass < 3; pass++) {
		int before = a.n;

		ret = bw_cgroup_walk(dir, replace_fn, &a);
		if (ret || a.n == before)
			break;
	}
	*old = top.policy;
	if (!ret)
		bw_slot_reclaim_orphan(m, top.policy);
	if (a.n)
		nudge_owner(m, top.policy);
out:
	bw_unlock(m);
	return ret;
}

/* Let go of the entries of one slot only: another session may govern a cgroup below. */
static int ungovern_fn(const char *path, uint64_t id, void *arg)
{
	struct govern_arg *a = arg;
	struct bw_cgroup v;

	if (bw_governor(a->m, id, &v))
		return 0;
	if (a->slot == UINT32_MAX)
		a->slot = v.policy;
	if (v.policy == a->slot && !bpf_map_delete_elem(a->m->cgroups, &id)) {
		uncount(a->m, &v);
		a->n++;
	}
	return 0;
}

int bw_ungovern(struct bw_maps *m, const char *dir, uint32_t *slot)
{
	struct govern_arg a = {.m = m, .slot = slot ? *slot : UINT32_MAX};
	int ret = bw_lock(m);

	if (ret)
		return ret;
	ret = bw_cgroup_walk(dir, ungovern_fn, &a);
	bw_unlock(m);
	if (a.n)
		nudge_owner(m, a.slot);
	if (ret)
		return ret;
	if (!a.n)
		return -ENOENT;
	if (slot)
		*slot = a.slot;
	return 0;
}

/* One entry at a time, each written whole: the kernel sees the old slot or the new. */
static int repoint_fn(const char *path, uint64_t id, void *arg)
{
	struct govern_arg *a = arg;
	struct bw_cgroup v;

	/* Still waiting for its first exec: the entry that will move, moved. */
	if (!bpf_map_lookup_elem(a->m->pending, &id, &v) && v.policy == a->slot) {
		v.policy = a->v.policy;
		if (!bpf_map_update_elem(a->m->pending, &id, &v, BPF_EXIST))
			a->n++;
	}
	if (bw_governor(a->m, id, &v) || v.policy != a->slot)
		return 0;
	v.policy = a->v.policy;
	if (bpf_map_update_elem(a->m->cgroups, &id, &v, BPF_EXIST))
		return errno == ENOENT ? 0 : -errno;
	a->n++;
	return 0;
}

int bw_govern_repoint(struct bw_maps *m, const char *dir, uint32_t from, uint32_t to, int *n)
{
	struct govern_arg a = {.m = m, .v = {.policy = to}, .slot = from};
	int ret = bw_lock(m);

	if (ret)
		return ret;
	ret = bw_cgroup_walk(dir, repoint_fn, &a);
	bw_unlock(m);
	if (a.n)
		nudge_owner(m, from);
	*n = a.n;
	return ret;
}
