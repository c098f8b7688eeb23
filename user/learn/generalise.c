// SPDX-License-Identifier: GPL-2.0-only
/*
 * Generalisation: which directories become `allow file BITS DIR/` `**`
 * instead of one rule per learned file, and which files each one covers
 * (docs/learn.md, "Generalisation"). Files only: programs and endpoints stay
 * exact.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfwarden.h"
#include "internal.h"
#include "learn_names.h"

static int cand_cmp(const void *a, const void *b)
{
	const struct bw_cand *x = a, *y = b;

	return bw_learn_path_cmp(x->dir, y->dir);
}

static struct bw_cand *cand_find(const struct bw_wctx *w, const char *dir)
{
	struct bw_cand probe = {.dir = (char *)dir};

	return bsearch(&probe, w->cands, w->ncands, sizeof(probe), cand_cmp);
}

static int cand_push(struct bw_wctx *w, size_t *cap, const char *dir, size_t dlen, unsigned bits)
{
	struct bw_cand *c;

	if (w->ncands == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct bw_cand *nv = realloc(w->cands, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		w->cands = nv;
		*cap = ncap;
	}
	c = &w->cands[w->ncands];
	memset(c, 0, sizeof(*c));
	c->dir = strndup(dir, dlen ? dlen : 1);
	if (!c->dir)
		return -ENOMEM;
	c->bits = bits;
	w->ncands++;
	return 0;
}

/* Sort candidates by directory, merge equal ones, mark those an ancestor's rule covers. */
static int cands_settle(struct bw_wctx *w)
{
	size_t i, out = 0;

	if (!w->ncands)
		return 0;
	qsort(w->cands, w->ncands, sizeof(*w->cands), cand_cmp);
	for (i = 0; i < w->ncands; i++) {
		struct bw_cand *c = &w->cands[i];

		if (out && !strcmp(w->cands[out - 1].dir, c->dir)) {
			struct bw_cand *into = &w->cands[out - 1];

			into->bits |= c->bits;
			if (c->fanout) {
				into->fanout += c->fanout;
				into->fanout_bits |= c->fanout_bits;
			}
			/* The smallest example, whatever order qsort left them in. */
			if (c->vol && (!into->vol || strcmp(c->vol, into->vol) < 0)) {
				char *t = into->vol;

				into->vol = c->vol;
				into->vol_why = c->vol_why;
				c->vol = t;
			}
			free(c->vol);
			free(c->dir);
			continue;
		}
		w->cands[out++] = *c;
	}
	w->ncands = out;
	/*
	 * A directory the workload writes names into is its own: what it writes
	 * there it reads back at its next start (a database's dump renamed into
	 * place, a cache), which no learning run before the first write can
	 * see. So a subtree rule for writing is one for reading too, where a
	 * subtree rule for reading may be written.
	 */
	for (i = 0; i < w->ncands; i++) {
		struct bw_cand *c = &w->cands[i];
		const struct bw_refusal *r;
		int ret;

		if (!(c->bits & BW_ACC_W) || (c->bits & BW_ACC_R))
			continue;
		ret = bw_refused(w, c->dir, c->bits | BW_ACC_R, &r);
		if (ret)
			return ret;
		if (!r->why) {
			c->bits |= BW_ACC_R;
			c->read_back = true;
		}
	}
	for (i = 0; i < w->ncands; i++) {
		struct bw_cand *c = &w->cands[i];
		char *a = strdup(c->dir), *slash;

		if (!a)
			return -ENOMEM;
		while ((slash = strrchr(a, '/')) && slash != a) {
			struct bw_cand *up;

			*slash = '\0';
			up = cand_find(w, a);
			if (up && !(c->bits & ~up->bits)) {
				c->dead = true;
				break;
			}
		}
		free(a);
	}
	return 0;
}

/*
 * Where a per-run file's directory may not be a subtree rule, its name may
 * still have a lasting beginning that the next run's names share (a service's
 * shared-memory segments: /dev/shm/PostgreSQL.NNN): then the file is written
 * as the name prefix DIR/STEM*, which the kernel decides for names in DIR
 * only. Not in a directory of secrets, and writes in the system's own tree
 * only in /dev/shm, where services must make their segments.
 */
static size_t prefix_stem(const struct bw_fres *f, const struct bw_refusal *r, const char *c,
			  size_t clen)
{
	const char *p = f->o->path;
	char buf[160];

	if (c[clen] || r->secret || bw_learn_key_like(c, clen) ||
	    bw_learn_path_problem(p, BW_RULE_PATH_MAX, buf, sizeof(buf)))
		return 0;
	if ((f->bits & BW_ACC_W) && bw_learn_in_os_tree(p) && strncmp(p, "/dev/shm/", 9))
		return 0;
	return bw_learn_per_run_stem(c, clen);
}

/* Files of one name prefix in one directory: one rule, with the access of all. */
static void merge_stems(struct bw_wctx *w)
{
	for (size_t i = 0; i < w->nfr; i++) {
		struct bw_fres *a = &w->fr[i];
		size_t alen;

		if (!a->stem_len || a->stem_merged)
			continue;
		alen = (size_t)(a->vol - a->o->path) + a->stem_len;
		for (size_t j = i + 1; j < w->nfr; j++) {
			struct bw_fres *b = &w->fr[j];

			if (!b->stem_len || b->stem_merged ||
			    (size_t)(b->vol - b->o->path) + b->stem_len != alen ||
			    memcmp(a->o->path, b->o->path, alen))
				continue;
			a->bits |= b->bits;
			b->stem_merged = true;
		}
	}
}

/*
 * Per-run names, read or written: a file whose path has a per-run component
 * makes the parent of the shallowest one a candidate with the file's access,
 * so that the next run's names (a new PID, a new temporary name) are allowed
 * as this run's were. Where that parent may not be a subtree rule the file
 * stays exact, and its note says why: the next run will be refused there,
 * which the reviewer must know.
 */
static int per_run_cands(struct bw_wctx *w, size_t *cap)
{
	for (size_t i = 0; i < w->nfr; i++) {
		struct bw_fres *f = &w->fr[i];
		const char *p = f->o->path, *c, *why = NULL;
		const struct bw_refusal *r;
		size_t clen = 0, plen;
		char *g;
		int ret;

		if (f->pinned)
			continue;
		for (c = p + 1; *c; c += clen + (c[clen] == '/')) {
			clen = strcspn(c, "/");
			why = bw_learn_per_run(c, clen, c[clen] == '\0');
			if (why)
				break;
		}
		if (!why)
			continue;
		plen = (size_t)(c - p) - 1;
		g = strndup(p, plen ? plen : 1);
		if (!g)
			return -ENOMEM;
		ret = bw_refused(w, g, f->bits, &r);
		free(g);
		if (ret)
			return ret;
		if (r->why) {
			f->vol = c;
			f->vol_len = clen;
			f->vol_plen = plen;
			f->vol_why = why;
			f->vol_refused = r->why;
			f->stem_len = prefix_stem(f, r, c, clen);
			continue;
		}
		ret = cand_push(w, cap, p, plen, f->bits);
		if (ret)
			return ret;
		w->cands[w->ncands - 1].vol = strndup(c, clen);
		w->cands[w->ncands - 1].vol_why = why;
		if (!w->cands[w->ncands - 1].vol)
			return -ENOMEM;
	}
	return 0;
}

/* A file as a child of its directory: same access, then same parent, sort together. */
struct kid {
	const char *path;
	size_t plen; /* of its parent: 0 for a file in / */
	unsigned bits;
	struct bw_fres *f;
};

static int kid_cmp(const void *a, const void *b)
{
	const struct kid *x = a, *y = b;
	int c;

	if (x->bits != y->bits)
		return x->bits < y->bits ? -1 : 1;
	c = memcmp(x->path, y->path, x->plen < y->plen ? x->plen : y->plen);
	if (c)
		return c;
	return x->plen < y->plen ? -1 : x->plen > y->plen;
}

/*
 * Fan-out: at least min_children files directly in one directory with the
 * same access. Refused for secrets, the files say so: the reviewer should not
 * widen them by hand either.
 */
static int fanout_cands(struct bw_wctx *w, size_t *cap)
{
	struct kid *kids = malloc((w->nfr + 1) * sizeof(*kids));
	size_t nkids = 0, i, j;
	int ret = 0;

	if (!kids)
		return -ENOMEM;
	for (i = 0; i < w->nfr; i++) {
		const char *p = w->fr[i].o->path;

		if (w->fr[i].pinned || !strcmp(p, "/"))
			continue;
		kids[nkids].path = p;
		kids[nkids].plen = (size_t)(strrchr(p, '/') - p);
		kids[nkids].f = &w->fr[i];
		kids[nkids++].bits = w->fr[i].bits;
	}
	if (nkids)
		qsort(kids, nkids, sizeof(*kids), kid_cmp);
	for (i = 0; i < nkids && !ret; i = j) {
		const struct bw_refusal *r;
		char *g;

		for (j = i + 1; j < nkids && !kid_cmp(&kids[i], &kids[j]); j++)
			;
		if (j - i < w->min_children)
			continue;
		g = strndup(kids[i].path, kids[i].plen ? kids[i].plen : 1);
		if (!g) {
			ret = -ENOMEM;
			break;
		}
		ret = bw_refused(w, g, kids[i].bits, &r);
		if (!ret && !r->why) {
			ret = cand_push(w, cap, g, strlen(g), kids[i].bits);
			if (!ret) {
				w->cands[w->ncands - 1].fanout = j - i;
				w->cands[w->ncands - 1].fanout_bits = kids[i].bits;
			}
		} else if (!ret && r->secret) {
			for (size_t k = i; k < j; k++)
				kids[k].f->secret = r->why;
		}
		free(g);
	}
	free(kids);
	return ret;
}

/* Coverage: the bits of every live rule on the file or a directory above it. */
static int coverage(struct bw_wctx *w)
{
	for (size_t i = 0; i < w->nfr && w->ncands; i++) {
		struct bw_fres *f = &w->fr[i];
		char *a;
		unsigned have = 0;
		long best = -1;

		if (f->pinned)
			continue;
		a = strdup(f->o->path);
		if (!a)
			return -ENOMEM;
		for (size_t k = strlen(a);; k--) {
			if (a[k] == '/' || a[k] == '\0') {
				struct bw_cand *c;
				char save = a[k];

				a[k] = '\0';
				c = k ? cand_find(w, a) : NULL;
				a[k] = save;
				if (c && !c->dead) {
					have |= c->bits;
					if (best < 0 && (c->bits & f->bits))
						best = c - w->cands;
				}
			}
			if (!k)
				break;
		}
		free(a);
		if ((f->bits & ~have) || best < 0)
			continue;
		f->cand = best;
		w->cands[best].count += f->o->count;
		w->cands[best].nfiles++;
		if (bw_progs_merge(&w->cands[best].progs, &f->o->progs))
			return -ENOMEM;
	}
	return 0;
}

int bw_generalise(struct bw_wctx *w)
{
	size_t cap = 0;
	int ret = 0;

	if (!(w->flags & BW_LEARN_NO_VOLATILE)) {
		ret = per_run_cands(w, &cap);
		merge_stems(w);
	}
	if (!ret && !(w->flags & BW_LEARN_NO_FANOUT) && w->nfr)
		ret = fanout_cands(w, &cap);
	if (!ret)
		ret = cands_settle(w);
	if (!ret)
		ret = coverage(w);
	return ret;
}

void bw_cands_free(struct bw_wctx *w)
{
	for (size_t i = 0; i < w->ncands; i++) {
		free(w->cands[i].dir);
		free(w->cands[i].vol);
		bw_progs_free(&w->cands[i].progs);
	}
	free(w->cands);
}
