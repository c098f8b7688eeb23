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

#include <bpf/bpf.h>

#include "mounts.h"
#include "pins.h"
#include "positions.h"
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

/* The mount holding a path: the longest target that is a prefix of it (the last of equals). */
struct holder {
	const char *path;
	size_t best;
	struct bw_pos_place *pl;
	char root[PATH_MAX];
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
	size_t n = strlen(m->target);

	if (!is_under(h->path, m->target, n) || (h->found && n < h->best))
		return 0;
	h->best = n;
	h->found = 1;
	h->pl->dev = bw_dev_encode(major(m->dev), minor(m->dev));
	snprintf(h->pl->target, sizeof(h->pl->target), "%s", m->target);
	snprintf(h->root, sizeof(h->root), "%s", strcmp(m->root, "/") ? m->root : "");
	return 0;
}

int bw_pos_place(const char *path, struct bw_pos_place *pl)
{
	char probe[PATH_MAX], real[PATH_MAX], rest[PATH_MAX] = "";
	struct holder h = {.pl = pl};
	const char *below;
	char *slash;
	int n, ret;

	if (path[0] != '/' || strlen(path) >= sizeof(probe))
		return -EINVAL;
	/* The deepest part that exists, symlinks resolved; the rest as written. */
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
	h.path = real;
	ret = bw_mounts_each(holder_of, &h);
	if (ret < 0)
		return ret;
	if (!h.found)
		return -ENOENT;
	/* rel: the mount's root in its file system, the path below the target, the rest. */
	below = strcmp(pl->target, "/") ? real + strlen(pl->target) : strcmp(real, "/") ? real : "";
	n = snprintf(pl->rel, sizeof(pl->rel), "%s%s%s", h.root, below, rest);
	if (n < 0 || (size_t)n >= sizeof(pl->rel))
		return -ENAMETOOLONG;
	pl->root_len = strlen(h.root);
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
	const struct bw_maps *m;
	uint32_t policy;
	int cat;
};

/* Add this policy to one link's entry, shared with other policies naming the same place. */
static int store_edge(const struct bw_pos_edge *e, void *arg)
{
	struct chain_arg *a = arg;
	struct bw_pos_key k = {};
	struct bw_pos v = {};
	__u64 bit = 1ULL << a->policy;

	k.dir = e->dir;
	memcpy(k.name, e->name, e->namelen);
	if (bpf_map_lookup_elem(a->m->positions, &k, &v))
		memset(&v, 0, sizeof(v));
	v.pos = e->pos;
	v.users |= bit;
	if (e->last)
		v.pins[a->cat] |= bit;
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
	char path[PATH_MAX];
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

/* One pin's place: its pin values, the chain's links, then its directories that exist. */
static int install_one(const struct bw_maps *m, const struct bw_pin_req *pr, uint32_t policy,
		       __u64 *bits, struct bw_pos_done *done)
{
	struct chain_arg ca = {m, policy, pr->cat};
	struct bw_pos_pin_key pk = {};
	struct bw_pos_pin pp = {};
	struct bw_pos_place pl;
	struct dirs_arg da = {m, &pl, bits};
	char root[PATH_MAX];
	struct stat st;
	int ret;

	ret = bw_pos_place(pr->path, &pl);
	if (ret)
		return ret == -ENOENT ? 0 : ret;
	if (strlen(pl.rel) == pl.root_len)
		return 0; /* a mount's root: replaced only by mounting, not followed */
	pk.pos = bw_pos_id(pl.dev, pl.rel, strlen(pl.rel));
	pk.policy = (__u16)policy;
	pk.cat = (__u16)pr->cat;
	pp.pin = pr->pin;
	if (!stat(pr->path, &st))
		pp.ino = st.st_ino;
	/* Values first: the kernel reads them once a link says this policy pins here. */
	if (bpf_map_update_elem(m->pos_pins, &pk, &pp, BPF_ANY)) {
		ret = -errno;
		bw_err("cannot store the position of %s: %s (at most %d)", pr->path, strerror(-ret),
		       BW_MAX_POSITIONS);
		return ret;
	}
	ret = bw_pos_chain(pl.dev, pl.rel, pl.root_len, store_edge, &ca);
	if (ret == -ENAMETOOLONG)
		return 0;
	if (ret)
		return ret;
	/* Top down, each after its parent: a directory made meanwhile is seen either way. */
	snprintf(root, sizeof(root), "%s", pl.target);
	ret = note_dir(m, bits, pl.dev, root, bw_pos_id(pl.dev, pl.rel, pl.root_len));
	if (!ret)
		ret = bw_pos_chain(pl.dev, pl.rel, pl.root_len, store_dir, &da);
	if (ret)
		return ret;
	done->n++;
	if (pr->deny) {
		done->deny++;
		note_dev(done, pl.dev);
	}
	return 0;
}

int bw_positions_install(const struct bw_maps *m, const struct bw_compiled *c, uint32_t policy,
			 struct bw_pos_done *done)
{
	struct deny_dirs d;
	__u64 *bits;
	size_t i;
	int ret;

	memset(done, 0, sizeof(*done));
	ret = deny_dirs_index(&d, c);
	if (ret)
		goto out;
	bits = bw_bits_map(m->posbits);
	if (!bits) {
		ret = -errno;
		goto out;
	}
	for (i = 0; i < c->npins && !ret; i++)
		if (needs_position(c, &d, i))
			ret = install_one(m, &c->pins[i], policy, bits, done);
	bw_bits_unmap(bits);
out:
	bw_index_free(&d.ix);
	return ret;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
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

void bw_positions_release(const struct bw_maps *m, uint32_t policy)
{
	struct bw_pos_key key, next, *dead = NULL;
	struct bw_pos_dir_key dk, dnext, *gone = NULL;
	size_t ndead = 0, cdead = 0, nlive = 0, clive = 0, ngone = 0, cgone = 0, i;
	__u64 bit = 1ULL << policy, *live = NULL, pos;
	struct bw_pos v;
	int first = 1;

	/* Deleting while iterating would restart the walk: collect, then delete. */
	while (!bpf_map_get_next_key(m->positions, first ? NULL : &key, &next)) {
		first = 0;
		key = next;
		if (bpf_map_lookup_elem(m->positions, &key, &v))
			continue;
		if (v.users & bit) {
			v.users &= ~bit;
			v.pins[0] &= ~bit;
			v.pins[1] &= ~bit;
			if (!v.users) {
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
	/* Directories whose position no link uses any more. */
	qsort(live, nlive, sizeof(*live), cmp_u64);
	first = 1;
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
	free(dead);
	free(live);
	free(gone);
}
