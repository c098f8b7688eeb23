// SPDX-License-Identifier: GPL-2.0-only
/*
 * Two versions of a profile compared as an operator reviews a relearned or
 * edited one: rules are matched by their canonical text (bw_rule_format,
 * without the name), so a rule that moved is unchanged; what is left on
 * each side is paired when one rule covers the other (a widened or a
 * narrowed rule), and the rest is added or removed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

/* Past this many unmatched pairs, rules are not paired: only added and removed. */
#define PAIRING_MAX (4u << 20)

struct side {
	const struct bw_profile *p;
	char (*text)[BW_RULE_TEXT_MAX];
	size_t *order; /* rule indexes sorted by text */
	long *peer;    /* the other side's rule it matched or pairs with, -1 */
	char *kind;    /* 0, '=', '>', '<' */
};

static const struct side *sort_side;

static int by_text(const void *x, const void *y)
{
	const size_t *i = x, *j = y;
	int r = strcmp(sort_side->text[*i], sort_side->text[*j]);

	return r ? r : (*i > *j) - (*i < *j);
}

static int side_init(struct side *s, const struct bw_profile *p)
{
	size_t n = p->nrules ? p->nrules : 1;

	s->p = p;
	s->text = calloc(n, sizeof(*s->text));
	s->order = calloc(n, sizeof(*s->order));
	s->peer = calloc(n, sizeof(*s->peer));
	s->kind = calloc(n, 1);
	if (!s->text || !s->order || !s->peer || !s->kind)
		return -ENOMEM;
	for (size_t i = 0; i < p->nrules; i++) {
		bw_rule_format(&p->rules[i], false, s->text[i], sizeof(s->text[i]));
		s->order[i] = i;
		s->peer[i] = -1;
	}
	sort_side = s;
	qsort(s->order, p->nrules, sizeof(*s->order), by_text);
	return 0;
}

static void side_free(struct side *s)
{
	free(s->text);
	free(s->order);
	free(s->peer);
	free(s->kind);
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return true;
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/* Does the path part of x decide every path y's does? */
static bool path_covers(const struct bw_file_rule *x, const struct bw_file_rule *y)
{
	if (x->memfd || y->memfd)
		return x->memfd && y->memfd;
	if (x->subtree)
		return under(y->path, x->path);
	if (x->name_prefix) {
		/* DIR/NAME* decides the names of DIR beginning with NAME, not below them. */
		size_t n = strlen(x->path);

		return !y->subtree && !strncmp(y->path, x->path, n) && !strchr(y->path + n, '/');
	}
	return !y->subtree && !y->name_prefix && !strcmp(x->path, y->path);
}

static bool addr_covers(const struct bw_net_rule *x, const struct bw_net_rule *y)
{
	static const uint8_t lo6[16] = {[15] = 1};

	if (!x->family && !x->localhost)
		return true; /* `*` */
	if (x->localhost)
		return y->localhost || (y->family == 4 && y->addr[0] == 127 && y->prefixlen >= 8) ||
		       (y->family == 6 && y->prefixlen == 128 && !memcmp(y->addr, lo6, 16));
	if (y->family != x->family || y->prefixlen < x->prefixlen)
		return false;
	for (int bit = 0; bit < x->prefixlen; bit++) {
		uint8_t m = 0x80 >> (bit % 8);

		if ((x->addr[bit / 8] & m) != (y->addr[bit / 8] & m))
			return false;
	}
	return true;
}

bool bw_rule_covers(const struct bw_rule *x, const struct bw_rule *y)
{
	if (x->cat != y->cat || x->verdict != y->verdict)
		return false;
	switch (x->cat) {
	case BW_CAT_FILE:
	case BW_CAT_EXEC:
		return (x->file.access & y->file.access) == y->file.access &&
		       path_covers(&x->file, &y->file);
	case BW_CAT_NET:
		if (x->net.op != y->net.op || x->net.proto != y->net.proto)
			return false;
		if (x->net.op == BW_NET_RAW || x->net.op == BW_NET_ADMIN)
			return true;
		if (x->net.proto == BW_NET_UNIX)
			return x->net.unix_abstract == y->net.unix_abstract &&
			       !strcmp(x->net.unix_path, y->net.unix_path);
		return addr_covers(&x->net, &y->net) && x->net.port_lo <= y->net.port_lo &&
		       y->net.port_hi <= x->net.port_hi;
	default:
		return x->ns.what == y->ns.what;
	}
}

static void origin(char *buf, size_t len, const struct bw_origin *o)
{
	bw_origin_format(o, buf, len);
}

static int setting(FILE *out, const char *what, const char *from, const char *to)
{
	if (!strcmp(from, to))
		return 0;
	fprintf(out, "~ %s: %s -> %s\n", what, from, to);
	return 1;
}

/* `match` lines of x that y does not have, marked c. */
static int matches_gone(FILE *out, const struct bw_profile *x, const struct bw_profile *y, char c)
{
	char t[1024], u[1024], o[512];
	int n = 0;

	for (size_t i = 0; i < x->nmatches; i++) {
		bool found = false;

		bw_match_format(&x->matches[i], t, sizeof(t));
		for (size_t j = 0; j < y->nmatches && !found; j++) {
			bw_match_format(&y->matches[j], u, sizeof(u));
			found = !strcmp(t, u);
		}
		if (!found) {
			origin(o, sizeof(o), &x->matches[i].origin);
			fprintf(out, "%c %s: %s\n", c, o, t);
			n++;
		}
	}
	return n;
}

static int settings(FILE *out, const struct bw_profile *a, const struct bw_profile *b)
{
	static const char *const cats[BW_CAT_COUNT] = {"file", "exec", "net"};
	static const char *const on_deny[] = {"log", "kill"};
	char what[32];
	int n = 0;

	n += setting(out, "profile", a->name, b->name);
	n += setting(out, "mode", bw_mode_name(a->mode), bw_mode_name(b->mode));
	n += setting(out, "on-deny", on_deny[a->on_deny == BW_ON_DENY_KILL],
		     on_deny[b->on_deny == BW_ON_DENY_KILL]);
	for (int c = 0; c < BW_CAT_COUNT; c++) {
		snprintf(what, sizeof(what), "default %s", cats[c]);
		n += setting(out, what, bw_verdict_name(a->defaults[c]),
			     bw_verdict_name(b->defaults[c]));
	}
	n += matches_gone(out, a, b, '-');
	n += matches_gone(out, b, a, '+');
	return n;
}

/* "FILE:LINE: RULE" of rule i of a side. */
static void rule_at(FILE *out, const struct side *s, size_t i)
{
	const struct bw_rule *r = &s->p->rules[i];
	char o[512], t[BW_RULE_TEXT_MAX];

	origin(o, sizeof(o), &r->origin);
	bw_rule_format(r, true, t, sizeof(t));
	fprintf(out, "%s: %s", o, t);
}

int bw_profile_diff(const struct bw_profile *a, const struct bw_profile *b, FILE *out)
{
	struct side sa = {}, sb = {};
	size_t i = 0, j = 0, left_a = 0, left_b = 0;
	int n, ret = -ENOMEM;

	if (side_init(&sa, a) || side_init(&sb, b))
		goto out;
	n = settings(out, a, b);
	/* The same text on both sides: unchanged, wherever it is. */
	while (i < a->nrules && j < b->nrules) {
		size_t x = sa.order[i], y = sb.order[j];
		int c = strcmp(sa.text[x], sb.text[y]);

		if (c < 0) {
			i++;
		} else if (c > 0) {
			j++;
		} else {
			sa.kind[x] = sb.kind[y] = '=';
			i++, j++;
		}
	}
	for (i = 0; i < a->nrules; i++)
		left_a += !sa.kind[i];
	for (j = 0; j < b->nrules; j++)
		left_b += !sb.kind[j];
	/* A new rule that covers an old one it replaces, or that the old one covered. */
	if (left_a * left_b <= PAIRING_MAX) {
		for (j = 0; j < b->nrules; j++) {
			const struct bw_rule *y = &b->rules[j];

			for (i = 0; !sb.kind[j] && i < a->nrules; i++) {
				const struct bw_rule *x = &a->rules[i];

				if (sa.kind[i])
					continue;
				if (bw_rule_covers(y, x))
					sb.kind[j] = '>';
				else if (bw_rule_covers(x, y))
					sb.kind[j] = '<';
				else
					continue;
				sa.kind[i] = sb.kind[j];
				sb.peer[j] = (long)i;
			}
		}
	}
	for (i = 0; i < a->nrules; i++) {
		if (sa.kind[i])
			continue;
		fputs("- ", out);
		rule_at(out, &sa, i);
		/*
		 * Gone, but still allowed or denied as before: a relearned profile
		 * folds exact rules into a new subtree rule that replaced another one.
		 */
		for (j = 0; left_a * b->nrules <= PAIRING_MAX && j < b->nrules; j++) {
			if (!bw_rule_covers(&b->rules[j], &a->rules[i]))
				continue;
			fputs(" (covered by ", out);
			rule_at(out, &sb, j);
			fputc(')', out);
			break;
		}
		fputc('\n', out);
		n++;
	}
	for (j = 0; j < b->nrules; j++) {
		if (sb.kind[j] == '=')
			continue;
		fprintf(out, "%c ", sb.kind[j] ? sb.kind[j] : '+');
		rule_at(out, &sb, j);
		if (sb.peer[j] >= 0) {
			fputs(" (was ", out);
			rule_at(out, &sa, (size_t)sb.peer[j]);
			fputc(')', out);
		}
		fputc('\n', out);
		n++;
	}
	ret = n;
out:
	side_free(&sa);
	side_free(&sb);
	return ret;
}
