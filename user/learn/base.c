// SPDX-License-Identifier: GPL-2.0-only
/*
 * The profiles a learned profile starts from (bw_learn_opts.bases): an
 * operator's `--profile START`, or the inputs of `profile merge`. Their
 * settings, includes and own rules are kept as they say; the rest of the
 * writer sees them as one more abstraction that is always included, so that
 * what they allow is not written again (docs/learn.md, "Starting from a
 * profile" and "Merging learned profiles").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const cat_names[BW_CAT_COUNT] = {"file", "exec", "net"};

/* A rule of the base's own file, not one a merge made an object again. */
static bool kept(const struct bw_wctx *w, const struct bw_profile *b, const struct bw_rule *r)
{
	if (!b->nfiles || r->origin.file != b->files[0])
		return false;
	return !((w->flags & BW_LEARN_BASE_OBJECTS) && bw_learn_rule_is_object(r));
}

bool bw_base_includes(const struct bw_wctx *w, const char *name)
{
	for (size_t i = 0; i < w->nbases; i++)
		for (size_t k = 0; k < w->bases[i]->nincludes; k++)
			if (!strcmp(w->bases[i]->includes[k], name))
				return true;
	return false;
}

/* Was include (i, k) given by an earlier base, or earlier in the same one? */
static bool include_seen(const struct bw_wctx *w, size_t i, size_t k)
{
	const char *name = w->bases[i]->includes[k];

	for (size_t a = 0; a <= i; a++)
		for (size_t b = 0; b < (a == i ? k : w->bases[a]->nincludes); b++)
			if (!strcmp(w->bases[a]->includes[b], name))
				return true;
	return false;
}

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void bw_base_put_includes(FILE *f, const struct bw_wctx *w)
{
	for (size_t i = 0; i < w->nbases; i++)
		for (size_t k = 0; k < w->bases[i]->nincludes; k++) {
			if (include_seen(w, i, k))
				continue;
			fputs("include ", f);
			put_string(f, w->bases[i]->includes[k]);
			fputc('\n', f);
		}
}

/*
 * The kept rules in canonical text, each once (rules that say the same, name
 * and all, from several bases are one), with the base rule each came from,
 * in the bases' order.
 */
struct kept_rule {
	char *text;
	const struct bw_profile *b;
	const struct bw_rule *r;
	bool dup; /* an earlier rule says the same */
};

static int kept_text_cmp(const void *a, const void *b)
{
	const struct kept_rule *x = *(const struct kept_rule *const *)a;
	const struct kept_rule *y = *(const struct kept_rule *const *)b;
	int c = strcmp(x->text, y->text);

	/* The pointers are into one array in the bases' order: the earlier first. */
	return c ? c : (x > y) - (x < y);
}

/* Marks every rule but the first of each text, through a copy sorted by text. */
static int mark_dups(struct kept_rule *v, size_t n)
{
	struct kept_rule **by_text = calloc(n + 1, sizeof(*by_text));

	if (!by_text)
		return -ENOMEM;
	for (size_t j = 0; j < n; j++)
		by_text[j] = &v[j];
	qsort(by_text, n, sizeof(*by_text), kept_text_cmp);
	for (size_t j = 1; j < n; j++)
		by_text[j]->dup = !strcmp(by_text[j]->text, by_text[j - 1]->text);
	free(by_text);
	return 0;
}

static void kept_free(struct kept_rule *v, size_t n);

static int kept_rules(const struct bw_wctx *w, struct kept_rule **out, size_t *n)
{
	struct kept_rule *v = NULL;
	size_t cap = 0, kept_n = 0;
	char buf[BW_RULE_TEXT_MAX];

	*n = 0;
	for (size_t i = 0; i < w->nbases; i++) {
		const struct bw_profile *b = w->bases[i];

		for (size_t k = 0; k < b->nrules; k++) {
			const struct bw_rule *r = &b->rules[k];

			if (!kept(w, b, r) || bw_rule_format(r, true, buf, sizeof(buf)) < 0)
				continue;
			if (*n == cap) {
				struct kept_rule *nv;

				cap = cap ? cap * 2 : 32;
				nv = realloc(v, cap * sizeof(*nv));
				if (!nv)
					goto oom;
				v = nv;
			}
			v[*n].text = strdup(buf);
			if (!v[*n].text)
				goto oom;
			v[*n].b = b;
			v[*n].r = r;
			v[(*n)++].dup = false;
		}
	}
	if (mark_dups(v, *n))
		goto oom;
	/* Drop the repeats, keeping the bases' order. */
	for (size_t j = 0; j < *n; j++) {
		if (v[j].dup)
			free(v[j].text);
		else
			v[kept_n++] = v[j];
	}
	*n = kept_n;
	*out = v;
	return 0;
oom:
	kept_free(v, *n);
	*n = 0;
	return -ENOMEM;
}

static void kept_free(struct kept_rule *v, size_t n)
{
	for (size_t j = 0; j < n; j++)
		free(v[j].text);
	free(v);
}

int bw_base_build(struct bw_wctx *w)
{
	struct kept_rule *v = NULL;
	size_t n = 0, line = 1, ninc = 0;
	FILE *f;
	int ret;

	if (!w->nbases)
		return 0;
	ret = kept_rules(w, &v, &n);
	if (ret)
		return ret;
	for (size_t i = 0; i < w->nbases; i++)
		for (size_t k = 0; k < w->bases[i]->nincludes; k++)
			ninc += !include_seen(w, i, k);
	/* Line 1 of the text this becomes part of is its "profile" line. */
	w->nbase_origin = 1 + ninc + n;
	w->base_origin = calloc(w->nbase_origin, sizeof(*w->base_origin));
	f = open_memstream(&w->base_text, &w->base_len);
	if (!w->base_origin || !f) {
		if (f)
			fclose(f);
		kept_free(v, n);
		return -ENOMEM;
	}
	bw_base_put_includes(f, w);
	line += ninc;
	for (size_t j = 0; j < n; j++) {
		fprintf(f, "%s\n", v[j].text);
		w->base_origin[line++] = &v[j].r->origin;
	}
	kept_free(v, n);
	return fclose(f) ? -ENOMEM : 0;
}

int bw_base_put_rules(FILE *f, const struct bw_wctx *w)
{
	struct kept_rule *v = NULL;
	const struct bw_profile *last = NULL;
	size_t n = 0;
	int ret = kept_rules(w, &v, &n);

	if (ret)
		return ret;
	for (size_t j = 0; j < n; j++) {
		if (v[j].b != last) {
			fputs("\n# kept from ", f);
			bw_put_comment(f, v[j].b->path ? v[j].b->path : "?");
			fputc('\n', f);
			last = v[j].b;
		}
		fprintf(f, "%s\n", v[j].text);
	}
	kept_free(v, n);
	return 0;
}

int bw_base_put_header(FILE *f, const struct bw_wctx *w, const char *name)
{
	const struct bw_profile *b = w->nbases ? w->bases[0] : NULL;
	bool mixed = false;

	fprintf(f, "profile %s\nmode %s\n", name,
		b && b->mode_given ? bw_mode_name(b->mode) : "enforce");
	if (!b) {
		fputs("default deny\n", f);
		return 0;
	}
	for (int c = 1; c < BW_CAT_COUNT; c++)
		mixed |= b->defaults[c] != b->defaults[0];
	if (!mixed)
		fprintf(f, "default %s\n", bw_verdict_name(b->defaults[0]));
	for (int c = 0; mixed && c < BW_CAT_COUNT; c++)
		fprintf(f, "default %s %s\n", bw_verdict_name(b->defaults[c]), cat_names[c]);
	if (b->on_deny == BW_ON_DENY_KILL)
		fputs("on-deny kill\n", f);
	for (size_t i = 0; i < b->nmatches; i++) {
		const struct bw_match *m = &b->matches[i];
		/* Room for every selector; a match line is never cut. */
		size_t len = 64 + (m->cgroup ? strlen(m->cgroup) : 0) +
			     (m->namespace_ ? strlen(m->namespace_) : 0) +
			     (m->pod ? strlen(m->pod) : 0) +
			     (m->container ? strlen(m->container) : 0);
		char *line = malloc(len);

		if (!line)
			return -ENOMEM;
		if (bw_match_format(m, line, len) >= 0)
			fprintf(f, "%s\n", line);
		free(line);
	}
	return 0;
}

void bw_base_free(struct bw_wctx *w)
{
	free(w->base_text);
	free(w->base_origin);
}
