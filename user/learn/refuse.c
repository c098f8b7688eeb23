// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where a subtree rule may never go (docs/learn.md, "What is never
 * generalised"): the root, the system's directories, writes in the system's
 * own tree, and directories of secrets. A directory of secrets is recognised
 * by its name or a name above it, by the names and places of the files learned
 * below it, and, when the writer may look (opts->fs), by what is really there:
 * a key-like name, a directory of secrets, or a file or directory made
 * private on purpose (others may list its directory, not read it). The file
 * system can only refuse: what cannot be looked at is judged by its name.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bpfwarden.h"
#include "internal.h"
#include "learn_names.h"

/* Deeper than this below a candidate, the file system check gives up (and refuses). */
#define WALK_DEPTH 32

static int file_cmp(const void *key, const void *elem)
{
	return bw_learn_path_cmp(key, (*(const struct bw_lobj *const *)elem)->path);
}

const struct bw_lobj *bw_learned_file(const struct bw_wctx *w, const char *path)
{
	const struct bw_lobj *const *o =
	    bsearch(path, w->files, w->nfiles, sizeof(*w->files), file_cmp);

	return o ? *o : NULL;
}

/*
 * Made private on purpose: others may not read it, though they may list or
 * enter its directory. Not when the workload wrote it (its own output: mkstemp
 * makes 0600 files) or its name is per-run (an earlier run's).
 */
static bool deliberately_private(const struct bw_wctx *w, const char *path, unsigned mode,
				 unsigned dirmode, bool leaf)
{
	const struct bw_lobj *o = bw_learned_file(w, path);
	const char *name = strrchr(path, '/') + 1;

	return !(mode & S_IROTH) && (dirmode & (S_IROTH | S_IXOTH)) &&
	       !(o && (o->access & BW_ACC_W)) && !bw_learn_per_run(name, strlen(name), leaf);
}

/* What a subtree rule on g would put under it, by name: the learned files below g. */
static const char *by_learned(const struct bw_wctx *w, const char *g, char *buf, size_t len)
{
	size_t glen = strlen(g), lo = 0, hi = w->nfiles;
	const char *why;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (bw_learn_path_cmp(w->files[mid]->path, g) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* In path order, everything under g/ comes right after g. */
	for (; lo < w->nfiles; lo++) {
		const char *p = w->files[lo]->path, *rel = p + glen + 1, *leaf;

		if (!strcmp(p, g))
			continue;
		if (strncmp(p, g, glen) || p[glen] != '/')
			break;
		if ((why = bw_learn_secret_dir(p, glen))) {
			snprintf(buf, len, "above a directory of secrets ('%s'; learned: %s)", why,
				 rel);
			return buf;
		}
		leaf = strrchr(p, '/') + 1;
		for (const char *c = rel; c < leaf; c = strchr(c, '/') + 1) {
			if ((why = bw_learn_secret_holder(p, (size_t)(strchr(c, '/') - p)))) {
				snprintf(buf, len, "above '%s', which holds directories of secrets",
					 why);
				return buf;
			}
		}
		if ((why = bw_learn_key_like(leaf, strlen(leaf)))) {
			snprintf(buf, len, "a directory of secrets: '%s' was learned in it, %s",
				 rel, why);
			return buf;
		}
	}
	return NULL;
}

struct walk {
	const struct bw_wctx *w;
	size_t glen; /* the candidate's length in path */
	char path[PATH_MAX];
	size_t len;	  /* of the directory being listed */
	unsigned dirmode; /* its mode */
	unsigned depth;
	size_t entries;
	char *buf;
	size_t buflen;
	const char *why;
};

__attribute__((format(printf, 2, 3))) static int refuse(struct walk *k, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(k->buf, k->buflen, fmt, ap);
	va_end(ap);
	k->why = k->buf;
	return 1;
}

static int walk_entry(void *arg, const char *name, unsigned mode);

static int walk_dir(struct walk *k, const char *rel, unsigned mode)
{
	size_t len = k->len;
	unsigned dirmode = k->dirmode;
	const char *why;
	int ret;

	if ((why = bw_learn_secret_dir(k->path, k->glen)))
		return refuse(k, "above a directory of secrets ('%s': %s)", why, rel);
	if ((why = bw_learn_secret_holder(k->path, strlen(k->path))))
		return refuse(k, "above '%s', which holds directories of secrets", rel);
	if (deliberately_private(k->w, k->path, mode, dirmode, false))
		return refuse(k,
			      "a directory of secrets: '%s' is private (mode %04o) in a "
			      "directory others may list",
			      rel, mode & 07777);
	if (k->depth >= WALK_DEPTH)
		return refuse(k, "too deep to check for secrets");
	k->len = strlen(k->path);
	k->dirmode = mode;
	k->depth++;
	ret = k->w->fs->list(k->w->fs->ctx, k->path, walk_entry, k);
	k->depth--;
	k->dirmode = dirmode;
	k->path[k->len] = '\0';
	k->len = len;
	if (ret < 0 && ret != -ENOENT) /* gone meanwhile: nothing to expose */
		return refuse(k, "not checked for secrets ('%s': %s)", rel, strerror(-ret));
	return k->why ? 1 : 0;
}

static int walk_entry(void *arg, const char *name, unsigned mode)
{
	struct walk *k = arg;
	size_t n = strlen(name), len = k->len;
	const char *why, *rel = k->path + k->glen + 1;
	int ret = 0;

	if (++k->entries > BW_LEARN_WALK_MAX)
		return refuse(k, "too large to check for secrets (over %d entries)",
			      BW_LEARN_WALK_MAX);
	if (len + 1 + n >= sizeof(k->path))
		return refuse(k, "too deep to check for secrets");
	k->path[len] = '/';
	memcpy(k->path + len + 1, name, n + 1);
	/* A symlink is not followed: the kernel checks the path it resolves to. */
	if (S_ISDIR(mode))
		ret = walk_dir(k, rel, mode);
	else if (S_ISREG(mode) && (why = bw_learn_key_like(name, n)))
		ret = refuse(k, "a directory of secrets: it holds '%s', %s", rel, why);
	else if (S_ISREG(mode) && deliberately_private(k->w, k->path, mode, k->dirmode, true))
		ret = refuse(k,
			     "a directory of secrets: it holds '%s', which others may not read "
			     "(mode %04o) in a directory they may list",
			     rel, mode & 07777);
	k->path[len] = '\0';
	return ret;
}

/* What is really in g, when the writer may look. */
static const char *on_disk(const struct bw_wctx *w, const char *g, char *buf, size_t len)
{
	struct walk k = {.w = w, .buf = buf, .buflen = len};
	const char *leaf = strrchr(g, '/');
	unsigned mode, pmode = 0;
	int ret;

	ret = w->fs->mode(w->fs->ctx, g, &mode);
	if (ret == -ENOENT || ret == -ENOTDIR || (!ret && !S_ISDIR(mode)))
		return NULL; /* not there (another mount namespace, removed): names only */
	if (ret) {
		snprintf(buf, len, "not checked for secrets (%s)", strerror(-ret));
		return buf;
	}
	k.glen = k.len = strlen(g);
	if (k.len >= sizeof(k.path))
		return "too deep to check for secrets";
	/* The parent's mode, then g's own name judged like any entry below it. */
	memcpy(k.path, g, leaf > g ? (size_t)(leaf - g) : 1);
	if (!w->fs->mode(w->fs->ctx, k.path, &pmode) &&
	    deliberately_private(w, g, mode, pmode, false)) {
		snprintf(buf, len,
			 "a directory of secrets: private (mode %04o) in a directory others may "
			 "list",
			 mode & 07777);
		return buf;
	}
	memcpy(k.path, g, k.len + 1);
	k.dirmode = mode;
	ret = w->fs->list(w->fs->ctx, g, walk_entry, &k);
	if (!k.why && ret < 0 && ret != -ENOENT) {
		snprintf(buf, len, "not checked for secrets (%s)", strerror(-ret));
		return buf;
	}
	return k.why;
}

/* The verdict, by the cheapest test first; *secret when it is for secrets. */
static const char *verdict(const struct bw_wctx *w, const char *g, unsigned bits, char *buf,
			   size_t len, bool *secret)
{
	const char *why;

	*secret = false;
	if (!strcmp(g, "/"))
		return "the root directory";
	if (bw_learn_system_dir(g))
		return "a system directory";
	/* Secrets by name before the rest: that is what the reviewer must hear. */
	*secret = true;
	if ((why = bw_learn_secret_dir(g, strlen(g) - 1))) {
		snprintf(buf, len, "a directory of secrets ('%s')", why);
		return buf;
	}
	if ((why = bw_learn_secret_dir(g, 0))) {
		snprintf(buf, len, "inside a directory of secrets ('%s')", why);
		return buf;
	}
	if ((why = bw_learn_secret_holder(g, strlen(g)))) {
		snprintf(buf, len, "'%s', which holds directories of secrets", why);
		return buf;
	}
	*secret = false;
	if ((bits & BW_ACC_W) && bw_learn_in_os_tree(g))
		return "in the system's own tree, where writes stay exact";
	if (bw_learn_path_problem(g, BW_RULE_PATH_MAX, buf, len))
		return "not expressible as a rule";
	if (bw_fold_names_subtree(w, g, bits))
		return "named by an included abstraction";
	*secret = true;
	if ((why = by_learned(w, g, buf, len)))
		return why;
	if (w->fs && (why = on_disk(w, g, buf, len)))
		return why;
	*secret = false;
	return NULL;
}

static int refusal_cmp(const char *dir, unsigned bits, const struct bw_refusal *r)
{
	int c = bw_learn_path_cmp(dir, r->dir);

	return c ? c : (int)bits - (int)r->bits;
}

int bw_refused(struct bw_wctx *w, const char *g, unsigned bits, const struct bw_refusal **out)
{
	size_t lo = 0, hi = w->nrefusals;
	struct bw_refusal *r, n;
	char buf[512];
	bool secret;
	const char *why;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = refusal_cmp(g, bits, &w->refusals[mid]);

		if (!c) {
			*out = &w->refusals[mid];
			return 0;
		}
		if (c > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (w->nrefusals == w->caprefusals) {
		size_t ncap = w->caprefusals ? w->caprefusals * 2 : 16;

		r = realloc(w->refusals, ncap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		w->refusals = r;
		w->caprefusals = ncap;
	}
	why = verdict(w, g, bits, buf, sizeof(buf), &secret);
	n = (struct bw_refusal){.dir = strdup(g), .bits = bits, .why = why, .secret = secret};
	if (why == buf)
		n.why = n.buf = strdup(buf);
	if (!n.dir || (why && !n.why)) {
		free(n.dir);
		free(n.buf);
		return -ENOMEM;
	}
	r = &w->refusals[lo];
	memmove(r + 1, r, (w->nrefusals - lo) * sizeof(*r));
	*r = n;
	w->nrefusals++;
	*out = r;
	return 0;
}

void bw_refusals_free(struct bw_wctx *w)
{
	for (size_t i = 0; i < w->nrefusals; i++) {
		free(w->refusals[i].dir);
		free(w->refusals[i].buf);
	}
	free(w->refusals);
}
