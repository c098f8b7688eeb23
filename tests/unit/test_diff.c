// SPDX-License-Identifier: GPL-2.0-only
/*
 * A rule's canonical text (bw_rule_format: parsed again, the same rule) and
 * `bpfwarden diff`'s comparison: moved rules are no difference; a rule that
 * replaces one it covers is widened, one it is covered by narrowed; settings
 * and match lines each on a line of their own. A profile's digest of its
 * rule numbers.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "profile.h"
#include "suites.h"

static struct bw_profile *parse(const char *name, const char *text)
{
	struct bw_profile *p = NULL;
	struct bw_diags d = {};

	ck_assert_msg(bw_profile_parse_string(name, text, strlen(text), NULL, &p, &d) == 0,
		      "%s does not parse", text);
	bw_diags_free(&d);
	return p;
}

START_TEST(format_round_trip)
{
	static const char *const rules[] = {
	    "allow file r /srv/**",
	    "allow file rw /",
	    "allow file r /**",
	    "deny file w /etc/shadow",
	    "allow file rw /dev/shm/PostgreSQL.*",
	    "allow file r \"/srv/My Files/**\"",
	    "allow file r \"/srv/a\\\"b\\\\c\"",
	    "allow exec /usr/bin/python3.11",
	    "allow exec lib /usr/lib/**",
	    "deny exec memfd",
	    "allow net connect tcp 10.0.0.0/8:443",
	    "allow net connect udp 10.0.0.1:53",
	    "deny net connect tcp 169.254.169.254:*",
	    "allow net bind tcp [::]:8000-8100",
	    "allow net connect tcp [fd00::/8]:22",
	    "allow net connect tcp localhost:8080",
	    "allow net connect tcp *:443",
	    "allow net connect unix /run/app.sock",
	    "allow net connect unix \"@name with space\"",
	    "allow net raw",
	    "deny net admin",
	    "allow mount",
	    "deny userns",
	    "allow cgroup as moves",
	};
	char text[512], out[512];

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		struct bw_profile *p, *q;

		snprintf(text, sizeof(text), "profile p\n%s\n", rules[i]);
		p = parse("t", text);
		ck_assert_int_ge(bw_rule_format(&p->rules[0], true, out, sizeof(out)), 0);
		ck_assert_str_eq(out, rules[i]);
		snprintf(text, sizeof(text), "profile p\n%s\n", out);
		q = parse("t", text);
		ck_assert_uint_eq(bw_rule_id(&p->rules[0]), bw_rule_id(&q->rules[0]));
		bw_profile_free(p);
		bw_profile_free(q);
	}
	/* The longest path, every byte of it escaped, fits BW_RULE_TEXT_MAX. */
	{
		char path[BW_RULE_PATH_MAX + 1], esc[2 * BW_RULE_PATH_MAX + 1],
		    big[BW_RULE_TEXT_MAX];
		char prof[BW_RULE_TEXT_MAX + 64];
		struct bw_profile *p;
		size_t k = 0;

		path[0] = '/';
		memset(path + 1, '"', BW_RULE_PATH_MAX - 1);
		path[BW_RULE_PATH_MAX] = '\0';
		for (size_t i = 0; path[i]; i++) {
			if (path[i] == '"')
				esc[k++] = '\\';
			esc[k++] = path[i];
		}
		esc[k] = '\0';
		snprintf(prof, sizeof(prof), "profile p\ndeny file rw \"%s\" as n\n", esc);
		p = parse("t", prof);
		ck_assert_int_gt(bw_rule_format(&p->rules[0], true, big, sizeof(big)), 0);
		ck_assert_str_eq(strchr(prof, '\n') + 1, strcat(big, "\n"));
		bw_profile_free(p);
	}
	/* Normalised as parsed; a v4-mapped address is IPv4; no name unless asked. */
	{
		struct bw_profile *p =
		    parse("t", "profile p\nallow file r //srv//a/\n"
			       "allow net connect tcp [::ffff:10.0.0.1]:80 as x\n");

		bw_rule_format(&p->rules[0], true, out, sizeof(out));
		ck_assert_str_eq(out, "allow file r /srv/a");
		bw_rule_format(&p->rules[1], false, out, sizeof(out));
		ck_assert_str_eq(out, "allow net connect tcp 10.0.0.1:80");
		ck_assert_int_eq(bw_rule_format(&p->rules[1], true, out, 10), -ENOSPC);
		ck_assert_uint_eq(strlen(out), 9);
		bw_profile_free(p);
	}
}
END_TEST

static char *diff(const char *a, const char *b, int *n)
{
	struct bw_profile *pa = parse("a", a), *pb = parse("b", b);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*n = bw_profile_diff(pa, pb, f);
	fclose(f);
	bw_profile_free(pa);
	bw_profile_free(pb);
	return buf;
}

START_TEST(moved_rules_are_no_difference)
{
	int n;
	char *out = diff("profile p\nallow file r /x\ndeny file rw /y\nallow net raw\n",
			 "profile p\n\n# a comment\nallow net raw\ndeny file rw /y\n"
			 "allow file r /x as named\n",
			 &n);

	ck_assert_int_eq(n, 0);
	ck_assert_str_eq(out, "");
	free(out);
}
END_TEST

START_TEST(what_changed)
{
	int n;
	char *out = diff("profile p\n"
			 "mode audit\n"
			 "allow file r /srv/www/**\n"		 /* 3: widened */
			 "allow file rw /var/log/app.log\n"	 /* 4: narrowed */
			 "allow net connect tcp 10.0.0.5:5432\n" /* 5: widened */
			 "allow exec /bin/sh\n"			 /* 6: removed */
			 "deny file rw /etc/shadow\n"		 /* 7: kept */
			 "allow net bind tcp 0.0.0.0:80\n"	 /* 8: replaced, not covering */
			 "match namespace=shop\n",
			 "profile q\n"
			 "default allow net\n"
			 "deny file rw /etc/shadow\n"
			 "allow file r /srv/**\n"
			 "allow file w /var/log/app.log\n"
			 "allow net connect tcp 10.0.0.0/24:5432\n"
			 "allow net bind tcp 0.0.0.0:81\n"
			 "deny file rw /srv/www/secret/**\n"
			 "match namespace=shop pod=web-*\n",
			 &n);
	const char *want =
	    "~ profile: p -> q\n"
	    "~ mode: audit -> enforce\n"
	    "~ default net: deny -> allow\n"
	    "- a:9: match namespace=shop\n"
	    "+ b:9: match namespace=shop pod=web-*\n"
	    "- a:6: allow exec /bin/sh\n"
	    "- a:8: allow net bind tcp 0.0.0.0:80\n"
	    "> b:4: allow file r /srv/** (was a:3: allow file r /srv/www/**)\n"
	    "< b:5: allow file w /var/log/app.log (was a:4: allow file rw /var/log/app.log)\n"
	    "> b:6: allow net connect tcp 10.0.0.0/24:5432 (was a:5: allow net connect tcp "
	    "10.0.0.5:5432)\n"
	    "+ b:7: allow net bind tcp 0.0.0.0:81\n"
	    "+ b:8: deny file rw /srv/www/secret/**\n";

	ck_assert_str_eq(out, want);
	ck_assert_int_eq(n, 12);
	free(out);
}
END_TEST

/* A relearned profile: exact rules folded into a subtree rule that replaced another one. */
START_TEST(removed_but_covered)
{
	int n;
	char *out = diff("profile p\n"
			 "allow file r /srv/www/a.html\n"
			 "allow file r /srv/www/b.html\n"
			 "allow file r /srv/www/img/**\n"
			 "allow file w /srv/www/c.html\n",
			 "profile p\nallow file r /srv/www/**\n", &n);
	const char *want =
	    "- a:3: allow file r /srv/www/b.html (covered by b:2: allow file r "
	    "/srv/www/**)\n"
	    "- a:4: allow file r /srv/www/img/** (covered by b:2: allow file r "
	    "/srv/www/**)\n"
	    "- a:5: allow file w /srv/www/c.html\n"
	    "> b:2: allow file r /srv/www/** (was a:2: allow file r /srv/www/a.html)\n";

	ck_assert_str_eq(out, want);
	ck_assert_int_eq(n, 4);
	free(out);
}
END_TEST

/* What covers what: the relation the widened and narrowed lines rest on. */
START_TEST(covers)
{
	static const struct {
		const char *x, *y;
		bool covers;
	} cases[] = {
	    {"allow file r /srv/**", "allow file r /srv", true},
	    {"allow file r /srv/**", "allow file r /srv/a/b/**", true},
	    {"allow file r /srv/**", "allow file r /srvx", false},
	    {"allow file r /**", "allow file r /etc/passwd", true},
	    {"allow file r /srv/**", "allow file rw /srv/a", false},
	    {"allow file rw /srv/a", "allow file r /srv/a", true},
	    {"deny file r /srv/**", "allow file r /srv/a", false},
	    {"allow file r /d/log*", "allow file r /d/log.1", true},
	    {"allow file r /d/log*", "allow file r /d/log.1/x", false},
	    {"allow file r /d/log*", "allow file r /d/l", false},
	    {"allow file r /d/a", "allow file r /d/a/**", false},
	    {"allow exec /usr/**", "allow exec lib /usr/lib/x.so", true},
	    {"allow exec lib /usr/**", "allow exec /usr/bin/x", false},
	    {"allow exec memfd", "allow exec memfd", true},
	    {"allow net connect tcp 10.0.0.0/8:*", "allow net connect tcp 10.1.2.3:443", true},
	    {"allow net connect tcp 10.0.0.0/8:443", "allow net connect tcp 10.1.2.3:80", false},
	    {"allow net connect tcp 10.0.0.0/8:*", "allow net connect udp 10.1.2.3:53", false},
	    {"allow net connect tcp 10.0.0.0/8:*", "allow net bind tcp 10.1.2.3:53", false},
	    {"allow net connect tcp *:443", "allow net connect tcp [::1]:443", true},
	    {"allow net connect tcp localhost:80", "allow net connect tcp 127.0.0.2:80", true},
	    {"allow net connect tcp localhost:80", "allow net connect tcp [::1]:80", true},
	    {"allow net connect tcp localhost:80", "allow net connect tcp 10.0.0.1:80", false},
	    {"allow net connect tcp [fd00::/8]:*", "allow net connect tcp [fd12::1]:1", true},
	    {"allow net connect tcp [fd00::/8]:*", "allow net connect tcp 10.0.0.1:1", false},
	    {"allow net connect unix /run/a", "allow net connect unix /run/a", true},
	    {"allow net connect unix /run/a", "allow net connect unix @/run/a", false},
	    {"allow mount", "allow chroot", false},
	};
	char text[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bw_profile *p;

		snprintf(text, sizeof(text), "profile p\n%s\n%s\n", cases[i].x, cases[i].y);
		p = parse("t", text);
		ck_assert_msg(bw_rule_covers(&p->rules[0], &p->rules[1]) == cases[i].covers,
			      "'%s' covers '%s': want %d", cases[i].x, cases[i].y, cases[i].covers);
		bw_profile_free(p);
	}
}
END_TEST

/*
 * bw_profile_digest tells whether a slot's records (rule numbers) may be
 * read with a loaded profile's rules: the same text agrees, and so does an
 * edit that moves no rule (a comment at the end); a rule moved down a line,
 * added, changed or renamed, or another profile name, does not.
 */
START_TEST(digest_of_rule_numbers)
{
	static const char base[] = "profile p\nallow file r /srv/**\ndeny file rw /etc/shadow\n";
	static const struct {
		const char *text;
		bool same;
	} cases[] = {
	    {"profile p\nallow file r /srv/**\ndeny file rw /etc/shadow\n", true},
	    {"profile p\nallow file r /srv/**\ndeny file rw /etc/shadow\n# later\n", true},
	    {"profile p\n\nallow file r /srv/**\ndeny file rw /etc/shadow\n", false},
	    {"profile p\ndeny file rw /etc/shadow\nallow file r /srv/**\n", false},
	    {"profile p\nallow file r /srv/**\ndeny file r /etc/shadow\n", false},
	    {"profile p\nallow file r /srv/**\ndeny file rw /etc/shadow as s\n", false},
	    {"profile p\nallow file r /srv/**\ndeny file rw /etc/shadow\nallow exec /bin/true\n",
	     false},
	    {"profile q\nallow file r /srv/**\ndeny file rw /etc/shadow\n", false},
	};
	struct bw_profile *p = parse("t", base);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bw_profile *q = parse("t", cases[i].text);

		ck_assert_msg((bw_profile_digest(p) == bw_profile_digest(q)) == cases[i].same,
			      "case %zu: want %s", i, cases[i].same ? "the same" : "another");
		bw_profile_free(q);
	}
	bw_profile_free(p);
}
END_TEST

Suite *diff_suite(void)
{
	Suite *s = suite_create("diff");
	TCase *tc = tcase_create("diff");

	tcase_add_test(tc, format_round_trip);
	tcase_add_test(tc, moved_rules_are_no_difference);
	tcase_add_test(tc, what_changed);
	tcase_add_test(tc, removed_but_covered);
	tcase_add_test(tc, covers);
	tcase_add_test(tc, digest_of_rule_numbers);
	suite_add_tcase(s, tc);
	return s;
}
