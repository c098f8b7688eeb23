// SPDX-License-Identifier: GPL-2.0-only
/*
 * Learned profiles as a start (docs/learn.md, "Starting from a profile" and
 * "Merging learned profiles"): a merge of several runs is generalised as one
 * run that did all of it, keeping the counts and programs of each rule's
 * "# seen" comment, and keeps every rule that is not one object as written;
 * learning from an operator's profile keeps its name, settings and rules and
 * writes only what was used beyond them.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learn_helpers.h"
#include "suites.h"

static struct bw_profile *parse(const char *name, const char *text)
{
	struct bw_diags d = {0};
	struct bw_profile *p = NULL;
	int ret = bw_profile_parse_string(name, text, strlen(text), BW_PROFILE_LIBDIR, &p, &d);
	char *dt = diags_text(&d);

	ck_assert_msg(ret == 0 && d.n == 0, "%s does not parse cleanly: %s", name, dt);
	free(dt);
	bw_diags_free(&d);
	return p;
}

/* What `profile merge` writes for these inputs (names and texts, NULL-ended). */
static char *merged(const char *const *names, const char *const *texts, unsigned min_children)
{
	struct bw_profile *in[8];
	struct bw_learn_set *s = bw_learn_new();
	struct bw_learn_opts o = {.libdir = BW_PROFILE_LIBDIR,
				  .flags = BW_LEARN_BASE_OBJECTS,
				  .min_children = min_children};
	size_t n = 0;
	char *text;

	ck_assert_ptr_nonnull(s);
	for (; names[n]; n++) {
		in[n] = parse(names[n], texts[n]);
		ck_assert_int_ge(bw_learn_add_profile(s, in[n], texts[n], strlen(texts[n])), 0);
	}
	o.bases = (const struct bw_profile *const *)in;
	o.nbases = n;
	text = write_text(s, &o);
	for (size_t i = 0; i < n; i++)
		bw_profile_free(in[i]);
	bw_learn_free(s);
	return text;
}

static const char half_a[] = "profile web\n"
			     "default deny\n"
			     "# seen 3 times, by /usr/sbin/nginx\n"
			     "allow file r /srv/www/a.html\n"
			     "allow file r /srv/www/b.html\n"
			     "allow file r /srv/www/c.html\n"
			     "allow file r /srv/www/d.html\n";
static const char half_b[] = "profile web\n"
			     "default deny\n"
			     "# seen 2 times, by /usr/bin/curl, and others; a note\n"
			     "allow file r /srv/www/e.html\n"
			     "allow file r /srv/www/f.html\n"
			     "allow file r /srv/www/g.html\n"
			     "allow file r /srv/www/h.html\n";

/* Neither half reaches the fan-out threshold alone; their union does. */
START_TEST(merge_generalises_over_the_union)
{
	const char *names[] = {"a.profile", "b.profile", NULL};
	const char *texts[] = {half_a, half_b, NULL};
	const char *one_n[] = {"a.profile", NULL}, *one_t[] = {half_a, NULL};
	char *alone = merged(one_n, one_t, 0), *both = merged(names, texts, 0), *before;
	struct loaded l;

	ck_assert_msg(!rule_with(alone, "/srv/www/**"), "one half generalised:\n%s", alone);
	expect_line(alone, "allow file r /srv/www/a.html");
	expect_line(both, "profile web");
	expect_line(both, "allow file r /srv/www/**");
	ck_assert_msg(!rule_with(both, "/srv/www/a.html"), "covered file still written:\n%s", both);
	/* 3 + 1 + 1 + 1 from one, 2 + 1 + 1 + 1 from the other; every program named. */
	before = line_before(both, "allow file r /srv/www/**");
	ck_assert_ptr_nonnull(before);
	ck_assert_msg(!strncmp(before,
			       "# seen 11 times, by /usr/bin/curl, /usr/sbin/nginx, and others;",
			       strlen("# seen 11 times, by /usr/bin/curl, /usr/sbin/nginx, and "
				      "others;")),
		      "%s", before);
	l = (struct loaded){0};
	load_clean(&l, both, BW_PROFILE_LIBDIR);
	ck_assert(file_ok(&l, "/srv/www/new.html", R));
	ck_assert(!file_ok(&l, "/srv/www/new.html", W));
	ck_assert(!file_ok(&l, "/srv/other", R));
	loaded_free(&l);
	free(before);
	free(alone);
}
END_TEST

/* The same rule in two inputs: one rule, the counts added, the programs together. */
START_TEST(merge_adds_counts_and_programs)
{
	const char *names[] = {"a.profile", "b.profile", NULL};
	const char *texts[] = {"profile job\n# seen 5 times, by /usr/bin/a, /usr/bin/b\n"
			       "allow file rw /srv/job/out.txt\n",
			       "profile job\n# seen 2 times, by /usr/bin/c\n"
			       "allow file r /srv/job/out.txt\n"
			       "# seen 4 times, by /usr/bin/c\n"
			       "allow net connect tcp 10.1.2.3:5432\n",
			       NULL};
	char *t = merged(names, texts, 0),
	     *before = line_before(t, "allow file rw /srv/job/out.txt");

	ck_assert_ptr_nonnull(before);
	ck_assert_str_eq(before, "# seen 7 times, by /usr/bin/a, /usr/bin/b, /usr/bin/c");
	free(before);
	before = line_before(t, "allow net connect tcp 10.1.2.3:5432");
	ck_assert_ptr_nonnull(before);
	ck_assert_str_eq(before, "# seen 4 times, by /usr/bin/c");
	ck_assert_int_eq(count_of(t, "\nallow file"), 1);
	free(before);
	free(t);
}
END_TEST

/* What is not one object is the operator's or a generalisation: kept, once, as written. */
START_TEST(merge_keeps_the_other_rules)
{
	const char *names[] = {"a.profile", "b.profile", NULL};
	const char *texts[] = {"profile svc\ninclude \"abstractions/base\"\n"
			       "allow file rw /var/lib/svc/**\n"
			       "deny file r /var/lib/svc/key.pem\n"
			       "allow net connect tcp 10.0.0.0/8:5432\n",
			       "profile svc\n"
			       "allow file rw /var/lib/svc/**\n"
			       "allow file r /var/lib/svc/state.db\n"
			       "allow file r /etc/svc.conf as svc-config\n"
			       "allow file r /dev/shm/svc.*\n"
			       "allow net connect unix /run/svc/**\n",
			       NULL};
	char *t = merged(names, texts, 0), *before;
	struct loaded l = {0};

	ck_assert_int_eq(count_of(t, "\nallow file rw /var/lib/svc/**\n"), 1);
	expect_line(t, "deny file r /var/lib/svc/key.pem");
	expect_line(t, "allow net connect tcp 10.0.0.0/8:5432");
	expect_line(t, "allow file r /etc/svc.conf as svc-config");
	expect_line(t, "allow file r /dev/shm/svc.*");
	expect_line(t, "include \"abstractions/base\"");
	expect_line(t, "# kept from a.profile");
	/* In the inputs' order; a repeat stays where its first copy is. */
	ck_assert_msg(strstr(t, "allow file rw /var/lib/svc/**") <
			      strstr(t, "deny file r /var/lib/svc/key.pem") &&
			  strstr(t, "deny file r /var/lib/svc/key.pem") <
			      strstr(t, "allow net connect tcp 10.0.0.0/8:5432") &&
			  strstr(t, "allow net connect tcp 10.0.0.0/8:5432") <
			      strstr(t, "allow file r /etc/svc.conf as svc-config") &&
			  strstr(t, "allow file r /etc/svc.conf as svc-config") <
			      strstr(t, "allow file r /dev/shm/svc.*"),
		      "%s", t);
	/* A unix subtree rule is kept as written, not read back as a learned name. */
	before = line_before(t, "allow net connect unix /run/svc/**");
	ck_assert_msg(before && strncmp(before, "# seen", 6), "%s", t);
	free(before);
	/* Allowed by a kept subtree rule: not written again. */
	ck_assert_msg(!rule_with(t, "/var/lib/svc/state.db"), "%s", t);
	load_clean(&l, t, BW_PROFILE_LIBDIR);
	ck_assert(!file_ok(&l, "/var/lib/svc/key.pem", R));
	ck_assert(file_ok(&l, "/var/lib/svc/state.db", RW));
	loaded_free(&l);
}
END_TEST

/*
 * Learning from START: its name, settings and rules stay; only what was used
 * beyond them is added; what START denies on the object itself is a comment
 * naming START's line, never a rule.
 */
START_TEST(learning_keeps_the_start)
{
	static const char start[] = "profile web\n"
				    "mode audit\n"
				    "default deny file\n"
				    "default allow exec\n"
				    "default deny net\n"
				    "on-deny kill\n"
				    "match namespace=shop pod=web-*\n"
				    "allow file r /srv/www/index.html\n"
				    "deny file r /srv/www/secret.txt\n";
	struct bw_profile *p = parse("start.profile", start);
	const struct bw_profile *bases[] = {p};
	struct bw_learn_opts o = {.libdir = BW_PROFILE_LIBDIR, .bases = bases, .nbases = 1};
	struct bw_learn_set *s = bw_learn_new();
	struct loaded l = {0};
	char *t, *before;

	add_file(s, R, "/srv/www/index.html", "/usr/sbin/nginx");
	add_file(s, R, "/srv/www/about.html", "/usr/sbin/nginx");
	add_file(s, R, "/srv/www/secret.txt", "/usr/sbin/nginx");
	t = write_text(s, &o);
	expect_line(t, "profile web");
	expect_line(t, "mode audit");
	expect_line(t, "default deny file");
	expect_line(t, "default allow exec");
	expect_line(t, "on-deny kill");
	expect_line(t, "match namespace=shop pod=web-*");
	expect_line(t, "# kept from start.profile");
	ck_assert_int_eq(count_of(t, "\nallow file r /srv/www/index.html\n"), 1);
	expect_line(t, "deny file r /srv/www/secret.txt");
	before = line_before(t, "allow file r /srv/www/about.html");
	ck_assert_ptr_nonnull(before);
	ck_assert_str_eq(before, "# seen 1 time, by /usr/sbin/nginx");
	ck_assert_msg(!rule_with(t, "allow file r /srv/www/secret.txt"), "%s", t);
	ck_assert_msg(strstr(t, "start.profile:9"), "the denying rule is not named:\n%s", t);
	load_clean(&l, t, BW_PROFILE_LIBDIR);
	ck_assert(file_ok(&l, "/srv/www/about.html", R));
	ck_assert(!file_ok(&l, "/srv/www/secret.txt", R));
	ck_assert_int_eq(l.p->defaults[BW_CAT_EXEC], BW_V_ALLOW);
	ck_assert_int_eq(l.p->defaults[BW_CAT_FILE], BW_V_DENY);
	ck_assert_int_eq(l.p->on_deny, BW_ON_DENY_KILL);
	loaded_free(&l);
	free(before);
	bw_learn_free(s);
	bw_profile_free(p);
}
END_TEST

/* A comment that is not the writer's is no evidence: one access, nobody named. */
START_TEST(merge_reads_only_its_own_comments)
{
	const char *names[] = {"a.profile", NULL};
	const char *texts[] = {"profile x\n# seen by everyone, 40 times\nallow file r /srv/x/a\n"
			       "# seen 0 times\nallow file r /srv/x/b\n"
			       "# seen 3 timesheets\nallow file r /srv/x/c\n",
			       NULL};
	char *t = merged(names, texts, 0), *b;

	for (const char *p = "abc"; *p; p++) {
		char rule[64];

		snprintf(rule, sizeof(rule), "allow file r /srv/x/%c", *p);
		b = line_before(t, rule);
		ck_assert_ptr_nonnull(b);
		ck_assert_str_eq(b, "# seen 1 time");
		free(b);
	}
	free(t);
}
END_TEST

/* The reviewer's list: what the writer widened, with why; never a kept rule, never an exact one. */
START_TEST(widenings_are_listed)
{
	struct bw_profile *p = parse("a.profile", "profile svc\nallow file r /srv/kept/**\n");
	const struct bw_profile *bases[] = {p};
	struct bw_learn_set *s = files_in("/srv/site", 8, R);
	char *list = NULL, *t;
	size_t len = 0;
	struct bw_learn_opts o = {.libdir = BW_PROFILE_LIBDIR, .bases = bases, .nbases = 1};

	add_file(s, R, "/srv/one/file.txt", "/usr/bin/x");
	o.widenings = open_memstream(&list, &len);
	ck_assert_ptr_nonnull(o.widenings);
	t = write_text(s, &o);
	ck_assert_int_eq(fclose(o.widenings), 0);
	ck_assert_msg(!strncmp(list,
			       "  allow file r /srv/site/**\n    generalised from 8 learned files",
			       strlen("  allow file r /srv/site/**\n    generalised from 8 learned "
				      "files")),
		      "%s", list);
	ck_assert_int_eq(count_of(list, "\n  allow"), 0); /* one rule listed, no other */
	ck_assert_ptr_null(strstr(list, "/srv/kept"));
	ck_assert_ptr_null(strstr(list, "/srv/one"));
	expect_line(t, "allow file r /srv/kept/**");
	free(list);
	free(t);
	bw_learn_free(s);
	bw_profile_free(p);
}
END_TEST

Suite *learn_merge_suite(void)
{
	Suite *s = suite_create("learn_merge");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, merge_generalises_over_the_union);
	tcase_add_test(tc, merge_adds_counts_and_programs);
	tcase_add_test(tc, merge_keeps_the_other_rules);
	tcase_add_test(tc, learning_keeps_the_start);
	tcase_add_test(tc, merge_reads_only_its_own_comments);
	tcase_add_test(tc, widenings_are_listed);
	suite_add_tcase(s, tc);
	return s;
}
