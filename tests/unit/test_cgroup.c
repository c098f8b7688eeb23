// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a cgroup path says it is: services, containers, scopes; the walk
 * over a tree (on a scratch directory: any file system that hands out file
 * handles will do); the mount table as libmount reads it.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "mounts.h"
#include "suites.h"

static const char *unit(const char *path)
{
	static char out[128];

	bw_cgroup_unit(path, out, sizeof(out));
	return out;
}

START_TEST(units)
{
	ck_assert_str_eq(unit("/system.slice/ssh.service"), "service ssh");
	ck_assert_str_eq(unit("/system.slice/docker-0123456789abcdef0123.scope"),
			 "container 0123456789ab");
	ck_assert_str_eq(
	    unit("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/"
		 "cri-containerd-aaaabbbbccccddddeeeeffff0000111122223333444455556666777788889999."
		 "scope"),
	    "container aaaabbbbcccc");
	ck_assert_str_eq(unit("/kubepods/besteffort/pod1/"
			      "aaaabbbbccccddddeeeeffff0000111122223333444455556666777788889999"),
			 "container aaaabbbbcccc");
	ck_assert_str_eq(unit("/user.slice/user-0.slice/session-3.scope"), "scope session-3");
	ck_assert_str_eq(unit("/bwtest-all/later"), "");
	ck_assert_str_eq(unit("/"), "");
	/* not hex: not a container */
	ck_assert_str_eq(unit("/system.slice/docker-xyz.scope"), "scope docker-xyz");
}
END_TEST

/* The names a walk saw, in order, relative to the top. */
struct seen {
	const char *top;
	char names[256];
	const char *prune, *stop;
};

static int record(const char *path, uint64_t id, void *arg)
{
	struct seen *s = arg;
	const char *rel = path + strlen(s->top);

	ck_assert_uint_ne(id, 0);
	rel = *rel ? rel : ".";
	strcat(s->names, rel);
	strcat(s->names, " ");
	if (s->stop && !strcmp(rel, s->stop))
		return BW_WALK_STOP;
	if (s->prune && !strcmp(rel, s->prune))
		return BW_WALK_PRUNE;
	return 0;
}

START_TEST(walk)
{
	char top[] = "/tmp/bw-walk-XXXXXX", path[PATH_MAX], found[PATH_MAX];
	static const char *const dirs[] = {"/a", "/a/b", "/a/b/c", "/d"};
	struct seen s = {.top = top};
	uint64_t id;

	ck_assert_ptr_nonnull(mkdtemp(top));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", top, dirs[i]);
		ck_assert_int_eq(mkdir(path, 0700), 0);
	}
	snprintf(path, sizeof(path), "%s/a/file", top);
	fclose(fopen(path, "w"));

	/* Parents first; files are not cgroups. Sibling order is the directory's. */
	ck_assert_int_eq(bw_cgroup_walk(top, record, &s), 0);
	ck_assert_uint_eq(strlen(s.names), strlen(". /a /a/b /a/b/c /d "));
	ck_assert_ptr_nonnull(strstr(s.names, "/a /a/b /a/b/c "));
	ck_assert_ptr_null(strstr(s.names, "file"));

	s.names[0] = '\0';
	s.prune = "/a/b";
	ck_assert_int_eq(bw_cgroup_walk(top, record, &s), 0);
	ck_assert_ptr_null(strstr(s.names, "/a/b/c"));
	ck_assert_ptr_nonnull(strstr(s.names, "/a/b "));

	s.names[0] = '\0';
	s.prune = NULL;
	s.stop = ".";
	ck_assert_int_eq(bw_cgroup_walk(top, record, &s), BW_WALK_STOP);
	ck_assert_str_eq(s.names, ". ");

	snprintf(path, sizeof(path), "%s/a/b/c", top);
	ck_assert_int_eq(bw_cgroup_id(path, &id), 0);
	ck_assert_int_eq(bw_cgroup_find(top, id, found, sizeof(found)), 0);
	ck_assert_str_eq(found, path);
	ck_assert_int_eq(bw_cgroup_find(top, id + 12345, found, sizeof(found)), -ENOENT);

	snprintf(path, sizeof(path), "%s/gone", top);
	ck_assert_int_eq(bw_cgroup_walk(path, record, &s), -ENOENT);

	snprintf(path, sizeof(path), "rm -rf '%s'", top);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

static int find_root(const struct bw_mount *m, void *arg)
{
	if (strcmp(m->target, "/"))
		return 0;
	*(dev_t *)arg = m->dev;
	return 1;
}

START_TEST(mounts)
{
	struct stat st;
	dev_t dev = 0;

	/* The mount on / is there, with the device stat(2) reports for it. */
	ck_assert_int_eq(bw_mounts_each(find_root, &dev), 1);
	ck_assert_int_eq(stat("/", &st), 0);
	ck_assert_uint_eq(dev, st.st_dev);
}
END_TEST

Suite *cgroup_suite(void)
{
	Suite *s = suite_create("cgroup");
	TCase *tc = tcase_create("units");

	tcase_add_test(tc, units);
	tcase_add_test(tc, walk);
	tcase_add_test(tc, mounts);
	suite_add_tcase(s, tc);
	return s;
}
