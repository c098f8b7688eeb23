// SPDX-License-Identifier: GPL-2.0-only
/* What a cgroup path says it is: services, containers, scopes. */
#include <check.h>

#include "cgroup.h"
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

Suite *cgroup_suite(void)
{
	Suite *s = suite_create("cgroup");
	TCase *tc = tcase_create("units");

	tcase_add_test(tc, units);
	suite_add_tcase(s, tc);
	return s;
}
