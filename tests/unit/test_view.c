// SPDX-License-Identifier: GPL-2.0-only
/*
 * Rules on the sandbox's view, `allow|deny mount|chroot|userns`: parsed,
 * checked (trailing text, quoted words, duplicates, contradictions),
 * compiled into bw_policy.ns (refused without a rule, deny wins), shown by
 * `bpfwarden check`, and written back by the learn writer from learn events.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfwarden.h"
#include "cli.h"
#include "compile.h"
#include "learn.h"

#include "helpers.h"
#include "learn_helpers.h"
#include "suites.h"

static void compile_text(const char *text, struct bw_compiled *c)
{
	struct parsed r;
	char err[256] = "";

	parse_text(&r, text, NULL);
	ck_assert_msg(r.ret == 0, "%s", diag_dump(&r)); /* warnings allowed */
	ck_assert_int_eq(bw_compile(r.p, c, err, sizeof(err)), 0);
	parsed_free(&r);
}

START_TEST(parsed)
{
	struct parsed r;

	parse_text(&r, "profile p\nallow mount\ndeny chroot\nallow userns # for bwrap\n", NULL);
	expect_clean(&r);
	ck_assert_uint_eq(r.p->nrules, 3);
	ck_assert_int_eq(r.p->rules[0].cat, BW_CAT_NS);
	ck_assert_uint_eq(r.p->rules[0].ns.what, BW_NS_MOUNT);
	ck_assert_int_eq(r.p->rules[0].verdict, BW_V_ALLOW);
	ck_assert_uint_eq(r.p->rules[1].ns.what, BW_NS_CHROOT);
	ck_assert_int_eq(r.p->rules[1].verdict, BW_V_DENY);
	ck_assert_uint_eq(r.p->rules[2].ns.what, BW_NS_USERNS);
	ck_assert_int_eq(r.p->rules[2].origin.line, 4);
	ck_assert_int_eq(r.p->rules[2].origin.col, 1);
	parsed_free(&r);
}
END_TEST

START_TEST(errors)
{
	struct parsed r;

	/* The rule names nothing more; a quoted word is a value, never a keyword. */
	parse_text(&r, "profile p\nallow mount /mnt\ndeny \"chroot\"\nallow mounts\n", NULL);
	expect_invalid(&r);
	expect_error(&r, 2, 13, "unexpected '/mnt' after a complete statement");
	expect_error(
	    &r, 3, 6,
	    "bad rule category 'chroot': expected file, exec, net, mount, chroot, userns or cgroup");
	expect_error(&r, 4, 7, "bad rule category 'mounts'");
	expect_counts(&r, 3, 0);
	parsed_free(&r);

	/* There is no default for them: a change of the view is refused unless allowed. */
	parse_text(&r, "profile p\ndefault allow mount\n", NULL);
	expect_error(&r, 2, 15, "bad default category 'mount': expected file, exec or net");
	parsed_free(&r);
}
END_TEST

START_TEST(duplicates_and_contradictions)
{
	struct parsed r;

	parse_text(&r, "profile p\nallow mount\nallow mount\ndeny mount\nallow chroot\n", NULL);
	ck_assert_int_eq(r.ret, 0);
	expect_warning(&r, 3, 1, "duplicate rule (first at t.profile:2)");
	expect_warning(&r, 4, 1, "contradicts t.profile:2; deny wins");
	expect_counts(&r, 0, 2);
	parsed_free(&r);
}
END_TEST

START_TEST(compiled)
{
	struct bw_compiled c;

	/* Without a rule nothing is allowed, whatever the defaults say. */
	compile_text("profile p\ndefault allow\n", &c);
	for (int i = 0; i < BW_NS_COUNT; i++) {
		ck_assert_uint_eq(c.policy.ns[i], BW_V_NONE);
		ck_assert_uint_eq(bw_ns_rule(&c.policy, i), 0);
	}
	bw_compiled_free(&c);

	compile_text("profile p\nallow mount\nallow userns\ndeny userns\nallow net raw\n"
		     "allow chroot\n",
		     &c);
	ck_assert_uint_eq(c.policy.ns[BW_NS_MOUNT], BW_V_ALLOW);
	ck_assert_uint_eq(c.policy.ns_rule[BW_NS_MOUNT], 1);
	/* deny wins, and it is the deciding rule */
	ck_assert_uint_eq(c.policy.ns[BW_NS_USERNS], BW_V_DENY);
	ck_assert_uint_eq(c.policy.ns_rule[BW_NS_USERNS], 3);
	ck_assert_uint_eq(c.policy.ns[BW_NS_CHROOT], BW_V_ALLOW);
	ck_assert_uint_eq(c.policy.ns_rule[BW_NS_CHROOT], 5);
	ck_assert_uint_eq(c.policy.ns[BW_NS_CGROUP], BW_V_NONE);
	/* no trie key, no pin: they name no path; `net raw` is decided apart */
	ck_assert_uint_eq(c.nfiles + c.nexecs + c.nnets + c.nunixes + c.npins, 0);
	ck_assert_uint_eq(c.policy.net_raw, BW_V_ALLOW);
	ck_assert_uint_eq(c.policy.net_raw_rule, 4);
	/* `net admin`: no rule, refused like deny (the net default does not decide it) */
	ck_assert_uint_eq(c.policy.net_admin, BW_V_NONE);
	ck_assert_uint_eq(c.policy.net_admin_rule, 0);
	bw_compiled_free(&c);

	compile_text("profile p\ndefault allow\nallow net admin\ndeny net admin\n", &c);
	ck_assert_uint_eq(c.policy.net_admin, BW_V_DENY);
	ck_assert_uint_eq(c.policy.net_admin_rule, 2);
	ck_assert_uint_eq(c.nnets, 0);
	bw_compiled_free(&c);

	/* `cgroup` is decided alike; its rule is kept apart (bw_ns_rule) */
	compile_text("profile p\nallow mount\nallow cgroup\n", &c);
	ck_assert_uint_eq(c.policy.ns[BW_NS_CGROUP], BW_V_ALLOW);
	ck_assert_uint_eq(bw_ns_rule(&c.policy, BW_NS_CGROUP), 2);
	ck_assert_uint_eq(bw_ns_rule(&c.policy, BW_NS_MOUNT), 1);
	ck_assert_uint_eq(c.policy.ns[BW_NS_USERNS], BW_V_NONE);
	bw_compiled_free(&c);

	/* deny first, allow after: still deny, the deny rule reported */
	compile_text("profile p\ndeny chroot\nallow chroot\n", &c);
	ck_assert_uint_eq(c.policy.ns[BW_NS_CHROOT], BW_V_DENY);
	ck_assert_uint_eq(c.policy.ns_rule[BW_NS_CHROOT], 1);
	bw_compiled_free(&c);
}
END_TEST

/* Each operation of the view and what it changes; other operations none. */
START_TEST(operations)
{
	static const struct {
		unsigned op;
		int ns;
	} want[] = {
	    {BW_OP_MOUNT, BW_NS_MOUNT},
	    {BW_OP_UMOUNT, BW_NS_MOUNT},
	    {BW_OP_MOVE_MOUNT, BW_NS_MOUNT},
	    {BW_OP_PIVOT_ROOT, BW_NS_MOUNT},
	    {BW_OP_FSOPEN, BW_NS_MOUNT},
	    {BW_OP_FSPICK, BW_NS_MOUNT},
	    {BW_OP_FSMOUNT, BW_NS_MOUNT},
	    {BW_OP_OPEN_TREE, BW_NS_MOUNT},
	    {BW_OP_MOUNT_SETATTR, BW_NS_MOUNT},
	    {BW_OP_CHROOT, BW_NS_CHROOT},
	    {BW_OP_SETNS, BW_NS_CHROOT},
	    {BW_OP_USERNS, BW_NS_USERNS},
	    {BW_OP_CGROUP_MIGRATE, BW_NS_CGROUP},
	    {BW_OP_OPEN, -1},
	    {BW_OP_EXEC, -1},
	    {BW_OP_SOCKET, -1},
	    {0, -1},
	    {BW_OP_MAX, -1},
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(bw_op_ns(want[i].op) == want[i].ns, "op %u: %d, want %d", want[i].op,
			      bw_op_ns(want[i].op), want[i].ns);
	ck_assert_str_eq(bw_ns_name(BW_NS_MOUNT), "mount");
	ck_assert_str_eq(bw_ns_name(BW_NS_CHROOT), "chroot");
	ck_assert_str_eq(bw_ns_name(BW_NS_USERNS), "userns");
	ck_assert_str_eq(bw_ns_name(BW_NS_CGROUP), "cgroup");
	ck_assert_ptr_null(bw_ns_name(BW_NS_COUNT));
}
END_TEST

/* `bpfwarden check` counts them as rules, and reports them as any other. */
START_TEST(checked)
{
	char path[] = "/tmp/bw-view-XXXXXX";
	char *argv[] = {"check", path, NULL};
	const char *text = "profile p\nallow mount\nallow chroot\nallow userns\n";
	int fd = mkstemp(path);
	FILE *out = tmpfile();
	int so;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
	ck_assert_ptr_nonnull(out);
	fflush(stdout);
	so = dup(1);
	dup2(fileno(out), 1);
	ck_assert_int_eq(bw_command_main(&bw_cmd_check, 2, argv), 0);
	fflush(stdout);
	dup2(so, 1);
	close(so);
	{
		char buf[512] = "", want[600];

		rewind(out);
		ck_assert_uint_gt(fread(buf, 1, sizeof(buf) - 1, out), 0);
		snprintf(want, sizeof(want), "%s: ok (3 rules)\n", path);
		ck_assert_str_eq(buf, want);
	}
	fclose(out);
	unlink(path);
}
END_TEST

static void add_view(struct bw_learn_set *s, unsigned what, const char *prog)
{
	struct bw_learned l = {.cat = BW_CAT_NS, .what = what, .program = prog};

	ck_assert_int_eq(bw_learn_add(s, &l), 0);
}

START_TEST(learned)
{
	struct bw_learn_set *s = bw_learn_new();
	struct bw_learn_opts o = {.name = "runtime"};
	struct bw_learned bad = {.cat = BW_CAT_NS, .what = BW_NS_COUNT};
	struct loaded l;
	const char *sec;

	add_view(s, BW_NS_USERNS, "/usr/bin/unshare");
	add_view(s, BW_NS_MOUNT, "/usr/bin/mount");
	add_view(s, BW_NS_MOUNT, "/usr/bin/umount");
	add_view(s, BW_NS_CHROOT, "/usr/sbin/chroot");
	add_view(s, BW_NS_CGROUP, "/usr/sbin/runc");
	ck_assert_int_eq(bw_learn_add(s, &bad), -EINVAL);
	ck_assert_uint_eq(bw_learn_count(s), 4);
	l = gen_load(s, &o);
	sec = strstr(l.text, "\n# mounts, chroot, user namespaces, moves between its own cgroups\n");
	ck_assert_ptr_nonnull(sec);
	/* in BW_NS_* order, each after what saw it */
	ck_assert_ptr_nonnull(strstr(sec, "# seen 2 times, by /usr/bin/mount, /usr/bin/umount\n"
					  "allow mount\n# seen 1 time, by /usr/sbin/chroot\n"
					  "allow chroot\n# seen 1 time, by /usr/bin/unshare\n"
					  "allow userns\n# seen 1 time, by /usr/sbin/runc\n"
					  "allow cgroup\n"));
	ck_assert_uint_eq(l.c.policy.ns[BW_NS_CGROUP], BW_V_ALLOW);
	ck_assert_uint_eq(l.c.policy.ns[BW_NS_MOUNT], BW_V_ALLOW);
	ck_assert_uint_eq(l.c.policy.ns[BW_NS_CHROOT], BW_V_ALLOW);
	ck_assert_uint_eq(l.c.policy.ns[BW_NS_USERNS], BW_V_ALLOW);
	loaded_free(&l);
	bw_learn_free(s);

	/* Nothing learned: no section at all. */
	s = bw_learn_new();
	add_file(s, R, "/srv/a", "x");
	l = gen_load(s, &o);
	ck_assert_ptr_null(strstr(l.text, "# mounts"));
	ck_assert_ptr_null(strstr(l.text, "allow mount"));
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

/* An included abstraction that denies one: the reviewer is told, no rule that cannot win. */
START_TEST(learned_but_denied_by_an_abstraction)
{
	char lib[] = "/tmp/bw-view-lib-XXXXXX", dir[64], file[96];
	const char *const abstractions[] = {"abstractions/nomount", NULL};
	struct bw_learn_opts o = {.name = "runtime", .libdir = lib, .abstractions = abstractions};
	struct bw_learn_set *s = bw_learn_new();
	struct loaded l;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(lib));
	snprintf(dir, sizeof(dir), "%s/abstractions", lib);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(file, sizeof(file), "%s/nomount", dir);
	f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fputs("deny mount\nallow file r /srv/**\n", f);
	fclose(f);
	/* So that the abstraction is included (BW_FOLD_MIN objects). */
	add_file(s, R, "/srv/a", "x");
	add_file(s, R, "/srv/b", "x");
	add_file(s, R, "/srv/c", "x");
	add_view(s, BW_NS_MOUNT, "/usr/bin/mount");
	add_view(s, BW_NS_CHROOT, "/usr/sbin/chroot");
	l = gen_load(s, &o);
	expect_line(l.text, "include \"abstractions/nomount\"");
	expect_line(l.text, "# not allowed: abstractions/nomount:1 denies it, and deny wins on the "
			    "same object: allow mount");
	expect_no_line(l.text, "allow mount");
	expect_line(l.text, "allow chroot");
	ck_assert_uint_eq(l.c.policy.ns[BW_NS_MOUNT], BW_V_DENY);
	loaded_free(&l);
	bw_learn_free(s);
	unlink(file);
	rmdir(dir);
	rmdir(lib);
}
END_TEST

Suite *view_suite(void)
{
	Suite *s = suite_create("view rules");
	TCase *tc = tcase_create("view");

	tcase_add_test(tc, parsed);
	tcase_add_test(tc, errors);
	tcase_add_test(tc, duplicates_and_contradictions);
	tcase_add_test(tc, compiled);
	tcase_add_test(tc, operations);
	tcase_add_test(tc, checked);
	tcase_add_test(tc, learned);
	tcase_add_test(tc, learned_but_denied_by_an_abstraction);
	suite_add_tcase(s, tc);
	return s;
}
