// SPDX-License-Identifier: GPL-2.0-only
/*
 * Checks across the whole profile once every include is read: the profile
 * has a name, the rule count is within BW_MAX_RULES, and no rule repeats or
 * contradicts another on the same object. Rules are sorted by object so the
 * duplicate check costs n log n, then each group is walked in file order.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <bpfwarden.h>

#include "parser.h"

static int cmp_int(long a, long b)
{
	return a < b ? -1 : a > b;
}

static int cmp_str(const char *a, const char *b)
{
	if (!a || !b)
		return cmp_int(a != NULL, b != NULL);
	return strcmp(a, b);
}

/* Order by object (category and what the rule names), ignoring verdict. */
static int cmp_object(const struct bw_rule *a, const struct bw_rule *b)
{
	int c = cmp_int(a->cat, b->cat);

	if (c)
		return c;
	if (a->cat == BW_CAT_NS)
		return cmp_int(a->ns.what, b->ns.what);
	if (a->cat != BW_CAT_NET) {
		if ((c = cmp_int(a->file.memfd, b->file.memfd)))
			return c;
		if ((c = cmp_int(a->file.subtree, b->file.subtree)))
			return c;
		if ((c = cmp_int(a->file.name_prefix, b->file.name_prefix)))
			return c;
		return cmp_str(a->file.path, b->file.path);
	}
	const struct bw_net_rule *x = &a->net, *y = &b->net;
	if ((c = cmp_int(x->op, y->op)) || (c = cmp_int(x->proto, y->proto)) ||
	    (c = cmp_int(x->family, y->family)) || (c = cmp_int(x->localhost, y->localhost)) ||
	    (c = cmp_int(x->prefixlen, y->prefixlen)) ||
	    (c = memcmp(x->addr, y->addr, sizeof(x->addr))) ||
	    (c = cmp_int(x->port_lo, y->port_lo)) || (c = cmp_int(x->port_hi, y->port_hi)) ||
	    (c = cmp_int(x->unix_abstract, y->unix_abstract)))
		return c;
	return cmp_str(x->unix_path, y->unix_path);
}

static int cmp_index(const void *pa, const void *pb, void *arg)
{
	const struct bw_rule *rules = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = cmp_object(&rules[a], &rules[b]);

	return c ? c : cmp_int((long)a, (long)b);
}

/*
 * File rules overlap by access bit, exec rules by what they decide (running,
 * mapping: `exec lib` overlaps `exec` on mapping); net and view rules always
 * overlap.
 */
static unsigned access_bits(const struct bw_rule *r)
{
	return r->cat == BW_CAT_FILE || r->cat == BW_CAT_EXEC ? bw_rule_slots(r) : 1;
}

#define NONE SIZE_MAX

static void check_duplicates(struct bw_parser *ps)
{
	struct bw_profile *p = ps->p;
	size_t n = p->nrules, *order, *dup, *contra;

	if (n < 2)
		return;
	order = malloc(n * sizeof(*order));
	dup = malloc(n * sizeof(*dup));
	contra = malloc(n * sizeof(*contra));
	if (!order || !dup || !contra) {
		ps->err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		order[i] = i;
		dup[i] = contra[i] = NONE;
	}
	qsort_r(order, n, sizeof(*order), cmp_index, p->rules);

	for (size_t g = 0; g < n;) {
		size_t end = g + 1;
		while (end < n && cmp_object(&p->rules[order[g]], &p->rules[order[end]]) == 0)
			end++;
		/* first[verdict][bit]: the earliest rule of the group with that access */
		size_t first[2][2] = {{NONE, NONE}, {NONE, NONE}};
		for (size_t k = g; k < end; k++) {
			size_t i = order[k];
			const struct bw_rule *r = &p->rules[i];
			int v = r->verdict == BW_V_DENY;
			unsigned bits = access_bits(r);
			for (int b = 0; b < 2; b++) {
				if (!(bits & (1u << b)))
					continue;
				if (first[v][b] < dup[i])
					dup[i] = first[v][b];
				if (first[!v][b] < contra[i])
					contra[i] = first[!v][b];
			}
			for (int b = 0; b < 2; b++) {
				if ((bits & (1u << b)) && first[v][b] == NONE)
					first[v][b] = i;
			}
		}
		g = end;
	}

	for (size_t i = 0; i < n && !ps->stop && !ps->err; i++) {
		const struct bw_origin *o = &p->rules[i].origin;
		if (dup[i] != NONE) {
			const struct bw_origin *f = &p->rules[dup[i]].origin;
			bw_report(ps, BW_SEV_WARNING, o->file, o->line, o->col,
				  "duplicate rule (first at %s:%d)", f->file, f->line);
		}
		if (contra[i] != NONE) {
			const struct bw_origin *f = &p->rules[contra[i]].origin;
			bw_report(ps, BW_SEV_WARNING, o->file, o->line, o->col,
				  "contradicts %s:%d; deny wins", f->file, f->line);
		}
	}
out:
	free(order);
	free(dup);
	free(contra);
}

void bw_validate(struct bw_parser *ps)
{
	struct bw_profile *p = ps->p;

	if (ps->stop || ps->err)
		return;
	if (!p->name)
		bw_report(ps, BW_SEV_ERROR, p->files[0], 1, 1,
			  "missing 'profile NAME' line (the top-level file must name the profile)");
	if (ps->rules_seen > BW_MAX_RULES)
		bw_report(ps, BW_SEV_ERROR, ps->over_at.file, ps->over_at.line, ps->over_at.col,
			  "too many rules: %zu after includes, the limit is %d (BW_MAX_RULES)",
			  ps->rules_seen, BW_MAX_RULES);
	check_duplicates(ps);
}
