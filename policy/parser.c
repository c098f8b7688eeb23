// SPDX-License-Identifier: GPL-2.0-only
/*
 * Statements of the profile language, one a line. Each statement takes its
 * tokens from a one-token lookahead; an error is reported at the offending
 * token and parsing goes on with the next line, so one run shows every
 * mistake. Arguments whose position is known are all checked, so a rule
 * with a bad permission and a relative path gets both errors.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <bpfwarden.h>

#include "diag.h"
#include "net.h"
#include "parser.h"
#include "path.h"

struct fctx {
	struct bw_parser *ps;
	const char *file;
	bool top;
	struct bw_lexer lx;
	struct bw_token cur;
};

void bw_report(struct bw_parser *ps, enum bw_severity sev, const char *file, int line, int col,
	       const char *fmt, ...)
{
	char *msg;
	va_list ap;
	int ret;

	if (ps->stop || ps->err)
		return;
	va_start(ap, fmt);
	ret = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (ret < 0) {
		ps->err = -ENOMEM;
		return;
	}
	ret = bw_diag_add(ps->diags, sev, file, line, col, "%s", msg);
	free(msg);
	if (ret < 0)
		ps->err = ret;
	else if (ret > 0)
		ps->stop = true;
}

#define error_at(fc, t, ...)                                                                       \
	bw_report((fc)->ps, BW_SEV_ERROR, (fc)->file, (t)->line, (t)->col, __VA_ARGS__)
#define warn_at(fc, t, ...)                                                                        \
	bw_report((fc)->ps, BW_SEV_WARNING, (fc)->file, (t)->line, (t)->col, __VA_ARGS__)
/* A missing argument is reported just past the token before it. */
#define error_after(fc, t, ...)                                                                    \
	bw_report((fc)->ps, BW_SEV_ERROR, (fc)->file, (t)->line, (t)->end_col, __VA_ARGS__)

static void advance(struct fctx *fc)
{
	bw_lex_next(&fc->lx, &fc->cur);
	if (fc->cur.type == BW_TOK_ERROR)
		error_at(fc, &fc->cur, "%s", fc->cur.msg);
}

static bool at_end(const struct fctx *fc)
{
	return fc->cur.type == BW_TOK_EOL || fc->cur.type == BW_TOK_EOF;
}

/* A value: the text, quoted or not. */
static bool text_is(const struct bw_token *t, const char *text)
{
	size_t n = strlen(text);
	return t->len == n && memcmp(t->s, text, n) == 0;
}

/* A keyword: a bare word, so that a quoted "memfd" can still be a file name. */
static bool tok_is(const struct bw_token *t, const char *word)
{
	return t->type == BW_TOK_WORD && text_is(t, word);
}

static const char *show(char *buf, const struct bw_token *t)
{
	return bw_quote(buf, t->s, t->len);
}

/*
 * Take the next argument of the statement. At the end of the line, report
 * `missing` just past `prev`; after a lexical error (already reported),
 * fail quietly.
 */
static bool take(struct fctx *fc, const struct bw_token *prev, const char *missing,
		 struct bw_token *out)
{
	if (at_end(fc)) {
		error_after(fc, prev, "%s", missing);
		return false;
	}
	if (fc->cur.type == BW_TOK_ERROR)
		return false;
	*out = fc->cur;
	advance(fc);
	return true;
}

static char *dup_tok(struct fctx *fc, const struct bw_token *t)
{
	char *s = strndup(t->s, t->len);
	if (!s)
		fc->ps->err = -ENOMEM;
	return s;
}

static void origin_of(const struct fctx *fc, const struct bw_token *t, struct bw_origin *o)
{
	o->file = fc->file;
	o->line = t->line;
	o->col = t->col;
}

static void free_rule(struct bw_rule *r)
{
	free(r->name);
	if (r->cat == BW_CAT_NET)
		free(r->net.unix_path);
	else if (r->cat != BW_CAT_NS)
		free(r->file.path);
}

/* A profile's or a rule's name: letters, digits, '.', '_', '-', not starting with a sign. */
static bool name_ok(const struct bw_token *t, size_t max)
{
	if (t->len == 0 || t->len > max)
		return false;
	for (size_t i = 0; i < t->len; i++) {
		char c = t->s[i];
		bool alnum =
		    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
			return false;
	}
	return true;
}

/*
 * The `as NAME` that may end a rule. Returns false after an error (the
 * rule is then dropped: the profile is invalid anyway).
 */
static bool rule_name(struct fctx *fc, char **name)
{
	struct bw_token as = fc->cur, t;
	char q[BW_QUOTE_BUF];

	*name = NULL;
	if (!tok_is(&as, "as"))
		return true;
	advance(fc);
	if (!take(fc, &as, "missing rule name after 'as'", &t))
		return false;
	if (!name_ok(&t, BW_RULE_NAME_MAX)) {
		error_at(fc, &t,
			 "bad rule name '%s': use 1 to %d letters, digits, '.', '_' or '-', "
			 "starting with a letter or digit",
			 show(q, &t), BW_RULE_NAME_MAX);
		return false;
	}
	*name = dup_tok(fc, &t);
	return *name != NULL;
}

/* Keep the rule (taking its strings), or only count it past the limit. */
static void store_rule(struct fctx *fc, struct bw_rule *r)
{
	struct bw_parser *ps = fc->ps;
	struct bw_profile *p = ps->p;

	if (!rule_name(fc, &r->name)) {
		free_rule(r);
		return;
	}
	ps->rules_seen++;
	if (p->nrules >= BW_MAX_RULES) {
		if (ps->rules_seen == BW_MAX_RULES + 1)
			ps->over_at = r->origin;
		free_rule(r);
		return;
	}
	if (p->nrules == ps->rules_cap) {
		size_t cap = ps->rules_cap ? ps->rules_cap * 2 : 64;
		struct bw_rule *v = realloc(p->rules, cap * sizeof(*v));
		if (!v) {
			ps->err = -ENOMEM;
			free_rule(r);
			return;
		}
		p->rules = v;
		ps->rules_cap = cap;
	}
	p->rules[p->nrules++] = *r;
}

static const char *const cat_names[BW_CAT_COUNT] = {"file", "exec", "net"};

/* ---- paths ---- */

/* Check and normalise a path operand; report at `t` and return false on error. */
static bool rule_path(struct fctx *fc, const struct bw_token *t, bool subtree_ok, size_t max,
		      const char *what, struct bw_path *out)
{
	char q[BW_QUOTE_BUF];

	switch (bw_path_parse(t->s, t->len, subtree_ok, max, out)) {
	case BW_PATH_OK:
		return true;
	case BW_PATH_EMPTY:
		error_at(fc, t, "empty %s", what);
		break;
	case BW_PATH_RELATIVE:
		error_at(fc, t, "relative path '%s': %ss must be absolute", show(q, t), what);
		break;
	case BW_PATH_DOT:
		error_at(fc, t, "'.' and '..' components are not allowed in a %s ('%s')", what,
			 show(q, t));
		break;
	case BW_PATH_DSTAR_INNER:
		error_at(fc, t, "'**' is only allowed as the last component ('%s')", show(q, t));
		break;
	case BW_PATH_GLOB:
		error_at(fc, t,
			 "glob characters are not supported here ('%s'): only a final '/**' "
			 "(a subtree) or a '*' ending the last name (DIR/NAME*, the names "
			 "beginning with NAME) are, in file and exec rules",
			 show(q, t));
		break;
	case BW_PATH_PREFIX_BARE:
		error_at(fc, t,
			 "'%s': a '*' alone would be every name in the directory; write DIR/** "
			 "for the directory and all below it, or DIR/NAME* for the names "
			 "beginning with NAME",
			 show(q, t));
		break;
	case BW_PATH_TOO_LONG:
		if (max == BW_RULE_PATH_MAX)
			error_at(fc, t,
				 "path is %zu bytes long; the kernel-side limit is %d bytes "
				 "(BW_RULE_PATH_MAX)",
				 out->len, BW_RULE_PATH_MAX);
		else
			error_at(fc, t, "%s is %zu bytes long; the limit is %zu bytes (sun_path)",
				 what, out->len, max);
		break;
	case BW_PATH_NOMEM:
		fc->ps->err = -ENOMEM;
		break;
	}
	return false;
}

/* ---- rules ---- */

/*
 * DIR/NAME* allows only: a deny rule's objects are pinned so that every name
 * of them is refused, and the objects of a name prefix are the ones created
 * later too, which nothing can pin in advance. Frees np on refusal.
 */
static bool prefix_allowed(struct fctx *fc, const struct bw_rule *r, const struct bw_token *t,
			   struct bw_path *np)
{
	char q[BW_QUOTE_BUF];

	if (!np->name_prefix || (r->verdict != BW_V_DENY && !bw_path_is_proc_self(np->path)))
		return true;
	if (r->verdict == BW_V_DENY)
		error_at(fc, t,
			 "'%s': a name prefix can only allow; a deny rule names objects, which "
			 "are refused under every name they have: deny the directory (DIR/**) "
			 "instead",
			 show(q, t));
	else
		error_at(fc, t,
			 "'%s': no name prefix in /proc/self: name the entries, or /proc/self/**",
			 show(q, t));
	free(np->path);
	np->path = NULL;
	return false;
}

static int rule_file(struct fctx *fc, struct bw_rule *r, const struct bw_token *cat)
{
	struct bw_token perms, path;
	char q[BW_QUOTE_BUF];
	struct bw_path np;
	unsigned access = 0;
	bool ok = true;

	if (!take(fc, cat, "missing permissions: expected r, w or rw, then a path", &perms))
		return -1;
	if (!take(fc, &perms, "missing path", &path))
		return -1;

	if (text_is(&perms, "r"))
		access = BW_ACC_R;
	else if (text_is(&perms, "w"))
		access = BW_ACC_W;
	else if (text_is(&perms, "rw") || text_is(&perms, "wr"))
		access = BW_ACC_R | BW_ACC_W;
	if (!access) {
		error_at(fc, &perms, "bad permission letters '%s': expected r, w or rw",
			 show(q, &perms));
		ok = false;
	}
	if (!rule_path(fc, &path, true, BW_RULE_PATH_MAX, "path", &np))
		return 0;
	if (!ok) {
		free(np.path);
		return 0;
	}
	if (!prefix_allowed(fc, r, &path, &np))
		return 0;
	r->file.access = access;
	r->file.path = np.path;
	r->file.subtree = np.subtree;
	r->file.name_prefix = np.name_prefix;
	store_rule(fc, r);
	return 0;
}

/*
 * `exec PATH` runs and maps a program, `exec lib PATH` only maps a library's
 * code into a program that runs (docs/profile-language.md), `exec memfd`
 * both for a memfd.
 */
static int rule_exec(struct fctx *fc, struct bw_rule *r, const struct bw_token *cat)
{
	struct bw_token path, lib;
	struct bw_path np;
	bool ok = true;

	if (!take(fc, cat, "missing program path, 'lib PATH' or 'memfd'", &path))
		return -1;
	r->file.access = BW_ACC_X | BW_ACC_M;
	if (tok_is(&path, "lib")) {
		lib = path;
		if (!take(fc, &lib, "missing library path after 'lib'", &path))
			return -1;
		if (r->verdict == BW_V_DENY) {
			error_at(fc, &lib,
				 "'lib' is for allow rules only: 'deny exec PATH' refuses both "
				 "running and mapping PATH");
			ok = false;
		}
		if (tok_is(&path, "memfd")) {
			error_at(fc, &path,
				 "'allow exec memfd' lets a memfd both run and be mapped: 'lib' "
				 "takes a path");
			return 0;
		}
		r->file.access = BW_ACC_M;
	} else if (tok_is(&path, "memfd")) {
		r->file.memfd = true;
		store_rule(fc, r);
		return 0;
	}
	if (!rule_path(fc, &path, true, BW_RULE_PATH_MAX, "path", &np))
		return 0;
	if (!ok) {
		free(np.path);
		return 0;
	}
	if (!prefix_allowed(fc, r, &path, &np))
		return 0;
	r->file.path = np.path;
	r->file.subtree = np.subtree;
	r->file.name_prefix = np.name_prefix;
	store_rule(fc, r);
	return 0;
}

/* `keep`: the rest of the rule was valid, store it if this operand is too. */
static int rule_unix(struct fctx *fc, struct bw_rule *r, const struct bw_token *t, bool keep)
{
	char q[BW_QUOTE_BUF];
	struct bw_path np;

	if (t->len > 0 && t->s[0] == '@') {
		size_t n = t->len - 1;
		if (n == 0) {
			error_at(fc, t, "empty abstract socket name after '@'");
			return 0;
		}
		if (n > BW_UNIX_PATH_MAX) {
			error_at(fc, t,
				 "abstract socket name is %zu bytes long; the limit is %d bytes "
				 "(sun_path)",
				 n, BW_UNIX_PATH_MAX);
			return 0;
		}
		if (!keep)
			return 0;
		r->net.unix_path = strndup(t->s + 1, n);
		if (!r->net.unix_path) {
			fc->ps->err = -ENOMEM;
			return 0;
		}
		r->net.unix_abstract = true;
		store_rule(fc, r);
		return 0;
	}
	if (t->len > 0 && t->s[0] != '/') {
		error_at(fc, t, "bad unix socket '%s': expected an absolute path or @name",
			 show(q, t));
		return 0;
	}
	/* The subtree's stars take room in the name: checked below. */
	if (!rule_path(fc, t, true, BW_UNIX_PATH_MAX, "unix socket path", &np))
		return 0;
	if (np.name_prefix) {
		error_at(fc, t,
			 "'%s': unix socket rules name a socket or a directory's sockets "
			 "(DIR/**), not names beginning with a prefix",
			 show(q, t));
		free(np.path);
		return 0;
	}
	if (np.subtree) {
		/* Kept as written, "DIR/" and two stars: the key the kernel looks up. */
		size_t n = strcmp(np.path, "/") ? np.len : 0;
		char *sub = malloc(n + 4);

		if (!sub) {
			free(np.path);
			fc->ps->err = -ENOMEM;
			return 0;
		}
		memcpy(sub, np.path, n);
		memcpy(sub + n, "/**", 4);
		free(np.path);
		np.path = sub;
		if (n + 3 > BW_UNIX_PATH_MAX) {
			error_at(
			    fc, t,
			    "unix socket path is %zu bytes long with its '/**'; the limit is %d "
			    "bytes (sun_path)",
			    n + 3, BW_UNIX_PATH_MAX);
			free(np.path);
			return 0;
		}
	}
	if (!keep) {
		free(np.path);
		return 0;
	}
	r->net.unix_path = np.path;
	store_rule(fc, r);
	return 0;
}

static int rule_net(struct fctx *fc, struct bw_rule *r, const struct bw_token *cat)
{
	struct bw_token op, proto, ep;
	char q[BW_QUOTE_BUF];
	struct bw_net_err nerr;
	bool ok = true;

	if (!take(fc, cat, "missing operation: expected connect, bind, raw or admin", &op))
		return -1;
	if (tok_is(&op, "raw") || tok_is(&op, "admin")) {
		/*
		 * Raw IP and packet sockets, or the host's network configuration:
		 * the rule names no protocol or address.
		 */
		r->net.op = tok_is(&op, "raw") ? BW_NET_RAW : BW_NET_ADMIN;
		store_rule(fc, r);
		return 0;
	}
	if (tok_is(&op, "connect")) {
		r->net.op = BW_NET_CONNECT;
	} else if (tok_is(&op, "bind")) {
		r->net.op = BW_NET_BIND;
	} else {
		error_at(fc, &op, "bad net operation '%s': expected connect, bind, raw or admin",
			 show(q, &op));
		ok = false;
	}

	if (!take(fc, &op, "missing protocol: expected tcp, udp or unix", &proto))
		return -1;
	if (tok_is(&proto, "tcp")) {
		r->net.proto = BW_NET_TCP;
	} else if (tok_is(&proto, "udp")) {
		r->net.proto = BW_NET_UDP;
	} else if (tok_is(&proto, "unix")) {
		r->net.proto = BW_NET_UNIX;
	} else {
		/* The operand's form depends on the protocol: give up on the line. */
		error_at(fc, &proto, "bad protocol '%s': expected tcp, udp or unix",
			 show(q, &proto));
		return -1;
	}

	if (r->net.proto == BW_NET_UNIX) {
		if (!take(fc, &proto, "missing unix socket path or @name", &ep))
			return -1;
		return rule_unix(fc, r, &ep, ok);
	}

	if (!take(fc, &proto, "missing ADDR:PORTS", &ep))
		return -1;
	if (bw_net_parse_endpoint(ep.s, ep.len, &r->net, &nerr)) {
		for (int i = 0; i < nerr.n; i++) {
			struct bw_token at = ep;
			/* Point into a bare word; a quoted one has escapes to count. */
			if (ep.type == BW_TOK_WORD)
				at.col += (int)nerr.v[i].off;
			error_at(fc, &at, "%s", nerr.v[i].msg);
		}
		return 0;
	}
	if (ok)
		store_rule(fc, r);
	return 0;
}

/*
 * After a rule with an error, which was not stored: its `as NAME` is still
 * read (and checked), so that the error is the only one on the line.
 */
static int rule_rest(struct fctx *fc, int ret)
{
	char *name;

	if (ret == 0 && rule_name(fc, &name))
		free(name);
	return ret;
}

static int st_rule(struct fctx *fc, const struct bw_token *kw, enum bw_verdict verdict)
{
	struct bw_token cat;
	char q[BW_QUOTE_BUF];
	struct bw_rule r;

	memset(&r, 0, sizeof(r));
	r.verdict = verdict;
	origin_of(fc, kw, &r.origin);

	if (!take(fc, kw,
		  "missing category: expected file, exec, net, mount, chroot, userns or cgroup",
		  &cat))
		return -1;
	if (tok_is(&cat, "file")) {
		r.cat = BW_CAT_FILE;
		return rule_rest(fc, rule_file(fc, &r, &cat));
	}
	if (tok_is(&cat, "exec")) {
		r.cat = BW_CAT_EXEC;
		return rule_rest(fc, rule_exec(fc, &r, &cat));
	}
	if (tok_is(&cat, "net")) {
		r.cat = BW_CAT_NET;
		return rule_rest(fc, rule_net(fc, &r, &cat));
	}
	/* A change of the sandbox's view: the rule names nothing more. */
	for (unsigned what = 0; what < BW_NS_COUNT; what++) {
		if (tok_is(&cat, bw_ns_name(what))) {
			r.cat = BW_CAT_NS;
			r.ns.what = what;
			store_rule(fc, &r);
			return 0;
		}
	}
	error_at(
	    fc, &cat,
	    "bad rule category '%s': expected file, exec, net, mount, chroot, userns or cgroup",
	    show(q, &cat));
	return -1;
}

/* ---- profile-level statements ---- */

static int st_profile(struct fctx *fc, const struct bw_token *kw)
{
	struct bw_parser *ps = fc->ps;
	char q[BW_QUOTE_BUF];
	struct bw_token name;

	if (!take(fc, kw, "missing profile name", &name))
		return -1;
	if (!name_ok(&name, BW_PROFILE_NAME_MAX)) {
		error_at(fc, &name,
			 "bad profile name '%s': use 1 to %d letters, digits, '.', '_' or '-', "
			 "starting with a letter or digit",
			 show(q, &name), BW_PROFILE_NAME_MAX);
		return 0;
	}
	if (ps->p->name) {
		error_at(fc, kw, "second 'profile' line (first at %s:%d)", ps->name_at.file,
			 ps->name_at.line);
		return 0;
	}
	ps->p->name = dup_tok(fc, &name);
	origin_of(fc, kw, &ps->name_at);
	return 0;
}

/*
 * A setting stated twice: the same value again is a warning, another value
 * an error. Returns true when the new value should be taken.
 */
static bool first_setting(struct fctx *fc, const struct bw_token *kw, struct bw_origin *at,
			  const char *what, bool same, const char *newv, const char *oldv)
{
	if (at->line == 0) {
		origin_of(fc, kw, at);
		return true;
	}
	if (same)
		warn_at(fc, kw, "repeated '%s' (first at %s:%d)", what, at->file, at->line);
	else
		error_at(fc, kw, "conflicting '%s': '%s' here, '%s' at %s:%d", what, newv, oldv,
			 at->file, at->line);
	return false;
}

static int st_mode(struct fctx *fc, const struct bw_token *kw)
{
	struct bw_profile *p = fc->ps->p;
	char q[BW_QUOTE_BUF];
	enum bw_mode m;
	struct bw_token v;

	if (!take(fc, kw, "missing mode: expected enforce, audit or learn", &v))
		return -1;
	if (v.type != BW_TOK_WORD || bw_mode_parse(v.s, v.len, &m)) {
		error_at(fc, &v, "bad mode '%s': expected enforce, audit or learn", show(q, &v));
		return 0;
	}
	if (first_setting(fc, kw, &fc->ps->mode_at, "mode", m == p->mode, bw_mode_name(m),
			  bw_mode_name(p->mode))) {
		p->mode = m;
		p->mode_given = true;
	}
	return 0;
}

static const char *const on_deny_names[] = {"log", "kill"};

static int st_on_deny(struct fctx *fc, const struct bw_token *kw)
{
	struct bw_profile *p = fc->ps->p;
	char q[BW_QUOTE_BUF];
	unsigned a;
	struct bw_token v;

	if (!take(fc, kw, "missing action: expected log or kill", &v))
		return -1;
	if (tok_is(&v, "log")) {
		a = BW_ON_DENY_LOG;
	} else if (tok_is(&v, "kill")) {
		a = BW_ON_DENY_KILL;
	} else {
		error_at(fc, &v, "bad on-deny action '%s': expected log or kill", show(q, &v));
		return 0;
	}
	if (first_setting(fc, kw, &fc->ps->on_deny_at, "on-deny", a == p->on_deny, on_deny_names[a],
			  on_deny_names[p->on_deny]))
		p->on_deny = a;
	return 0;
}

static int st_default(struct fctx *fc, const struct bw_token *kw)
{
	struct bw_profile *p = fc->ps->p;
	struct bw_token v, cat;
	char q[BW_QUOTE_BUF];
	enum bw_verdict verdict;
	int first = 0, last = BW_CAT_COUNT - 1;

	if (!take(fc, kw, "missing verdict: expected allow or deny", &v))
		return -1;
	if (tok_is(&v, "allow")) {
		verdict = BW_V_ALLOW;
	} else if (tok_is(&v, "deny")) {
		verdict = BW_V_DENY;
	} else {
		error_at(fc, &v, "bad default '%s': expected allow or deny", show(q, &v));
		return -1;
	}
	if (!at_end(fc) && fc->cur.type != BW_TOK_ERROR) {
		cat = fc->cur;
		for (first = 0; first < BW_CAT_COUNT; first++) {
			if (tok_is(&cat, cat_names[first]))
				break;
		}
		if (first == BW_CAT_COUNT) {
			error_at(fc, &cat, "bad default category '%s': expected file, exec or net",
				 show(q, &cat));
			return -1;
		}
		last = first;
		advance(fc);
	}

	for (int c = first; c <= last; c++) {
		struct bw_origin *o = &p->default_origin[c];
		if (o->line && p->defaults[c] != verdict) {
			error_at(fc, kw, "conflicting default for %s: '%s' here, '%s' at %s:%d",
				 cat_names[c], bw_verdict_name(verdict),
				 bw_verdict_name(p->defaults[c]), o->file, o->line);
			return 0;
		}
	}
	for (int c = first; c <= last; c++) {
		struct bw_origin *o = &p->default_origin[c];
		if (o->line) {
			warn_at(fc, kw, "repeated default for %s (first at %s:%d)", cat_names[c],
				o->file, o->line);
			break;
		}
	}
	for (int c = first; c <= last; c++) {
		if (p->default_origin[c].line)
			continue;
		p->defaults[c] = verdict;
		origin_of(fc, kw, &p->default_origin[c]);
	}
	return 0;
}

static int st_match(struct fctx *fc, const struct bw_token *kw)
{
	static const char *const keys[] = {"cgroup", "namespace", "pod", "container"};
	struct bw_parser *ps = fc->ps;
	struct bw_token kv[4];
	char q[BW_QUOTE_BUF];
	int pos[4] = {-1, -1, -1, -1};
	bool ok = true;
	int n = 0;

	while (!at_end(fc)) {
		struct bw_token t = fc->cur;
		if (t.type == BW_TOK_ERROR)
			return -1;
		advance(fc);
		const char *eq = memchr(t.s, '=', t.len);
		if (!eq) {
			error_at(fc, &t, "expected KEY=VALUE, found '%s'", show(q, &t));
			ok = false;
			continue;
		}
		size_t klen = (size_t)(eq - t.s);
		int k;
		for (k = 0; k < 4; k++) {
			if (strlen(keys[k]) == klen && memcmp(keys[k], t.s, klen) == 0)
				break;
		}
		if (k == 4) {
			error_at(fc, &t,
				 "unknown match key '%s': expected cgroup, namespace, pod or "
				 "container",
				 bw_quote(q, t.s, klen));
			ok = false;
		} else if (pos[k] >= 0) {
			error_at(fc, &t, "duplicate match key '%s'", keys[k]);
			ok = false;
		} else if (klen + 1 == t.len) {
			error_at(fc, &t, "empty value for match key '%s'", keys[k]);
			ok = false;
		} else {
			pos[k] = n;
			kv[n++] = t;
		}
	}
	if (n == 0 && ok) {
		error_after(fc, kw,
			    "'match' needs at least one KEY=VALUE (cgroup, namespace, pod, "
			    "container)");
		return 0;
	}
	if (!ok)
		return 0;

	if (ps->p->nmatches == ps->matches_cap) {
		size_t cap = ps->matches_cap ? ps->matches_cap * 2 : 4;
		struct bw_match *v = realloc(ps->p->matches, cap * sizeof(*v));
		if (!v) {
			ps->err = -ENOMEM;
			return 0;
		}
		ps->p->matches = v;
		ps->matches_cap = cap;
	}
	struct bw_match *m = &ps->p->matches[ps->p->nmatches++];
	memset(m, 0, sizeof(*m));
	origin_of(fc, kw, &m->origin);
	char **field[4] = {&m->cgroup, &m->namespace_, &m->pod, &m->container};
	for (int k = 0; k < 4; k++) {
		if (pos[k] < 0)
			continue;
		const struct bw_token *t = &kv[pos[k]];
		size_t klen = strlen(keys[k]) + 1;
		*field[k] = strndup(t->s + klen, t->len - klen);
		if (!*field[k])
			ps->err = -ENOMEM;
	}
	return 0;
}

static int st_include(struct fctx *fc, const struct bw_token *kw)
{
	struct bw_token name;
	char q[BW_QUOTE_BUF];

	if (!take(fc, kw, "missing file name after 'include'", &name))
		return -1;
	/* Check the whole line before reading anything. */
	if (!at_end(fc)) {
		if (fc->cur.type != BW_TOK_ERROR)
			error_at(fc, &fc->cur, "unexpected '%s' after a complete statement",
				 show(q, &fc->cur));
		return -1;
	}
	if (name.len == 0) {
		error_at(fc, &name, "empty include name");
		return 0;
	}
	if (fc->top) {
		struct bw_profile *p = fc->ps->p;
		char **nv = realloc(p->includes, (p->nincludes + 1) * sizeof(*nv));

		if (nv)
			p->includes = nv;
		if (!nv || !(nv[p->nincludes] = strndup(name.s, name.len))) {
			fc->ps->err = -ENOMEM;
			return -1;
		}
		p->nincludes++;
	}
	bw_include(fc->ps, fc->file, &name, name.s, name.len);
	return 0;
}

static void statement(struct fctx *fc)
{
	static const char *const top_only[] = {"profile", "mode", "default", "on-deny", "match"};
	struct bw_token kw = fc->cur;
	char q[BW_QUOTE_BUF];
	int ret = -1;

	if (kw.type == BW_TOK_ERROR)
		goto skip;
	if (kw.type == BW_TOK_STRING) {
		error_at(fc, &kw, "expected a keyword, found the string \"%s\"", show(q, &kw));
		goto skip;
	}
	if (!fc->top) {
		for (size_t i = 0; i < sizeof(top_only) / sizeof(top_only[0]); i++) {
			if (tok_is(&kw, top_only[i])) {
				error_at(fc, &kw,
					 "'%s' is not allowed in an included file (only allow, "
					 "deny and include are)",
					 top_only[i]);
				goto skip;
			}
		}
	}
	advance(fc);

	if (tok_is(&kw, "allow"))
		ret = st_rule(fc, &kw, BW_V_ALLOW);
	else if (tok_is(&kw, "deny"))
		ret = st_rule(fc, &kw, BW_V_DENY);
	else if (tok_is(&kw, "include"))
		ret = st_include(fc, &kw);
	else if (tok_is(&kw, "profile"))
		ret = st_profile(fc, &kw);
	else if (tok_is(&kw, "mode"))
		ret = st_mode(fc, &kw);
	else if (tok_is(&kw, "default"))
		ret = st_default(fc, &kw);
	else if (tok_is(&kw, "on-deny"))
		ret = st_on_deny(fc, &kw);
	else if (tok_is(&kw, "match"))
		ret = st_match(fc, &kw);
	else
		error_at(fc, &kw, "unknown keyword '%s'", show(q, &kw));

	if (ret == 0 && !at_end(fc) && fc->cur.type != BW_TOK_ERROR)
		error_at(fc, &fc->cur, "unexpected '%s' after a complete statement",
			 show(q, &fc->cur));
skip:
	if (!at_end(fc)) {
		bw_lex_skip_line(&fc->lx);
		bw_lex_next(&fc->lx, &fc->cur);
	}
}

void bw_parse_buffer(struct bw_parser *ps, const char *file, char *buf, size_t len)
{
	struct fctx fc = {.ps = ps, .file = file, .top = ps->depth == 1};

	bw_lexer_init(&fc.lx, buf, len);
	advance(&fc);
	while (!ps->stop && !ps->err && fc.cur.type != BW_TOK_EOF) {
		if (fc.cur.type == BW_TOK_EOL) {
			advance(&fc);
			continue;
		}
		statement(&fc);
	}
}
