// SPDX-License-Identifier: GPL-2.0-only
/*
 * Positions of rule objects (user/positions.c): ids shared by whoever names
 * a place, the chain of links from a mount's root, placing a path in its
 * file system (symlinks of the existing part resolved, the rest kept), and
 * a deny position making its file system one the kernel climbs on.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pins.h"
#include "positions.h"
#include "suites.h"

struct seen {
	struct bw_pos_edge e[8];
	char names[8][BW_POS_NAME];
	int n;
};

static int collect(const struct bw_pos_edge *e, void *arg)
{
	struct seen *s = arg;

	ck_assert_int_lt(s->n, 8);
	s->e[s->n] = *e;
	memcpy(s->names[s->n], e->name, e->namelen);
	s->names[s->n][e->namelen] = '\0';
	s->n++;
	return 0;
}

START_TEST(ids_name_a_place_on_a_device)
{
	ck_assert_uint_eq(bw_pos_id(7, "/a/b", 4), bw_pos_id(7, "/a/b/c", 4));
	ck_assert_uint_ne(bw_pos_id(7, "/a/b", 4), bw_pos_id(8, "/a/b", 4));
	ck_assert_uint_ne(bw_pos_id(7, "/a/b", 4), bw_pos_id(7, "/a/c", 4));
	ck_assert_uint_ne(bw_pos_id(7, "", 0), 0);
}
END_TEST

/*
 * The chain of rel below its mount's root (root_len bytes of it): one link
 * a name, the first from the root's position, each link's directory the
 * position of the one before, the last at rel's own position.
 */
static void check_chain(const char *rel, size_t root_len, const char *const *names, int n)
{
	struct seen s = {};

	ck_assert_int_eq(bw_pos_chain(7, rel, root_len, collect, &s), 0);
	ck_assert_int_eq(s.n, n);
	for (int i = 0; i < n; i++) {
		ck_assert_str_eq(s.names[i], names[i]);
		ck_assert_uint_eq(s.e[i].dir, i ? s.e[i - 1].pos : bw_pos_id(7, rel, root_len));
		ck_assert_int_eq(s.e[i].last, i == n - 1);
		/* A link's position is the path up to and including its name. */
		ck_assert(rel[s.e[i].end] == '/' || rel[s.e[i].end] == '\0');
		ck_assert_uint_eq(s.e[i].pos, bw_pos_id(7, rel, s.e[i].end));
	}
	ck_assert_uint_eq(s.e[n - 1].end, strlen(rel));
}

START_TEST(chain_links_each_name_to_its_directory)
{
	const char *const names[] = {"srv", "data", "secret"};

	/* From the file system's root. */
	check_chain("/srv/data/secret", 0, names, 3);
}
END_TEST

START_TEST(chain_starts_below_a_bind_mounts_root)
{
	const char *const names[] = {"data", "secret"};

	/* A bind mount of /srv: the agent sees nothing above it. */
	check_chain("/srv/data/secret", 4, names, 2);
}
END_TEST

START_TEST(chain_refuses_names_the_kernel_cannot_compare)
{
	char rel[BW_POS_NAME + 8];
	struct seen s = {};

	rel[0] = '/';
	memset(rel + 1, 'n', BW_POS_NAME);
	rel[BW_POS_NAME + 1] = '\0';
	ck_assert_int_eq(bw_pos_chain(7, rel, 0, collect, &s), -ENAMETOOLONG);
}
END_TEST

static char tmp[PATH_MAX];

static void setup(void)
{
	bw_test_tmpdir(tmp, sizeof(tmp), "bw-pos");
}

static void teardown(void)
{
	bw_test_rmtree(tmp);
}

static int ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && !strcmp(s + a - b, tail);
}

START_TEST(place_keeps_what_does_not_exist_and_resolves_what_does)
{
	struct bw_pos_place a, b;
	char path[PATH_MAX], real[PATH_MAX], want[PATH_MAX];

	snprintf(path, sizeof(path), "%s/real", tmp);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/link", tmp);
	ck_assert_int_eq(symlink("real", path), 0);
	ck_assert_ptr_nonnull(realpath(tmp, real));

	snprintf(path, sizeof(path), "%s/real/secret/key", tmp);
	ck_assert_int_eq(bw_pos_place(NULL, path, &a), 0);
	/* Below the mount's target, the real path and the names still to come. */
	snprintf(want, sizeof(want), "%s/real/secret/key",
		 real + (strcmp(a.target, "/") ? strlen(a.target) : 0));
	ck_assert_msg(ends_with(a.rel, want), "rel %s, want it to end with %s", a.rel, want);
	ck_assert(!strncmp(real, a.target, strlen(a.target)));
	ck_assert_uint_le(a.root_len, strlen(a.rel));

	/* Through the symlink: the same place. */
	snprintf(path, sizeof(path), "%s/link/secret/key", tmp);
	ck_assert_int_eq(bw_pos_place(NULL, path, &b), 0);
	ck_assert_str_eq(a.rel, b.rel);
	ck_assert_uint_eq(a.dev, b.dev);
	ck_assert_int_eq(bw_pos_place(NULL, "relative/path", &b), -EINVAL);
}
END_TEST

START_TEST(resolve_in_a_view_keeps_symlinks_inside_its_root)
{
	char path[PATH_MAX], real[PATH_MAX], rest[PATH_MAX];
	struct bw_pin_view v = {.base = tmp, .mountinfo = "/proc/self/mountinfo"};
	struct bw_pos_place a, b;

	/* A container's root at tmp: /etc is real, /conf -> /etc absolute, /up -> ../../etc. */
	snprintf(path, sizeof(path), "%s/etc", tmp);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/conf", tmp);
	ck_assert_int_eq(symlink("/etc", path), 0);
	snprintf(path, sizeof(path), "%s/etc/up", tmp);
	ck_assert_int_eq(symlink("../../../etc", path), 0);

	ck_assert_int_eq(
	    bw_resolve_in(tmp, "/conf/secret/key", real, sizeof(real), rest, sizeof(rest)), 0);
	ck_assert_str_eq(real, "/etc");
	ck_assert_str_eq(rest, "/secret/key");
	/* ".." stops at the view's root, as it does for the process inside. */
	ck_assert_int_eq(
	    bw_resolve_in(tmp, "/etc/up/./up/x", real, sizeof(real), rest, sizeof(rest)), 0);
	ck_assert_str_eq(real, "/etc");
	ck_assert_str_eq(rest, "/x");
	ck_assert_int_eq(
	    bw_resolve_in("/nonexistent-view", "/etc", real, sizeof(real), rest, sizeof(rest)),
	    -ENOENT);
	ck_assert_int_eq(bw_resolve_in(tmp, "/", real, sizeof(real), rest, sizeof(rest)), 0);
	ck_assert_str_eq(real, "/");
	ck_assert_str_eq(rest, "");
	snprintf(path, sizeof(path), "%s/loop", tmp);
	ck_assert_int_eq(symlink("/loop", path), 0);
	ck_assert_int_eq(bw_resolve_in(tmp, "/loop/x", real, sizeof(real), rest, sizeof(rest)),
			 -ELOOP);

	/* Placed in the view, both names are one place, and the target is reached from here. */
	ck_assert_int_eq(bw_pos_place(&v, "/conf/secret", &a), 0);
	ck_assert_int_eq(bw_pos_place(&v, "/etc/secret", &b), 0);
	ck_assert_str_eq(a.rel, b.rel);
	ck_assert_uint_eq(a.dev, b.dev);
	ck_assert_msg(ends_with(a.rel, "/etc/secret"), "rel %s", a.rel);
	ck_assert(!strncmp(a.target, tmp, strlen(tmp)));
}
END_TEST

START_TEST(deny_positions_count_for_the_climb)
{
	struct bw_compiled c = {};
	struct bw_pin_set ps = {};
	struct bw_policy pol = {};
	const __u32 devs[2] = {0x800001, 0x800002};

	/* Nothing resolved at load: only positions, on two file systems. */
	c.policy.has_pins = 1;
	ps.pos_deny = 2;
	ps.pos_devs = devs;
	ps.npos_devs = 2;
	ps.npos_devs_max = 2;
	bw_pins_policy(&c, &ps, &pol);
	ck_assert_uint_eq(pol.has_pins, 1);
	ck_assert_uint_eq(pol.npin_devs, 2);
	ck_assert_uint_eq(pol.pin_devs[0], devs[0]);
	/* More file systems than the positions could list: climb everywhere. */
	ps.npos_devs = 3;
	bw_pins_policy(&c, &ps, &pol);
	ck_assert_uint_eq(pol.npin_devs, BW_PIN_DEVS_MANY);
	/* No deny rule anywhere: no climb. */
	ps.pos_deny = 0;
	ps.npos_devs = 0;
	bw_pins_policy(&c, &ps, &pol);
	ck_assert_uint_eq(pol.has_pins, 0);
}
END_TEST

Suite *positions_suite(void)
{
	Suite *s = suite_create("positions");
	TCase *tc = tcase_create("chains");
	TCase *fs = tcase_create("places");

	tcase_add_test(tc, ids_name_a_place_on_a_device);
	tcase_add_test(tc, chain_links_each_name_to_its_directory);
	tcase_add_test(tc, chain_starts_below_a_bind_mounts_root);
	tcase_add_test(tc, chain_refuses_names_the_kernel_cannot_compare);
	tcase_add_test(tc, deny_positions_count_for_the_climb);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(fs, setup, teardown);
	tcase_add_test(fs, place_keeps_what_does_not_exist_and_resolves_what_does);
	tcase_add_test(fs, resolve_in_a_view_keeps_symlinks_inside_its_root);
	suite_add_tcase(s, fs);
	return s;
}
