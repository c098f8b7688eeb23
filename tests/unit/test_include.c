// SPDX-License-Identifier: GPL-2.0-only
/*
 * Includes: lookup next to the including file then in the library, the
 * ".profile" suffix, origins of included rules, missing files, cycles,
 * diamonds, the depth limit, and what an included file may contain.
 * Fixtures live in $BW_TEST_PROFILES (tests/unit/profiles).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "suites.h"

static void expect_rule_at(const struct parsed *r, size_t i, const char *path, const char *file,
			   int line)
{
	ck_assert_uint_lt(i, r->p->nrules);
	const struct bw_rule *rule = &r->p->rules[i];
	char *want = fixture(file);
	ck_assert_str_eq(rule->file.path, path);
	ck_assert_str_eq(rule->origin.file, want);
	ck_assert_int_eq(rule->origin.line, line);
	ck_assert_int_eq(rule->origin.col, 1);
	free(want);
}

START_TEST(nested)
{
	struct parsed r;
	char buf[512], *want;

	parse_fixture(&r, "include-top.profile", NULL);
	expect_clean(&r);
	ck_assert_str_eq(r.p->name, "include-top");
	ck_assert_uint_eq(r.p->nrules, 3);
	/* rules in the order read: an include stands where it is written */
	expect_rule_at(&r, 0, "/child", "inc/child", 2);
	ck_assert(r.p->rules[0].file.subtree);
	/* found next to inc/child, with ".profile" added */
	const struct bw_rule *g = &r.p->rules[1];
	ck_assert_int_eq(g->cat, BW_CAT_NET);
	ck_assert_int_eq(g->verdict, BW_V_DENY);
	ck_assert_int_eq(g->net.prefixlen, 8);
	want = fixture("inc/grandchild.profile");
	ck_assert_str_eq(g->origin.file, want);
	ck_assert_int_eq(g->origin.line, 1);
	ck_assert_int_eq(bw_origin_format(&g->origin, buf, sizeof(buf)), (int)strlen(want) + 2);
	ck_assert_ptr_nonnull(strstr(buf, "inc/grandchild.profile:1"));
	free(want);
	expect_rule_at(&r, 2, "/top", "include-top.profile", 4);

	/* every file read, top level first; origins point into this list */
	ck_assert_uint_eq(r.p->nfiles, 3);
	want = fixture("include-top.profile");
	ck_assert_str_eq(r.p->files[0], want);
	ck_assert_str_eq(r.p->path, want);
	free(want);
	ck_assert_ptr_eq(r.p->rules[0].origin.file, r.p->files[1]);
	ck_assert_ptr_eq(r.p->rules[1].origin.file, r.p->files[2]);
	parsed_free(&r);
}
END_TEST

START_TEST(missing)
{
	struct parsed r;

	parse_fixture(&r, "missing-include.profile", NULL);
	expect_invalid(&r);
	expect_diag(&r, BW_SEV_ERROR, "missing-include.profile", 3, 9,
		    "include 'does/not/exist' not found (tried ");
	expect_diag(&r, BW_SEV_ERROR, "missing-include.profile", 3, 9, "/does/not/exist.profile)");
	expect_counts(&r, 1, 0);
	parsed_free(&r);

	/* the library is tried too, and named */
	char *lib = fixture("lib");
	parse_fixture(&r, "missing-include.profile", lib);
	char *tried = fixture("lib/does/not/exist.profile");
	expect_diag(&r, BW_SEV_ERROR, "missing-include.profile", 3, 9, tried);
	parsed_free(&r);
	free(tried);
	free(lib);
}
END_TEST

START_TEST(cycle)
{
	struct parsed r;
	char *a = fixture("cycle-a.profile"), *b = fixture("cycle-b.profile");
	char want[1024];

	parse_fixture(&r, "cycle-a.profile", NULL);
	expect_invalid(&r);
	snprintf(want, sizeof(want), "include cycle: %s -> %s -> %s", a, b, a);
	expect_diag(&r, BW_SEV_ERROR, "cycle-b.profile", 2, 9, want);
	expect_counts(&r, 1, 0);
	parsed_free(&r);

	parse_fixture(&r, "self-include.profile", NULL);
	expect_invalid(&r);
	expect_diag(&r, BW_SEV_ERROR, "self-include.profile", 2, 9, "include cycle: ");
	expect_diag(&r, BW_SEV_ERROR, "self-include.profile", 2, 9, "self-include.profile -> ");
	expect_counts(&r, 1, 0);
	parsed_free(&r);
	free(a);
	free(b);
}
END_TEST

START_TEST(diamond)
{
	struct parsed r;

	parse_fixture(&r, "diamond.profile", NULL);
	/* shared is read once, so no duplicate warnings either */
	expect_clean(&r);
	ck_assert_uint_eq(r.p->nrules, 3);
	expect_rule_at(&r, 0, "/left", "diamond/left", 1);
	expect_rule_at(&r, 1, "/shared", "diamond/shared", 1);
	expect_rule_at(&r, 2, "/right", "diamond/right", 1);
	ck_assert_uint_eq(r.p->nfiles, 4);
	parsed_free(&r);
}
END_TEST

START_TEST(library)
{
	struct parsed r;
	char *lib = fixture("lib");

	parse_fixture(&r, "libdir.profile", lib);
	expect_clean(&r);
	ck_assert_uint_eq(r.p->nrules, 2);
	expect_rule_at(&r, 0, "/from-lib", "lib/abstractions/only-in-lib", 1);
	/* next to the including file wins over the library */
	expect_rule_at(&r, 1, "/from-local", "abstractions/both", 1);
	parsed_free(&r);

	/* a library given with a trailing '/' gives the same names */
	char *slash;
	ck_assert_int_ge(asprintf(&slash, "%s/", lib), 0);
	parse_fixture(&r, "libdir.profile", slash);
	expect_clean(&r);
	expect_rule_at(&r, 0, "/from-lib", "lib/abstractions/only-in-lib", 1);
	parsed_free(&r);
	free(slash);

	/* without the library */
	parse_fixture(&r, "libdir.profile", NULL);
	expect_diag(&r, BW_SEV_ERROR, "libdir.profile", 3, 9,
		    "include 'abstractions/only-in-lib' not found");
	expect_counts(&r, 1, 0);
	parsed_free(&r);
	free(lib);
}
END_TEST

START_TEST(from_string)
{
	struct parsed r;
	char *lib = fixture(""), text[1024];

	/* a string's includes: relative to its name's directory, then the library */
	parse_text(&r, "profile s\ninclude \"inc/grandchild\"\n", lib);
	expect_clean(&r);
	ck_assert_uint_eq(r.p->nrules, 1);
	ck_assert_ptr_nonnull(strstr(r.p->rules[0].origin.file, "/inc/grandchild.profile"));
	parsed_free(&r);

	/* an absolute name is used as is */
	char *abs = fixture("inc/grandchild");
	snprintf(text, sizeof(text), "profile s\ninclude %s\n", abs);
	parse_text(&r, text, NULL);
	expect_clean(&r);
	ck_assert_uint_eq(r.p->nrules, 1);
	parsed_free(&r);
	free(abs);
	free(lib);
}
END_TEST

START_TEST(directory_skipped)
{
	struct parsed r;

	parse_fixture(&r, "include-dir.profile", NULL);
	expect_clean(&r);
	ck_assert_uint_eq(r.p->nrules, 1);
	expect_rule_at(&r, 0, "/adir", "adir.profile", 1);
	parsed_free(&r);
}
END_TEST

START_TEST(only_rules_in_includes)
{
	struct parsed r;
	const char *f = "inc/toplevel-keywords";

	parse_fixture(&r, "toplevel-in-include.profile", NULL);
	expect_invalid(&r);
	expect_diag(&r, BW_SEV_ERROR, f, 1, 1, "'profile' is not allowed in an included file");
	expect_diag(&r, BW_SEV_ERROR, f, 2, 1, "'mode' is not allowed in an included file");
	expect_diag(&r, BW_SEV_ERROR, f, 3, 1, "'default' is not allowed in an included file");
	expect_diag(&r, BW_SEV_ERROR, f, 4, 1, "'on-deny' is not allowed in an included file");
	expect_diag(&r, BW_SEV_ERROR, f, 5, 1, "'match' is not allowed in an included file");
	/* errors in an included file carry its name */
	expect_diag(&r, BW_SEV_ERROR, f, 6, 12, "bad permission letters 'x'");
	expect_counts(&r, 6, 0);
	parsed_free(&r);
}
END_TEST

START_TEST(bad_include_lines)
{
	struct parsed r;

	parse_text(&r, "profile p\ninclude \"\"\ninclude\ninclude /dev/null\n", NULL);
	expect_invalid(&r);
	expect_error(&r, 2, 9, "empty include name");
	expect_error(&r, 3, 8, "missing file name after 'include'");
	expect_error(&r, 4, 9, "include '/dev/null' is not a regular file");
	expect_counts(&r, 3, 0);
	parsed_free(&r);
}
END_TEST

/* A temporary directory for generated fixtures; removed by the test. */
static char *tmpdir(void)
{
	char *d = strdup("/tmp/bw-unit-XXXXXX");

	ck_assert_ptr_nonnull(mkdtemp(d));
	return d;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static void remove_files(const char *dir, int n)
{
	char path[512];

	for (int i = 0; i <= n; i++) {
		snprintf(path, sizeof(path), "%s/l%d", dir, i);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/big", dir);
	unlink(path);
	rmdir(dir);
}

/* l0 (the top level) includes l1, which includes l2, ... down to l<levels>. */
static void make_chain(const char *dir, int levels)
{
	char name[32], text[128];

	for (int i = 0; i <= levels; i++) {
		int n = 0;
		if (i == 0)
			n += snprintf(text + n, sizeof(text) - n, "profile chain\n");
		if (i < levels)
			n += snprintf(text + n, sizeof(text) - n, "include \"l%d\"\n", i + 1);
		snprintf(text + n, sizeof(text) - n, "allow file r /level%d\n", i);
		snprintf(name, sizeof(name), "l%d", i);
		write_file(dir, name, text);
	}
}

START_TEST(depth_limit)
{
	struct bw_diags d = {0};
	struct bw_profile *p = NULL;
	char *dir = tmpdir(), top[512];

	snprintf(top, sizeof(top), "%s/l0", dir);

	/* 16 levels of include below the top level are fine */
	make_chain(dir, 16);
	ck_assert_int_eq(bw_profile_load(top, NULL, &p, &d), 0);
	ck_assert_uint_eq(p->nrules, 17);
	ck_assert_uint_eq(p->nfiles, 17);
	bw_profile_free(p);
	bw_diags_free(&d);

	/* the 17th is refused at the include line in l16 */
	make_chain(dir, 17);
	ck_assert_int_eq(bw_profile_load(top, NULL, &p, &d), -EINVAL);
	ck_assert_uint_eq(d.n, 1);
	ck_assert_ptr_nonnull(strstr(d.v[0].file, "/l16"));
	ck_assert_int_eq(d.v[0].line, 1);
	ck_assert_int_eq(d.v[0].col, 9);
	ck_assert_ptr_nonnull(strstr(d.v[0].msg, "includes nested more than 16 deep"));
	bw_diags_free(&d);
	remove_files(dir, 17);
	free(dir);
}
END_TEST

START_TEST(unopenable)
{
	struct parsed r;
	char *dir = tmpdir(), path[512], text[600];

	/* a symlink loop exists but cannot be opened: that is said, not "not found" */
	snprintf(path, sizeof(path), "%s/l0", dir);
	ck_assert_int_eq(symlink("l0", path), 0);
	snprintf(text, sizeof(text), "profile p\ninclude \"%s\"\n", path);
	parse_text(&r, text, NULL);
	expect_error(&r, 2, 9, "cannot open include '");
	expect_error(&r, 2, 9, "Too many levels of symbolic links");
	expect_counts(&r, 1, 0);
	parsed_free(&r);
	remove_files(dir, 0);
	free(dir);
}
END_TEST

START_TEST(too_large)
{
	struct parsed r;
	char *dir = tmpdir(), path[512], text[600];
	int fd;

	snprintf(path, sizeof(path), "%s/big", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (8 << 20) + 1), 0);
	close(fd);

	snprintf(text, sizeof(text), "profile p\ninclude \"%s\"\n", path);
	parse_text(&r, text, NULL);
	expect_error(&r, 2, 9, "is larger than 8 MiB");
	expect_counts(&r, 1, 0);
	parsed_free(&r);

	/* the same file at the top level */
	memset(&r, 0, sizeof(r));
	r.ret = bw_profile_load(path, NULL, &r.p, &r.d);
	expect_invalid(&r);
	expect_diag(&r, BW_SEV_ERROR, "/big", 1, 1, "profile is larger than 8 MiB");
	parsed_free(&r);
	remove_files(dir, -1);
	free(dir);
}
END_TEST

START_TEST(load_errors)
{
	struct bw_diags d = {0};
	struct bw_profile *p = (struct bw_profile *)&d;
	char *dir = fixture("");

	/* failures that are not the profile's: an errno, no diagnostic */
	ck_assert_int_eq(bw_profile_load("/nonexistent/x.profile", NULL, &p, &d), -ENOENT);
	ck_assert_ptr_null(p);
	ck_assert_int_eq(bw_profile_load(dir, NULL, &p, &d), -EISDIR);
	ck_assert_uint_eq(d.n, 0);
	free(dir);
}
END_TEST

Suite *include_suite(void)
{
	Suite *s = suite_create("include");
	TCase *tc = tcase_create("include");

	tcase_add_test(tc, nested);
	tcase_add_test(tc, missing);
	tcase_add_test(tc, cycle);
	tcase_add_test(tc, diamond);
	tcase_add_test(tc, library);
	tcase_add_test(tc, from_string);
	tcase_add_test(tc, directory_skipped);
	tcase_add_test(tc, only_rules_in_includes);
	tcase_add_test(tc, bad_include_lines);
	tcase_add_test(tc, depth_limit);
	tcase_add_test(tc, unopenable);
	tcase_add_test(tc, too_large);
	tcase_add_test(tc, load_errors);
	suite_add_tcase(s, tc);
	return s;
}
