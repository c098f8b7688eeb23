// SPDX-License-Identifier: GPL-2.0-only
/*
 * `bpfwarden check`: output format, exit status, library lookup. The
 * command is compiled into this test under another name, so the agent's
 * own object can join the unit test binary later without a clash.
 */
#define cmd_check tested_cmd_check
#include "cmd_check.c"
#undef cmd_check

#include <check.h>
#include <unistd.h>

#include "helpers.h"
#include "suites.h"

struct run {
	int ret;
	char *out, *err;
};

static char *slurp(FILE *f)
{
	long n;
	char *s;

	fflush(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	s = calloc(1, (size_t)n + 1);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return s;
}

/* Run the command with stdout and stderr captured. */
static void run(struct run *res, int argc, char **argv)
{
	FILE *o = tmpfile(), *e = tmpfile();
	int so, se;

	ck_assert(o && e);
	fflush(stdout);
	fflush(stderr);
	so = dup(1);
	se = dup(2);
	dup2(fileno(o), 1);
	dup2(fileno(e), 2);
	res->ret = tested_cmd_check(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	res->out = slurp(o);
	res->err = slurp(e);
}

static void run_free(struct run *res)
{
	free(res->out);
	free(res->err);
}

#define ARGV(...)     ((char *[]){"check", __VA_ARGS__, NULL})
#define ARGC(...)     ((int)(sizeof((char *[]){"check", __VA_ARGS__}) / sizeof(char *)))
#define RUN(res, ...) run((res), ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

START_TEST(usage_errors)
{
	struct run res;
	char *argv[] = {"check", NULL};

	run(&res, 1, argv);
	ck_assert_int_eq(res.ret, 2);
	ck_assert_str_eq(res.out, "");
	ck_assert_ptr_nonnull(strstr(res.err, "no profile given"));
	ck_assert_ptr_nonnull(strstr(res.err, "usage: bpfwarden check FILE..."));
	run_free(&res);

	RUN(&res, "-x", "a.profile");
	ck_assert_int_eq(res.ret, 2);
	ck_assert_ptr_nonnull(strstr(res.err, "unknown option '-x'"));
	run_free(&res);

	RUN(&res, "--help");
	ck_assert_int_eq(res.ret, 0);
	ck_assert_ptr_nonnull(strstr(res.out, "usage: bpfwarden check FILE..."));
	ck_assert_str_eq(res.err, "");
	run_free(&res);

	RUN(&res, "--");
	ck_assert_int_eq(res.ret, 2);
	run_free(&res);
}
END_TEST

START_TEST(valid)
{
	struct run res;
	char *path = fixture("include-top.profile"), want[600];

	RUN(&res, path);
	ck_assert_int_eq(res.ret, 0);
	snprintf(want, sizeof(want), "%s: ok (3 rules)\n", path);
	ck_assert_str_eq(res.out, want);
	ck_assert_str_eq(res.err, "");
	run_free(&res);

	/* after "--" a name starting with '-' is a file */
	RUN(&res, "--", path);
	ck_assert_int_eq(res.ret, 0);
	ck_assert_str_eq(res.out, want);
	run_free(&res);
	free(path);
}
END_TEST

START_TEST(invalid)
{
	struct run res;
	char *good = fixture("include-top.profile"), *bad = fixture("missing-include.profile");
	char want[600];

	RUN(&res, bad);
	ck_assert_int_eq(res.ret, 1);
	ck_assert_str_eq(res.out, "");
	snprintf(want, sizeof(want), "%s:3:9: error: include 'does/not/exist' not found", bad);
	ck_assert_msg(strncmp(res.err, want, strlen(want)) == 0, "stderr: %s", res.err);
	ck_assert_uint_eq(strlen(res.err), (size_t)(strchr(res.err, '\n') - res.err) + 1);
	run_free(&res);

	/* every file is checked; one bad file makes the status 1 */
	RUN(&res, bad, good, "/nonexistent/x.profile");
	ck_assert_int_eq(res.ret, 1);
	snprintf(want, sizeof(want), "%s: ok (3 rules)\n", good);
	ck_assert_str_eq(res.out, want);
	ck_assert_ptr_nonnull(strstr(res.err, ":3:9: error: include"));
	ck_assert_ptr_nonnull(strstr(
	    res.err, "bpfwarden check: /nonexistent/x.profile: No such file or directory\n"));
	run_free(&res);
	free(good);
	free(bad);
}
END_TEST

START_TEST(warnings_only)
{
	struct run res;
	char *path = fixture("dup-include.profile"), want[600];

	RUN(&res, path);
	ck_assert_int_eq(res.ret, 0);
	snprintf(want, sizeof(want), "%s: ok (2 rules)\n", path);
	ck_assert_str_eq(res.out, want);
	snprintf(want, sizeof(want), "%s:3:1: warning: duplicate rule (first at ", path);
	ck_assert_ptr_nonnull(strstr(res.err, want));
	run_free(&res);
	free(path);
}
END_TEST

START_TEST(library_dir)
{
	struct run res;
	char *path = fixture("libdir.profile"), *lib = fixture("lib");

	/* the environment overrides the built-in library */
	setenv("BPFWARDEN_PROFILE_DIR", lib, 1);
	RUN(&res, path);
	ck_assert_msg(res.ret == 0, "stderr: %s", res.err);
	ck_assert_ptr_nonnull(strstr(res.out, ": ok (2 rules)"));
	run_free(&res);

	/*
	 * Empty: looked up from where this binary is (build/tests/), where
	 * there is none; the message says where it looked, and the include
	 * that only the library has is not found.
	 */
	setenv("BPFWARDEN_PROFILE_DIR", "", 1);
	RUN(&res, path);
	ck_assert_int_eq(res.ret, 1);
	ck_assert_msg(strstr(res.err, "bpfwarden: no profile library: $BPFWARDEN_PROFILE_DIR is "
				      "not set, and none of /") &&
			  strstr(res.err, "/build/profiles, /") &&
			  strstr(res.err, "/build/share/bpfwarden/profiles is a directory"),
		      "stderr: %s", res.err);
	ck_assert_ptr_nonnull(strstr(res.err, "include 'abstractions/only-in-lib' not found"));
	run_free(&res);

	/* the shipped profile with the shipped library */
	setenv("BPFWARDEN_PROFILE_DIR", BW_PROFILE_LIBDIR, 1);
	RUN(&res, BW_PROFILE_LIBDIR "/python-sandbox.profile");
	ck_assert_msg(res.ret == 0, "stderr: %s", res.err);
	ck_assert_str_eq(res.err, "");
	run_free(&res);
	free(path);
	free(lib);
}
END_TEST

static void library_setup(void)
{
	setenv("BPFWARDEN_PROFILE_DIR", BW_PROFILE_LIBDIR, 1);
}

Suite *cmd_check_suite(void)
{
	Suite *s = suite_create("bpfwarden check");
	TCase *tc = tcase_create("cmd_check");

	/* This binary is in no build tree's bin: it is given the library. */
	tcase_add_checked_fixture(tc, library_setup, NULL);
	tcase_add_test(tc, usage_errors);
	tcase_add_test(tc, valid);
	tcase_add_test(tc, invalid);
	tcase_add_test(tc, warnings_only);
	tcase_add_test(tc, library_dir);
	suite_add_tcase(s, tc);
	return s;
}
