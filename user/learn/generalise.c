// SPDX-License-Identifier: GPL-2.0-only
/*
 * Generalisation: which directories become `allow file BITS DIR/` `**`
 * instead of one rule per learned file, and which files each one covers
 * (docs/learn.md, "Generalisation"). Files only: programs and endpoints stay
 * exact.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
			if (c->named_by && !into->named_by) {
				into->named_by = c->named_by;
				into->named_line = c->named_line;
				c->named_by = NULL;
			}
			free(c->named_by);
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

/*
 * Content roots. A web server serves a document root, a database reads its
 * data directory, a queue its spool: while learning, the workload reads a
 * sample of what is there, and the next request asks for another file (or
 * one added since). Its own configuration says where the population is: a
 * directory named in a file the workload read, below which the same program
 * read files, is allowed for reading as a whole (`allow file r DIR/` `**`),
 * if a subtree rule for reading may be written there (bw_refused: never a
 * system directory, never secrets, nothing private on disk).
 *
 * What counts as configuration: a regular text file of at most
 * BW_CONF_BYTES that the agent saw at the same name as the process did
 * (bw_lobj.here: a container's /etc/nginx/nginx.conf is not this host's),
 * outside the system's own code and data (/usr, /lib*, /bin, /sbin, /boot),
 * the kernel's files (/proc, /sys, /dev, /run) and the host's own settings
 * directly in /etc (passwd, hosts, ...: name a home directory or a mount
 * point, not a service's content). Lines beginning with `;`, and what
 * follows a `#` at a line's start or after a blank, are comments. A name there is a path when it begins with "/" and holds no
 * "//", "." or ".." component; one that names a file, or nothing on disk,
 * is not a content root. Writes stay as learned: a directory a service
 * reads from is not one it may write to.
 */
#define BW_CONF_BYTES (64 * 1024)
#define BW_CONF_FILES 64    /* configuration files read per profile */
#define BW_CONF_NAMES 4096 /* paths looked at per profile */

static bool conf_file(const struct bw_lobj *o)
{
	static const char *const outside[] = {"/usr/", "/lib", "/bin/", "/sbin/", "/boot/",
					      "/proc/", "/sys/", "/dev/", "/run/"};
	const char *p = o->path, *leaf;

	if (o->cat != BW_CAT_FILE || !o->here || !(o->access & BW_ACC_R) || !p || p[0] != '/')
		return false;
	for (size_t i = 0; i < sizeof(outside) / sizeof(outside[0]); i++)
		if (!strncmp(p, outside[i], strlen(outside[i])))
			return false;
	leaf = strrchr(p, '/') + 1;
	if (!strncmp(p, "/etc/", 5) && leaf == p + 5)
		return false;
	return !bw_learn_key_like(leaf, strlen(leaf));
}

static bool progs_meet(const struct bw_progs *a, const struct bw_progs *b)
{
	for (unsigned i = 0; i < a->n; i++)
		for (unsigned j = 0; j < b->n; j++)
			if (!strcmp(a->v[i], b->v[j]))
				return true;
	return false;
}

static bool path_byte(unsigned char c)
{
	return isalnum(c) || (c && strchr("/._-+@~%", c));
}

/* "/a/b" with no empty, "." or ".." component, and more than "/". */
static bool plain_path(const char *t, size_t n)
{
	if (n < 2 || t[0] != '/')
		return false;
	for (size_t i = 0; i < n;) {
		size_t c = 0;

		i++; /* the '/' */
		while (i + c < n && t[i + c] != '/')
			c++;
		if (!c || (c == 1 && t[i] == '.') || (c == 2 && t[i] == '.' && t[i + 1] == '.'))
			return false;
		i += c;
	}
	return true;
}

/* dir a content root of conf's (named on `line`)? Then a candidate. */
static int content_root(struct bw_wctx *w, size_t *cap, const struct bw_lobj *conf, char *dir,
			size_t dlen, unsigned line)
{
	const struct bw_refusal *r;
	unsigned mode;
	size_t i;
	int ret;

	for (i = 0; i < w->nfr; i++) {
		const struct bw_fres *f = &w->fr[i];

		if (!f->pinned && (f->bits & BW_ACC_R) && !strncmp(f->o->path, dir, dlen) &&
		    f->o->path[dlen] == '/' && progs_meet(&f->o->progs, &conf->progs))
			break;
	}
	if (i == w->nfr)
		return 0;
	if (w->fs->mode(w->fs->ctx, dir, &mode) || !S_ISDIR(mode))
		return 0;
	ret = bw_refused(w, dir, BW_ACC_R, &r);
	if (ret || r->why)
		return ret;
	ret = cand_push(w, cap, dir, dlen, BW_ACC_R);
	if (ret)
		return ret;
	w->cands[w->ncands - 1].named_by = strdup(conf->path);
	w->cands[w->ncands - 1].named_line = line;
	return w->cands[w->ncands - 1].named_by ? 0 : -ENOMEM;
}

static int content_root_cands(struct bw_wctx *w, size_t *cap)
{
	char *buf = malloc(BW_CONF_BYTES + 1);
	unsigned files = 0, names = 0;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < w->nfiles && !ret && files < BW_CONF_FILES; i++) {
		const struct bw_lobj *conf = w->files[i];
		unsigned line = 1;
		long n;

		if (!conf_file(conf))
			continue;
		n = w->fs->read(w->fs->ctx, conf->path, buf, BW_CONF_BYTES);
		if (n <= 0 || memchr(buf, '\0', (size_t)n))
			continue; /* unreadable, empty or not text */
		files++;
		buf[n] = '\0';
		for (char *p = buf; *p && !ret && names < BW_CONF_NAMES; line++) {
			char *eol = strchrnul(p, '\n'), *q = p;

			while (q < eol && (*q == ' ' || *q == '\t'))
				q++;
			if (*q == ';')
				q = eol;
			for (; q < eol && !ret; q++) {
				if (*q == '#' && (q == p || q[-1] == ' ' || q[-1] == '\t'))
					break;
				size_t t = 0;

				if (*q != '/' || (q > p && path_byte((unsigned char)q[-1])))
					continue;
				while (q + t < eol && path_byte((unsigned char)q[t]))
					t++;
				while (t > 1 && q[t - 1] == '/')
					t--;
				if (plain_path(q, t)) {
					char save = q[t];

					names++;
					q[t] = '\0';
					ret = content_root(w, cap, conf, q, t, line);
					q[t] = save;
				}
				q += t - 1;
			}
			p = *eol ? eol + 1 : eol;
		}
	}
	free(buf);
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
	if (!ret && !(w->flags & BW_LEARN_NO_FANOUT) && w->nfr && w->fs && w->fs->read)
		ret = content_root_cands(w, &cap);
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
		free(w->cands[i].named_by);
		bw_progs_free(&w->cands[i].progs);
	}
	free(w->cands);
}
