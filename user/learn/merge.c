// SPDX-License-Identifier: GPL-2.0-only
/*
 * Learned profiles read back as what was learned, for `profile merge`: the
 * rules that stand for one object each become objects of a set again, with
 * the count and programs their "# seen" comment gives, so that the writer
 * generalises over the union of several runs as it would over one run that
 * did all of it (docs/learn.md, "Merging learned profiles"). Every other rule
 * is a base's rule, kept as written (write.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static bool single_address(const struct bw_net_rule *n)
{
	static const uint8_t zero[16];

	if (n->localhost || n->port_lo != n->port_hi)
		return false;
	if (n->family == 4)
		return n->prefixlen == 32 && (n->op == BW_NET_BIND || memcmp(n->addr, zero, 4));
	if (n->family == 6)
		return n->prefixlen == 128 && (n->op == BW_NET_BIND || memcmp(n->addr, zero, 16));
	return false;
}

bool bw_learn_rule_is_object(const struct bw_rule *r)
{
	if (r->verdict != BW_V_ALLOW || r->name)
		return false;
	switch (r->cat) {
	case BW_CAT_FILE:
		return r->file.path && !r->file.subtree && !r->file.name_prefix &&
		       (r->file.access & (BW_ACC_R | BW_ACC_W));
	case BW_CAT_EXEC:
		return r->file.memfd || (r->file.path && !r->file.subtree && !r->file.name_prefix);
	case BW_CAT_NET:
		if (r->net.op == BW_NET_RAW || r->net.op == BW_NET_ADMIN)
			return true;
		/* A DIR subtree rule is written by hand, as file subtrees are: kept as is. */
		if (r->net.proto == BW_NET_UNIX)
			return r->net.unix_path != NULL &&
			       (r->net.unix_abstract || !bw_unix_name_is_subtree(r->net.unix_path));
		return single_address(&r->net);
	case BW_CAT_NS:
		return true;
	default:
		return false;
	}
}

/* The learned record a rule stands for (strings point into the rule, or into `ubuf`). */
static void record_of(const struct bw_rule *r, struct bw_learned *l, char *ubuf, size_t ulen)
{
	memset(l, 0, sizeof(*l));
	l->cat = r->cat;
	switch (r->cat) {
	case BW_CAT_FILE:
		l->access = r->file.access & (BW_ACC_R | BW_ACC_W);
		l->path = r->file.path;
		break;
	case BW_CAT_EXEC:
		l->access = r->file.access & (BW_ACC_X | BW_ACC_M);
		l->path = r->file.memfd ? NULL : r->file.path;
		break;
	case BW_CAT_NET:
		l->net_op = r->net.op;
		l->proto = r->net.proto;
		if (r->net.proto == BW_NET_UNIX) {
			snprintf(ubuf, ulen, "%s%s", r->net.unix_abstract ? "@" : "",
				 r->net.unix_path);
			l->unix_name = ubuf;
		} else {
			l->family = r->net.family;
			memcpy(l->addr, r->net.addr, 16);
		}
		l->port = r->net.port_lo;
		break;
	default:
		l->what = r->ns.what;
		break;
	}
}

/* Line `line` (1-based) of text: its start, and its length in *n; NULL past the end. */
static const char *line_at(const char *text, size_t len, int line, size_t *n)
{
	const char *p = text, *end = text + len, *nl;

	for (int i = 1; i < line; i++) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return NULL;
		p = nl + 1;
	}
	nl = memchr(p, '\n', (size_t)(end - p));
	*n = (size_t)((nl ? nl : end) - p);
	return p;
}

struct seen {
	unsigned long long count;
	char *progs[BW_LEARN_PROGS];
	unsigned n;
	bool more;
};

/*
 * "# seen N time[s][, by A, B, C][, and others][; note]", as the writer's put_seen
 * makes it. Anything else is no evidence: one access, no program.
 */
static int parse_seen(const char *s, size_t n, struct seen *out)
{
	static const char lead[] = "# seen ";
	const char *end = s + n, *p;
	char *stop;

	memset(out, 0, sizeof(*out));
	out->count = 1;
	if (n < sizeof(lead) || memcmp(s, lead, sizeof(lead) - 1))
		return 0;
	p = s + sizeof(lead) - 1;
	if (*p < '0' || *p > '9')
		return 0;
	unsigned long long c = strtoull(p, &stop, 10);

	if (stop >= end || !c)
		return 0;
	p = stop;
	if ((size_t)(end - p) >= 6 && !memcmp(p, " times", 6))
		p += 6;
	else if ((size_t)(end - p) >= 5 && !memcmp(p, " time", 5))
		p += 5;
	else
		return 0;
	if (p < end && *p != ',' && *p != ';')
		return 0;
	out->count = c;
	/* The note after "; " is the writer's, made again. */
	const char *semi = p;

	while (semi + 1 < end && !(semi[0] == ';' && semi[1] == ' '))
		semi++;
	if (semi + 1 >= end)
		semi = end;
	if ((size_t)(semi - p) > 5 && !memcmp(p, ", by ", 5)) {
		p += 5;
		while (p < semi) {
			const char *q = p;

			while (q + 1 < semi && !(q[0] == ',' && q[1] == ' '))
				q++;
			if (q + 1 >= semi)
				q = semi;
			if ((size_t)(q - p) == 10 && !memcmp(p, "and others", 10))
				out->more = true;
			else if (q > p && out->n < BW_LEARN_PROGS &&
				 !(out->progs[out->n++] = strndup(p, (size_t)(q - p))))
				return -ENOMEM;
			p = q < semi ? q + 2 : semi;
		}
	} else if ((size_t)(semi - p) >= 12 && !memcmp(p, ", and others", 12)) {
		out->more = true;
	}
	return 0;
}

long bw_learn_add_profile(struct bw_learn_set *s, const struct bw_profile *p, const char *text,
			  size_t len)
{
	long added = 0;

	for (size_t i = 0; i < p->nrules; i++) {
		const struct bw_rule *r = &p->rules[i];
		char ubuf[BW_UNIX_PATH_MAX + 2];
		struct bw_learned l;
		struct seen seen;
		const char *above;
		size_t n = 0;
		int ret = 0;

		if (!p->nfiles || r->origin.file != p->files[0] || !bw_learn_rule_is_object(r))
			continue;
		above = r->origin.line > 1 ? line_at(text, len, r->origin.line - 1, &n) : NULL;
		if (parse_seen(above ? above : "", n, &seen))
			ret = -ENOMEM;
		record_of(r, &l, ubuf, sizeof(ubuf));
		l.more_programs = seen.more;
		/* The count goes with the first program; each other adds one access. */
		for (unsigned k = 0; !ret && k < (seen.n ? seen.n : 1); k++) {
			l.program = seen.n ? seen.progs[k] : NULL;
			l.count = k			? 1
				  : seen.count > seen.n ? seen.count - (seen.n ? seen.n - 1 : 0)
							: 1;
			ret = bw_learn_add(s, &l);
		}
		for (unsigned k = 0; k < seen.n; k++)
			free(seen.progs[k]);
		if (ret == -EINVAL)
			continue; /* names no object the set keeps (cannot happen for a parsed rule)
				   */
		if (ret)
			return ret;
		added++;
	}
	return added;
}
