// SPDX-License-Identifier: GPL-2.0-only
/*
 * File rules become LPM trie keys: an exact rule "/a/b" is the key "/a/b\0",
 * a subtree rule on /a the keys "/a/" (everything below) and "/a\0" (the
 * directory itself). The kernel's longest-prefix lookup then returns the
 * most specific key. So that one lookup decides every access, each key's
 * accesses that its own rules leave open are filled here from the nearest
 * ancestor key; at equal specificity a deny wins. Exec rules become keys of
 * their own trie the same way, running in the `r` slot and mapping
 * executable in the `w` slot (bw_rule_slots), so that `allow exec lib` and
 * `allow exec` are each decided by their most specific rule.
 *
 * A name prefix rule DIR/NAME* is the key "DIR/NAME" with no terminator:
 * it is longer than DIR/ and shorter than every name it matches, so the
 * lookup finds it for those names, and its value says where NAME starts
 * (name_at). It decides only names in DIR: for a path that goes on below
 * one (DIR/NAMEx/y) the kernel looks up again at DIR/ (bpf/decide.bpf.h), and
 * bw_entries_lookup below does the same (build_keys adds the key DIR/, so
 * that this second lookup never stops at a name prefix of a directory
 * above). Its ancestors, and those of an exact key in DIR, are the shorter
 * prefixes in the same last name, then the directories above.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "path.h"
#include "util.h"

static int key_cmp(const void *a, const void *b)
{
	const struct bw_file_entry *x = a, *y = b;
	unsigned n = x->keylen < y->keylen ? x->keylen : y->keylen;
	int r = memcmp(x->key, y->key, n);

	if (r)
		return r;
	return (int)x->keylen - (int)y->keylen;
}

static struct bw_file_entry *find_key(struct bw_file_entry *v, size_t n, const char *key,
				      unsigned keylen)
{
	struct bw_file_entry probe;

	memcpy(probe.key, key, keylen);
	probe.keylen = keylen;
	return bsearch(&probe, v, n, sizeof(*v), key_cmp);
}

/*
 * Merge one rule into a key's value for the accesses it names: deny wins
 * ties, and among equal verdicts the earliest rule is the one reported.
 */
static void merge_one(__u8 *verdict, __u16 *rule, __u8 v, __u16 id)
{
	if (*verdict == BW_V_NONE || (v == BW_V_DENY && *verdict != BW_V_DENY) ||
	    (v == *verdict && id < *rule)) {
		*verdict = v;
		*rule = id;
	}
}

static void merge(struct bw_path_rule *val, unsigned access, enum bw_verdict verdict, __u16 id)
{
	__u8 v = verdict;

	if (access & BW_ACC_R)
		merge_one(&val->verdict_r, &val->rule_r, v, id);
	if (access & BW_ACC_W)
		merge_one(&val->verdict_w, &val->rule_w, v, id);
}

/* A name prefix key: neither '\0' (a path) nor '/' (a subtree) ends it. */
static bool is_prefix_key(const char *key, unsigned keylen)
{
	return keylen && key[keylen - 1] != '\0' && key[keylen - 1] != '/';
}

#define TERM_NONE (-1) /* add_key: a name prefix, no terminator */

/* Append a key for one rule; equal keys are merged after sorting. */
static int add_key(struct bw_file_entry **v, size_t *n, size_t *cap, const char *path, int term,
		   unsigned access, enum bw_verdict verdict, __u16 id)
{
	size_t len = strlen(path);
	struct bw_file_entry *e;

	/* "/" with a '/' terminator would be "//": the root subtree is just "/". */
	if (len == 1 && term == '/')
		len = 0;
	if (len + 1 > BW_KEY_PATH_MAX)
		return -ENAMETOOLONG;
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct bw_file_entry *nv = realloc(*v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	e = &(*v)[(*n)++];
	memset(e, 0, sizeof(*e));
	memcpy(e->key, path, len);
	if (term == TERM_NONE) {
		e->keylen = len;
		e->val.name_at = (__u8)(strrchr(path, '/') - path + 1);
	} else {
		e->key[len] = (char)term;
		e->keylen = len + 1;
	}
	if (bw_path_is_proc_self(path))
		e->val.flags |= BW_PATH_SELF;
	merge(&e->val, access, verdict, id);
	return 0;
}

/* Sorted keys: fold runs of equal keys into one, deny winning ties. */
static size_t fold_equal(struct bw_file_entry *v, size_t n)
{
	size_t i, out = 0;

	for (i = 0; i < n; i++) {
		if (out && !key_cmp(&v[out - 1], &v[i])) {
			struct bw_path_rule *into = &v[out - 1].val, *from = &v[i].val;

			if (from->verdict_r)
				merge(into, BW_ACC_R, from->verdict_r, from->rule_r);
			if (from->verdict_w)
				merge(into, BW_ACC_W, from->verdict_w, from->rule_w);
			continue;
		}
		if (out != i)
			v[out] = v[i];
		out++;
	}
	return out;
}

/*
 * Nearest proper ancestor key of e below length from: its longest prefix
 * that ends in '/', or, for a path or name prefix key, a shorter name prefix
 * key of the same last name.
 */
static const struct bw_file_entry *ancestor(struct bw_file_entry *v, size_t n,
					    const struct bw_file_entry *e, unsigned from)
{
	/* Where e's last name starts: shorter keys ending inside it are name prefixes. */
	const char *slash = memrchr(e->key, '/', e->keylen - 1);
	unsigned name_at =
	    e->key[e->keylen - 1] == '/' ? e->keylen : (unsigned)(slash - e->key) + 1;
	unsigned j;

	for (j = from; j-- > 0;) {
		struct bw_file_entry *a;

		if (e->key[j] != '/' && j < name_at)
			continue;
		a = find_key(v, n, e->key, j + 1);
		if (a)
			return a;
	}
	return NULL;
}

static void inherit(struct bw_file_entry *v, size_t n, struct bw_file_entry *e)
{
	unsigned from = e->keylen - 1;
	const struct bw_file_entry *a;

	while ((e->val.verdict_r == BW_V_NONE || e->val.verdict_w == BW_V_NONE) &&
	       (a = ancestor(v, n, e, from))) {
		if (e->val.verdict_r == BW_V_NONE && a->val.verdict_r != BW_V_NONE) {
			e->val.verdict_r = a->val.verdict_r;
			e->val.rule_r = a->val.rule_r;
		}
		if (e->val.verdict_w == BW_V_NONE && a->val.verdict_w != BW_V_NONE) {
			e->val.verdict_w = a->val.verdict_w;
			e->val.rule_w = a->val.rule_w;
		}
		from = a->keylen - 1;
	}
}

const struct bw_file_entry *bw_entries_lookup(const struct bw_file_entry *v, size_t n,
					      const char *path)
{
	const struct bw_file_entry *best = NULL;
	size_t len = strlen(path), i;

	/* Linear on purpose: this is the reference the kernel trie is tested against. */
	for (i = 0; i < n; i++) {
		const struct bw_file_entry *e = &v[i];
		size_t kl = e->keylen;
		int match;

		if (e->key[kl - 1] == '\0')
			match = kl - 1 == len && !memcmp(e->key, path, len);
		else
			match = kl <= len && !memcmp(e->key, path, kl);
		/* A name prefix matches names in its directory, not below them. */
		if (match && is_prefix_key(e->key, kl))
			match = !memchr(path + kl, '/', len - kl);
		if (match && (!best || kl > best->keylen))
			best = e;
	}
	return best;
}

/*
 * The same answer in O(depth * log n), for the agent's own lookups (pins,
 * learn), which made starting a large profile quadratic: v is sorted (as
 * bw_compile leaves it), and its keys are whole paths ("P\0") or subtrees
 * ("P/"), so the candidates are the path itself and its prefixes that end
 * at a '/', longest first.
 */
const struct bw_file_entry *bw_entries_find(const struct bw_file_entry *v, size_t n,
					    const char *path)
{
	struct bw_file_entry *all = (struct bw_file_entry *)v;
	const struct bw_file_entry *e;
	size_t len = strlen(path), k;

	if (!n)
		return NULL;
	if (len + 1 <= BW_KEY_PATH_MAX) {
		e = find_key(all, n, path, len + 1);
		if (e)
			return e;
	}
	/* Name prefixes of the last name, longest first; then the directories. */
	for (k = len; k-- > 0 && path[k] != '/';) {
		if (k + 1 > BW_KEY_PATH_MAX)
			continue;
		e = find_key(all, n, path, k + 1);
		if (e)
			return e;
	}
	for (k = len; k-- > 0;) {
		if (path[k] != '/' || k + 1 > BW_KEY_PATH_MAX)
			continue;
		e = find_key(all, n, path, k + 1);
		if (e)
			return e;
	}
	return NULL;
}

void bw_file_entry_key(const struct bw_file_entry *e, uint32_t policy, struct bw_path_key *k)
{
	memset(k, 0, sizeof(*k));
	k->policy = policy;
	/* A name prefix has no terminator: its bits end with its last byte. */
	k->prefixlen = e->val.name_at ? BW_PATH_KEY_HEAD_BITS + e->keylen * 8
				      : bw_path_key_bits(e->keylen - 1);
	memcpy(k->path, e->key, e->keylen);
}

const struct bw_file_entry *bw_compiled_lookup(const struct bw_compiled *c, const char *path)
{
	return bw_entries_lookup(c->files, c->nfiles, path);
}

/* The trie keys of one category (file or exec), folded and filled. */
static int build_keys(const struct bw_profile *p, enum bw_cat cat, struct bw_file_entry **v,
		      size_t *n, char *err, size_t errlen)
{
	size_t cap = 0, i, nrules;
	int ret = 0;

	for (i = 0; i < p->nrules; i++) {
		const struct bw_rule *r = &p->rules[i];
		unsigned access = bw_rule_slots(r);
		__u16 id = (__u16)(i + 1);

		if (r->cat != cat || !r->file.path)
			continue;
		if (r->file.name_prefix) {
			ret = add_key(v, n, &cap, r->file.path, TERM_NONE, access, r->verdict, id);
		} else if (r->file.subtree) {
			ret = add_key(v, n, &cap, r->file.path, '/', access, r->verdict, id);
			if (!ret && strcmp(r->file.path, "/"))
				ret =
				    add_key(v, n, &cap, r->file.path, '\0', access, r->verdict, id);
		} else {
			ret = add_key(v, n, &cap, r->file.path, '\0', access, r->verdict, id);
		}
		if (ret) {
			snprintf(err, errlen, "%s:%d:%d: error: cannot compile rule: %s",
				 r->origin.file, r->origin.line, r->origin.col, strerror(-ret));
			return ret;
		}
	}
	/*
	 * The directory of every name prefix gets a key of its own (DIR/, no
	 * rule of its own: it takes its ancestors' values like any key), which
	 * changes no answer, since every path below DIR/ that no longer key
	 * matches would have found those same ancestors. The kernel looks a path
	 * below a matched name up again at DIR/ and so finds that key, never a
	 * name prefix of a directory above.
	 */
	for (i = 0, nrules = *n; i < nrules && !ret; i++) {
		char dir[BW_KEY_PATH_MAX + 1];
		unsigned at = (*v)[i].val.name_at;

		if (!at)
			continue;
		memcpy(dir, (*v)[i].key, at - 1);
		dir[at - 1] = '\0';
		ret = add_key(v, n, &cap, at > 1 ? dir : "/", '/', 0, BW_V_NONE, 0);
	}
	if (ret) {
		snprintf(err, errlen, "%s: error: cannot compile rules: %s",
			 p->path ? p->path : "(profile)", strerror(-ret));
		return ret;
	}
	if (*n) {
		/* merge() is order-independent, so qsort's instability does not matter. */
		qsort(*v, *n, sizeof(**v), key_cmp);
		*n = fold_equal(*v, *n);
	}
	for (i = 0; i < *n; i++)
		inherit(*v, *n, &(*v)[i]);
	return 0;
}

/* Does the prefix (a, plen) contain the address b? */
static int prefix_has(const uint8_t *a, int plen, const uint8_t *b)
{
	int full = plen / 8, rest = plen % 8;

	if (memcmp(a, b, full))
		return 0;
	return !rest || ((a[full] ^ b[full]) & (0xff << (8 - rest))) == 0;
}

static int range_cmp(const void *x, const void *y)
{
	const struct bw_port_range *a = x, *b = y;
	unsigned wa = a->hi - a->lo, wb = b->hi - b->lo;

	if (wa != wb)
		return wa < wb ? -1 : 1;
	if (a->verdict != b->verdict)
		return a->verdict == BW_V_DENY ? -1 : 1;
	return (int)a->rule - (int)b->rule;
}

static int net_add(struct bw_compiled *c, size_t *cap, int op, int proto, const uint8_t *addr,
		   int plen, const struct bw_rule *r, __u16 id)
{
	struct bw_net_entry *e = NULL;
	struct bw_port_range *pr;
	size_t i;

	for (i = 0; i < c->nnets; i++) {
		struct bw_net_entry *x = &c->nets[i];

		if (x->key.op == op && x->key.proto == proto &&
		    x->key.prefixlen == (unsigned)plen && !memcmp(x->key.addr, addr, 16)) {
			e = x;
			break;
		}
	}
	if (!e) {
		if (c->nnets == *cap) {
			size_t ncap = *cap ? *cap * 2 : 16;
			struct bw_net_entry *nv = realloc(c->nets, ncap * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			c->nets = nv;
			*cap = ncap;
		}
		e = &c->nets[c->nnets++];
		memset(e, 0, sizeof(*e));
		e->key.op = op;
		e->key.proto = proto;
		e->key.prefixlen = plen; /* address bits only until stored */
		memcpy(e->key.addr, addr, 16);
	}
	if (e->own.n == BW_NET_RANGES)
		return -E2BIG;
	pr = &e->own.r[e->own.n++];
	pr->lo = r->net.port_lo;
	pr->hi = r->net.port_hi;
	pr->rule = id;
	pr->verdict = r->verdict;
	return 0;
}

bool bw_unix_name_is_subtree(const char *name)
{
	size_t n = strlen(name);

	return name[0] == '/' && n >= 3 && !strcmp(name + n - 3, "/**");
}

/*
 * unix rules are names: "@name", a path, or a subtree rule for the sockets
 * below a directory, kept as written ("DIR/" and two stars: the kernel
 * looks that key up for each directory above a name no exact rule decides,
 * the nearest first). Deny wins, the earliest rule is reported.
 */
static int unix_add(struct bw_compiled *c, const struct bw_rule *r, __u16 id)
{
	struct bw_unix_entry e = {}, *x, *nv;
	__u8 v = r->verdict;
	size_t i;

	e.key.op = r->net.op == BW_NET_BIND ? BW_NOP_BIND : BW_NOP_CONNECT;
	snprintf(e.key.name, sizeof(e.key.name), "%s%s", r->net.unix_abstract ? "@" : "",
		 r->net.unix_path);
	if (!r->net.unix_abstract && bw_unix_name_is_subtree(e.key.name))
		c->policy.unix_subtree |= 1 << e.key.op;
	for (i = 0; i < c->nunixes; i++) {
		x = &c->unixes[i];
		if (x->key.op == e.key.op && !strcmp(x->key.name, e.key.name)) {
			if (v == BW_V_DENY && x->val.verdict != BW_V_DENY) {
				x->val.verdict = v;
				x->val.rule = id;
			}
			return 0;
		}
	}
	nv = realloc(c->unixes, (c->nunixes + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	c->unixes = nv;
	e.val.verdict = v;
	e.val.rule = id;
	c->unixes[c->nunixes++] = e;
	return 0;
}

static int net_entry_cmp_plen_desc(const void *x, const void *y)
{
	const struct bw_net_entry *const *a = x, *const *b = y;

	return (int)(*b)->key.prefixlen - (int)(*a)->key.prefixlen;
}

/*
 * Network rules: keys per (op, proto, prefix) with their own port ranges;
 * then each key's list gets the ranges of every shorter prefix containing it,
 * nearest first, so the kernel's first matching range is the most specific.
 */
static int build_net(const struct bw_profile *p, struct bw_compiled *c, char *err, size_t errlen)
{
	static const uint8_t mapped_lo[16] = {0, 0, 0,	  0,	0,   0, 0, 0,
					      0, 0, 0xff, 0xff, 127, 0, 0, 0};
	static const uint8_t lo6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	size_t cap = 0, i, j;
	int ret = 0;

	for (i = 0; i < p->nrules && !ret; i++) {
		const struct bw_rule *r = &p->rules[i];
		int op, proto;
		uint8_t addr[16] = {0};
		__u16 id = (__u16)(i + 1);

		if (r->cat != BW_CAT_NET || r->net.op == BW_NET_RAW || r->net.op == BW_NET_ADMIN)
			continue;
		if (r->net.proto == BW_NET_UNIX) {
			ret = unix_add(c, r, id);
			continue;
		}
		op = r->net.op == BW_NET_BIND ? BW_NOP_BIND : BW_NOP_CONNECT;
		proto = r->net.proto == BW_NET_UDP ? IPPROTO_UDP : IPPROTO_TCP;
		if (r->net.localhost) {
			ret = net_add(c, &cap, op, proto, mapped_lo, 104, r, id);
			if (!ret)
				ret = net_add(c, &cap, op, proto, lo6, 128, r, id);
		} else if (r->net.family == 4) {
			addr[10] = addr[11] = 0xff;
			memcpy(addr + 12, r->net.addr, 4);
			ret = net_add(c, &cap, op, proto, addr, 96 + r->net.prefixlen, r, id);
		} else if (r->net.family == 6) {
			ret = net_add(c, &cap, op, proto, r->net.addr, r->net.prefixlen, r, id);
		} else {
			ret = net_add(c, &cap, op, proto, addr, 0, r, id);
		}
		if (ret == -E2BIG)
			snprintf(err, errlen,
				 "%s:%d:%d: error: more than %d port ranges on one address "
				 "prefix (a kernel limit, BW_NET_RANGES)",
				 r->origin.file, r->origin.line, r->origin.col, BW_NET_RANGES);
	}
	if (ret)
		return ret;
	for (i = 0; i < c->nnets; i++) {
		struct bw_net_entry *e = &c->nets[i], **anc;
		size_t na = 0;

		qsort(e->own.r, e->own.n, sizeof(e->own.r[0]), range_cmp);
		anc = calloc(c->nnets, sizeof(*anc));
		if (!anc)
			return -ENOMEM;
		for (j = 0; j < c->nnets; j++) {
			struct bw_net_entry *a = &c->nets[j];

			if (a != e && a->key.op == e->key.op && a->key.proto == e->key.proto &&
			    a->key.prefixlen < e->key.prefixlen &&
			    prefix_has(a->key.addr, a->key.prefixlen, e->key.addr))
				anc[na++] = a;
		}
		qsort(anc, na, sizeof(*anc), net_entry_cmp_plen_desc);
		e->val = e->own;
		for (j = 0; j < na && !ret; j++) {
			struct bw_net_value own = anc[j]->own;
			size_t k;

			qsort(own.r, own.n, sizeof(own.r[0]), range_cmp);
			for (k = 0; k < own.n; k++) {
				if (e->val.n == BW_NET_RANGES) {
					snprintf(
					    err, errlen,
					    "%s: error: more than %d port ranges apply to one "
					    "address prefix (with those of the prefixes around "
					    "it; a kernel limit, BW_NET_RANGES)",
					    p->path ? p->path : "(profile)", BW_NET_RANGES);
					ret = -E2BIG;
					break;
				}
				e->val.r[e->val.n++] = own.r[k];
			}
		}
		free(anc);
	}
	return ret;
}

static const struct bw_unix_entry *unix_find(const struct bw_compiled *c, __u8 op, const char *name)
{
	for (size_t i = 0; i < c->nunixes; i++)
		if (c->unixes[i].key.op == op && !strcmp(c->unixes[i].key.name, name))
			return &c->unixes[i];
	return NULL;
}

const struct bw_unix_entry *bw_unix_lookup(const struct bw_compiled *c, __u8 op, const char *name)
{
	const struct bw_unix_entry *e = unix_find(c, op, name);
	char key[BW_UNIX_NAME + 3];
	size_t n = strlen(name);

	if (e || name[0] != '/' || !(c->policy.unix_subtree & (1 << op)) || n >= BW_UNIX_NAME)
		return e;
	/* As bw_unix_subtree (bpf/unix.bpf.h): each directory above the name, the nearest first. */
	while (n > 0) {
		n--;
		if (name[n] != '/')
			continue;
		memcpy(key, name, n + 1);
		memcpy(key + n + 1, "**", 3);
		e = unix_find(c, op, key);
		if (e)
			return e;
	}
	return NULL;
}

const struct bw_port_range *bw_net_lookup(const struct bw_compiled *c, int op, int proto,
					  const uint8_t addr[16], uint16_t port)
{
	const struct bw_net_entry *best = NULL;
	size_t i, k;

	for (i = 0; i < c->nnets; i++) {
		const struct bw_net_entry *e = &c->nets[i];

		if (e->key.op == op && e->key.proto == proto &&
		    prefix_has(e->key.addr, e->key.prefixlen, addr) &&
		    (!best || e->key.prefixlen > best->key.prefixlen))
			best = e;
	}
	if (!best)
		return NULL;
	for (k = 0; k < best->val.n; k++)
		if (port >= best->val.r[k].lo && port <= best->val.r[k].hi)
			return &best->val.r[k];
	return NULL;
}

/*
 * A rule on an object that has no path or address (`net raw`, `net admin`, `mount`,
 * `chroot`, `userns`): deny wins, else the first rule; rule ids are 1 + index.
 */
static void one_object(__u8 *verdict, __u16 *rule, const struct bw_rule *r, size_t i)
{
	if (!*verdict || (r->verdict == BW_V_DENY && *verdict != BW_V_DENY)) {
		*verdict = r->verdict;
		*rule = (__u16)(i + 1);
	}
}

/*
 * Inode pins, planned (user/pins.c resolves them at install): which
 * paths, with the values the trie gives them.
 */
struct bw_inode_pin bw_pin_values(const struct bw_file_entry *v, size_t n, const char *path,
				  int dir)
{
	struct bw_inode_pin pin = {};
	const struct bw_file_entry *e;
	char key[BW_KEY_PATH_MAX + 2];

	e = bw_entries_find(v, n, path);
	if (e)
		pin.self = e->val;
	pin.self.name_at = 0;
	pin.self.flags &= ~BW_PATH_SELF;
	if (dir) {
		/* "P/" finds the subtree key of P itself, or the nearest above it. */
		snprintf(key, sizeof(key), "%s/", strcmp(path, "/") ? path : "");
		e = bw_entries_find(v, n, key);
		if (e)
			pin.below = e->val;
		pin.below.name_at = 0;
		pin.below.flags &= ~BW_PATH_SELF;
	}
	return pin;
}

/* The pins of one category are indexed by path while they are planned. */
struct plan_ctx {
	const struct bw_compiled *c;
	const char *path;
};

static int same_path(size_t item, const void *ctx)
{
	const struct plan_ctx *pc = ctx;

	return !strcmp(pc->c->pins[item].path, pc->path);
}

static uint64_t path_hash(size_t item, const void *ctx)
{
	const struct plan_ctx *pc = ctx;
	const char *path = pc->c->pins[item].path;

	return bw_hash(path, strlen(path));
}

/*
 * Every rule's object is pinned: deny rules so that other names of the object
 * reach the same decision, the others so that the nearest pinned directory
 * above an object is the most specific one, and so that attribute changes,
 * which come without a path, find the rule of the directory they are in.
 */
static int plan_cat(const struct bw_profile *p, struct bw_compiled *c, enum bw_cat cat)
{
	const struct bw_file_entry *v = cat == BW_CAT_EXEC ? c->execs : c->files;
	size_t n = cat == BW_CAT_EXEC ? c->nexecs : c->nfiles;
	size_t i, j, first = c->npins, *slot;
	struct bw_index ix = {};
	struct plan_ctx pc = {c, NULL};
	int ret;

	for (i = 0; i < p->nrules; i++) {
		const struct bw_rule *r = &p->rules[i];
		struct bw_pin_req *pr;

		/*
		 * A name prefix names no object to pin (allow rules only: the
		 * parser refuses a deny); its names are decided by path. Nor does
		 * /proc/self, which at load is the agent's own.
		 */
		if (r->cat != cat || !r->file.path || r->file.name_prefix ||
		    bw_path_is_proc_self(r->file.path))
			continue;
		ret = bw_index_reserve(&ix, path_hash, &pc);
		if (ret) {
			bw_index_free(&ix);
			return ret;
		}
		pc.path = r->file.path;
		slot = bw_index_slot(&ix, bw_hash(pc.path, strlen(pc.path)), same_path, &pc);
		if (!*slot) {
			c->pins[c->npins].path = r->file.path;
			c->pins[c->npins++].cat =
			    cat == BW_CAT_EXEC ? BW_CAT_PIN_EXEC : BW_CAT_PIN_FILE;
			*slot = c->npins;
			ix.n++;
		}
		pr = &c->pins[*slot - 1];
		pr->deny |= r->verdict == BW_V_DENY;
		pr->subtree |= r->file.subtree && r->verdict == BW_V_DENY;
		pr->dir |= r->file.subtree;
	}
	bw_index_free(&ix);
	/* Values come from the trie: the same for every rule on one path. */
	for (j = first; j < c->npins; j++)
		c->pins[j].pin = bw_pin_values(v, n, c->pins[j].path, c->pins[j].dir);
	return 0;
}

static int pins_plan(const struct bw_profile *p, struct bw_compiled *c)
{
	size_t i;
	int ret;

	c->pins = calloc(p->nrules ? p->nrules : 1, sizeof(*c->pins));
	if (!c->pins)
		return -ENOMEM;
	c->npins = 0;
	ret = plan_cat(p, c, BW_CAT_FILE);
	if (!ret)
		ret = plan_cat(p, c, BW_CAT_EXEC);
	if (ret)
		return ret;
	for (i = 0; i < c->npins; i++) {
		if (c->pins[i].cat == BW_CAT_PIN_EXEC)
			c->policy.has_exec_pins |= c->pins[i].deny;
		else
			c->policy.has_pins |= c->pins[i].deny;
	}
	return 0;
}

int bw_compile(const struct bw_profile *p, struct bw_compiled *out, char *err, size_t errlen)
{
	size_t i;
	int ret;

	memset(out, 0, sizeof(*out));
	out->policy.default_file = p->defaults[BW_CAT_FILE];
	out->policy.default_exec = p->defaults[BW_CAT_EXEC];
	out->policy.default_net = p->defaults[BW_CAT_NET];
	out->policy.on_deny = p->on_deny;

	for (i = 0; i < p->nrules; i++) {
		const struct bw_rule *r = &p->rules[i];

		if (r->cat == BW_CAT_NET && r->net.op == BW_NET_RAW)
			one_object(&out->policy.net_raw, &out->policy.net_raw_rule, r, i);
		if (r->cat == BW_CAT_NET && r->net.op == BW_NET_ADMIN)
			one_object(&out->policy.net_admin, &out->policy.net_admin_rule, r, i);
		if (r->cat == BW_CAT_NS && r->ns.what < BW_NS_COUNT)
			one_object(&out->policy.ns[r->ns.what],
				   r->ns.what == BW_NS_CGROUP ? &out->policy.cgroup_rule
							      : &out->policy.ns_rule[r->ns.what],
				   r, i);
		/* `memfd` is one object: deny wins, the earliest rule is reported. */
		if (r->cat == BW_CAT_EXEC && r->file.memfd) {
			if (r->verdict == BW_V_DENY) {
				if (!out->policy.exec_memfd_rule || out->policy.exec_memfd)
					out->policy.exec_memfd_rule = (__u16)(i + 1);
				out->policy.exec_memfd = 0;
				out->memfd_denied = 1;
			} else if (!out->memfd_denied && !out->policy.exec_memfd) {
				out->policy.exec_memfd = 1;
				out->policy.exec_memfd_rule = (__u16)(i + 1);
			}
		}
	}
	ret = build_keys(p, BW_CAT_FILE, &out->files, &out->nfiles, err, errlen);
	if (!ret)
		ret = build_keys(p, BW_CAT_EXEC, &out->execs, &out->nexecs, err, errlen);
	for (i = 0; !ret && i < out->nfiles; i++)
		if (out->files[i].val.flags & BW_PATH_SELF)
			out->policy.proc_self |= BW_SELF_FILE;
	for (i = 0; !ret && i < out->nexecs; i++)
		if (out->execs[i].val.flags & BW_PATH_SELF)
			out->policy.proc_self |= BW_SELF_EXEC;
	if (!ret)
		ret = build_net(p, out, err, errlen);
	if (ret)
		goto err;
	ret = pins_plan(p, out);
	if (ret)
		goto err;
	return 0;
err:
	bw_compiled_free(out);
	return ret;
}

void bw_compiled_free(struct bw_compiled *c)
{
	free(c->files);
	free(c->execs);
	free(c->nets);
	free(c->unixes);
	free(c->pins);
	memset(c, 0, sizeof(*c));
}
