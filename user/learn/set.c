// SPDX-License-Identifier: GPL-2.0-only
/*
 * The set of accesses: one object per file or program path (a program run
 * or mapped as a library), endpoint, unix name, raw socket, memfd program or
 * change of the view (mount, chroot, userns), with a count, the union of its
 * access bits and the smallest program names, so that the output never
 * depends on the order events came in (docs/learn.md, "Objects").
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct bw_learn_set *bw_learn_new(void)
{
	return calloc(1, sizeof(struct bw_learn_set));
}

void bw_progs_free(struct bw_progs *p)
{
	for (unsigned i = 0; i < p->n; i++)
		free(p->v[i]);
	memset(p, 0, sizeof(*p));
}

void bw_learn_free(struct bw_learn_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].key);
		free(s->v[i].path);
		bw_progs_free(&s->v[i].progs);
	}
	free(s->v);
	free(s->tab);
	free(s);
}

size_t bw_learn_count(const struct bw_learn_set *s)
{
	return s ? s->n : 0;
}

unsigned long long bw_learn_events(const struct bw_learn_set *s)
{
	return s ? s->events : 0;
}

bool bw_learn_has_exec(const struct bw_learn_set *s, const char *path)
{
	size_t i;

	for (i = 0; s && i < s->n; i++)
		if (s->v[i].cat == BW_CAT_EXEC && (s->v[i].access & BW_ACC_R) && s->v[i].path &&
		    !strcmp(s->v[i].path, path))
			return true;
	return false;
}

/* Keep the BW_LEARN_PROGS smallest names: the same set whatever the order. */
int bw_progs_add(struct bw_progs *p, const char *name)
{
	unsigned at;
	char *d;

	if (!name || !*name)
		return 0;
	for (at = 0; at < p->n; at++) {
		int c = strcmp(name, p->v[at]);

		if (!c)
			return 0;
		if (c < 0)
			break;
	}
	if (at == BW_LEARN_PROGS) {
		p->more = true;
		return 0;
	}
	d = strdup(name);
	if (!d)
		return -ENOMEM;
	if (p->n == BW_LEARN_PROGS) {
		free(p->v[--p->n]);
		p->more = true;
	}
	memmove(&p->v[at + 1], &p->v[at], (p->n - at) * sizeof(p->v[0]));
	p->v[at] = d;
	p->n++;
	return 0;
}

int bw_progs_merge(struct bw_progs *into, const struct bw_progs *from)
{
	for (unsigned i = 0; i < from->n; i++)
		if (bw_progs_add(into, from->v[i]))
			return -ENOMEM;
	into->more |= from->more;
	return 0;
}

/* "//" collapsed, a trailing "/" dropped; anything not absolute is kept as is. */
static char *norm_path(const char *in)
{
	size_t n = strlen(in), w = 0;
	char *p = malloc(n + 1);

	if (!p)
		return NULL;
	if (in[0] != '/') {
		memcpy(p, in, n + 1);
		return p;
	}
	for (size_t i = 0; i < n; i++) {
		if (in[i] == '/' && w && p[w - 1] == '/')
			continue;
		p[w++] = in[i];
	}
	if (w > 1 && p[w - 1] == '/')
		w--;
	p[w] = '\0';
	return p;
}

static const uint8_t mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

bool bw_addr_is_mapped(const uint8_t *a)
{
	return !memcmp(a, mapped_prefix, sizeof(mapped_prefix));
}

static bool all_zero(const uint8_t *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i])
			return false;
	return true;
}

bool bw_addr_is_any(const uint8_t *a)
{
	return bw_addr_is_mapped(a) ? all_zero(a + 12, 4) : all_zero(a, 16);
}

static uint64_t fnv1a(const char *k, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)k[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int set_grow(struct bw_learn_set *s)
{
	size_t nsz = s->tabsz ? s->tabsz * 2 : 256, *nt;

	nt = calloc(nsz, sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		size_t j = s->v[i].hash & (nsz - 1);

		while (nt[j])
			j = (j + 1) & (nsz - 1);
		nt[j] = i + 1;
	}
	free(s->tab);
	s->tab = nt;
	s->tabsz = nsz;
	return 0;
}

/* Fill o (path, addr, ...) and its key from l; -EINVAL when l names no object. */
static int make_obj(const struct bw_learned *l, struct bw_lobj *o)
{
	size_t plen;
	char *k;

	memset(o, 0, sizeof(*o));
	o->cat = l->cat;
	o->access = BW_ACC_R;
	switch (l->cat) {
	case BW_CAT_FILE:
		o->access = l->access & (BW_ACC_R | BW_ACC_W);
		if (!o->access)
			return -EINVAL;
		o->path = norm_path(l->path ? l->path : "");
		break;
	case BW_CAT_EXEC:
		/* One object per program: run, mapped, or both (the trie's r and w slots). */
		o->access = (l->access & BW_ACC_M ? BW_ACC_W : 0) |
			    (l->access & BW_ACC_X || !(l->access & BW_ACC_M) ? BW_ACC_R : 0);
		if (l->path && *l->path)
			o->path = norm_path(l->path);
		else
			o->path = NULL; /* memfd */
		if (l->path && *l->path && !o->path)
			return -ENOMEM;
		break;
	case BW_CAT_NET:
		o->op = l->net_op;
		if (l->net_op == BW_NET_RAW || l->net_op == BW_NET_ADMIN)
			break;
		if (l->net_op != BW_NET_CONNECT && l->net_op != BW_NET_BIND)
			return -EINVAL;
		o->proto = l->proto;
		if (l->proto == BW_NET_UNIX) {
			const char *u = l->unix_name ? l->unix_name : "";

			o->path = u[0] == '/' ? norm_path(u) : strdup(u);
			break;
		}
		if (l->proto != BW_NET_TCP && l->proto != BW_NET_UDP)
			return -EINVAL;
		memcpy(o->addr, l->addr, 16);
		if (l->family == 4 && !bw_addr_is_mapped(o->addr)) {
			if (!all_zero(o->addr + 4, 12))
				return -EINVAL;
			memmove(o->addr + 12, o->addr, 4);
			memcpy(o->addr, mapped_prefix, 12);
		} else if (l->family != 4 && l->family != 6) {
			return -EINVAL;
		}
		/* A connect to the unspecified address reaches the local host. */
		if (l->net_op == BW_NET_CONNECT) {
			if (bw_addr_is_mapped(o->addr) && all_zero(o->addr + 12, 4))
				o->addr[12] = 127, o->addr[15] = 1;
			else if (all_zero(o->addr, 16))
				o->addr[15] = 1;
		}
		o->port = l->port;
		break;
	case BW_CAT_NS:
		if (l->what >= BW_NS_COUNT)
			return -EINVAL;
		o->op = (int)l->what;
		break;
	default:
		return -EINVAL;
	}
	if ((o->cat == BW_CAT_FILE || (o->cat == BW_CAT_NET && o->proto == BW_NET_UNIX)) &&
	    !o->path)
		return -ENOMEM;

	plen = o->path ? strlen(o->path) : 0;
	k = malloc(3 + 16 + 2 + plen);
	if (!k)
		return -ENOMEM;
	o->key = k;
	switch (o->cat) {
	case BW_CAT_FILE:
	case BW_CAT_EXEC:
		*k++ = o->cat == BW_CAT_FILE ? 'F' : o->path ? 'X' : 'M';
		break;
	case BW_CAT_NS:
		*k++ = 'V';
		*k++ = (char)o->op;
		break;
	default:
		*k++ = o->op == BW_NET_RAW	 ? 'R'
		       : o->op == BW_NET_ADMIN	 ? 'A'
		       : o->proto == BW_NET_UNIX ? 'U'
						 : 'N';
		*k++ = (char)o->op;
		*k++ = (char)o->proto;
		if (o->op != BW_NET_RAW && o->op != BW_NET_ADMIN && o->proto != BW_NET_UNIX) {
			memcpy(k, o->addr, 16);
			k += 16;
			*k++ = (char)(o->port >> 8);
			*k++ = (char)o->port;
		}
		break;
	}
	if (plen)
		memcpy(k, o->path, plen);
	o->keylen = (size_t)(k - o->key) + plen;
	o->hash = fnv1a(o->key, o->keylen);
	return 0;
}

int bw_learn_add(struct bw_learn_set *s, const struct bw_learned *l)
{
	struct bw_lobj o;
	size_t j;
	int ret;

	if (!s || !l)
		return -EINVAL;
	ret = make_obj(l, &o);
	if (ret)
		goto out;
	if (s->n * 2 >= s->tabsz && (ret = set_grow(s)))
		goto out;
	for (j = o.hash & (s->tabsz - 1); s->tab[j]; j = (j + 1) & (s->tabsz - 1)) {
		struct bw_lobj *x = &s->v[s->tab[j] - 1];

		if (x->hash == o.hash && x->keylen == o.keylen &&
		    !memcmp(x->key, o.key, o.keylen)) {
			ret = bw_progs_add(&x->progs, l->program);
			if (ret)
				goto out;
			x->progs.more |= l->more_programs;
			x->here |= l->here;
			x->access |= o.access;
			x->count += l->count ? l->count : 1;
			s->events += l->count ? l->count : 1;
			goto out;
		}
	}
	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 64;
		struct bw_lobj *nv = realloc(s->v, ncap * sizeof(*nv));

		if (!nv) {
			ret = -ENOMEM;
			goto out;
		}
		s->v = nv;
		s->cap = ncap;
	}
	ret = bw_progs_add(&o.progs, l->program);
	if (ret)
		goto out;
	o.progs.more |= l->more_programs;
	o.here = l->here;
	o.count = l->count ? l->count : 1;
	s->v[s->n] = o;
	s->tab[j] = ++s->n;
	s->events += o.count;
	return 0;
out:
	free(o.key);
	free(o.path);
	bw_progs_free(&o.progs);
	return ret;
}
