// SPDX-License-Identifier: GPL-2.0-only
/*
 * Positions of rule objects: placed in their file systems, stored as chains
 * of names, and removed with their policy. positions.h says why.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "mounts.h"
#include "pins.h"
#include "positions.h"
#include "bits.h"
#include "util.h"

__u64 bw_pos_id(__u32 dev, const char *rel, size_t len)
{
	__u64 h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < sizeof(dev); i++)
		h = (h ^ ((dev >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)rel[i]) * 0x100000001b3ULL;
	return h ? h : 1; /* 0 means "none" in the maps */
}

int bw_pos_chain(__u32 dev, const char *rel, size_t root_len,
		 int (*fn)(const struct bw_pos_edge *e, void *arg), void *arg)
{
	size_t len = strlen(rel), start = root_len, end;
	struct bw_pos_edge e;
	int ret;

	if (root_len > len)
		return -EINVAL;
	e.dir = bw_pos_id(dev, rel, root_len);
	while (start < len) {
		while (start < len && rel[start] == '/')
			start++;
		if (start == len)
			break;
		for (end = start; end < len && rel[end] != '/'; end++)
			;
		if (end - start >= BW_POS_NAME)
			return -ENAMETOOLONG;
		e.name = rel + start;
		e.namelen = end - start;
		e.end = end;
		e.pos = bw_pos_id(dev, rel, end);
		e.last = end == len || (end + 1 == len && rel[end] == '/');
		ret = fn(&e, arg);
		if (ret)
			return ret;
		e.dir = e.pos;
		start = end;
	}
	return 0;
}

/*
 * The mount holding a path: the longest target that is a prefix of it (the
 * last of equals). A view's table names its mounts as prefix + the path the
 * view sees; mounts outside the prefix are not in the view.
 */
struct holder {
	const char *path;
	const char *prefix;
	size_t best;
	struct bw_pos_place *pl;
	char root[PATH_MAX];
	char target[PATH_MAX]; /* in the view */
	int found;
};

static int is_under(const char *path, const char *dir, size_t n)
{
	if (strncmp(path, dir, n))
		return 0;
	return n == 1 || path[n] == '\0' || path[n] == '/';
}

static int holder_of(const struct bw_mount *m, void *arg)
{
	struct holder *h = arg;
	const char *target = m->target;
	size_t n;

	if (h->prefix && h->prefix[0]) {
		n = strlen(h->prefix);
		if (strncmp(target, h->prefix, n) || (target[n] && target[n] != '/'))
			return 0;
		target = target[n] ? target + n : "/";
	}
	n = strlen(target);
	if (!is_under(h->path, target, n) || (h->found && n < h->best))
		return 0;
	h->best = n;
	h->found = 1;
	h->pl->dev = bw_kdev(m->dev);
	snprintf(h->target, sizeof(h->target), "%s", target);
	snprintf(h->root, sizeof(h->root), "%s", strcmp(m->root, "/") ? m->root : "");
	return 0;
}

/* Take the first name off *todo: its length, and where it starts in *name. */
static size_t next_name(const char **todo, const char **name)
{
	const char *p = *todo;
	size_t n;

	while (*p == '/')
		p++;
	for (n = 0; p[n] && p[n] != '/'; n++)
		;
	*name = p;
	*todo = p + n;
	return n;
}

int bw_resolve_in(const char *base, const char *path, char *real, size_t len, char *rest,
		  size_t rlen)
{
	char todo[PATH_MAX], link[PATH_MAX], probe[2 * PATH_MAX], next[2 * PATH_MAX];
	const char *t, *name;
	size_t n, have = 0;
	struct stat st;
	int hops = 0;
	ssize_t l;

	if (snprintf(todo, sizeof(todo), "%s", path) >= (int)sizeof(todo) || len < 2)
		return -ENAMETOOLONG;
	/* A view that is not there (a profile no container uses yet) has no places. */
	if (base[0] && lstat(base, &st))
		return -ENOENT;
	real[0] = '\0';
	rest[0] = '\0';
	t = todo;
	while ((n = next_name(&t, &name))) {
		if (n == 1 && name[0] == '.')
			continue;
		if (n == 2 && name[0] == '.' && name[1] == '.') {
			/* Lexical on a path without symlinks: the view's root is its top. */
			while (have && real[have - 1] != '/')
				have--;
			if (have)
				have--;
			real[have] = '\0';
			continue;
		}
		if (snprintf(probe, sizeof(probe), "%s%s/%.*s", base, real, (int)n, name) >=
		    (int)sizeof(probe))
			return -ENAMETOOLONG;
		if (lstat(probe, &st)) {
			/* What does not exist yet, as written from here on. */
			if (snprintf(rest, rlen, "/%.*s%s", (int)n, name, t) >= (int)rlen)
				return -ENAMETOOLONG;
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			if (++hops > 40)
				return -ELOOP;
			l = readlink(probe, link, sizeof(link) - 1);
			if (l < 0)
				return -errno;
			link[l] = '\0';
			if (link[0] == '/') {
				have = 0;
				real[0] = '\0';
			}
			if (snprintf(next, sizeof(next), "%s/%s", link, t) >= (int)sizeof(todo))
				return -ENAMETOOLONG;
			memcpy(todo, next, strlen(next) + 1);
			t = todo;
			continue;
		}
		if (have + 1 + n >= len)
			return -ENAMETOOLONG;
		real[have++] = '/';
		memcpy(real + have, name, n);
		have += n;
		real[have] = '\0';
	}
	if (!have)
		snprintf(real, len, "/");
	return 0;
}

int bw_pos_place(const struct bw_pin_view *v, const char *path, struct bw_pos_place *pl)
{
	char probe[PATH_MAX], real[PATH_MAX], rest[PATH_MAX] = "";
	struct holder h = {.pl = pl};
	const char *below, *base = v && v->base ? v->base : "";
	char *slash;
	int n, ret;

	if (path[0] != '/' || strlen(path) >= sizeof(probe))
		return -EINVAL;
	/* The deepest part that exists, symlinks resolved; the rest as written. */
	if (base[0]) {
		ret = bw_resolve_in(base, path, real, sizeof(real), rest, sizeof(rest));
		if (ret)
			return ret;
	} else {
		snprintf(probe, sizeof(probe), "%s", path);
		while (!realpath(probe, real)) {
			slash = strrchr(probe, '/');
			if (!slash || slash == probe) {
				snprintf(real, sizeof(real), "/");
				snprintf(rest, sizeof(rest), "%s", path);
				break;
			}
			n = snprintf(rest, sizeof(rest), "%s", path + (slash - probe));
			if (n < 0 || (size_t)n >= sizeof(rest))
				return -ENAMETOOLONG;
			*slash = '\0';
		}
	}
	h.path = real;
	h.prefix = v ? v->mount_prefix : NULL;
	ret = v && v->mountinfo ? bw_mounts_each_in(v->mountinfo, holder_of, &h)
				: bw_mounts_each(holder_of, &h);
	if (ret < 0)
		return ret;
	if (!h.found)
		return -ENOENT;
	/* rel: the mount's root in its file system, the path below the target, the rest. */
	below = strcmp(h.target, "/") ? real + strlen(h.target) : strcmp(real, "/") ? real : "";
	n = snprintf(pl->rel, sizeof(pl->rel), "%s%s%s", h.root, below, rest);
	if (n < 0 || (size_t)n >= sizeof(pl->rel))
		return -ENAMETOOLONG;
	pl->root_len = strlen(h.root);
	n = snprintf(pl->target, sizeof(pl->target), "%s%s", base,
		     base[0] && !strcmp(h.target, "/") ? "" : h.target);
	if (n < 0 || (size_t)n >= sizeof(pl->target))
		return -ENAMETOOLONG;
	return 0;
}

/* The subtree deny pins of a plan, indexed by category and path. */
struct deny_dirs {
	const struct bw_compiled *c;
	struct bw_index ix;
	int cat;	  /* the probe's */
	const char *path; /* its first len bytes */
	size_t len;
};

static uint64_t dir_hash(int cat, const char *path, size_t len)
{
	return bw_hash(path, len) ^ (uint64_t)cat;
}

static int same_dir(size_t item, const void *ctx)
{
	const struct deny_dirs *d = ctx;
	const struct bw_pin_req *pr = &d->c->pins[item];

	return pr->cat == d->cat && !strncmp(pr->path, d->path, d->len) && !pr->path[d->len];
}

static uint64_t rehash_dir(size_t item, const void *ctx)
{
	const struct deny_dirs *d = ctx;
	const struct bw_pin_req *pr = &d->c->pins[item];

	return dir_hash(pr->cat, pr->path, strlen(pr->path));
}

static int deny_dirs_index(struct deny_dirs *d, const struct bw_compiled *c)
{
	size_t j, *slot;
	int ret;

	memset(d, 0, sizeof(*d));
	d->c = c;
	for (j = 0; j < c->npins; j++) {
		const struct bw_pin_req *pr = &c->pins[j];

		if (!pr->deny || !pr->subtree)
			continue;
		ret = bw_index_reserve(&d->ix, rehash_dir, d);
		if (ret)
			return ret;
		d->cat = pr->cat;
		d->path = pr->path;
		d->len = strlen(pr->path);
		slot = bw_index_slot(&d->ix, dir_hash(d->cat, d->path, d->len), same_dir, d);
		if (!*slot) {
			*slot = j + 1;
			d->ix.n++;
		}
	}
	return 0;
}

/* A subtree deny pin of pr's category other than pr, on pr's first len bytes? */
static int denied_above(struct deny_dirs *d, const struct bw_pin_req *pr, size_t len)
{
	size_t *slot;

	if (!d->ix.n)
		return 0;
	d->cat = pr->cat;
	d->path = pr->path;
	d->len = len;
	slot = bw_index_slot(&d->ix, dir_hash(d->cat, d->path, len), same_dir, d);
	return *slot && &d->c->pins[*slot - 1] != pr;
}

/*
 * Would an object at this pin's place need its pin: it can deny, or it lifts
 * a denial above it (a subtree deny on "/" or on a prefix of its path that
 * ends at a '/').
 */
static int needs_position(const struct bw_compiled *c, struct deny_dirs *d, size_t i)
{
	const struct bw_pin_req *pr = &c->pins[i];
	const struct bw_inode_pin *v = &pr->pin;
	size_t k;

	if (pr->deny || v->self.verdict_r == BW_V_DENY || v->self.verdict_w == BW_V_DENY ||
	    v->below.verdict_r == BW_V_DENY || v->below.verdict_w == BW_V_DENY)
		return 1;
	if (denied_above(d, pr, 1))
		return 1;
	for (k = 1; pr->path[k]; k++)
		if (pr->path[k] == '/' && denied_above(d, pr, k))
			return 1;
	return 0;
}

struct chain_arg {
	const struct bw_maps *m; /* NULL: only record */
	uint32_t policy;
	int cat;
	struct bw_pos_set *rec;
};

static int push(void **v, size_t *n, size_t *cap, const void *item, size_t size);

/* Add this policy to one link's entry, shared with other policies naming the same place. */
static int store_edge(const struct bw_pos_edge *e, void *arg)
{
	struct chain_arg *a = arg;
	struct bw_pos_key k = {};
	struct bw_pos v = {};
	__u64 bit = 1ULL << (a->policy % 64);
	size_t w = a->policy / 64;

	k.dir = e->dir;
	memcpy(k.name, e->name, e->namelen);
	if (a->rec &&
	    push((void **)&a->rec->links, &a->rec->nlinks, &a->rec->clinks, &k, sizeof(k)))
		return -ENOMEM;
	if (!a->m)
		return 0;
	if (bpf_map_lookup_elem(a->m->positions, &k, &v))
		memset(&v, 0, sizeof(v));
	v.pos = e->pos;
	v.users[w] |= bit;
	if (e->last)
		v.pins[a->cat][w] |= bit;
	else
		v.dir = 1;
	if (bpf_map_update_elem(a->m->positions, &k, &v, BPF_ANY)) {
		int ret = -errno;

		bw_err("cannot store the position of %.*s: %s (at most %d positions for all loaded "
		       "profiles)",
		       (int)e->namelen, e->name, strerror(-ret), BW_MAX_POSITIONS);
		return ret;
	}
	return 0;
}

struct dirs_arg {
	const struct bw_maps *m;
	const struct bw_pos_place *pl;
	__u64 *bits;
};

/* A directory of the chain that exists now: the kernel finds its children by its inode. */
static int note_dir(const struct bw_maps *m, __u64 *bits, __u32 dev, const char *path, __u64 pos)
{
	struct bw_pos_dir_key k = {};
	struct stat st;

	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return 0;
	k.ino = st.st_ino;
	k.dev = dev;
	bw_bits_set(bits, st.st_ino);
	if (bpf_map_update_elem(m->pos_dirs, &k, &pos, BPF_ANY)) {
		int ret = -errno;

		bw_err("cannot record %s on a rule's position: %s (at most %d)", path,
		       strerror(-ret), BW_MAX_POSITIONS);
		return ret;
	}
	return 0;
}

static int store_dir(const struct bw_pos_edge *e, void *arg)
{
	struct dirs_arg *a = arg;
	const struct bw_pos_place *pl = a->pl;
	char path[3 * PATH_MAX];
	int n;

	if (e->last)
		return 0;
	n = snprintf(path, sizeof(path), "%s%.*s", strcmp(pl->target, "/") ? pl->target : "",
		     (int)(e->end - pl->root_len), pl->rel + pl->root_len);
	if (n < 0 || (size_t)n >= sizeof(path))
		return 0;
	return note_dir(a->m, a->bits, pl->dev, path, e->pos);
}

static void note_dev(struct bw_pos_done *done, __u32 dev)
{
	size_t i, cap = sizeof(done->devs) / sizeof(done->devs[0]);

	for (i = 0; i < done->ndevs && i < cap; i++)
		if (done->devs[i] == dev)
			return;
	if (done->ndevs < cap)
		done->devs[done->ndevs] = dev;
	done->ndevs++;
}

int bw_pos_set_add_dev(struct bw_pos_set *rec, __u32 dev)
{
	size_t i;

	for (i = 0; i < rec->ndevs; i++)
		if (rec->devs[i] == dev)
			return 0;
	return push((void **)&rec->devs, &rec->ndevs, &rec->cdevs, &dev, sizeof(dev));
}

/* One pin's place: its pin values, the chain's links, then its directories that exist. */
static int install_one(const struct bw_maps *m, const struct bw_pin_req *pr, uint32_t policy,
		       const struct bw_pin_view *v, __u64 *bits, struct bw_pos_done *done,
		       struct bw_pos_set *rec)
{
	struct chain_arg ca = {m, policy, pr->cat, rec};
	struct bw_pos_pin_key pk = {};
	struct bw_pos_pin pp = {};
	struct bw_pos_place pl;
	struct dirs_arg da = {m, &pl, bits};
	char buf[2 * PATH_MAX];
	const char *path = pr->path;
	struct stat st;
	int ret;

	ret = bw_pos_place(v, pr->path, &pl);
	if (ret)
		return ret == -ENOENT ? 0 : ret;
	if (strlen(pl.rel) == pl.root_len)
		return 0; /* a mount's root: replaced only by mounting, not followed */
	pk.pos = bw_pos_id(pl.dev, pl.rel, strlen(pl.rel));
	pk.policy = (__u16)policy;
	pk.cat = (__u16)pr->cat;
	if (rec && (push((void **)&rec->pins, &rec->npins, &rec->cpins, &pk, sizeof(pk)) ||
		    bw_pos_set_add_dev(rec, pl.dev)))
		return -ENOMEM;
	if (m) {
		pp.pin = pr->pin;
		if (v && v->base && v->base[0]) {
			if ((size_t)snprintf(buf, sizeof(buf), "%s%s", v->base, pr->path) >=
			    sizeof(buf))
				return 0;
			path = buf;
		}
		if (!stat(path, &st))
			pp.ino = st.st_ino;
		/* Values first: the kernel reads them once a link says this policy pins here. */
		if (bpf_map_update_elem(m->pos_pins, &pk, &pp, BPF_ANY)) {
			ret = -errno;
			bw_err("cannot store the position of %s: %s (at most %d)", pr->path,
			       strerror(-ret), BW_MAX_POSITIONS);
			return ret;
		}
	}
	ret = bw_pos_chain(pl.dev, pl.rel, pl.root_len, store_edge, &ca);
	if (ret == -ENAMETOOLONG)
		return 0;
	if (ret)
		return ret;
	if (m) {
		/* Top down, each after its parent: a directory made meanwhile is seen either way.
		 */
		ret = note_dir(m, bits, pl.dev, pl.target, bw_pos_id(pl.dev, pl.rel, pl.root_len));
		if (!ret)
			ret = bw_pos_chain(pl.dev, pl.rel, pl.root_len, store_dir, &da);
		if (ret)
			return ret;
	}
	done->n++;
	if (pr->deny) {
		done->deny++;
		note_dev(done, pl.dev);
	}
	return 0;
}

int bw_positions_install(const struct bw_maps *m, const struct bw_compiled *c, uint32_t policy,
			 const struct bw_pin_view *v, struct bw_pos_done *done,
			 struct bw_pos_set *rec)
{
	struct deny_dirs d;
	__u64 *bits = NULL;
	size_t i;
	int ret;

	ret = deny_dirs_index(&d, c);
	if (ret)
		goto out;
	if (m) {
		bits = bw_bits_map(m->posbits);
		if (!bits) {
			ret = -errno;
			goto out;
		}
	}
	for (i = 0; i < c->npins && !ret; i++)
		if (needs_position(c, &d, i))
			ret = install_one(m, &c->pins[i], policy, v, bits, done, rec);
	if (bits)
		bw_bits_unmap(bits);
out:
	bw_index_free(&d.ix);
	return ret;
}

void bw_pos_set_free(struct bw_pos_set *s)
{
	free(s->links);
	free(s->pins);
	free(s->devs);
	memset(s, 0, sizeof(*s));
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

static int cmp_pos_key(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct bw_pos_key));
}

/* Append to a growing array; -ENOMEM leaves it as it was. */
static int push(void **v, size_t *n, size_t *cap, const void *item, size_t size)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		void *nv = realloc(*v, ncap * size);

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	memcpy((char *)*v + *n * size, item, size);
	(*n)++;
	return 0;
}

/* Directories whose position no link uses any more leave bw_pos_dirs. */
static void sweep_dirs(const struct bw_maps *m, __u64 *live, size_t nlive)
{
	struct bw_pos_dir_key dk, dnext, *gone = NULL;
	size_t ngone = 0, cgone = 0, i;
	int first = 1;
	__u64 pos;

	qsort(live, nlive, sizeof(*live), cmp_u64);
	while (!bpf_map_get_next_key(m->pos_dirs, first ? NULL : &dk, &dnext)) {
		first = 0;
		dk = dnext;
		if (bpf_map_lookup_elem(m->pos_dirs, &dk, &pos))
			continue;
		if (!nlive || !bsearch(&pos, live, nlive, sizeof(*live), cmp_u64))
			push((void **)&gone, &ngone, &cgone, &dk, sizeof(dk));
	}
	for (i = 0; i < ngone; i++)
		bpf_map_delete_elem(m->pos_dirs, &gone[i]);
	free(gone);
}

static int any_user(const struct bw_pos *v)
{
	size_t i;

	for (i = 0; i < BW_SLOT_WORDS; i++)
		if (v->users[i])
			return 1;
	return 0;
}

/*
 * Walk the links: those of policy lose its bits (all, or those in only),
 * and go when no slot uses them; then the directories of positions gone.
 */
static void take_back(const struct bw_maps *m, uint32_t policy, const struct bw_pos_key *only,
		      size_t nonly)
{
	struct bw_pos_key key, next, *dead = NULL;
	size_t ndead = 0, cdead = 0, nlive = 0, clive = 0, i;
	__u64 bit = 1ULL << (policy % 64), *live = NULL;
	size_t w = policy / 64;
	struct bw_pos v;
	int first = 1;

	/* Deleting while iterating would restart the walk: collect, then delete. */
	while (!bpf_map_get_next_key(m->positions, first ? NULL : &key, &next)) {
		first = 0;
		key = next;
		if (bpf_map_lookup_elem(m->positions, &key, &v))
			continue;
		if ((v.users[w] & bit) &&
		    (!only || bsearch(&key, only, nonly, sizeof(*only), cmp_pos_key))) {
			v.users[w] &= ~bit;
			v.pins[0][w] &= ~bit;
			v.pins[1][w] &= ~bit;
			if (!any_user(&v)) {
				push((void **)&dead, &ndead, &cdead, &key, sizeof(key));
				continue;
			}
			bpf_map_update_elem(m->positions, &key, &v, BPF_EXIST);
		}
		push((void **)&live, &nlive, &clive, &v.pos, sizeof(v.pos));
		push((void **)&live, &nlive, &clive, &key.dir, sizeof(key.dir));
	}
	for (i = 0; i < ndead; i++)
		bpf_map_delete_elem(m->positions, &dead[i]);
	sweep_dirs(m, live, nlive);
	free(dead);
	free(live);
}

void bw_positions_release(const struct bw_maps *m, uint32_t policy)
{
	take_back(m, policy, NULL, 0);
}

static int has_dev(const __u32 *devs, size_t n, __u32 dev)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (devs[i] == dev)
			return 1;
	return 0;
}

void bw_positions_drop(const struct bw_maps *m, uint32_t policy, const struct bw_pos_key *links,
		       size_t nlinks, const struct bw_pos_pin_key *pins, size_t npins,
		       const __u32 *devs, size_t ndevs)
{
	struct bw_inode_key key, next, *dead = NULL;
	struct bw_pos_key *sorted = NULL;
	size_t ndead = 0, cdead = 0, i;
	int first = 1;

	for (i = 0; i < npins; i++) {
		struct bw_pos_pin_key k = pins[i];

		k.policy = (__u16)policy;
		bpf_map_delete_elem(m->pos_pins, &k);
	}
	if (nlinks) {
		sorted = malloc(nlinks * sizeof(*sorted));
		if (sorted) {
			memcpy(sorted, links, nlinks * sizeof(*sorted));
			qsort(sorted, nlinks, sizeof(*sorted), cmp_pos_key);
			take_back(m, policy, sorted, nlinks);
			free(sorted);
		}
	}
	if (!ndevs)
		return;
	while (!bpf_map_get_next_key(m->inodes, first ? NULL : &key, &next)) {
		first = 0;
		key = next;
		if (key.policy == policy && has_dev(devs, ndevs, key.dev))
			push((void **)&dead, &ndead, &cdead, &key, sizeof(key));
	}
	for (i = 0; i < ndead; i++)
		bpf_map_delete_elem(m->inodes, &dead[i]);
	free(dead);
}
