// SPDX-License-Identifier: GPL-2.0-only
/* Net rules: operations, protocols, addresses, prefixes, ports, unix sockets. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "suites.h"

static const struct bw_rule *one_rule(struct parsed *r, const char *line)
{
	char text[1024];

	snprintf(text, sizeof(text), "profile p\n%s\n", line);
	parse_text(r, text, NULL);
	ck_assert_msg(r->ret == 0 && r->d.n == 0, "'%s': ret %d\n%s", line, r->ret, diag_dump(r));
	ck_assert_uint_eq(r->p->nrules, 1);
	ck_assert_int_eq(r->p->rules[0].cat, BW_CAT_NET);
	return &r->p->rules[0];
}

/* Expect exactly the errors given (col, substring pairs) on line 2. */
static void errors(const char *line, int n, const int *cols, const char *const *msgs)
{
	struct parsed r;
	char text[1024];

	snprintf(text, sizeof(text), "profile p\n%s\n", line);
	parse_text(&r, text, NULL);
	ck_assert_msg(r.ret == -EINVAL, "'%s' was accepted", line);
	for (int i = 0; i < n; i++)
		expect_error(&r, 2, cols[i], msgs[i]);
	expect_counts(&r, n, 0);
	parsed_free(&r);
}

static void one_error(const char *line, int col, const char *msg)
{
	errors(line, 1, &col, &msg);
}

static void expect_addr(const struct bw_net_rule *n, int family, const char *addr, int prefixlen)
{
	uint8_t want[16] = {0};

	ck_assert_int_eq(n->family, family);
	if (addr)
		ck_assert_int_eq(inet_pton(family == 4 ? AF_INET : AF_INET6, addr, want), 1);
	ck_assert_msg(memcmp(n->addr, want, 16) == 0, "address bytes differ from %s",
		      addr ? addr : "zero");
	ck_assert_int_eq(n->prefixlen, prefixlen);
}

static void expect_ports(const struct bw_net_rule *n, int lo, int hi)
{
	ck_assert_int_eq(n->port_lo, lo);
	ck_assert_int_eq(n->port_hi, hi);
}

START_TEST(ipv4)
{
	struct parsed r;
	const struct bw_rule *rule;

	rule = one_rule(&r, "allow net connect tcp 127.0.0.1:8080");
	ck_assert_int_eq(rule->verdict, BW_V_ALLOW);
	ck_assert_int_eq(rule->net.op, BW_NET_CONNECT);
	ck_assert_int_eq(rule->net.proto, BW_NET_TCP);
	expect_addr(&rule->net, 4, "127.0.0.1", 32);
	/* network byte order, IPv4 in the first four bytes */
	ck_assert_int_eq(rule->net.addr[0], 127);
	ck_assert_int_eq(rule->net.addr[3], 1);
	expect_ports(&rule->net, 8080, 8080);
	ck_assert(!rule->net.localhost);
	ck_assert_ptr_null(rule->net.unix_path);
	parsed_free(&r);

	rule = one_rule(&r, "allow net connect udp 10.0.0.0/8:53");
	ck_assert_int_eq(rule->net.proto, BW_NET_UDP);
	expect_addr(&rule->net, 4, "10.0.0.0", 8);
	expect_ports(&rule->net, 53, 53);
	parsed_free(&r);

	rule = one_rule(&r, "deny net connect tcp 169.254.169.254:*");
	ck_assert_int_eq(rule->verdict, BW_V_DENY);
	expect_addr(&rule->net, 4, "169.254.169.254", 32);
	expect_ports(&rule->net, 0, 65535);
	parsed_free(&r);

	rule = one_rule(&r, "allow net bind tcp 0.0.0.0:9000");
	ck_assert_int_eq(rule->net.op, BW_NET_BIND);
	expect_addr(&rule->net, 4, "0.0.0.0", 32);
	expect_ports(&rule->net, 9000, 9000);
	parsed_free(&r);

	rule = one_rule(&r, "allow net connect tcp 0.0.0.0/0:0-65535");
	expect_addr(&rule->net, 4, "0.0.0.0", 0);
	expect_ports(&rule->net, 0, 65535);
	parsed_free(&r);

	rule = one_rule(&r, "allow net connect tcp 192.168.1.128/25:1024-2048");
	expect_addr(&rule->net, 4, "192.168.1.128", 25);
	expect_ports(&rule->net, 1024, 2048);
	parsed_free(&r);

	rule = one_rule(&r, "allow net connect tcp 10.1.2.3/32:7-7");
	expect_addr(&rule->net, 4, "10.1.2.3", 32);
	expect_ports(&rule->net, 7, 7);
	parsed_free(&r);
}
END_TEST

START_TEST(ipv6)
{
	struct parsed r;
	const struct bw_rule *rule;

	rule = one_rule(&r, "allow net connect tcp [::1]:8000-8100");
	expect_addr(&rule->net, 6, "::1", 128);
	expect_ports(&rule->net, 8000, 8100);
	parsed_free(&r);

	rule = one_rule(&r, "allow net connect udp [fd00::/8]:*");
	expect_addr(&rule->net, 6, "fd00::", 8);
	expect_ports(&rule->net, 0, 65535);
	parsed_free(&r);

	rule = one_rule(&r, "allow net bind udp [::/0]:53");
	expect_addr(&rule->net, 6, "::", 0);
	parsed_free(&r);

	rule = one_rule(&r, "allow net connect tcp [2001:db8:0:0:1::/80]:443");
	expect_addr(&rule->net, 6, "2001:db8::1:0:0:0", 80);
	parsed_free(&r);

	/* IPv4-mapped addresses reach IPv4 and are stored as such */
	rule = one_rule(&r, "allow net connect tcp [::ffff:10.1.2.3]:80");
	expect_addr(&rule->net, 4, "10.1.2.3", 32);
	parsed_free(&r);

	rule = one_rule(&r, "allow net connect tcp [::ffff:10.0.0.0/104]:80");
	expect_addr(&rule->net, 4, "10.0.0.0", 8);
	parsed_free(&r);

	/* all of IPv4, written as mapped IPv6 */
	rule = one_rule(&r, "allow net connect tcp [::ffff:0:0/96]:80");
	expect_addr(&rule->net, 4, "0.0.0.0", 0);
	parsed_free(&r);

	/* with fewer than 96 bits the 0xffff is a host bit */
	one_error("allow net connect tcp [::ffff:0:0/80]:80", 24,
		  "host bits set in '::ffff:0:0/80': the network is ::/80");
}
END_TEST

START_TEST(any_and_localhost)
{
	struct parsed r;
	const struct bw_rule *rule;

	rule = one_rule(&r, "allow net connect tcp *:443");
	expect_addr(&rule->net, 0, NULL, 0);
	ck_assert(!rule->net.localhost);
	expect_ports(&rule->net, 443, 443);
	parsed_free(&r);

	rule = one_rule(&r, "allow net bind udp *:*");
	expect_addr(&rule->net, 0, NULL, 0);
	expect_ports(&rule->net, 0, 65535);
	parsed_free(&r);

	rule = one_rule(&r, "allow net connect tcp localhost:8080");
	ck_assert(rule->net.localhost);
	expect_addr(&rule->net, 0, NULL, 0);
	expect_ports(&rule->net, 8080, 8080);
	parsed_free(&r);

	/* a quoted operand is the same operand */
	rule = one_rule(&r, "allow net connect tcp \"localhost:1-2\"");
	ck_assert(rule->net.localhost);
	expect_ports(&rule->net, 1, 2);
	parsed_free(&r);
}
END_TEST

START_TEST(unix_sockets)
{
	struct parsed r;
	const struct bw_rule *rule;
	char line[300];

	rule = one_rule(&r, "allow net connect unix /run/app.sock");
	ck_assert_int_eq(rule->net.proto, BW_NET_UNIX);
	ck_assert_int_eq(rule->net.op, BW_NET_CONNECT);
	ck_assert_str_eq(rule->net.unix_path, "/run/app.sock");
	ck_assert(!rule->net.unix_abstract);
	ck_assert_int_eq(rule->net.family, 0);
	parsed_free(&r);

	rule = one_rule(&r, "deny net bind unix //run//x/");
	ck_assert_int_eq(rule->net.op, BW_NET_BIND);
	ck_assert_str_eq(rule->net.unix_path, "/run/x");
	parsed_free(&r);

	rule = one_rule(&r, "allow net connect unix @abstract-name");
	ck_assert_str_eq(rule->net.unix_path, "abstract-name");
	ck_assert(rule->net.unix_abstract);
	parsed_free(&r);

	/* an abstract name is bytes: '*' and '/' are literal */
	rule = one_rule(&r, "allow net connect unix \"@with space/*\"");
	ck_assert_str_eq(rule->net.unix_path, "with space/*");
	ck_assert(rule->net.unix_abstract);
	parsed_free(&r);

	/* sun_path limits: 107 bytes of path, or 107 of abstract name */
	memset(line, 0, sizeof(line));
	strcpy(line, "allow net connect unix /");
	memset(line + strlen(line), 's', 106);
	rule = one_rule(&r, line);
	ck_assert_uint_eq(strlen(rule->net.unix_path), 107);
	parsed_free(&r);
	strcat(line, "s");
	one_error(line, 24,
		  "unix socket path is 108 bytes long; the limit is 107 bytes (sun_path)");

	memset(line, 0, sizeof(line));
	strcpy(line, "allow net connect unix @");
	memset(line + strlen(line), 'a', 107);
	rule = one_rule(&r, line);
	ck_assert_uint_eq(strlen(rule->net.unix_path), 107);
	parsed_free(&r);
	strcat(line, "a");
	one_error(line, 24, "abstract socket name is 108 bytes long; the limit is 107 bytes");

	/* every socket below a directory: kept as written, for the kernel's lookup */
	rule = one_rule(&r, "allow net connect unix //run//user/**");
	ck_assert_str_eq(rule->net.unix_path, "/run/user/**");
	ck_assert(!rule->net.unix_abstract);
	parsed_free(&r);
	rule = one_rule(&r, "deny net bind unix /**");
	ck_assert_str_eq(rule->net.unix_path, "/**");
	parsed_free(&r);
	memset(line, 0, sizeof(line));
	strcpy(line, "allow net connect unix /");
	memset(line + strlen(line), 's', 103);
	strcat(line, "/**");
	rule = one_rule(&r, line);
	ck_assert_uint_eq(strlen(rule->net.unix_path), 107);
	parsed_free(&r);
	memmove(line + 25, line + 24, strlen(line + 24) + 1);
	one_error(line, 24,
		  "unix socket path is 108 bytes long with its '/**'; the limit is 107 bytes");

	one_error("allow net connect unix run/app.sock", 24,
		  "bad unix socket 'run/app.sock': expected an absolute path or @name");
	one_error("allow net connect unix @", 24, "empty abstract socket name");
	one_error("allow net connect unix \"\"", 24, "empty unix socket path");
	one_error("allow net connect unix /run/*.sock", 24,
		  "glob characters are not supported here");
	one_error("allow net connect unix /run/app*", 24,
		  "'/run/app*': unix socket rules name a socket or a directory's sockets");
	one_error("allow net connect unix /run/../x", 24, "'.' and '..' components");
	one_error("allow net connect unix", 23, "missing unix socket path or @name");
}
END_TEST

START_TEST(address_errors)
{
	/* "allow net connect tcp " is 22 bytes: the operand starts at column 23 */
	one_error("allow net connect tcp 10.0.0.1/8:80", 23,
		  "host bits set in '10.0.0.1/8': the network is 10.0.0.0/8");
	one_error("allow net connect tcp [fd00::1/8]:80", 24,
		  "host bits set in 'fd00::1/8': the network is fd00::/8");
	one_error("allow net connect tcp 10.0.0.0/33:80", 31,
		  "bad CIDR prefix '/33': expected /0../32");
	one_error("allow net connect tcp 10.0.0.0/:80", 31, "bad CIDR prefix '/'");
	one_error("allow net connect tcp 10.0.0.0/x:80", 31, "bad CIDR prefix '/x'");
	one_error("allow net connect tcp 10.0.0.0/-1:80", 31, "bad CIDR prefix '/-1'");
	one_error("allow net connect tcp [fd00::/129]:80", 30,
		  "bad CIDR prefix '/129': expected /0../128");
	one_error("allow net connect tcp 256.1.1.1:80", 23, "bad address '256.1.1.1'");
	one_error("allow net connect tcp 1.2.3:80", 23, "bad address '1.2.3'");
	one_error("allow net connect tcp example.com:80", 23, "bad address 'example.com'");
	one_error("allow net connect tcp */8:80", 23, "bad address '*'");
	one_error("allow net connect tcp [1.2.3.4]:80", 24, "bad IPv6 address '1.2.3.4'");
	one_error("allow net connect tcp [zz::1]:80", 24, "bad IPv6 address 'zz::1'");
	one_error("allow net connect tcp ::1:80", 23,
		  "IPv6 addresses go in brackets, as in [::1]:8000");
	one_error("allow net connect tcp [fd00::]/8:80", 31,
		  "the prefix length goes inside the brackets");
	one_error("allow net connect tcp [::1:80", 23, "missing ']'");
	one_error("allow net connect tcp [::1]80", 28, "expected ':' after ']'");
	one_error("allow net connect tcp :80", 23, "missing address before ':'");
}
END_TEST

START_TEST(port_errors)
{
	one_error("allow net connect tcp 10.0.0.1:70000", 32,
		  "bad port '70000': expected a number 0..65535, a range N-M or *");
	one_error("allow net connect tcp 10.0.0.1:http", 32, "bad port 'http'");
	one_error("allow net connect tcp 10.0.0.1:+80", 32, "bad port '+80'");
	one_error("allow net connect tcp 10.0.0.1:123456", 32, "bad port '123456'");
	one_error("allow net connect tcp 10.0.0.1:80-70", 32,
		  "bad port range '80-70': 80 is greater than 70");
	one_error("allow net connect tcp 10.0.0.1:80-", 32,
		  "bad port range '80-': expected N-M with both ends in 0..65535");
	one_error("allow net connect tcp 10.0.0.1:1-70000", 32, "bad port range '1-70000'");
	one_error("allow net connect tcp 10.0.0.1:1-2-3", 32, "bad port range '1-2-3'");
	one_error("allow net connect tcp 10.0.0.1:", 32, "missing port after ':'");
	one_error("allow net connect tcp 10.0.0.1", 31, "missing ':PORT' after the address");
	one_error("allow net connect tcp localhost", 32, "missing ':PORT' after the address");
	one_error("allow net connect tcp [::1]", 28, "missing ':PORT' after the address");
	one_error("allow net connect tcp [::1]:", 29, "missing port after ':'");
	one_error("allow net connect tcp [::1]:*-1", 29, "bad port range '*-1'");
}
END_TEST

START_TEST(structure_errors)
{
	static const int cols2[] = {23, 33};
	static const char *const msgs2[] = {"bad address '300.0.0.1'", "bad port '99999'"};
	static const int cols3[] = {11, 29};
	static const char *const msgs3[] = {
	    "bad net operation 'listen': expected connect, bind, raw or admin", "missing ':PORT'"};

	/* address and ports are checked apart */
	errors("allow net connect tcp 300.0.0.1:99999", 2, cols2, msgs2);
	errors("allow net listen tcp 1.2.3.4", 2, cols3, msgs3);
	one_error("allow net", 10, "missing operation: expected connect, bind, raw or admin");
	one_error("allow net connect", 18, "missing protocol: expected tcp, udp or unix");
	one_error("allow net connect sctp 1.2.3.4:1", 19,
		  "bad protocol 'sctp': expected tcp, udp or unix");
	one_error("allow net connect tcp", 22, "missing ADDR:PORTS");
	/* in a quoted operand the column is the token's */
	one_error("allow net connect tcp \"10.0.0.1:x\"", 23, "bad port 'x'");
}
END_TEST

START_TEST(net_raw_rules)
{
	struct bw_diags d = {};
	struct bw_profile *p = NULL;
	const char *text = "profile t\nallow net raw\ndeny net raw\n";

	ck_assert_int_eq(bw_profile_parse_string("t.profile", text, strlen(text), NULL, &p, &d), 0);
	ck_assert_uint_eq(p->nrules, 2);
	ck_assert_int_eq(p->rules[0].cat, BW_CAT_NET);
	ck_assert_int_eq(p->rules[0].net.op, BW_NET_RAW);
	ck_assert_int_eq(p->rules[1].verdict, BW_V_DENY);
	bw_profile_free(p);
	bw_diags_free(&d);
	text = "profile t\nallow net admin\ndeny net admin\n";
	p = NULL;
	ck_assert_int_eq(bw_profile_parse_string("t.profile", text, strlen(text), NULL, &p, &d), 0);
	ck_assert_uint_eq(p->nrules, 2);
	ck_assert_int_eq(p->rules[0].net.op, BW_NET_ADMIN);
	ck_assert_int_eq(p->rules[0].verdict, BW_V_ALLOW);
	ck_assert_int_eq(p->rules[1].net.op, BW_NET_ADMIN);
	ck_assert_int_eq(p->rules[1].verdict, BW_V_DENY);
	bw_profile_free(p);
	bw_diags_free(&d);
	text = "profile t\nallow net admin lo\n";
	p = NULL;
	ck_assert_int_eq(bw_profile_parse_string("t.profile", text, strlen(text), NULL, &p, &d),
			 -EINVAL);
	ck_assert_uint_eq(d.nerrors, 1);
	bw_diags_free(&d);
	text = "profile t\nallow net raw tcp\n";
	p = NULL;
	ck_assert_int_eq(bw_profile_parse_string("t.profile", text, strlen(text), NULL, &p, &d),
			 -EINVAL);
	ck_assert_uint_eq(d.nerrors, 1);
	bw_diags_free(&d);
}
END_TEST

/* A rule's identity is what it says, not where: moved, it keeps it; changed, it does not. */
START_TEST(rule_identity_survives_edits)
{
	const char *a = "profile a\nallow file r /x/**\nallow net connect tcp 10.0.0.0/8:443\n";
	const char *b = "profile b\n# a comment\n\ndeny file r /y\nallow net connect tcp "
			"10.0.0.0/8:443\n\nallow file r /x/**\nallow file rw /x/**\n"
			"allow net connect tcp 10.0.0.0/8:444\n";
	struct bw_profile *pa = NULL, *pb = NULL;
	struct bw_diags d = {};

	ck_assert_int_eq(bw_profile_parse_string("a", a, strlen(a), NULL, &pa, &d), 0);
	ck_assert_int_eq(bw_profile_parse_string("b", b, strlen(b), NULL, &pb, &d), 0);
	ck_assert_uint_eq(bw_rule_id(&pa->rules[0]), bw_rule_id(&pb->rules[2]));
	ck_assert_uint_eq(bw_rule_id(&pa->rules[1]), bw_rule_id(&pb->rules[1]));
	ck_assert_uint_ne(bw_rule_id(&pa->rules[0]), bw_rule_id(&pb->rules[3])); /* rw */
	ck_assert_uint_ne(bw_rule_id(&pa->rules[1]), bw_rule_id(&pb->rules[4])); /* port */
	ck_assert_uint_ne(bw_rule_id(&pb->rules[0]), bw_rule_id(&pa->rules[0]));
	bw_profile_free(pa);
	bw_profile_free(pb);
	bw_diags_free(&d);
}
END_TEST

/* A named rule's identity is its name: it survives any edit of the rule itself. */
START_TEST(named_rule_identity)
{
	const char *a = "profile a\nallow file r /x/** as data\nallow file r /x/**\n";
	const char *b = "profile b\nallow file rw /y as data\nallow net raw as data2\n";
	struct bw_profile *pa = NULL, *pb = NULL;
	struct bw_diags d = {};

	ck_assert_int_eq(bw_profile_parse_string("a", a, strlen(a), NULL, &pa, &d), 0);
	ck_assert_int_eq(bw_profile_parse_string("b", b, strlen(b), NULL, &pb, &d), 0);
	ck_assert_uint_eq(bw_rule_id(&pa->rules[0]), bw_rule_id(&pb->rules[0]));
	ck_assert_uint_ne(bw_rule_id(&pa->rules[0]), bw_rule_id(&pa->rules[1]));
	ck_assert_uint_ne(bw_rule_id(&pb->rules[0]), bw_rule_id(&pb->rules[1]));
	bw_profile_free(pa);
	bw_profile_free(pb);
	bw_diags_free(&d);
}
END_TEST

Suite *net_suite(void)
{
	Suite *s = suite_create("net rules");
	TCase *tc = tcase_create("net");

	tcase_add_test(tc, ipv4);
	tcase_add_test(tc, ipv6);
	tcase_add_test(tc, any_and_localhost);
	tcase_add_test(tc, unix_sockets);
	tcase_add_test(tc, address_errors);
	tcase_add_test(tc, port_errors);
	tcase_add_test(tc, structure_errors);
	tcase_add_test(tc, net_raw_rules);
	tcase_add_test(tc, rule_identity_survives_edits);
	tcase_add_test(tc, named_rule_identity);
	suite_add_tcase(s, tc);
	return s;
}
