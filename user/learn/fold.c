// SPDX-License-Identifier: GPL-2.0-only
/*
 * Folding into abstractions: an abstraction of the profile library is
 * included when, alone, it allows a learned object entirely; then what the
 * included ones decide together settles what is left to write for each
 * object (docs/learn.md, "Folding").
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
 * `include` each of names, after the bases' lines (w->base_text) when
 * with_base: parsed as a file in w->incdir would be, and compiled.
 */
static int load_abstractions(const struct bw_wctx *w, bool with_base, const char *const *names,
			     size_t n, struct bw_profile **p, struct bw_compiled *c, char *why,
			     size_t whylen)
{
	struct bw_diags d = {0};
	char *text = NULL, *fname = NULL;
	size_t tlen = 0;
	FILE *f;
	int ret;

	*p = NULL;
	f = open_memstream(&text, &tlen);
	if (!f)
		return -ENOMEM;
	fputs("profile bw-learn\n", f);
	if (with_base && w->base_len)
		fwrite(w->base_text, 1, w->base_len, f);
	for (size_t i = 0; i < n; i++) {
		fputs("include \"", f);
		for (const char *q = names[i]; *q; q++) {
			if (*q == '"' || *q == '\\')
				fputc('\\', f);
			fputc(*q, f);
		}
		fputs("\"\n", f);
	}
	if (fclose(f))
		ret = -ENOMEM;
	else if (w->incdir ? asprintf(&fname, "%s/.bw-learn", w->incdir) < 0
			   : !(fname = strdup(".bw-learn")))
		ret = -ENOMEM;
	else
		ret = bw_profile_parse_string(fname, text, tlen, w->libdir, p, &d);
	if (ret == -EINVAL) {
		for (size_t i = 0; i < d.n; i++) {
			if (d.v[i].severity == BW_SEV_ERROR) {
				snprintf(why, whylen, "%s", d.v[i].msg);
				break;
			}
		}
	} else if (ret == 0) {
		ret = bw_compile(*p, c, why, whylen);
		if (ret) {
			bw_profile_free(*p);
			*p = NULL;
		}
	} else {
		snprintf(why, whylen, "%s", strerror(-ret));
	}
	bw_diags_free(&d);
	free(text);
	free(fname);
	return ret;
}

static int nop_of(int op)
{
	return op == BW_NET_BIND ? BW_NOP_BIND : BW_NOP_CONNECT;
}

static int ipproto_of(int proto)
{
	return proto == BW_NET_UDP ? IPPROTO_UDP : IPPROTO_TCP;
}

/* An object with one rule or none (`net raw`, `mount`...), decided by its verdict and rule. */
static void decide_one(struct bw_ostate *v, __u8 verdict, __u16 rule)
{
	if (verdict == BW_V_DENY)
		v->denied = v->blocked = BW_ACC_R;
	else if (verdict == BW_V_ALLOW)
		v->allowed = BW_ACC_R;
	v->rule_r = rule;
}

/* How the compiled rules `c` decide object o. */
static void decide(const struct bw_compiled *c, const struct bw_lobj *o, struct bw_ostate *v)
{
	memset(v, 0, sizeof(*v));
	v->need = o->access;
	if (o->cat == BW_CAT_FILE || (o->cat == BW_CAT_EXEC && o->path)) {
		const struct bw_file_entry *e;
		bool own;

		if (!o->path || o->path[0] != '/')
			return;
		if (o->cat == BW_CAT_FILE)
			e = bw_entries_find(c->files, c->nfiles, o->path);
		else
			e = bw_entries_find(c->execs, c->nexecs, o->path);
		if (!e)
			return;
		own = e->key[e->keylen - 1] == '\0';
		if (v->need & BW_ACC_R) {
			v->allowed |= e->val.verdict_r == BW_V_ALLOW ? BW_ACC_R : 0;
			v->denied |= e->val.verdict_r == BW_V_DENY ? BW_ACC_R : 0;
			v->rule_r = e->val.rule_r;
		}
		if (v->need & BW_ACC_W) {
			v->allowed |= e->val.verdict_w == BW_V_ALLOW ? BW_ACC_W : 0;
			v->denied |= e->val.verdict_w == BW_V_DENY ? BW_ACC_W : 0;
			v->rule_w = e->val.rule_w;
		}
		if (own)
			v->blocked = v->denied;
		return;
	}
	if (o->cat == BW_CAT_EXEC) {
		/* `exec memfd` decides running and mapping alike. */
		if (c->memfd_denied)
			v->denied = v->blocked = v->need;
		else if (c->policy.exec_memfd)
			v->allowed = v->need;
		v->rule_r = c->policy.exec_memfd_rule;
		return;
	}
	if (o->cat == BW_CAT_NS) {
		decide_one(v, c->policy.ns[o->op], bw_ns_rule(&c->policy, o->op));
		return;
	}
	if (o->op == BW_NET_RAW) {
		decide_one(v, c->policy.net_raw, c->policy.net_raw_rule);
		return;
	}
	if (o->op == BW_NET_ADMIN) {
		decide_one(v, c->policy.net_admin, c->policy.net_admin_rule);
		return;
	}
	if (o->proto == BW_NET_UNIX) {
		for (size_t i = 0; i < c->nunixes; i++) {
			const struct bw_unix_entry *u = &c->unixes[i];

			if (u->key.op != nop_of(o->op) || strcmp(u->key.name, o->path))
				continue;
			if (u->val.verdict == BW_V_DENY)
				v->denied = v->blocked = BW_ACC_R;
			else
				v->allowed = BW_ACC_R;
			v->rule_r = u->val.rule;
		}
		return;
	}
	const struct bw_port_range *r =
	    bw_net_lookup(c, nop_of(o->op), ipproto_of(o->proto), o->addr, o->port);

	if (!r)
		return;
	v->rule_r = r->rule;
	if (r->verdict == BW_V_ALLOW) {
		v->allowed = BW_ACC_R;
		return;
	}
	v->denied = BW_ACC_R;
	/* Our rule would be the full address and the port alone: a deny there wins. */
	for (size_t i = 0; i < c->nnets; i++) {
		const struct bw_net_entry *e = &c->nets[i];

		if (e->key.op != nop_of(o->op) || e->key.proto != ipproto_of(o->proto) ||
		    e->key.prefixlen != 128 || memcmp(e->key.addr, o->addr, 16))
			continue;
		for (unsigned k = 0; k < e->own.n; k++)
			if (e->own.r[k].verdict == BW_V_DENY && e->own.r[k].lo == o->port &&
			    e->own.r[k].hi == o->port)
				v->blocked = BW_ACC_R;
	}
}

bool bw_fold_names_subtree(const struct bw_wctx *w, const char *g, unsigned bits)
{
	if (!w->cp)
		return false;
	for (size_t i = 0; i < w->cp->nrules; i++) {
		const struct bw_rule *r = &w->cp->rules[i];

		if (r->cat == BW_CAT_FILE && r->file.subtree && r->file.path &&
		    (r->file.access & bits) && !strcmp(r->file.path, g))
			return true;
	}
	return false;
}

/*
 * Learned objects an abstraction must allow alone to be included. An
 * abstraction is for something (a language's runtime, a shell's utilities):
 * a workload that uses it touches many of its objects. One or two is a
 * program touching a shared file in passing (a web server reading OpenSSL's
 * configuration, which the Python abstraction lists for hashlib), and
 * including it would allow all the rest; those objects get rules of their
 * own. The base abstraction is what every dynamically linked program loads:
 * one is enough.
 */
unsigned bw_fold_min(const char *name)
{
	return strcmp(name, "abstractions/base") ? BW_FOLD_MIN : 1;
}

int bw_fold_all(struct bw_wctx *w, const char *const *names)
{
	struct bw_profile *bp = NULL; /* the bases alone, compiled into bc */
	struct bw_compiled bc;
	bool have_bc = false;
	const char **inc = NULL;
	bool *base_allows = NULL;
	size_t ninc = 0, i, j;
	char why[512] = "";
	int ret;

	for (i = 0; names && names[i]; i++)
		;
	w->folds = calloc(i + 1, sizeof(*w->folds));
	inc = calloc(i + 1, sizeof(*inc));
	if (!w->folds || !inc) {
		free(inc);
		return -ENOMEM;
	}
	/* What the bases allow alone: an abstraction is not included for that. */
	base_allows = calloc(w->s->n + 1, sizeof(*base_allows));
	if (!base_allows) {
		ret = -ENOMEM;
		goto out;
	}
	if (w->nbases) {
		ret = load_abstractions(w, true, NULL, 0, &bp, &bc, why, sizeof(why));
		if (ret) {
			/* Each base loaded alone; kept together, they may pass a limit. */
			if (w->why_len)
				snprintf(w->why, w->why_len,
					 "the rules kept from the starting profiles do not load "
					 "together: %s",
					 why);
			goto out;
		}
		have_bc = true;
		for (j = 0; j < w->s->n; j++) {
			struct bw_ostate v;

			decide(&bc, &w->s->v[j], &v);
			base_allows[j] = (v.need & ~v.allowed) == 0;
		}
	}
	for (i = 0, w->nfolds = 0; names && names[i]; i++) {
		struct bw_fold *fo = &w->folds[w->nfolds];

		/* A name given twice is one include; a base's is included anyway. */
		for (j = 0; j < w->nfolds && strcmp(w->folds[j].name, names[i]); j++)
			;
		if (j < w->nfolds || bw_base_includes(w, names[i]))
			continue;
		w->nfolds++;
		fo->name = names[i];
		ret = load_abstractions(w, false, &names[i], 1, &fo->p, &fo->c, fo->why,
					sizeof(fo->why));
		if (ret == -ENOMEM)
			goto out;
		fo->loaded = ret == 0;
		for (j = 0; fo->loaded && j < w->s->n; j++) {
			struct bw_ostate v;

			if (base_allows[j])
				continue;
			decide(&fo->c, &w->s->v[j], &v);
			fo->allows += (v.need & ~v.allowed) == 0;
		}
		if (fo->allows >= bw_fold_min(fo->name))
			inc[ninc++] = fo->name;
	}
	ret = 0;
	if (!ninc && have_bc) {
		/* Nothing included: what decides is the bases' compile, already made. */
		w->cp = bp;
		w->cc = bc;
		w->have_cc = true;
		have_bc = false;
	} else if (ninc || w->nbases) {
		ret = load_abstractions(w, true, inc, ninc, &w->cp, &w->cc, why, sizeof(why));
		if (ret) {
			/* Each loads alone; together they may pass a limit. */
			if (w->why_len)
				snprintf(w->why, w->why_len,
					 "the kept rules and the abstractions included do not load "
					 "together: %s",
					 why);
			goto out;
		}
		w->have_cc = true;
	}
	for (j = 0; j < w->s->n; j++) {
		if (w->have_cc) {
			decide(&w->cc, &w->s->v[j], &w->st[j]);
		} else {
			memset(&w->st[j], 0, sizeof(w->st[j]));
			w->st[j].need = w->s->v[j].access;
		}
	}
out:
	if (have_bc) {
		bw_compiled_free(&bc);
		bw_profile_free(bp);
	}
	free(base_allows);
	free(inc);
	return ret;
}

void bw_fold_free(struct bw_wctx *w)
{
	for (size_t i = 0; i < w->nfolds; i++) {
		if (w->folds[i].loaded)
			bw_compiled_free(&w->folds[i].c);
		bw_profile_free(w->folds[i].p);
	}
	free(w->folds);
	if (w->have_cc)
		bw_compiled_free(&w->cc);
	bw_profile_free(w->cp);
}
