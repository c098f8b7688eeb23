// SPDX-License-Identifier: GPL-2.0-only
/*
 * The compiler's longest-prefix lookup (bw_entries_lookup, the reference the
 * unit tests use) against the kernel's: the file and exec keys of a few
 * profiles go into real BPF_MAP_TYPE_LPM_TRIE maps, keyed as the agent
 * stores them (bw_file_entry_key) and looked up as bpf/decide.bpf.h does (the
 * path, its NUL, bw_path_key_bits), and for thousands of paths both must give
 * the same value: exact files, subtrees, deny inside allow inside deny, long
 * paths around BW_KEY_PATH_MAX, paths longer than any key, siblings sharing
 * a prefix (/a/b and /a/bc), name prefixes (DIR/NAME*) with paths in and
 * below the names they match, and another policy's keys in the same map.
 *
 * Needs the right to create BPF maps (root, or CAP_BPF); without it the test
 * says it cannot run and fails: it never passes without having looked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "bpfwarden.h"
#include "compile.h"
#include "profile.h"

#define LONG_DIR "/l/0123456789abcdef"

struct policy {
	const char *name; /* the profile file (NULL: text) */
	const char *text;
	__u32 id;
	struct bw_profile *p;
	struct bw_compiled c;
};

/* Nested subtrees, same-prefix siblings, exact next to subtree, the root. */
static const char nested[] = "profile nested\n"
			     "allow file r /usr/**\n"
			     "deny file rw /usr/lib/secret/**\n"
			     "allow file r /usr/lib/secret/pub/**\n"
			     "deny file w /usr/lib/secret/pub/key\n"
			     "allow file rw /tmp/job/**\n"
			     "deny file r /tmp/job/.env\n"
			     "allow file r /a/b\n"
			     "deny file w /a/b/**\n"
			     "allow file w /a/bc/**\n"
			     "deny file r /a/bcd\n"
			     "allow file r /**\n"
			     "deny file w /\n"
			     "allow exec /usr/bin/**\n"
			     "deny exec /usr/bin/sudo\n"
			     "allow exec /usr/bin/sudoedit\n"
			     "deny exec /usr/sbin/**\n";

/*
 * Name prefixes: beside exact names and subtrees of the same bytes, nested
 * in one name (Post*, PostgreSQL.*), in directories that other prefixes
 * match (/srv/a* and /srv/ab/c*), and up to the longest rule path.
 */
static const char prefixes[] =
    "profile prefixes\n"
    "default deny file\n"
    "allow file r /dev/**\n"
    "allow file rw /dev/shm/PostgreSQL.*\n"
    "allow file w /dev/shm/Post*\n"
    "deny file rw /dev/shm/PostgreSQL.conf\n"
    "allow file r /dev/shm/PostgreSQL.d/**\n"
    "allow file w /srv/a*\n"
    "allow file r /srv/ab/c*\n"
    "deny file r /srv/ab/cd/**\n"
    "allow file r /srv/ab/cd/e*\n"
    "allow file rw /l/0123456789abcdef/"
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx*\n"
    "allow exec lib /usr/lib/postgresql/15/lib/plpgsql*\n"
    "allow exec /usr/lib/postgresql/15/bin/**\n";

/* Rule paths up to BW_RULE_PATH_MAX, so keys reach BW_KEY_PATH_MAX. */
static char longest[4096];

static void make_longest(void)
{
	char p248[256], p249[256], p250[256];
	size_t n = strlen(LONG_DIR);

	memcpy(p248, LONG_DIR, n);
	memset(p248 + n, 'x', 248 - n);
	p248[248] = '\0';
	snprintf(p249, sizeof(p249), "%sy", p248);  /* a sibling sharing all of p248 */
	snprintf(p250, sizeof(p250), "%s/z", p248); /* BW_RULE_PATH_MAX */
	snprintf(longest, sizeof(longest),
		 "profile longest\n"
		 "allow file rw /l/**\n"
		 "deny file r %s/**\n"
		 "allow file r %s\n"
		 "deny file rw %s/**\n" /* the key "p250/": 251 bytes */
		 "allow file w %s\n"	/* "p250\0" */
		 "deny exec %s/**\n"
		 "allow exec %s\n",
		 p248, p249, p250, p250, p248, p250);
}

static struct policy policies[] = {
    {.text = nested, .id = 0},
    {.text = longest, .id = 1},
    {.name = "profiles/python-sandbox.profile", .id = 2},
    {.text = prefixes, .id = 3},
    /* The same rules under another id: lookups must not cross policies. */
    {.text = "profile other\ndeny file rw /usr/**\nallow file r /usr/lib/secret/**\n"
	     "deny exec /**\n",
     .id = 63},
};
#define NPOLICIES (sizeof(policies) / sizeof(policies[0]))

static int load(struct policy *pol)
{
	struct bw_diags d = {};
	char err[512] = "";
	int ret;

	if (pol->name)
		ret = bw_profile_load(pol->name, "profiles", &pol->p, &d);
	else
		ret = bw_profile_parse_string("test.profile", pol->text, strlen(pol->text), NULL,
					      &pol->p, &d);
	if (ret) {
		bw_diags_print(stderr, &d);
		bw_diags_free(&d);
		return ret;
	}
	bw_diags_free(&d);
	ret = bw_compile(pol->p, &pol->c, err, sizeof(err));
	if (ret)
		fprintf(stderr, "trie_agrees: %s: cannot compile: %s\n", pol->p->name, err);
	return ret;
}

static int create_trie(const char *name)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);

	return bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, name, sizeof(struct bw_path_key),
			      sizeof(struct bw_path_rule), BW_MAX_FILE_KEYS, &opts);
}

static int store(int fd, const struct bw_file_entry *v, size_t n, __u32 id)
{
	for (size_t i = 0; i < n; i++) {
		struct bw_path_key k;

		bw_file_entry_key(&v[i], id, &k);
		if (bpf_map_update_elem(fd, &k, &v[i].val, BPF_NOEXIST)) {
			fprintf(stderr, "trie_agrees: storing %.*s: %s\n", (int)v[i].keylen,
				v[i].key, strerror(errno));
			return -errno;
		}
	}
	return 0;
}

/*
 * The kernel's answer, looking up path as bpf/decide.bpf.h builds its key,
 * and once again at the directory when the key found is a name prefix that
 * the path goes on below (bw_past_name_prefix).
 */
static int kernel_lookup(int fd, __u32 id, const char *path, struct bw_path_rule *out)
{
	struct bw_path_key k = {};
	size_t len = strlen(path);

	k.policy = id;
	k.prefixlen = bw_path_key_bits(len);
	memcpy(k.path, path, len < BW_KEY_PATH_MAX ? len : BW_KEY_PATH_MAX);
	if (bpf_map_lookup_elem(fd, &k, out))
		return errno == ENOENT ? 0 : -errno;
	if (!out->name_at || !strchr(path + out->name_at, '/'))
		return 1;
	k.prefixlen = BW_PATH_KEY_HEAD_BITS + out->name_at * 8;
	if (bpf_map_lookup_elem(fd, &k, out))
		return errno == ENOENT ? 0 : -errno;
	return 1;
}

static void show(const char *who, int found, const struct bw_path_rule *v)
{
	if (!found)
		fprintf(stderr, "    %s: no key\n", who);
	else
		fprintf(stderr, "    %s: r %u (rule %u), w %u (rule %u)\n", who, v->verdict_r,
			v->rule_r, v->verdict_w, v->rule_w);
}

static unsigned long checked, failed, found_both;

static void compare(int fd, const struct policy *pol, const struct bw_file_entry *v, size_t n,
		    const char *what, const char *path)
{
	const struct bw_file_entry *e = bw_entries_lookup(v, n, path);
	struct bw_path_rule kv;
	int k = kernel_lookup(fd, pol->id, path, &kv);

	checked++;
	if (k < 0) {
		fprintf(stderr, "trie_agrees: lookup failed: %s\n", strerror(-k));
		failed++;
		return;
	}
	if (k == !!e && (!e || !memcmp(&kv, &e->val, sizeof(kv)))) {
		found_both += k;
		return;
	}
	failed++;
	if (failed <= 20) {
		fprintf(stderr, "trie_agrees: %s, policy %u (%s), %zu bytes: %s\n", what, pol->id,
			pol->p->name, strlen(path), path);
		show("kernel", k, &kv);
		show("compiler", !!e, e ? &e->val : NULL);
	}
}

/* Paths around one rule path p: itself, below, beside, above, and very long. */
static void around(int fd, const struct policy *pol, const struct bw_file_entry *v, size_t n,
		   const char *what, const char *p)
{
	static const char *const tails[] = {"",	 "/",  "/x",	   "/x/y",
					    "x", "/.", "-sibling", "/deep/a/b/c"};
	char path[BW_PATH_BUF];
	size_t len = strlen(p), i;

	for (i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", strcmp(p, "/") ? p : "", tails[i]);
		if (path[0])
			compare(fd, pol, v, n, what, path);
	}
	/* Every ancestor, and every prefix that cuts a name in two. */
	for (i = 1; i < len; i++) {
		snprintf(path, sizeof(path), "%.*s", (int)i, p);
		compare(fd, pol, v, n, what, path);
	}
	/* Lengths on both sides of BW_KEY_PATH_MAX, and far past it. */
	for (i = len + 1; i < BW_KEY_PATH_MAX + 6 || i == len + 1; i++) {
		snprintf(path, sizeof(path), "%s/%.*s", strcmp(p, "/") ? p : "", (int)(i - len - 1),
			 "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
			 "nnnnnn"
			 "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
			 "nnnnnn"
			 "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
			 "nnnnnn"
			 "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn");
		compare(fd, pol, v, n, what, path);
	}
	memset(path, 'q', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	memcpy(path, p, len);
	path[len] = '/';
	compare(fd, pol, v, n, what, path);
}

static void check_policy(int fd, const struct policy *pol, const struct bw_file_entry *v, size_t n,
			 enum bw_cat cat, const char *what)
{
	for (size_t i = 0; i < pol->p->nrules; i++) {
		const struct bw_rule *r = &pol->p->rules[i];

		if (r->cat == cat && r->file.path)
			around(fd, pol, v, n, what, r->file.path);
	}
	/* Rules of every other policy, looked up in this one. */
	for (size_t j = 0; j < NPOLICIES; j++) {
		for (size_t i = 0; i < policies[j].p->nrules; i++) {
			const struct bw_rule *r = &policies[j].p->rules[i];

			if (r->cat == cat && r->file.path)
				compare(fd, pol, v, n, what, r->file.path);
		}
	}
}

int main(void)
{
	int files = -1, execs = -1, ret = 1;
	size_t nkeys = 0, i;

	make_longest();
	for (i = 0; i < NPOLICIES; i++)
		if (load(&policies[i]))
			return 1;
	files = create_trie("bw_test_files");
	execs = create_trie("bw_test_execs");
	if (files < 0 || execs < 0) {
		fprintf(stderr,
			"trie_agrees: cannot run: creating an LPM trie map failed (%s); it needs "
			"root or CAP_BPF\n",
			strerror(errno));
		goto out;
	}
	for (i = 0; i < NPOLICIES; i++) {
		const struct policy *pol = &policies[i];

		if (store(files, pol->c.files, pol->c.nfiles, pol->id) ||
		    store(execs, pol->c.execs, pol->c.nexecs, pol->id))
			goto out;
		nkeys += pol->c.nfiles + pol->c.nexecs;
	}
	for (i = 0; i < NPOLICIES; i++) {
		const struct policy *pol = &policies[i];

		check_policy(files, pol, pol->c.files, pol->c.nfiles, BW_CAT_FILE, "file");
		check_policy(execs, pol, pol->c.execs, pol->c.nexecs, BW_CAT_EXEC, "exec");
	}
	/* A test that matched nothing would agree trivially. */
	if (!failed && found_both < checked / 2) {
		fprintf(stderr, "trie_agrees: only %lu of %lu paths found a key\n", found_both,
			checked);
		failed++;
	}
	printf("trie_agrees: %zu keys of %zu policies; %lu paths, %lu with a key: %s\n", nkeys,
	       NPOLICIES, checked, found_both, failed ? "FAILED" : "kernel and compiler agree");
	ret = failed ? 1 : 0;
out:
	for (i = 0; i < NPOLICIES; i++) {
		bw_compiled_free(&policies[i].c);
		bw_profile_free(policies[i].p);
	}
	return ret;
}
