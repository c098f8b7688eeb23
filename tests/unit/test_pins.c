// SPDX-License-Identifier: GPL-2.0-only
/*
 * Inode pins: planned values from the trie, merging, resolving on a real
 * directory tree (hard links inside a denied directory, the scan's bound),
 * the policy's file systems, and the bitmap and device encodings the kernel
 * shares (include/bpfwarden.h).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "compile.h"
#include "pins.h"
#include "profile.h"
#include "suites.h"

static struct bw_profile *prof;
static struct bw_compiled comp;
static char tmp[PATH_MAX];

static void compile_text(const char *text)
{
	struct bw_diags diags = {};
	char err[256] = "";

	ck_assert_int_eq(
	    bw_profile_parse_string("t.profile", text, strlen(text), NULL, &prof, &diags), 0);
	bw_diags_free(&diags);
	ck_assert_msg(bw_compile(prof, &comp, err, sizeof(err)) == 0, "%s", err);
}

static void setup(void)
{
	bw_test_tmpdir(tmp, sizeof(tmp), "bw-pins");
}

static void teardown(void)
{
	bw_test_rmtree(tmp);
	bw_compiled_free(&comp);
	bw_profile_free(prof);
	prof = NULL;
}

static void touch(const char *rel)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

static void mkdir_rel(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	ck_assert_int_eq(mkdir(path, 0700), 0);
}

static struct stat stat_rel(const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	ck_assert_int_eq(lstat(path, &st), 0);
	return st;
}

/* The pin of the object st describes, or NULL. */
static const struct bw_inode_pin *pin_of_stat(const struct bw_pin_set *ps, const struct stat *st)
{
	size_t i;

	for (i = 0; i < ps->n; i++)
		if (ps->keys[i].ino == st->st_ino &&
		    ps->keys[i].dev == bw_dev_encode(major(st->st_dev), minor(st->st_dev)))
			return &ps->pins[i];
	return NULL;
}

/* The pin of the object at rel (not following a symlink), or NULL. */
static const struct bw_inode_pin *pin_of(const struct bw_pin_set *ps, const char *rel)
{
	struct stat st = stat_rel(rel);

	return pin_of_stat(ps, &st);
}

/* The pin of the object at the absolute path p, or NULL. */
static const struct bw_inode_pin *pin_at(const struct bw_pin_set *ps, const char *p)
{
	struct stat st;

	ck_assert_int_eq(stat(p, &st), 0);
	return pin_of_stat(ps, &st);
}

/* A mount root other than "/" (a file system of its own), or NULL. */
static const char *other_mount_root(void)
{
	static const char *const roots[] = {"/proc", "/sys", "/dev"};
	struct stat root, st;
	size_t i;

	ck_assert_int_eq(stat("/", &root), 0);
	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (!stat(roots[i], &st) && st.st_dev != root.st_dev)
			return roots[i];
	return NULL;
}

START_TEST(pins_carry_trie_values)
{
	size_t i;
	int seen = 0;

	compile_text("profile t\nallow file r /s/**\ndeny file r /s/secret/**\n"
		     "allow file r /s/secret/pub/**\n");
	ck_assert_uint_eq(comp.policy.has_pins, 1);
	ck_assert_uint_eq(comp.npins, 3);
	for (i = 0; i < comp.npins; i++) {
		const struct bw_pin_req *p = &comp.pins[i];

		if (!strcmp(p->path, "/s/secret")) {
			ck_assert(p->deny && p->subtree && p->dir);
			ck_assert_uint_eq(p->pin.self.verdict_r, BW_V_DENY);
			ck_assert_uint_eq(p->pin.below.verdict_r, BW_V_DENY);
			ck_assert_uint_eq(p->pin.below.rule_r, 2);
			seen++;
		} else if (!strcmp(p->path, "/s/secret/pub")) {
			ck_assert(!p->deny);
			ck_assert_uint_eq(p->pin.below.verdict_r, BW_V_ALLOW);
			ck_assert_uint_eq(p->pin.below.rule_r, 3);
			seen++;
		}
	}
	ck_assert_int_eq(seen, 2);
}
END_TEST

START_TEST(pin_merge_rule_beats_mount)
{
	struct bw_inode_pin mount = {}, rule = {}, into;

	mount.self.verdict_w = BW_V_ALLOW;
	mount.self.flags = BW_PIN_MOUNT;
	mount.below = mount.self;
	rule.below.verdict_w = BW_V_DENY;
	rule.below.rule_w = 7;
	into = mount;
	bw_pin_merge(&into, &rule);
	ck_assert_uint_eq(into.below.verdict_w, BW_V_DENY);
	ck_assert_uint_eq(into.self.flags, 0);
	bw_pin_merge(&into, &mount); /* a mount pin never overrides a rule's */
	ck_assert_uint_eq(into.below.verdict_w, BW_V_DENY);
	ck_assert_uint_eq(into.below.rule_w, 7);
}
END_TEST

/*
 * Inside a denied directory, a file with a second name elsewhere is pinned by
 * its inode with the trie's values for its path; a file with one name is
 * not, nor is a symlink (even one with two names), nor what it points to.
 */
START_TEST(resolve_pins_hard_links_in_denied_dirs)
{
	char text[4 * PATH_MAX], a[PATH_MAX], b[PATH_MAX];
	struct bw_pin_set ps;
	const struct bw_inode_pin *pn;
	struct bw_policy pol = {};

	mkdir_rel("secret");
	mkdir_rel("secret/sub");
	touch("secret/one-name");
	touch("secret/sub/linked");
	touch("outside");
	snprintf(a, sizeof(a), "%s/secret/sub/linked", tmp);
	snprintf(b, sizeof(b), "%s/elsewhere", tmp);
	ck_assert_int_eq(link(a, b), 0);
	snprintf(a, sizeof(a), "%s/outside", tmp);
	snprintf(b, sizeof(b), "%s/secret/sym", tmp);
	ck_assert_int_eq(symlink(a, b), 0);
	snprintf(a, sizeof(a), "%s/secret/sym2", tmp);
	ck_assert_int_eq(link(b, a), 0); /* a second name of the symlink itself */
	snprintf(text, sizeof(text),
		 "profile t\nallow file rw %s/**\ndeny file r %s/secret/**\n"
		 "deny file w %s/not-there\n",
		 tmp, tmp, tmp);
	compile_text(text);

	ck_assert_int_eq(bw_pins_resolve(&comp, 3, &ps), 0);
	ck_assert_int_eq(ps.scan_incomplete, 0);
	/* Two deny rules, one path exists. */
	ck_assert_uint_eq(ps.deny, 1);
	pn = pin_of(&ps, "secret");
	ck_assert_ptr_nonnull(pn);
	ck_assert_uint_eq(pn->below.verdict_r, BW_V_DENY);
	ck_assert_uint_eq(pn->below.rule_r, 2);
	pn = pin_of(&ps, "secret/sub/linked");
	ck_assert_ptr_nonnull(pn);
	ck_assert_uint_eq(pn->self.verdict_r, BW_V_DENY);
	ck_assert_uint_eq(pn->self.rule_r, 2);
	ck_assert_uint_eq(pn->self.verdict_w, BW_V_ALLOW);
	ck_assert_uint_eq(pn->self.rule_w, 1);
	ck_assert_ptr_null(pin_of(&ps, "secret/one-name"));
	ck_assert_ptr_null(pin_of(&ps, "secret/sym"));
	ck_assert_ptr_null(pin_of(&ps, "outside"));
	for (size_t i = 0; i < ps.n; i++) {
		ck_assert_uint_eq(ps.keys[i].policy, 3);
		ck_assert_uint_eq(ps.keys[i].cat, BW_CAT_PIN_FILE);
	}
	/* No rule lies at or above the mount roots, so they are not pinned. */
	ck_assert_ptr_null(pin_at(&ps, "/"));
	if (other_mount_root())
		ck_assert_ptr_null(pin_at(&ps, other_mount_root()));
	bw_pins_policy(&comp, &ps, &pol);
	ck_assert_uint_eq(pol.has_pins, 1);
	ck_assert_uint_eq(pol.has_exec_pins, 0);
	ck_assert_uint_eq(pol.npin_devs, 1);
	{
		struct stat st = stat_rel("secret");

		ck_assert_uint_eq(pol.pin_devs[0],
				  bw_dev_encode(major(st.st_dev), minor(st.st_dev)));
	}
	bw_pin_set_free(&ps);
}
END_TEST

/* Pins that are not mount roots. */
static size_t rule_and_link_pins(const struct bw_pin_set *ps)
{
	size_t i, n = 0;

	for (i = 0; i < ps->n; i++)
		n += !(ps->pins[i].self.flags & BW_PIN_MOUNT);
	return n;
}

/* A file of the denied directory `big` with a second name outside it. */
static void linked_file(int i)
{
	char a[PATH_MAX], b[PATH_MAX];

	snprintf(a, sizeof(a), "%s/big/f%d", tmp, i);
	snprintf(b, sizeof(b), "%s/names/f%d", tmp, i);
	touch(a + strlen(tmp) + 1);
	ck_assert_int_eq(link(a, b), 0);
}

/*
 * The scan looks at BW_SCAN_MAX entries at most, and says when its budget ran
 * out (at exactly BW_SCAN_MAX it cannot tell whether more were left).
 */
START_TEST(resolve_scan_is_bounded)
{
	char text[2 * PATH_MAX];
	struct bw_pin_set ps;
	int i;

	mkdir_rel("big");
	mkdir_rel("names");
	for (i = 0; i < BW_SCAN_MAX - 1; i++)
		linked_file(i);
	snprintf(text, sizeof(text), "profile t\ndeny file r %s/big/**\n", tmp);
	compile_text(text);
	ck_assert_int_eq(bw_pins_resolve(&comp, 0, &ps), 0);
	ck_assert_int_eq(ps.scan_incomplete, 0);
	/* the directory and every file in it */
	ck_assert_uint_eq(rule_and_link_pins(&ps), BW_SCAN_MAX);
	bw_pin_set_free(&ps);
	linked_file(i++);
	linked_file(i++);
	ck_assert_int_eq(bw_pins_resolve(&comp, 0, &ps), 0);
	ck_assert_int_eq(ps.scan_incomplete, 1);
	ck_assert_uint_eq(rule_and_link_pins(&ps), 1 + BW_SCAN_MAX);
	bw_pin_set_free(&ps);
}
END_TEST

/*
 * The budget is shared fairly: a big tree first in the profile does not use
 * up what a small one after it needs (a cron directory after all of /usr); what
 * the small one leaves goes back to the big one.
 */
START_TEST(resolve_scan_shares_its_budget)
{
	char text[3 * PATH_MAX], a[PATH_MAX], b[PATH_MAX];
	struct bw_pin_set ps;
	int i;

	mkdir_rel("big");
	mkdir_rel("names");
	mkdir_rel("small");
	for (i = 0; i < BW_SCAN_MAX + 1; i++)
		linked_file(i);
	touch("small/job");
	snprintf(a, sizeof(a), "%s/small/job", tmp);
	snprintf(b, sizeof(b), "%s/names/job", tmp);
	ck_assert_int_eq(link(a, b), 0);
	snprintf(text, sizeof(text), "profile t\ndeny file w %s/big/**\ndeny file w %s/small/**\n",
		 tmp, tmp);
	compile_text(text);
	ck_assert_int_eq(bw_pins_resolve(&comp, 0, &ps), 0);
	ck_assert_ptr_nonnull(pin_of(&ps, "small/job"));
	ck_assert_int_eq(ps.scan_incomplete, 1);
	/* both directories, small/job, and big's files in what small left */
	ck_assert_uint_eq(rule_and_link_pins(&ps), 2 + 1 + (BW_SCAN_MAX - 1));
	bw_pin_set_free(&ps);
}
END_TEST

/*
 * A mount root is pinned, for attribute changes, only where a rule decides
 * it or what lies below it; else the climb and the default decide alike.
 */
START_TEST(resolve_mount_roots_only_where_a_rule_reaches)
{
	struct bw_pin_set ps;
	const struct bw_inode_pin *pn;
	const char *mnt;

	compile_text("profile t\ndefault deny\nallow file r /**\n");
	ck_assert_int_eq(bw_pins_resolve(&comp, 5, &ps), 0);
	mnt = other_mount_root();
	ck_assert_ptr_nonnull(mnt);
	pn = pin_at(&ps, mnt);
	ck_assert_ptr_nonnull(pn);
	ck_assert_uint_eq(pn->self.flags & BW_PIN_MOUNT, BW_PIN_MOUNT);
	ck_assert_uint_eq(pn->below.verdict_r, BW_V_ALLOW);
	ck_assert_uint_eq(pn->below.verdict_w, BW_V_NONE);
	bw_pin_set_free(&ps);
	bw_compiled_free(&comp);
	bw_profile_free(prof);
	prof = NULL;

	compile_text("profile t\ndefault allow\ndeny file rw /nonexistent-bw/x\n");
	ck_assert_int_eq(bw_pins_resolve(&comp, 5, &ps), 0);
	ck_assert_uint_eq(ps.n, 0);
	bw_pin_set_free(&ps);
}
END_TEST

/* Deny pins name their file systems, up to four; mount pins and allow pins do not. */
START_TEST(policy_pin_devs)
{
	struct bw_inode_key keys[6] = {};
	struct bw_inode_pin pins[6] = {};
	struct bw_pin_set ps = {.keys = keys, .pins = pins, .n = 3, .deny = 1};
	struct bw_policy pol = {};
	int i;

	comp.policy.has_pins = 1;
	for (i = 0; i < 6; i++) {
		keys[i].dev = 10 + i;
		pins[i].below.verdict_w = BW_V_DENY;
	}
	pins[1].self.flags = BW_PIN_MOUNT;
	pins[2].below.verdict_w = BW_V_ALLOW;
	bw_pins_policy(&comp, &ps, &pol);
	ck_assert_uint_eq(pol.has_pins, 1);
	ck_assert_uint_eq(pol.npin_devs, 1);
	ck_assert_uint_eq(pol.pin_devs[0], 10);
	ps.n = 6; /* 10, 13, 14, 15 */
	bw_pins_policy(&comp, &ps, &pol);
	ck_assert_uint_eq(pol.npin_devs, 4);
	ck_assert_uint_eq(pol.pin_devs[3], 15);
	pins[2].below.verdict_w = BW_V_DENY; /* a fifth */
	bw_pins_policy(&comp, &ps, &pol);
	ck_assert_uint_eq(pol.npin_devs, BW_PIN_DEVS_MANY);
	ps.deny = 0; /* no deny rule's path exists: nothing to climb to */
	bw_pins_policy(&comp, &ps, &pol);
	ck_assert_uint_eq(pol.has_pins, 0);
}
END_TEST

/* The encodings the kernel shares: its dev_t, and the bitmap position. */
START_TEST(abi_encodings)
{
	__u64 inos[] = {0, 1, 2, 12345, 1ULL << 40, ~0ULL};
	size_t i;

	/* MKDEV(8, 1), /dev/sda1 as the kernel's super block holds it */
	ck_assert_uint_eq(bw_dev_encode(8, 1), 0x800001);
	ck_assert_uint_eq(bw_dev_major(0x800001), 8);
	ck_assert_uint_eq(bw_dev_minor(0x800001), 1);
	ck_assert_uint_eq(bw_dev_minor(bw_dev_encode(259, 0xfffff)), 0xfffff);
	ck_assert_uint_eq(bw_dev_major(bw_dev_encode(259, 0xfffff)), 259);
	for (i = 0; i < sizeof(inos) / sizeof(inos[0]); i++) {
		__u64 h = inos[i] * BW_PINBITS_MUL, bit = bw_pinbits_bit(inos[i]);

		ck_assert_uint_lt(bw_pinbits_word(inos[i]), BW_PINBITS_WORDS);
		ck_assert_uint_eq(bw_pinbits_word(inos[i]), h >> (64 - BW_PINBITS_SHIFT));
		ck_assert_uint_eq(bit, 1ULL << ((h >> 20) & 63));
		ck_assert_uint_eq(bit & (bit - 1), 0); /* one bit */
	}
}
END_TEST

Suite *pins_suite(void)
{
	Suite *s = suite_create("pins");
	TCase *tc = tcase_create("plan and resolve");

	tcase_add_checked_fixture(tc, setup, teardown);
	/* Thousands of files on a busy machine take longer than Check's default 4 s. */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, pins_carry_trie_values);
	tcase_add_test(tc, pin_merge_rule_beats_mount);
	tcase_add_test(tc, resolve_mount_roots_only_where_a_rule_reaches);
	tcase_add_test(tc, resolve_pins_hard_links_in_denied_dirs);
	tcase_add_test(tc, resolve_scan_is_bounded);
	tcase_add_test(tc, resolve_scan_shares_its_budget);
	tcase_add_test(tc, policy_pin_devs);
	tcase_add_test(tc, abi_encodings);
	suite_add_tcase(s, tc);
	return s;
}
