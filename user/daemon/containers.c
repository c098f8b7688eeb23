// SPDX-License-Identifier: GPL-2.0-only
/*
 * The governed containers: governing one when its runtime's hook asks, who a
 * cgroup in an event is, and taking them back after a restart.
 *
 * A container's deny pins are resolved in its own root, not the daemon's:
 * through /proc/PID/root of its init (the bundle's rootfs below it while
 * init has not pivoted yet, at an OCI createRuntime hook), so its own
 * /etc/shadow and its volumes are pinned, not the node's.
 *
 * After a restart nothing was ever ungoverned (the cgroup entries and the
 * slots are pinned); the daemon reads each container's config.json from the
 * runtime's state directory, selects its profile again and moves it to the
 * profile's new slot, and from then on its events carry its identity again.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "cgroup.h"
#include "daemon.h"
#include "doors.h"
#include "runtime.h"
#include "util.h"

static struct d_container *by_cgid(struct daemon *d, uint64_t id)
{
	size_t i;

	for (i = 0; i < d->ncontainers; i++)
		if (d->containers[i]->cgid == id)
			return d->containers[i];
	return NULL;
}

static void container_free(struct d_container *c)
{
	size_t i;

	for (i = 0; i < sizeof(c->strs) / sizeof(c->strs[0]); i++)
		free(c->strs[i]);
	bw_pin_set_free(&c->pins);
	bw_pos_set_free(&c->pos);
	free(c);
}

static struct d_container *container_new(const struct bw_k8s_id *k, long long pid, const char *root)
{
	struct d_container *c = calloc(1, sizeof(*c));
	const char *src[6] = {k->namespace_, k->pod,	      k->pod_uid,
			      k->container,  k->container_id, k->image};
	size_t i;

	if (!c)
		return NULL;
	for (i = 0; i < 6; i++)
		c->strs[i] = strdup(src[i] ? src[i] : "");
	c->k8s = (struct bw_k8s_id){c->strs[0], c->strs[1], c->strs[2],
				    c->strs[3], c->strs[4], c->strs[5]};
	c->pid = pid;
	c->wd = -1;
	/* A not yet pivoted init sees the container's / at root below its own. */
	snprintf(c->view_base, sizeof(c->view_base), "/proc/%lld/root%s", pid,
		 root && strcmp(root, "/") ? root : "");
	snprintf(c->view_mountinfo, sizeof(c->view_mountinfo), "/proc/%lld/mountinfo", pid);
	snprintf(c->view_prefix, sizeof(c->view_prefix), "%s",
		 root && strcmp(root, "/") ? root : "");
	c->view = (struct bw_pin_view){c->view_base, c->view_mountinfo, c->view_prefix};
	for (i = 0; i < 6; i++)
		if (!c->strs[i]) {
			container_free(c);
			return NULL;
		}
	return c;
}

/* The removal of its cgroup is told to the parent directory (the cgroup's own watch hears nothing).
 */
static void watch_parent(struct daemon *d, struct d_container *c)
{
	char parent[PATH_MAX], *slash;

	snprintf(parent, sizeof(parent), "%s", c->cgdir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	c->wd = d->cg_watch < 0 ? -1
				: inotify_add_watch(d->cg_watch, parent,
						    IN_DELETE | IN_MOVED_FROM | IN_ONLYDIR);
	if (c->wd < 0 && !d->reap_poll) {
		d_agent(d, NULL,
			"cannot watch %s (%s): gone containers are looked for every second", parent,
			d->cg_watch < 0 ? "no inotify" : strerror(errno));
		d->reap_poll = true;
	}
}

/* Its parent's watch goes with the last container below it. */
static void unwatch_parent(struct daemon *d, struct d_container *c)
{
	size_t i;

	if (c->wd < 0)
		return;
	for (i = 0; i < d->ncontainers; i++)
		if (d->containers[i] != c && d->containers[i]->wd == c->wd)
			return;
	inotify_rm_watch(d->cg_watch, c->wd);
}

static int add(struct daemon *d, struct d_container *c)
{
	struct d_container **v = realloc(d->containers, (d->ncontainers + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	d->containers = v;
	v[d->ncontainers++] = c;
	watch_parent(d, c);
	return 0;
}

static const char *name_of(const struct bw_k8s_id *k)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "%s/%s/%s", k->namespace_ ? k->namespace_ : "-",
		 k->pod ? k->pod : "-", k->container ? k->container : "-");
	return buf;
}

/* Pins in its root, then its cgroup pointed at the profile's slot. */
static int govern(struct daemon *d, struct d_container *c, struct d_profile *p, char *why,
		  size_t len)
{
	struct bw_pins_done done = {};
	struct bw_cgroup cur;
	int ret;

	ret = bw_slot_add_view(&d->maps, &p->in.compiled, p->in.slot.id, &c->view, &done, &c->pins,
			       &c->pos);
	if (ret) {
		snprintf(why, len, "cannot pin the objects of profile %s in the container: %s",
			 p->name, strerror(-ret));
		return ret;
	}
	/*
	 * From the container's first exec, when the exec hook is there to see it:
	 * what runs in the cgroup until then is runc's init setting the container
	 * up (pivot_root, /proc's masked paths, closing its descriptors), not the
	 * workload, and a profile has no business with it.
	 */
	if (d->lsm)
		ret = bw_govern_pending(&d->maps, c->cgdir, p->in.slot.id, p->mode, &cur);
	else
		ret = bw_govern(&d->maps, c->cgdir, p->in.slot.id, p->mode, &cur);
	if (ret == -EEXIST && cur.policy == p->in.slot.id)
		ret = 0;
	if (ret) {
		snprintf(why, len, "cannot govern cgroup %s with profile %s: %s",
			 bw_cgroup_rel(c->cgdir), p->name,
			 ret == -EEXIST ? "another profile governs it" : strerror(-ret));
		return ret;
	}
	/*
	 * What the runtime's init still holds at its exec goes into the
	 * container: a descriptor that moves tasks must not (user/doors.h).
	 */
	if (d->lsm && p->in.compiled.policy.ns[BW_NS_CGROUP] != BW_V_ALLOW) {
		char what[PATH_MAX + 96];

		ret = bw_door_in_cgroup(c->cgdir, false, what, sizeof(what));
		if (ret) {
			snprintf(why, len, "cgroup %s: %s%s", bw_cgroup_rel(c->cgdir),
				 ret > 0 ? what : strerror(-ret),
				 ret > 0 ? ", open for writing, would let the container leave its "
					   "cgroup"
					 : "");
			return ret > 0 ? -EPERM : ret;
		}
	}
	c->prof = p;
	return 0;
}

void d_container_create(struct daemon *d, const struct bw_hook_req *req, struct bw_hook_resp *out)
{
	struct bw_selectors sel;
	struct d_container *c = NULL;
	struct d_profile *p;
	const char *name = NULL, *exempt;
	char why[sizeof(out->detail) - 64];
	uint64_t id = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	if (strcmp(req->op, "create") || !req->cgroup || req->cgroup[0] != '/') {
		out->result = BW_HOOK_FAIL;
		snprintf(out->detail, sizeof(out->detail), "bad request (op %s, cgroup %s)",
			 req->op, req->cgroup ? req->cgroup : "none");
		return;
	}
	if (d_selectors(d, &sel)) {
		out->result = BW_HOOK_FAIL;
		snprintf(out->detail, sizeof(out->detail), "out of memory");
		return;
	}
	ret = bw_select(&req->id, req->cgroup, &sel, &name);
	if (!ret) {
		free(sel.v);
		out->result = BW_HOOK_UNSELECTED;
		return;
	}
	p = d_profile_find(d, name);
	if (!p) {
		snprintf(why, sizeof(why), "profile %s is not loaded on this node", name);
		goto failed;
	}
	c = container_new(&req->id, req->pid, req->root);
	if (!c) {
		snprintf(why, sizeof(why), "out of memory");
		goto failed;
	}
	snprintf(c->cgdir, sizeof(c->cgdir), "%s%s", d->cgroot, req->cgroup);
	c->via = req->via && !strcmp(req->via, "nri") ? "nri" : "hook";
	ret = bw_cgroup_id(c->cgdir, &id);
	if (ret || (req->cgroup_id && id != req->cgroup_id)) {
		snprintf(why, sizeof(why), "cgroup %s is not the container's (%s)", req->cgroup,
			 ret ? strerror(-ret) : "its id differs");
		goto failed;
	}
	c->cgid = id;
	if (by_cgid(d, id)) {
		/* Asked twice (a runtime retrying): governed already. */
		container_free(c);
		free(sel.v);
		out->result = BW_HOOK_GOVERNED;
		snprintf(out->detail, sizeof(out->detail), "%s", p->name);
		return;
	}
	if (govern(d, c, p, why, sizeof(why)))
		goto failed;
	add(d, c);
	free(sel.v);
	d_agent(d, &c->k8s, "governing container %s (%.12s, cgroup %s, via %s) with profile %s%s",
		name_of(&c->k8s), c->k8s.container_id, bw_cgroup_rel(c->cgdir), c->via, p->name,
		d->lsm ? " from its first exec" : "");
	out->result = d->lsm ? BW_HOOK_PENDING : BW_HOOK_GOVERNED;
	snprintf(out->detail, sizeof(out->detail), "%s", p->name);
	return;
failed:
	if (bw_select_exempt(&req->id, &sel, &exempt)) {
		out->result = BW_HOOK_EXEMPT;
		snprintf(out->detail, sizeof(out->detail), "%s: %s", exempt, why);
		d_agent(d, &req->id, "container %s starts ungoverned (%s): %s", name_of(&req->id),
			exempt, why);
	} else {
		out->result = BW_HOOK_FAIL;
		snprintf(out->detail, sizeof(out->detail), "%s", why);
		d_agent(d, &req->id, "container %s must not start: %s", name_of(&req->id), why);
	}
	if (c)
		container_free(c);
	free(sel.v);
}

/* Cgroups below containers, met in events: which container they are in. */
#define CHILD_CACHE 256
static struct {
	uint64_t id;
	struct d_container *c;
	char path[PATH_MAX];
} child_cache[CHILD_CACHE];

int d_kill_target(void *ctx, uint64_t cgroup_id, char *dir, size_t len)
{
	struct daemon *d = ctx;
	const struct bw_k8s_id *k8s;
	struct bw_cgroup cur, up;
	char rel[PATH_MAX], abs[PATH_MAX], *slash;
	uint64_t id;

	rel[0] = '\0';
	k8s = d_identify(d, cgroup_id, rel, sizeof(rel));
	if (k8s)
		return d_container_cgdir(d, k8s, dir, len);
	if (!rel[0] || bw_governor(&d->maps, cgroup_id, &cur))
		return -ENOENT;
	/* A service: the highest cgroup of its subtree that its slot governs. */
	snprintf(abs, sizeof(abs), "%s%s", d->cgroot, rel);
	while ((slash = strrchr(abs, '/')) && slash > abs + strlen(d->cgroot)) {
		*slash = '\0';
		if (bw_cgroup_id(abs, &id) || bw_governor(&d->maps, id, &up) ||
		    up.policy != cur.policy) {
			*slash = '/';
			break;
		}
	}
	/* Never the root: every process of the host is in it. */
	if (!strcmp(abs, d->cgroot) || !bw_cgroup_rel(abs)[1])
		return -EPERM;
	snprintf(dir, len, "%s", abs);
	return 0;
}

int d_container_cgdir(struct daemon *d, const struct bw_k8s_id *k8s, char *out, size_t len)
{
	size_t i;

	for (i = 0; i < d->ncontainers; i++)
		if (&d->containers[i]->k8s == k8s) {
			snprintf(out, len, "%s", d->containers[i]->cgdir);
			return 0;
		}
	return -ENOENT;
}

const struct bw_k8s_id *d_identify(void *ctx, uint64_t id, char *path, size_t len)
{
	struct daemon *d = ctx;
	struct d_container *c = by_cgid(d, id);
	unsigned slot = id % CHILD_CACHE;
	char abs[PATH_MAX];
	size_t i;

	if (c) {
		snprintf(path, len, "%s", bw_cgroup_rel(c->cgdir));
		return &c->k8s;
	}
	if (child_cache[slot].id == id && child_cache[slot].c) {
		snprintf(path, len, "%s", child_cache[slot].path);
		return &child_cache[slot].c->k8s;
	}
	for (i = 0; i < d->ncontainers; i++) {
		c = d->containers[i];
		if (bw_cgroup_find(c->cgdir, id, abs, sizeof(abs)))
			continue;
		snprintf(path, len, "%s", bw_cgroup_rel(abs));
		child_cache[slot].id = id;
		child_cache[slot].c = c;
		snprintf(child_cache[slot].path, sizeof(child_cache[slot].path), "%s", path);
		return &c->k8s;
	}
	/* Gone, or governed by no container of ours (a cgroup= selector). */
	if (!bw_cgroup_find(d->cgroot, id, abs, sizeof(abs)))
		snprintf(path, len, "%s", bw_cgroup_rel(abs));
	return NULL;
}

/* The containers of c's profile other than c, from *i on: NULL after the last. */
static const struct d_container *sibling(const struct daemon *d, const struct d_container *c,
					 size_t *i)
{
	while (*i < d->ncontainers) {
		const struct d_container *o = d->containers[(*i)++];

		if (o != c && o->prof == c->prof)
			return o;
	}
	return NULL;
}

/* Does another container of c's profile hold the pin of this device and inode? */
static bool pin_shared(struct daemon *d, const struct d_container *c, const struct bw_inode_key *k)
{
	const struct d_container *o;
	size_t i = 0, j;

	while ((o = sibling(d, c, &i)))
		for (j = 0; j < o->pins.n; j++)
			if (o->pins.keys[j].ino == k->ino && o->pins.keys[j].dev == k->dev &&
			    o->pins.keys[j].cat == k->cat)
				return true;
	return false;
}

static bool link_shared(struct daemon *d, const struct d_container *c, const struct bw_pos_key *k)
{
	const struct d_container *o;
	size_t i = 0, j;

	while ((o = sibling(d, c, &i)))
		for (j = 0; j < o->pos.nlinks; j++)
			if (!memcmp(&o->pos.links[j], k, sizeof(*k)))
				return true;
	return false;
}

static bool pos_pin_shared(struct daemon *d, const struct d_container *c,
			   const struct bw_pos_pin_key *k)
{
	const struct d_container *o;
	size_t i = 0, j;

	while ((o = sibling(d, c, &i)))
		for (j = 0; j < o->pos.npins; j++)
			if (o->pos.pins[j].pos == k->pos && o->pos.pins[j].cat == k->cat)
				return true;
	return false;
}

/* A file system another container of the profile has a pin or a position on. */
static bool dev_shared(struct daemon *d, const struct d_container *c, __u32 dev)
{
	const struct d_container *o;
	size_t i = 0, j;

	while ((o = sibling(d, c, &i))) {
		for (j = 0; j < o->pos.ndevs; j++)
			if (o->pos.devs[j] == dev)
				return true;
		for (j = 0; j < o->pins.n; j++)
			if (o->pins.keys[j].dev == dev)
				return true;
	}
	return false;
}

/*
 * A gone container's pins and positions leave its profile's slot, but those
 * another of its containers shares (a hostPath volume): they fill maps of
 * all profiles. So do the pins the kernel made on its own file systems
 * (an object that came to a position, a hard link out of a denied
 * directory): a device number comes back with a later mount.
 */
static void drop_view(struct daemon *d, struct d_container *c)
{
	struct bw_pos_set gone = {};
	size_t i, n = 0;

	if (!c->prof || !c->prof->in.installed)
		return;
	for (i = 0; i < c->pins.n; i++) {
		struct bw_inode_key k = c->pins.keys[i];

		/* The profile may have been reloaded since: its slot now. */
		k.policy = (__u16)c->prof->in.slot.id;
		if (!pin_shared(d, c, &k))
			c->pins.keys[n++] = k;
	}
	/* Filtered in place: the container goes with them. */
	for (i = 0; i < c->pos.nlinks; i++)
		if (!link_shared(d, c, &c->pos.links[i]))
			c->pos.links[gone.nlinks++] = c->pos.links[i];
	for (i = 0; i < c->pos.npins; i++)
		if (!pos_pin_shared(d, c, &c->pos.pins[i]))
			c->pos.pins[gone.npins++] = c->pos.pins[i];
	gone.links = c->pos.links;
	gone.pins = c->pos.pins;
	for (i = 0; i < c->pos.ndevs; i++)
		if (!dev_shared(d, c, c->pos.devs[i]) && bw_pos_set_add_dev(&gone, c->pos.devs[i]))
			break;
	for (i = 0; i < c->pins.n; i++)
		if (!dev_shared(d, c, c->pins.keys[i].dev) &&
		    bw_pos_set_add_dev(&gone, c->pins.keys[i].dev))
			break;
	bw_slot_drop_view(&d->maps, c->prof->in.slot.id, c->pins.keys, n, &gone);
	free(gone.devs);
}

void d_containers_reap(struct daemon *d)
{
	size_t i, j, k;

	for (i = 0; i < d->ncontainers;) {
		struct d_container *c = d->containers[i];

		if (!access(c->cgdir, F_OK)) {
			i++;
			continue;
		}
		drop_view(d, c);
		unwatch_parent(d, c);
		for (k = 0; k < CHILD_CACHE; k++)
			if (child_cache[k].c == c)
				child_cache[k].c = NULL, child_cache[k].id = 0;
		for (j = i + 1; j < d->ncontainers; j++)
			d->containers[j - 1] = d->containers[j];
		d->ncontainers--;
		container_free(c);
	}
}

bool d_containers_move(struct daemon *d, struct d_profile *from, struct d_profile *to, size_t max,
		       int *cgroups)
{
	size_t i, done = 0;
	int n, ret;

	for (i = 0; i < d->ncontainers; i++) {
		struct d_container *c = d->containers[i];
		struct bw_pin_set pins = {};
		struct bw_pos_set pos = {};

		if (c->prof != from)
			continue;
		if (done == max)
			return true;
		done++;
		/* The new version's pins in its root first, then the one 8-byte switch. */
		ret = bw_slot_add_view(&d->maps, &to->in.compiled, to->in.slot.id, &c->view,
				       &(struct bw_pins_done){}, &pins, &pos);
		if (ret)
			d_agent(d, &c->k8s,
				"container %s: the new profile version's pins are not in its root: "
				"%s (its rules apply by path)",
				name_of(&c->k8s), strerror(-ret));
		n = 0;
		ret = bw_govern_repoint(&d->maps, c->cgdir, from->in.slot.id, to->in.slot.id, &n);
		if (ret && ret != -ENOENT)
			d_agent(d, &c->k8s, "cannot move container %s to the new profile: %s",
				name_of(&c->k8s), strerror(-ret));
		*cgroups += n;
		c->prof = to;
		/* What the new version pinned in its root, to drop when it goes. */
		bw_pin_set_free(&c->pins);
		bw_pos_set_free(&c->pos);
		c->pins = pins;
		c->pos = pos;
	}
	return false;
}

/* The init PID a runtime keeps in the bundle (containerd's shim: init.pid). */
static long long bundle_pid(const char *bundle)
{
	char path[PATH_MAX + 16], buf[32];

	snprintf(path, sizeof(path), "%s/init.pid", bundle);
	if (bw_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	return atoll(buf);
}

/* One bundle of the runtime's state: a container we governed before the restart? */
static void recover_one(struct daemon *d, const char *bundle, const char *id)
{
	struct bw_container rc = {};
	struct bw_selectors sel = {};
	struct d_container *c;
	struct d_profile *p;
	struct bw_cgroup cur;
	struct bw_policy pol;
	char path[PATH_MAX + 16], rel[PATH_MAX], err[256], *text = NULL;
	const char *name;
	uint64_t cgid;
	FILE *f;
	long n;
	int moved = 0;

	snprintf(path, sizeof(path), "%s/config.json", bundle);
	f = fopen(path, "re");
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = n > 0 && n < (16 << 20) ? malloc(n) : NULL;
	if (!text || fread(text, 1, n, f) != (size_t)n)
		goto out;
	rc.id = id;
	if (bw_oci_config_parse(text, n, &rc, err, sizeof(err)) ||
	    bw_cgroups_path_dir(rc.cgroups_path, rel, sizeof(rel)))
		goto out;
	rc.k8s.container_id = id;
	snprintf(path, sizeof(path), "%s%s", d->cgroot, rel);
	/* Governed, or still waiting for its first exec. */
	if (bw_cgroup_id(path, &cgid) || by_cgid(d, cgid) ||
	    (bw_governor(&d->maps, cgid, &cur) &&
	     bpf_map_lookup_elem(d->maps.pending, &cgid, &cur)))
		goto out;
	/* Ours only if its slot's owner is gone: another agent's cgroups stay its own. */
	if (bpf_map_lookup_elem(d->maps.policies, &cur.policy, &pol) ||
	    (pol.owner_pid && !kill(pol.owner_pid, 0)))
		goto out;
	if (d_selectors(d, &sel) || !bw_select(&rc.k8s, rel, &sel, &name))
		goto out;
	p = d_profile_find(d, name);
	c = container_new(&rc.k8s, bundle_pid(bundle), "/");
	if (!c)
		goto out;
	snprintf(c->cgdir, sizeof(c->cgdir), "%s", path);
	c->cgid = cgid;
	c->via = "restart";
	if (!p) {
		d_agent(
		    d, &c->k8s,
		    "container %s stays governed by its former slot %u: profile %s is not loaded",
		    name_of(&c->k8s), cur.policy, name);
		container_free(c);
		goto out;
	}
	if (bw_slot_add_view(&d->maps, &p->in.compiled, p->in.slot.id, &c->view,
			     &(struct bw_pins_done){}, &c->pins, &c->pos) ||
	    bw_govern_repoint(&d->maps, c->cgdir, cur.policy, p->in.slot.id, &moved)) {
		d_agent(d, &c->k8s, "container %s stays governed by its former slot %u",
			name_of(&c->k8s), cur.policy);
		container_free(c);
		goto out;
	}
	c->prof = p;
	add(d, c);
	d_agent(d, &c->k8s,
		"container %s governed before this daemon started: now with profile %s (slot %u -> "
		"%u, %d cgroups)",
		name_of(&c->k8s), p->name, cur.policy, p->in.slot.id, moved);
	d_slot_drain(d, cur.policy, p);
out:
	free(sel.v);
	bw_container_free(&rc);
	free(text);
	if (f)
		fclose(f);
}

void d_containers_recover(struct daemon *d)
{
	DIR *top, *ns;
	struct dirent *e, *b;
	char dir[PATH_MAX], bundle[2 * PATH_MAX];

	if (!d->state_dir)
		return;
	top = opendir(d->state_dir);
	if (!top)
		return;
	/* containerd: STATE/<namespace>/<id>/config.json */
	while ((e = readdir(top))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", d->state_dir, e->d_name);
		ns = opendir(dir);
		if (!ns)
			continue;
		while ((b = readdir(ns))) {
			if (b->d_name[0] == '.')
				continue;
			snprintf(bundle, sizeof(bundle), "%s/%s", dir, b->d_name);
			recover_one(d, bundle, b->d_name);
		}
		closedir(ns);
	}
	closedir(top);
}

void d_containers_free(struct daemon *d)
{
	size_t i;

	for (i = 0; i < d->ncontainers; i++)
		container_free(d->containers[i]);
	free(d->containers);
	d->containers = NULL;
	d->ncontainers = 0;
}
