// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where the agent finds its profile library: the environment first, then
 * the build tree or the installed prefix around the binary, and what was
 * looked at when there is none. Real directories, fake binary paths.
 */
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libdir.h"
#include "suites.h"

static char root[32];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/bw-libdir-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
}

static void teardown(void)
{
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ROOT/rel, made with its parents (a directory, or with `file`, a file). */
static const char *make(const char *rel, int file)
{
	static char path[PATH_MAX];
	char *p;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
		*p = '/';
	}
	if (file) {
		FILE *f = fopen(path, "w");

		ck_assert_ptr_nonnull(f);
		fclose(f);
	} else {
		ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
	}
	return path;
}

static char *at(const char *rel)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return path;
}

struct found {
	int ret;
	char dir[PATH_MAX], tried[2 * PATH_MAX];
};

/* The lookup for a binary at ROOT/exe_rel. */
static struct found *find(const char *env, const char *exe_rel)
{
	static struct found f;
	char exe[PATH_MAX];

	snprintf(exe, sizeof(exe), "%s/%s", root, exe_rel);
	memset(&f, 0, sizeof(f));
	f.ret = bw_profile_libdir_find(env, exe, f.dir, sizeof(f.dir), f.tried, sizeof(f.tried));
	return &f;
}

/* It finds `want` (absolute, or relative to ROOT). */
static void expect_found(const char *env, const char *exe_rel, const char *want)
{
	const struct found *f = find(env, exe_rel);
	const char *w = want[0] == '/' ? want : at(want);

	ck_assert_msg(f->ret == 0 && !strcmp(f->dir, w), "binary %s: ret %d, dir '%s', want '%s'",
		      exe_rel, f->ret, f->dir, w);
}

START_TEST(build_tree)
{
	make("src/profiles/abstractions", 0);
	expect_found(NULL, "src/build/bpfwarden", "src/profiles");
	/* an empty variable is no override */
	expect_found("", "src/build/bpfwarden", "src/profiles");
	/* a binary replaced while it runs: /proc/self/exe says "(deleted)" */
	expect_found(NULL, "src/build/bpfwarden (deleted)", "src/profiles");
}
END_TEST

START_TEST(installed)
{
	make("usr/share/bpfwarden/profiles", 0);
	expect_found(NULL, "usr/sbin/bpfwarden", "usr/share/bpfwarden/profiles");
	expect_found(NULL, "usr/bin/bpfwarden", "usr/share/bpfwarden/profiles");
	/* the build tree's own library comes first */
	make("usr/profiles", 0);
	expect_found(NULL, "usr/sbin/bpfwarden", "usr/profiles");
}
END_TEST

START_TEST(environment_first)
{
	make("src/profiles", 0);
	expect_found("/somewhere/else", "src/build/bpfwarden", "/somewhere/else");
	ck_assert_str_eq(find("/somewhere/else", "src/build/bpfwarden")->tried, "");
	/* taken as it is: a missing directory is the include's error to report */
	setenv(BW_PROFILE_DIR_ENV, "/no/such/dir", 1);
	ck_assert_str_eq(bw_profile_libdir(), "/no/such/dir");
	unsetenv(BW_PROFILE_DIR_ENV);
}
END_TEST

START_TEST(nothing_found)
{
	struct found *f;
	char want[3 * PATH_MAX];

	/* a file named profiles is not a library */
	make("src/profiles", 1);
	f = find(NULL, "src/build/bpfwarden");
	ck_assert_int_eq(f->ret, -ENOENT);
	snprintf(want, sizeof(want), "%s/src/profiles, %s/src/share/bpfwarden/profiles", root,
		 root);
	ck_assert_str_eq(f->tried, want);

	f->ret =
	    bw_profile_libdir_find(NULL, NULL, f->dir, sizeof(f->dir), f->tried, sizeof(f->tried));
	ck_assert_int_eq(f->ret, -ENOENT);
	ck_assert_ptr_nonnull(strstr(f->tried, "unknown"));
}
END_TEST

START_TEST(short_buffers)
{
	char dir[8], tried[20];

	make("src/profiles", 0);
	ck_assert_int_eq(bw_profile_libdir_find("/a/long/directory", "/x", dir, sizeof(dir), tried,
						sizeof(tried)),
			 -ENAMETOOLONG);
	ck_assert_int_eq(bw_profile_libdir_find(NULL, at("src/build/bpfwarden"), dir, sizeof(dir),
						tried, sizeof(tried)),
			 -ENAMETOOLONG);
	/* the list of places looked at is cut, never overrun */
	ck_assert_int_eq(bw_profile_libdir_find(NULL, "/nowhere/bin/bpfwarden", dir, sizeof(dir),
						tried, sizeof(tried)),
			 -ENOENT);
	ck_assert_uint_eq(strlen(tried), sizeof(tried) - 1);
}
END_TEST

/* The selftest corpus's root: the first candidate holding the marker, a file. */
START_TEST(marker_decides)
{
	static const char *const below[] = {".", "share/bpfwarden/selftest"};
	char dir[PATH_MAX], tried[2 * PATH_MAX];

	/* an installed prefix: its root holds no corpus, the share directory does */
	make("usr/tests/escape", 0);
	make("usr/share/bpfwarden/selftest/tests/escape/selftest.py", 1);
	ck_assert_int_eq(bw_dir_near_exe(at("usr/sbin/bpfwarden"), below, 2,
					 "tests/escape/selftest.py", dir, sizeof(dir), tried,
					 sizeof(tried)),
			 0);
	ck_assert_str_eq(dir, at("usr/share/bpfwarden/selftest"));
	/* a checkout holds it itself, and comes first */
	make("src/tests/escape/selftest.py", 1);
	ck_assert_int_eq(bw_dir_near_exe(at("src/build/bpfwarden"), below, 2,
					 "tests/escape/selftest.py", dir, sizeof(dir), tried,
					 sizeof(tried)),
			 0);
	ck_assert_str_eq(dir, at("src/."));
	/* neither */
	ck_assert_int_eq(bw_dir_near_exe(at("opt/bin/bpfwarden"), below, 2,
					 "tests/escape/selftest.py", dir, sizeof(dir), tried,
					 sizeof(tried)),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(tried, "opt/share/bpfwarden/selftest"));
}
END_TEST

Suite *libdir_suite(void)
{
	Suite *s = suite_create("profile library");
	TCase *tc = tcase_create("lookup");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, build_tree);
	tcase_add_test(tc, installed);
	tcase_add_test(tc, marker_decides);
	tcase_add_test(tc, environment_first);
	tcase_add_test(tc, nothing_found);
	tcase_add_test(tc, short_buffers);
	suite_add_tcase(s, tc);
	return s;
}
