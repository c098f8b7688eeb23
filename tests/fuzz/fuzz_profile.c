// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the profile parser and compiler: any bytes, parsed as
 * a profile whose includes resolve in a small library (tests/fuzz/lib,
 * relative to the repository root that `make fuzz` runs from); every profile
 * that parses is compiled to map contents (bw_compile, pins planned) and
 * freed. Besides "no crash, no leak, no undefined behaviour", it checks what
 * the parser promises about its output and what the compiler promises about
 * its trie keys.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpfwarden.h>

#include "compile.h"
#include "path.h"
#include "pins.h"
#include "diff.h"
#include "profile.h"

#define FUZZ_LIBDIR "tests/fuzz/lib"

static FILE *devnull;

#define require(cond)                                                                              \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "invariant broken: %s (%s:%d)\n", #cond, __FILE__,         \
				__LINE__);                                                         \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static void check_path(const char *path, size_t max)
{
	size_t len = strlen(path);

	require(path[0] == '/');
	require(len <= max);
	require(len == 1 || path[len - 1] != '/');
	require(!strstr(path, "//"));
	require(!strstr(path, "/./") && !strstr(path, "/../"));
	require(!strchr(path, '*'));
}

static void check_profile(const struct bw_profile *p)
{
	require(p->name && p->name[0]);
	require(p->nrules <= BW_MAX_RULES);
	require(p->nfiles >= 1);
	for (size_t i = 0; i < p->nrules; i++) {
		const struct bw_rule *r = &p->rules[i];
		require(r->origin.file && r->origin.line > 0 && r->origin.col > 0);
		require(r->verdict == BW_V_ALLOW || r->verdict == BW_V_DENY);
		switch (r->cat) {
		case BW_CAT_FILE:
			require(r->file.access && !(r->file.access & ~(BW_ACC_R | BW_ACC_W)));
			require(!r->file.memfd);
			check_path(r->file.path, BW_RULE_PATH_MAX);
			break;
		case BW_CAT_EXEC:
			require(r->file.access == (BW_ACC_X | BW_ACC_M) ||
				(r->file.access == BW_ACC_M && r->verdict == BW_V_ALLOW &&
				 !r->file.memfd));
			if (r->file.memfd)
				require(!r->file.path && !r->file.subtree);
			else
				check_path(r->file.path, BW_RULE_PATH_MAX);
			break;
		case BW_CAT_NET:
			if (r->net.proto == BW_NET_UNIX) {
				require(r->net.unix_path);
				if (!r->net.unix_abstract)
					check_path(r->net.unix_path, 107);
				break;
			}
			require(!r->net.unix_path);
			require(r->net.port_lo <= r->net.port_hi);
			require(r->net.family == 0 || r->net.family == 4 || r->net.family == 6);
			require(r->net.prefixlen >= 0 &&
				r->net.prefixlen <= (r->net.family == 4 ? 32 : 128));
			break;
		case BW_CAT_NS:
			require(r->ns.what < BW_NS_COUNT);
			break;
		default:
			require(0);
		}
	}
}

/* The entry whose key is exactly these len bytes, or NULL. */
static const struct bw_file_entry *entry_of_key(const struct bw_file_entry *v, size_t n,
						const char *key, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].keylen == len && !memcmp(v[i].key, key, len))
			return &v[i];
	return NULL;
}

/* Sorted, distinct, well formed keys: what the kernel's trie is given. */
static void check_keys(const struct bw_file_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct bw_file_entry *e = &v[i];
		char last = e->key[e->keylen - 1];

		require(e->keylen >= 1 && e->keylen <= BW_KEY_PATH_MAX);
		require(e->key[0] == '/');
		if (e->val.name_at) {
			/* DIR/NAME*: a name after DIR/, and DIR/ has a key of its own. */
			size_t at = e->val.name_at;

			require(at < e->keylen && e->key[at - 1] == '/');
			require(!memchr(e->key + at, '/', e->keylen - at));
			require(!memchr(e->key + at, '\0', e->keylen - at));
			require(entry_of_key(v, n, e->key, at));
		} else {
			require(last == '\0' || last == '/');
		}
		require(e->val.verdict_r <= BW_V_DENY && e->val.verdict_w <= BW_V_DENY);
		if (i) {
			const struct bw_file_entry *p = &v[i - 1];
			size_t m = p->keylen < e->keylen ? p->keylen : e->keylen;
			int c = memcmp(p->key, e->key, m);

			require(c < 0 || (c == 0 && p->keylen < e->keylen));
		}
	}
}

/* The agent's binary search agrees with the reference lookup, here and below. */
static void check_find(const struct bw_file_entry *v, size_t n, const char *path)
{
	char below[BW_KEY_PATH_MAX + 8];

	require(bw_entries_find(v, n, path) == bw_entries_lookup(v, n, path));
	snprintf(below, sizeof(below), "%s/x", path);
	require(bw_entries_find(v, n, below) == bw_entries_lookup(v, n, below));
	snprintf(below, sizeof(below), "%sx/y", path);
	require(bw_entries_find(v, n, below) == bw_entries_lookup(v, n, below));
}

/*
 * A deny rule's own key refuses what the rule names: deny wins at equal
 * specificity. Looked up by key, not by path: "/" is the root's own key
 * ("/" and a terminator) as well as the key of the whole tree.
 */
static void check_deny_rule(const struct bw_compiled *c, const struct bw_rule *r)
{
	const struct bw_file_entry *v = r->cat == BW_CAT_EXEC ? c->execs : c->files;
	size_t n = r->cat == BW_CAT_EXEC ? c->nexecs : c->nfiles;
	unsigned access = bw_rule_slots(r);
	char path[BW_KEY_PATH_MAX + 2];
	const struct bw_file_entry *e;

	snprintf(path, sizeof(path), "%s%s", r->file.path,
		 r->file.subtree && strcmp(r->file.path, "/") ? "/" : "");
	check_find(v, n, path);
	check_find(v, n, r->file.path);
	/* An exact key is the path and its terminator. */
	e = entry_of_key(v, n, path, strlen(path) + (r->file.subtree ? 0 : 1));
	require(e);
	if (access & BW_ACC_R)
		require(e->val.verdict_r == BW_V_DENY);
	if (access & BW_ACC_W)
		require(e->val.verdict_w == BW_V_DENY);
}

static void check_compiled(const struct bw_profile *p, const struct bw_compiled *c)
{
	int deny_file = 0, deny_exec = 0;

	check_keys(c->files, c->nfiles);
	check_keys(c->execs, c->nexecs);
	for (size_t i = 0; i < p->nrules; i++) {
		const struct bw_rule *r = &p->rules[i];

		if (r->cat == BW_CAT_NS) {
			/* One object each: compiled as decided, deny winning. */
			require(c->policy.ns[r->ns.what] != BW_V_NONE);
			if (r->verdict == BW_V_DENY)
				require(c->policy.ns[r->ns.what] == BW_V_DENY);
			continue;
		}
		if (r->cat == BW_CAT_NET || !r->file.path || r->verdict != BW_V_DENY)
			continue;
		check_deny_rule(c, r);
		/* /proc/self at load is the agent's own: no pin, decided by path. */
		if (bw_path_is_proc_self(r->file.path))
			continue;
		deny_file |= r->cat == BW_CAT_FILE;
		deny_exec |= r->cat == BW_CAT_EXEC;
	}
	require(c->npins <= p->nrules);
	for (size_t i = 0; i < c->npins; i++)
		require(c->pins[i].path &&
			(c->pins[i].cat == BW_CAT_PIN_FILE || c->pins[i].cat == BW_CAT_PIN_EXEC));
	require(c->policy.has_pins == deny_file && c->policy.has_exec_pins == deny_exec);
	for (size_t i = 0; i < c->nnets; i++) {
		const struct bw_net_value *nv = &c->nets[i].val;

		require(nv->n >= 1 && nv->n <= BW_NET_RANGES);
		for (size_t k = 0; k < nv->n; k++)
			require(nv->r[k].lo <= nv->r[k].hi && nv->r[k].rule >= 1 &&
				nv->r[k].rule <= p->nrules);
	}
}

/* Every profile that parses is compiled, or refused with a reason. */
static void compile(const struct bw_profile *p)
{
	struct bw_compiled c;
	char err[512] = "";
	int ret = bw_compile(p, &c, err, sizeof(err));

	if (!ret) {
		check_compiled(p, &c);
		bw_compiled_free(&c);
		return;
	}
	require(ret == -E2BIG || ret == -ENAMETOOLONG || ret == -ENOMEM || ret == -EOPNOTSUPP);
	require(ret == -ENOMEM || err[0]);
	require(!c.files && !c.execs && !c.nets && !c.unixes && !c.pins);
}

/*
 * Each rule's canonical text (what `bpfwarden diff` compares and prints)
 * parses back to the same rule: the same identity, and the same text again.
 * The first 64 rules: each is a parse of its own.
 */
static void check_format(const struct bw_profile *p)
{
	static char text[BW_RULE_TEXT_MAX], again[BW_RULE_TEXT_MAX], prof[BW_RULE_TEXT_MAX + 16];

	for (size_t i = 0; i < p->nrules && i < 64; i++) {
		struct bw_diags d = {0};
		struct bw_profile *q = NULL;
		int n = bw_rule_format(&p->rules[i], true, text, sizeof(text));

		require(n > 0);
		n = snprintf(prof, sizeof(prof), "profile f\n%s\n", text);
		require(bw_profile_parse_string("f", prof, (size_t)n, NULL, &q, &d) == 0);
		require(q->nrules == 1 && bw_rule_id(&q->rules[0]) == bw_rule_id(&p->rules[i]));
		require(bw_rule_format(&q->rules[0], true, again, sizeof(again)) > 0);
		require(!strcmp(text, again));
		require(bw_rule_covers(&q->rules[0], &p->rules[i]));
		bw_profile_free(q);
		bw_diags_free(&d);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bw_diags d = {0};
	struct bw_profile *p = NULL;
	char buf[64];
	int err;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	err = bw_profile_parse_string("/nonexistent/fuzz.profile", (const char *)data, size,
				      FUZZ_LIBDIR, &p, &d);
	require(err == 0 || err == -EINVAL);
	require((err == 0) == (p != NULL));
	require((err == 0) == (d.nerrors == 0));
	if (p) {
		check_profile(p);
		check_format(p);
		for (size_t i = 0; i < p->nrules; i++)
			require(bw_origin_format(&p->rules[i].origin, buf, sizeof(buf)) != -EINVAL);
		compile(p);
	}
	for (size_t i = 0; i < d.n; i++)
		require(d.v[i].file && d.v[i].msg && d.v[i].line > 0 && d.v[i].col > 0);
	if (devnull)
		bw_diags_print(devnull, &d);
	bw_profile_free(p);
	bw_diags_free(&d);
	return 0;
}
