// SPDX-License-Identifier: GPL-2.0-only
/*
 * Inode pins, as user/compile.c planned them, resolved with stat(2) in the
 * installing agent's view of paths, written to bw_inodes and bw_pinbits.
 * pins.h says what each step is for.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <bpf/bpf.h>

#include "mounts.h"
#include "path.h"
#include "pins.h"
#include "bits.h"
#include "util.h"

static void merge_rule(struct bw_path_rule *into, const struct bw_path_rule *from)
{
	if (from->verdict_r == BW_V_DENY ||
	    (into->verdict_r == BW_V_NONE && from->verdict_r != BW_V_NONE)) {
		into->verdict_r = from->verdict_r;
		into->rule_r = from->rule_r;
	}
	if (from->verdict_w == BW_V_DENY ||
	    (into->verdict_w == BW_V_NONE && from->verdict_w != BW_V_NONE)) {
		into->verdict_w = from->verdict_w;
		into->rule_w = from->rule_w;
	}
}

void bw_pin_merge(struct bw_inode_pin *into, const struct bw_inode_pin *from)
{
	int into_mount = into->self.flags & BW_PIN_MOUNT;
	int from_mount = from->self.flags & BW_PIN_MOUNT;

	if (into_mount && !from_mount) {
		*into = *from;
		return;
	}
	if (!into_mount && from_mount)
		return;
	if (into->self.verdict_r == BW_V_DENY && from->self.verdict_r == BW_V_DENY &&
	    into->self.rule_r > from->self.rule_r)
		into->self.rule_r = from->self.rule_r;
	merge_rule(&into->self, &from->self);
	merge_rule(&into->below, &from->below);
}

struct key_ctx {
	const struct bw_pin_set *ps;
	const struct bw_inode_key *k;
};

static int same_key(size_t item, const void *ctx)
{
	const struct key_ctx *kc = ctx;

	return !memcmp(&kc->ps->keys[item], kc->k, sizeof(*kc->k));
}

static uint64_t key_hash(size_t item, const void *ctx)
{
	const struct key_ctx *kc = ctx;

	return bw_hash(&kc->ps->keys[item], sizeof(kc->ps->keys[item]));
}

static int pin_add(struct bw_pin_set *ps, const struct stat *st, uint32_t policy, int cat,
		   const struct bw_inode_pin *pin)
{
	struct bw_inode_key k = {};
	struct key_ctx kc = {ps, &k};
	size_t *slot;
	int ret;

	k.ino = st->st_ino;
	k.dev = bw_kdev(st->st_dev);
	k.policy = (__u16)policy;
	k.cat = (__u16)cat;
	ret = bw_index_reserve(&ps->index, key_hash, &kc);
	if (ret)
		return ret;
	slot = bw_index_slot(&ps->index, bw_hash(&k, sizeof(k)), same_key, &kc);
	if (*slot) {
		bw_pin_merge(&ps->pins[*slot - 1], pin);
		return 0;
	}
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 64;
		struct bw_inode_key *nk = realloc(ps->keys, cap * sizeof(*nk));
		struct bw_inode_pin *np;

		if (!nk)
			return -ENOMEM;
		ps->keys = nk;
		np = realloc(ps->pins, cap * sizeof(*np));
		if (!np)
			return -ENOMEM;
		ps->pins = np;
		ps->cap = cap;
	}
	ps->keys[ps->n] = k;
	ps->pins[ps->n++] = *pin;
	*slot = ps->n;
	ps->index.n++;
	return 0;
}

/*
 * A file inside a denied subtree that has another name elsewhere (a hard link
 * made before the sandbox started) is pinned by its own inode. New links from
 * inside a sandbox are refused by path_link. nftw(3) passes no argument to
 * its callback, hence the one walk's state here. BW_SCAN_MAX entries are
 * shared by all the profile's directories (scan_dirs).
 */
static struct link_scan {
	struct bw_pin_set *ps;
	const struct bw_compiled *c;
	uint32_t policy;
	size_t budget;
	size_t base_len; /* the view's prefix before a profile path */
	int cut;	 /* an entry was left unseen: the budget ran out */
	int ret;
} * scan;

static int scan_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct bw_inode_pin pin;

	if (ftw->level == 0)
		return 0; /* the denied directory itself is pinned by its rule */
	if (!scan->budget) {
		scan->cut = 1;
		return 1;
	}
	scan->budget--;
	if (type != FTW_F || st->st_nlink < 2)
		return 0;
	pin = bw_pin_values(scan->c->files, scan->c->nfiles, path + scan->base_len, 0);
	scan->ret = pin_add(scan->ps, st, scan->policy, BW_CAT_PIN_FILE, &pin);
	return scan->ret ? 1 : 0;
}

static int scan_links(struct link_scan *s, const char *dir, size_t budget)
{
	s->budget = budget;
	s->cut = 0;
	/* FTW_PHYS: a symlink is not followed, and not the object it names. */
	scan = s;
	nftw(dir, scan_entry, 16, FTW_PHYS);
	scan = NULL;
	return s->ret;
}

/*
 * The directories in dirs (n paths) scanned with BW_SCAN_MAX entries in
 * all. Each gets an equal share first, so that a big tree early in the
 * profile (all of /usr) does not use up what a small one after it (a cron
 * directory) needs; what the small ones leave goes to those cut short,
 * each scanned again with its share and an equal part of the rest. 1 in
 * *cut if one was still cut short.
 */
static int scan_dirs(struct link_scan *s, char **dirs, size_t n, int *cut)
{
	size_t i, share, left = BW_SCAN_MAX, ncut = 0, more;
	int *short_of;
	int ret = 0;

	*cut = 0;
	if (!n)
		return 0;
	short_of = calloc(n, sizeof(*short_of));
	if (!short_of)
		return -ENOMEM;
	share = BW_SCAN_MAX / n ? BW_SCAN_MAX / n : 1;
	for (i = 0; i < n && !ret; i++) {
		ret = scan_links(s, dirs[i], share);
		left -= share - s->budget < left ? share - s->budget : left;
		short_of[i] = s->cut;
		ncut += s->cut;
	}
	more = ncut ? left / ncut : 0;
	for (i = 0; i < n && !ret; i++) {
		if (!short_of[i])
			continue;
		if (more) {
			ret = scan_links(s, dirs[i], share + more);
			short_of[i] = s->cut;
		}
		*cut |= short_of[i];
	}
	free(short_of);
	return ret;
}

struct mount_pins {
	struct bw_pin_set *ps;
	const struct bw_compiled *c;
	uint32_t policy;
	const struct bw_pin_view *view;
};

/* A view's object at profile path p: its path in our own view, in buf. */
static const char *in_view(const struct bw_pin_view *v, const char *p, char *buf, size_t len)
{
	if (!v || !v->base || !v->base[0])
		return p;
	if ((size_t)snprintf(buf, len, "%s%s", v->base, p) >= len)
		return NULL;
	return buf;
}

static int mount_pin(const struct bw_mount *m, void *arg)
{
	struct mount_pins *mp = arg;
	const struct bw_pin_view *v = mp->view;
	const char *target = m->target, *path;
	char buf[2 * PATH_MAX];
	struct bw_inode_pin pin;
	struct stat st;

	/* The view's mount table names its mounts as prefix + the path the view sees. */
	if (v && v->mount_prefix && v->mount_prefix[0]) {
		size_t n = strlen(v->mount_prefix);

		if (strncmp(target, v->mount_prefix, n) || (target[n] && target[n] != '/'))
			return 0;
		target = target[n] ? target + n : "/";
	}
	path = in_view(v, target, buf, sizeof(buf));
	if (!path || stat(path, &st))
		return 0;
	pin = bw_pin_values(mp->c->files, mp->c->nfiles, target, 1);
	/*
	 * No rule at or above the mount root: the climb past it finds what it
	 * would find without the pin, and the default decides at the end alike.
	 * Skipping it keeps a sandbox to a pin per rule, not one per mount.
	 */
	if (!pin.self.verdict_r && !pin.self.verdict_w && !pin.below.verdict_r &&
	    !pin.below.verdict_w)
		return 0;
	pin.self.flags |= BW_PIN_MOUNT;
	pin.below.flags |= BW_PIN_MOUNT;
	return pin_add(mp->ps, &st, mp->policy, BW_CAT_PIN_FILE, &pin);
}

/* Mount roots, for attribute changes that reach no path hook (BW_PIN_MOUNT). */
static int add_mount_pins(struct bw_pin_set *ps, const struct bw_compiled *c, uint32_t policy,
			  const struct bw_pin_view *v)
{
	struct mount_pins mp = {ps, c, policy, v};

	if (v && v->mountinfo)
		return bw_mounts_each_in(v->mountinfo, mount_pin, &mp);
	return bw_mounts_each(mount_pin, &mp);
}

/*
 * A unix deny rule of one path (not an abstract name, not a subtree), the
 * kind whose socket file and place are known by identity. Read twice at
 * install: places before the stat(2)s of pins (user/slot.c), so
 * that a socket made in between is met by one or the other.
 */
static bool unix_path_denial(const struct bw_unix_entry *e)
{
	return e->val.verdict == BW_V_DENY && e->key.name[0] == '/' &&
	       !bw_unix_name_is_subtree(e->key.name);
}

/*
 * The socket file of each `deny net connect unix PATH` rule there now, in
 * view v: pinned, so that a rename of it or of a directory above does not
 * take it out of the rule (BW_CAT_PIN_UNIX). One made there later is pinned
 * by the kernel, at its place (unix_places_write).
 */
static int add_unix_pins(struct bw_pin_set *ps, const struct bw_compiled *c, uint32_t policy,
			 const struct bw_pin_view *v)
{
	char buf[2 * PATH_MAX];
	size_t i;
	int ret = 0;

	for (i = 0; i < c->nunixes && !ret; i++) {
		const struct bw_unix_entry *e = &c->unixes[i];
		struct bw_inode_pin pin = {};
		const char *path;
		struct stat st;

		if (e->key.op != BW_NOP_CONNECT || !unix_path_denial(e))
			continue;
		path = in_view(v, e->key.name, buf, sizeof(buf));
		if (!path || stat(path, &st) || !S_ISSOCK(st.st_mode))
			continue;
		pin.self.verdict_r = BW_V_DENY;
		pin.self.rule_r = e->val.rule;
		ret = pin_add(ps, &st, policy, BW_CAT_PIN_UNIX, &pin);
	}
	return ret;
}

/*
 * The place of each unix path deny rule in view v: its directory by device
 * and inode, and its last name (struct bw_unix_place_key). A directory that
 * does not exist yet has no place: its rule decides by name alone.
 */
int bw_unix_places_write(const struct bw_maps *m, const struct bw_compiled *c, uint32_t policy,
			 const struct bw_pin_view *v)
{
	char dir[BW_UNIX_NAME + 1], buf[2 * PATH_MAX];
	size_t i;

	for (i = 0; i < c->nunixes; i++) {
		const struct bw_unix_entry *e = &c->unixes[i];
		struct bw_unix_place_key k = {};
		const char *slash, *path;
		struct stat st;

		if (!unix_path_denial(e))
			continue;
		memcpy(dir, e->key.name, BW_UNIX_NAME);
		dir[BW_UNIX_NAME] = '\0';
		slash = strrchr(dir, '/');
		if (!slash[1])
			continue;
		memcpy(k.name, slash + 1, strlen(slash + 1));
		dir[slash == dir ? 1 : slash - dir] = '\0';
		path = in_view(v, dir, buf, sizeof(buf));
		if (!path || stat(path, &st) || !S_ISDIR(st.st_mode))
			continue;
		k.ino = st.st_ino;
		k.dev = bw_kdev(st.st_dev);
		k.policy = (__u16)policy;
		k.op = e->key.op;
		if (bpf_map_update_elem(m->unix_places, &k, &e->val, BPF_ANY)) {
			int ret = -errno;

			bw_err("cannot record the place of unix socket rule %s: %s (at most %d for "
			       "all loaded profiles)",
			       e->key.name, strerror(-ret), BW_MAX_UNIX_KEYS);
			return ret;
		}
	}
	return 0;
}

int bw_pins_resolve_view(const struct bw_compiled *c, uint32_t policy, const struct bw_pin_view *v,
			 struct bw_pin_set *ps)
{
	struct link_scan s = {.ps = ps, .c = c, .policy = policy};
	char buf[2 * PATH_MAX], **dirs;
	size_t i, ndirs = 0;
	int ret = 0, cut = 0;

	dirs = calloc(c->npins ? c->npins : 1, sizeof(*dirs));
	if (!dirs)
		return -ENOMEM;
	s.base_len = v && v->base ? strlen(v->base) : 0;
	for (i = 0; i < c->npins && !ret; i++) {
		const struct bw_pin_req *pr = &c->pins[i];
		const char *path = in_view(v, pr->path, buf, sizeof(buf));
		struct stat st;

		/* A path that does not exist yet is still decided by its path rule. */
		if (!path || stat(path, &st))
			continue;
		ret = pin_add(ps, &st, policy, pr->cat, &pr->pin);
		if (pr->deny)
			ps->deny++;
		if (!ret && pr->cat == BW_CAT_PIN_FILE && pr->subtree && S_ISDIR(st.st_mode)) {
			dirs[ndirs] = strdup(path);
			ret = dirs[ndirs++] ? 0 : -ENOMEM;
		}
	}
	if (!ret)
		ret = scan_dirs(&s, dirs, ndirs, &cut);
	for (i = 0; i < ndirs; i++)
		free(dirs[i]);
	free(dirs);
	ps->scan_incomplete |= cut;
	if (!ret && c->nfiles)
		ret = add_mount_pins(ps, c, policy, v);
	if (!ret)
		ret = add_unix_pins(ps, c, policy, v);
	return ret;
}

int bw_pins_resolve(const struct bw_compiled *c, uint32_t policy, struct bw_pin_set *ps)
{
	memset(ps, 0, sizeof(*ps));
	return bw_pins_resolve_view(c, policy, NULL, ps);
}

void bw_pin_set_free(struct bw_pin_set *ps)
{
	free(ps->keys);
	free(ps->pins);
	bw_index_free(&ps->index);
	memset(ps, 0, sizeof(*ps));
}

static int pin_can_deny(const struct bw_inode_pin *pn)
{
	return pn->self.verdict_r == BW_V_DENY || pn->self.verdict_w == BW_V_DENY ||
	       pn->below.verdict_r == BW_V_DENY || pn->below.verdict_w == BW_V_DENY;
}

/*
 * A deny rule whose path does not exist yet has no
 * pin to climb to. The kernel skips the climb on a file system holding no pin
 * that can deny: an allow pin only matters when it shadows a deny pin above it
 * on the same file system, and mount pins serve attribute changes only, which
 * always climb.
 */
static void add_pin_dev(struct bw_policy *pol, __u32 dev)
{
	size_t j;

	if (pol->npin_devs == BW_PIN_DEVS_MANY)
		return;
	for (j = 0; j < pol->npin_devs; j++)
		if (pol->pin_devs[j] == dev)
			return;
	if (pol->npin_devs == sizeof(pol->pin_devs) / sizeof(pol->pin_devs[0])) {
		pol->npin_devs = BW_PIN_DEVS_MANY;
		return;
	}
	pol->pin_devs[pol->npin_devs++] = dev;
}

/*
 * A deny rule whose object does not exist yet has a position (user/
 * positions.c): its file system counts, since the kernel pins the object
 * there the moment it appears.
 */
void bw_pins_policy(const struct bw_compiled *c, const struct bw_pin_set *ps, struct bw_policy *pol)
{
	size_t i;
	int deny = ps->deny || ps->pos_deny;

	pol->has_pins = c->policy.has_pins && deny;
	pol->has_exec_pins = c->policy.has_exec_pins && deny;
	pol->npin_devs = 0;
	memset(pol->pin_devs, 0, sizeof(pol->pin_devs));
	/* A socket file's pin is looked up at connect, never climbed to. */
	for (i = 0; i < ps->n; i++)
		if (!(ps->pins[i].self.flags & BW_PIN_MOUNT) && pin_can_deny(&ps->pins[i]) &&
		    ps->keys[i].cat != BW_CAT_PIN_UNIX)
			add_pin_dev(pol, ps->keys[i].dev);
	if (ps->npos_devs > ps->npos_devs_max)
		pol->npin_devs = BW_PIN_DEVS_MANY;
	for (i = 0; i < ps->npos_devs && i < ps->npos_devs_max; i++)
		add_pin_dev(pol, ps->pos_devs[i]);
}

int bw_pins_write(const struct bw_maps *m, const struct bw_pin_set *ps)
{
	__u64 *bits = bw_bits_map(m->pinbits);
	size_t i;
	int ret = 0;

	if (!bits) {
		ret = -errno;
		bw_err("cannot map the pin bitmap: %s", strerror(-ret));
		return ret;
	}
	for (i = 0; i < ps->n; i++) {
		/* The bit first: a pin the kernel's bitmap test skips would not count. */
		bw_bits_set(bits, ps->keys[i].ino);
		if (bpf_map_update_elem(m->inodes, &ps->keys[i], &ps->pins[i], BPF_ANY)) {
			ret = -errno;
			bw_err(
			    "cannot pin inode %llu: %s (at most %d pins for all loaded profiles)",
			    (unsigned long long)ps->keys[i].ino, strerror(-ret), BW_MAX_INODE_PINS);
			break;
		}
	}
	bw_bits_unmap(bits);
	return ret;
}

void bw_pins_drop(const struct bw_maps *m, const struct bw_inode_key *keys, size_t n)
{
	size_t i;

	/* The bitmap bits stay: they only say "may be pinned", and others may share them. */
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(m->inodes, &keys[i]);
}
