// SPDX-License-Identifier: GPL-2.0-only
/*
 * `bpfwarden check`: output format, exit status, library lookup, and the
 * option parsing every command shares (user/cli.c), run in-process.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfwarden.h"
#include "cli.h"

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

/* Run a command with stdout and stderr captured. */
static void run_cmd(struct run *res, const struct bw_command *cmd, int argc, char **argv)
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
	res->ret = bw_command_main(cmd, argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	res->out = slurp(o);
	res->err = slurp(e);
}

static void run(struct run *res, int argc, char **argv)
{
	run_cmd(res, &bw_cmd_check, argc, argv);
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
	ck_assert_ptr_nonnull(strstr(res.err, "bpfwarden check: no profile given"));
	ck_assert_ptr_nonnull(strstr(res.err, "Try `bpfwarden check --help'"));
	run_free(&res);

	RUN(&res, "-x", "a.profile");
	ck_assert_int_eq(res.ret, 2);
	ck_assert_ptr_nonnull(strstr(res.err, "bpfwarden check: invalid option -- 'x'"));
	run_free(&res);

	RUN(&res, "--frobnicate", "a.profile");
	ck_assert_int_eq(res.ret, 2);
	ck_assert_ptr_nonnull(strstr(res.err, "unrecognized option '--frobnicate'"));
	run_free(&res);

	/* Usage and help come from the option table; help names the profile library. */
	setenv("BPFWARDEN_PROFILE_DIR", "/some/lib", 1);
	RUN(&res, "--help");
	ck_assert_int_eq(res.ret, 0);
	ck_assert_ptr_nonnull(strstr(res.out, "Usage: bpfwarden check [OPTION...] FILE..."));
	ck_assert_ptr_nonnull(strstr(res.out, "--verbose"));
	ck_assert_ptr_nonnull(strstr(res.out, "/some/lib.\n"));
	ck_assert_str_eq(res.err, "");
	run_free(&res);
	setenv("BPFWARDEN_PROFILE_DIR", BW_PROFILE_LIBDIR, 1);

	RUN(&res, "--usage");
	ck_assert_int_eq(res.ret, 0);
	ck_assert_ptr_nonnull(
	    strstr(res.out, "Usage: bpfwarden check [-hv] [--explain=OBJECT] [--help]"));
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

/* --explain: after the ok line, each object's deciding rules, with the rule's own text. */
START_TEST(explain)
{
	struct run res;
	char *path = fixture("include-top.profile"), *child = fixture("inc/child"), want[2048];

	RUN(&res, path, "--explain", "/child/a/b", "--explain", "/top");
	ck_assert_int_eq(res.ret, 0);
	snprintf(want, sizeof(want),
		 "%s: ok (3 rules)\n"
		 "/child/a/b in profile include-top (enforce):\n"
		 "  file r     allow by %s:2: allow file r /child/**\n"
		 "  file w     deny  by default (no `default` line: deny)\n"
		 "  exec       deny  by default (no `default` line: deny)\n"
		 "  exec lib   deny  by default (no `default` line: deny)\n"
		 "/top in profile include-top (enforce):\n"
		 "  file r     allow by %s:4: allow file r /top\n",
		 path, child, path);
	ck_assert_msg(!strncmp(res.out, want, strlen(want)), "got\n%s\nwant\n%s", res.out, want);
	ck_assert_str_eq(res.err, "");
	run_free(&res);

	/* An object it cannot read: status 1 and why, after what it could explain. */
	RUN(&res, "--explain", "/top", "--explain", "net listen tcp 1.2.3.4:5", path);
	ck_assert_int_eq(res.ret, 1);
	ck_assert_ptr_nonnull(strstr(res.out, "/top in profile include-top"));
	ck_assert_ptr_nonnull(strstr(res.err,
				     "bpfwarden check: --explain 'net listen tcp 1.2.3.4:5': "
				     "want net connect|bind"));
	run_free(&res);
	free(path);
	free(child);
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

/* Valid language, but over what the kernel's maps hold: check says so, as run would. */
START_TEST(over_a_kernel_limit)
{
	char path[] = "/tmp/bw-check-limit-XXXXXX", want[600];
	struct run res;
	FILE *f;
	int fd, i;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "profile limits\ndefault deny net\n");
	for (i = 0; i <= BW_NET_RANGES; i++)
		fprintf(f, "allow net connect tcp 127.0.0.1:%d\n", 1000 + i);
	fclose(f);
	RUN(&res, path);
	ck_assert_int_eq(res.ret, 1);
	ck_assert_str_eq(res.out, "");
	snprintf(want, sizeof(want), "%s:%d:1: error: more than %d port ranges", path,
		 3 + BW_NET_RANGES, BW_NET_RANGES);
	ck_assert_msg(strncmp(res.err, want, strlen(want)) == 0, "stderr: %s", res.err);
	run_free(&res);
	unlink(path);
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

/* A command that only records what it was given, in order like `run`. */
static struct bw_opts seen;

static int fake_run(struct bw_opts *o)
{
	seen = *o;
	return 42;
}

static const struct argp_option fake_options[] = {
    BW_OPT_PROFILE, BW_OPT_MODE, BW_OPT_EVENT_RATE, BW_OPT_DURATION, BW_OPTS_LEARN, BW_OPTS_COMMON,
};
static const struct argp fake_argp = {fake_options, bw_parse_opt, "CMD [ARG...]", "For tests."};
static const struct bw_command fake = {"fake", &fake_argp, fake_run, ARGP_IN_ORDER};

#define FAKE(res, ...)                                                                             \
	run_cmd((res), &fake, ARGC(__VA_ARGS__), ((char *[]){"fake", __VA_ARGS__, NULL}))

START_TEST(numbers_and_order)
{
	static const struct {
		const char *opt, *arg;
		int ret;
	} cases[] = {
	    {"--event-rate", "0", 42},	      {"--event-rate", "1000000", 42},
	    {"--event-rate", "1000001", 2},   {"--event-rate", "-1", 2},
	    {"--event-rate", "12x", 2},	      {"--event-rate", "", 2},
	    {"--duration", "1", 42},	      {"--duration", "0", 2},
	    {"--duration", "+5", 2},	      {"--duration", " 5", 2},
	    {"--duration", "99999999999", 2}, {"--min-children", "2", 42},
	    {"--min-children", "1", 2},	      {"--min-children", "100001", 2},
	    {"--mode", "audit", 42},	      {"--mode", "Audit", 2},
	};
	struct run res;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		FAKE(&res, (char *)cases[i].opt, (char *)cases[i].arg, "cmd");
		ck_assert_msg(res.ret == cases[i].ret, "%s '%s': %d (%s)", cases[i].opt,
			      cases[i].arg, res.ret, res.err);
		if (res.ret == 2)
			ck_assert_ptr_nonnull(strstr(res.err, "Try `bpfwarden fake --help'"));
		run_free(&res);
	}
	FAKE(&res, "--duration", "7", "--event-rate", "5", "--exact", "--mode", "learn", "cmd");
	ck_assert_int_eq(res.ret, 42);
	ck_assert_int_eq(seen.duration, 7);
	ck_assert_uint_eq(seen.event_rate, 5);
	ck_assert_uint_ne(seen.learn_flags, 0);
	ck_assert(seen.mode_given && seen.mode == BW_MODE_LEARN);
	run_free(&res);

	/* Defaults, and the options after the first argument are the command's own. */
	FAKE(&res, "-p", "a", "sh", "-p", "b", "--duration", "x");
	ck_assert_int_eq(res.ret, 42);
	ck_assert_str_eq(seen.profile, "a");
	ck_assert_uint_eq(seen.event_rate, BW_DEFAULT_EVENT_RATE);
	ck_assert(!seen.mode_given);
	ck_assert_int_eq(seen.nargs, 5);
	ck_assert_str_eq(seen.args[0], "sh");
	ck_assert_str_eq(seen.args[4], "x");
	ck_assert_ptr_null(seen.args[5]);
	run_free(&res);

	FAKE(&res, "--", "-p");
	ck_assert_int_eq(res.ret, 42);
	ck_assert_int_eq(seen.nargs, 1);
	ck_assert_str_eq(seen.args[0], "-p");
	run_free(&res);
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
	tcase_add_test(tc, explain);
	tcase_add_test(tc, invalid);
	tcase_add_test(tc, over_a_kernel_limit);
	tcase_add_test(tc, warnings_only);
	tcase_add_test(tc, library_dir);
	tcase_add_test(tc, numbers_and_order);
	suite_add_tcase(s, tc);
	return s;
}
