/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Inside the profile writer: the set's objects and the state its stages share.
 * The stages, in the order bw_learn_write_profile runs them:
 *   set.c        accesses merged per object (bw_learn_add); merge.c reads a
 *                learned profile's object rules back into a set (profile merge)
 *   base.c       the profiles it starts from: settings, includes, kept rules
 *   fold.c       which shipped abstractions to include, and what they decide
 *   generalise.c which directories become subtree rules (DIR/...)
 *   refuse.c     which directories never may: system ones, and secrets
 *   rules.c      the rules and their comments, section by section
 *   write.c      the whole text, checked by parsing and compiling it
 * names.c and secrets.c hold the predicates on names they use (learn_names.h),
 * agent.c the glue to the agent. docs/learn.md is the specification: what each
 * stage decides and why.
 */
#ifndef BW_LEARN_INTERNAL_H
#define BW_LEARN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "compile.h"
#include "learn.h"

/* ---- the set (set.c) ---- */

struct bw_progs {
	char *v[BW_LEARN_PROGS]; /* sorted, distinct */
	unsigned n;
	bool more; /* a name that is not kept was seen */
};

struct bw_lobj {
	char *key; /* identity: a tag byte, then the object's bytes */
	size_t keylen;
	uint64_t hash;
	enum bw_cat cat;
	/* file: BW_ACC_R | BW_ACC_W; exec, as the exec trie's slots: BW_ACC_R run,
	 * BW_ACC_W mapped executable; net: BW_ACC_R */
	unsigned access;
	char *path;    /* file, exec (NULL: memfd); unix: the name */
	int op, proto; /* net; BW_CAT_NS: op is the BW_NS_* */
	uint8_t addr[16];
	uint16_t port;
	unsigned long long count;
	struct bw_progs progs;
	bool here; /* seen by the agent at path too: bw_learned.here */
};

struct bw_learn_set {
	struct bw_lobj *v;
	size_t n, cap;
	size_t *tab; /* open addressing: index + 1, 0 is empty */
	size_t tabsz;
	unsigned long long events;
};

int bw_progs_add(struct bw_progs *p, const char *name);
int bw_progs_merge(struct bw_progs *into, const struct bw_progs *from);
void bw_progs_free(struct bw_progs *p);
/* An IPv4-mapped IPv6 address (::ffff:a.b.c.d)? */
bool bw_addr_is_mapped(const uint8_t *a);
/* 0.0.0.0 (as ::ffff:0.0.0.0) or ::, the wildcard address. */
bool bw_addr_is_any(const uint8_t *a);

/* ---- the writer's state ---- */

/* Learned objects an abstraction but the base must allow alone to be included. */
#define BW_FOLD_MIN 3
unsigned bw_fold_min(const char *name);

/* One abstraction named in opts->abstractions, loaded alone. */
struct bw_fold {
	const char *name;
	struct bw_profile *p;
	struct bw_compiled c;
	bool loaded;
	char why[512]; /* not loaded: the reason */
	size_t allows; /* learned objects it allows alone */
};

/* An object as the included abstractions decide it. */
struct bw_ostate {
	unsigned need;	  /* bits to allow */
	unsigned allowed; /* by the included abstractions */
	unsigned denied;  /* denied by them */
	unsigned blocked; /* denied on the object's own key: no rule of ours can win */
	unsigned rule_r, rule_w;
};

/* A file access left to write, and how it ends up. */
struct bw_fres {
	const struct bw_lobj *o;
	const struct bw_ostate *st;
	unsigned bits;		  /* what is left to allow */
	bool pinned;		  /* exact rule only */
	long cand;		  /* the subtree rule covering it, or -1 */
	const char *vol;	  /* a per-run component that was not generalised */
	size_t vol_len, vol_plen; /* its length, its parent's */
	const char *vol_why;
	const char *vol_refused; /* why its parent may not be a subtree rule */
	/*
	 * The per-run leaf's lasting beginning (bw_learn_per_run_stem), when the
	 * file is written as the name prefix DIR/STEM* instead; stem_merged: an
	 * earlier file's prefix rule is the same one and carries its access.
	 */
	size_t stem_len;
	bool stem_merged;
	const char *secret; /* why its directory may not be either, for secrets */
};

/* A subtree rule to write: `allow file BITS DIR/...` (a final "**" in the profile). */
struct bw_cand {
	char *dir;
	unsigned bits;
	size_t fanout;	      /* files directly in it that made it */
	unsigned fanout_bits; /* their access */
	char *vol;	      /* or: an example per-run name below it */
	const char *vol_why;
	bool dead;	/* an ancestor's rule covers it */
	bool read_back; /* written only: read too, the workload's own (generalise.c) */
	char *named_by; /* a content root: the configuration file that names it */
	unsigned named_line;
	unsigned long long count;
	size_t nfiles;
	struct bw_progs progs;
};

/* Whether `allow file BITS DIR/...` may be written. */
struct bw_refusal {
	char *dir;
	unsigned bits;
	const char *why; /* NULL: it may; else in words a comment shows after "DIR is " */
	char *buf;	 /* what `why` points to when it names what was found */
	bool secret;	 /* refused for secrets (the reviewer is told, even on fan-out) */
};

struct bw_wctx {
	const struct bw_learn_set *s;
	const char *libdir;
	/* Where an include is looked up first: the first base's directory, else libdir. */
	const char *incdir;
	const struct bw_profile *const *bases;
	size_t nbases;
	/* The bases' includes and kept rules as profile lines (base.c), and for each
	 * line of it (index: line - 1, counting the "profile" line before it) the
	 * base rule it came from, so that a comment names the base's FILE:LINE. */
	char *base_text;
	size_t base_len;
	const struct bw_origin **base_origin;
	size_t nbase_origin;
	const struct bw_learn_fs *fs;
	unsigned min_children, flags;
	struct bw_fold *folds;
	size_t nfolds;
	struct bw_profile *cp; /* the included abstractions, together */
	struct bw_compiled cc;
	bool have_cc;
	struct bw_ostate *st; /* per object */
	struct bw_fres *fr;   /* files left to write, sorted by path */
	size_t nfr;
	const struct bw_lobj **files; /* every learned file, sorted by path */
	size_t nfiles;
	struct bw_cand *cands;
	size_t ncands;
	struct bw_refusal *refusals; /* what bw_refused found, sorted by directory */
	size_t nrefusals, caprefusals;
	char *why; /* bw_learn_opts.why */
	size_t why_len;
};

/* base.c: w->base_text and w->base_origin from w->bases. 0 or -ENOMEM. */
int bw_base_build(struct bw_wctx *w);
/* Write the bases' includes (each once) to f. */
void bw_base_put_includes(FILE *f, const struct bw_wctx *w);
/* Is include `name` one of the bases'? */
bool bw_base_includes(const struct bw_wctx *w, const char *name);
/* Write the kept rules under "# kept from FILE" headers (nothing when there are none). */
int bw_base_put_rules(FILE *f, const struct bw_wctx *w);
/* The header lines: profile, mode, default, on-deny, match. 0 or -ENOMEM. */
int bw_base_put_header(FILE *f, const struct bw_wctx *w, const char *name);
void bw_base_free(struct bw_wctx *w);

/* fold.c: load the abstractions, include those that allow something learned, decide every
 * object by those included together (w->st). 0, -ENOMEM, or -EINVAL when they do not load
 * together. */
int bw_fold_all(struct bw_wctx *w, const char *const *names);
/* Does an included abstraction name (g, subtree) with one of `bits`? */
bool bw_fold_names_subtree(const struct bw_wctx *w, const char *g, unsigned bits);
void bw_fold_free(struct bw_wctx *w);

/* generalise.c: subtree candidates from w->fr, and which file each one covers. */
int bw_generalise(struct bw_wctx *w);
void bw_cands_free(struct bw_wctx *w);

/* refuse.c: set *r to the verdict on `allow file BITS G/...`, kept in w->refusals (a
 * directory is looked at once; *r is valid until the next call, its strings until
 * bw_refusals_free). 0 or -ENOMEM. */
int bw_refused(struct bw_wctx *w, const char *g, unsigned bits, const struct bw_refusal **r);
/* The learned file at `path`, or NULL. */
const struct bw_lobj *bw_learned_file(const struct bw_wctx *w, const char *path);
void bw_refusals_free(struct bw_wctx *w);

/* rules.c: the three sections. */
int bw_write_files(FILE *f, struct bw_wctx *w);
int bw_write_execs(FILE *f, const struct bw_wctx *w);
int bw_write_net(FILE *f, const struct bw_wctx *w);
/* Mounts, chroot and user namespaces: nothing at all (not even a header) when none was learned. */
int bw_write_view(FILE *f, const struct bw_wctx *w);
/* Comment text: control bytes as \xNN, so nothing can end the comment's line. */
void bw_put_comment(FILE *f, const char *s);
/* Where rule `rid` of the included abstractions is: FILE:LINE, FILE relative to the library. */
void bw_put_origin(FILE *f, const struct bw_wctx *w, unsigned rid);

#endif /* BW_LEARN_INTERNAL_H */
