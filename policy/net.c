// SPDX-License-Identifier: GPL-2.0-only
/*
 * Network endpoints: `ADDR:PORTS` where ADDR is an IPv4 address or CIDR,
 * an IPv6 address or CIDR in brackets, `*` or `localhost`, and PORTS is
 * `N`, `N-M` or `*`. Addresses go through inet_pton, so only the canonical
 * textual forms are taken (no octal, no shortened IPv4).
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "diag.h"
#include "net.h"

static int fail(struct bw_net_err *err, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct bw_net_err *err, size_t off, const char *fmt, ...)
{
	va_list ap;

	if (err->n < 2) {
		va_start(ap, fmt);
		vsnprintf(err->v[err->n].msg, sizeof(err->v[err->n].msg), fmt, ap);
		va_end(ap);
		err->v[err->n++].off = off;
	}
	return -1;
}

static bool all_digits(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
	}
	return true;
}

/* A decimal number of at most `maxdigits` digits; -1 if it is not one. */
static long number(const char *s, size_t len, size_t maxdigits)
{
	long v = 0;

	if (!all_digits(s, len) || len > maxdigits)
		return -1;
	for (size_t i = 0; i < len; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

static int parse_ports(const char *s, size_t len, size_t off, struct bw_net_rule *r,
		       struct bw_net_err *err)
{
	char q[BW_QUOTE_BUF];
	const char *dash;
	long lo, hi;

	if (len == 0)
		return fail(err, off, "missing port after ':' (a number 0..65535, N-M or *)");
	if (len == 1 && s[0] == '*') {
		r->port_lo = 0;
		r->port_hi = 65535;
		return 0;
	}
	dash = memchr(s, '-', len);
	if (!dash) {
		lo = number(s, len, 5);
		if (lo < 0 || lo > 65535)
			return fail(err, off,
				    "bad port '%s': expected a number 0..65535, a range N-M or *",
				    bw_quote(q, s, len));
		r->port_lo = r->port_hi = (uint16_t)lo;
		return 0;
	}
	size_t llen = (size_t)(dash - s);
	lo = number(s, llen, 5);
	hi = number(dash + 1, len - llen - 1, 5);
	if (lo < 0 || lo > 65535 || hi < 0 || hi > 65535)
		return fail(err, off,
			    "bad port range '%s': expected N-M with both ends in 0..65535",
			    bw_quote(q, s, len));
	if (lo > hi)
		return fail(err, off, "bad port range '%s': %ld is greater than %ld",
			    bw_quote(q, s, len), lo, hi);
	r->port_lo = (uint16_t)lo;
	r->port_hi = (uint16_t)hi;
	return 0;
}

/* Zero the host bits; true if any was set. */
static bool clear_host_bits(uint8_t *addr, int bytes, int prefixlen)
{
	bool set = false;

	for (int i = 0; i < bytes; i++) {
		int keep = prefixlen - i * 8;
		uint8_t mask = keep >= 8 ? 0xff : keep <= 0 ? 0 : (uint8_t)(0xff << (8 - keep));
		if (addr[i] & ~mask)
			set = true;
		addr[i] &= mask;
	}
	return set;
}

/* `addr` or `addr/N` (no brackets) of one family into r. */
static int parse_cidr(const char *s, size_t len, size_t off, int family, struct bw_net_rule *r,
		      struct bw_net_err *err)
{
	char q[BW_QUOTE_BUF], buf[INET6_ADDRSTRLEN + 1], net[INET6_ADDRSTRLEN];
	const char *slash = memchr(s, '/', len);
	size_t alen = slash ? (size_t)(slash - s) : len;
	int maxlen = family == 4 ? 32 : 128;
	uint8_t addr[16] = {0};

	bool ok = alen < sizeof(buf);
	if (ok) {
		memcpy(buf, s, alen);
		buf[alen] = '\0';
		ok = inet_pton(family == 4 ? AF_INET : AF_INET6, buf, addr) == 1;
	}
	if (!ok) {
		if (family == 4)
			return fail(err, off,
				    "bad address '%s': expected an IPv4 address or CIDR, an IPv6 "
				    "one in brackets, * or localhost",
				    bw_quote(q, s, alen));
		return fail(err, off, "bad IPv6 address '%s'", bw_quote(q, s, alen));
	}

	int prefixlen = maxlen;
	if (slash) {
		long n = number(slash + 1, len - alen - 1, 3);
		if (n < 0 || n > maxlen)
			return fail(err, off + alen, "bad CIDR prefix '%s': expected /0../%d",
				    bw_quote(q, slash, len - alen), maxlen);
		prefixlen = (int)n;
	}
	if (clear_host_bits(addr, maxlen / 8, prefixlen)) {
		inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, net, sizeof(net));
		return fail(err, off, "host bits set in '%s': the network is %s/%d",
			    bw_quote(q, s, len), net, prefixlen);
	}

	/* ::ffff:a.b.c.d reaches IPv4 a.b.c.d and is matched as such. */
	static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	if (family == 6 && prefixlen >= 96 && memcmp(addr, v4mapped, 12) == 0) {
		memmove(addr, addr + 12, 4);
		memset(addr + 4, 0, 12);
		family = 4;
		prefixlen -= 96;
	}
	r->family = family;
	memcpy(r->addr, addr, sizeof(r->addr));
	r->prefixlen = prefixlen;
	return 0;
}

int bw_net_parse_endpoint(const char *s, size_t len, struct bw_net_rule *r, struct bw_net_err *err)
{
	char q[BW_QUOTE_BUF];
	size_t port_off;
	int bad;

	err->n = 0;
	r->family = 0;
	memset(r->addr, 0, sizeof(r->addr));
	r->prefixlen = 0;
	r->localhost = false;

	if (len > 0 && s[0] == '[') {
		const char *close = memchr(s, ']', len);
		if (!close)
			return fail(err, 0, "missing ']' in '%s'", bw_quote(q, s, len));
		size_t clen = (size_t)(close - s);
		if (clen + 1 == len)
			return fail(err, len, "missing ':PORT' after the address in '%s'",
				    bw_quote(q, s, len));
		if (close[1] == '/')
			return fail(err, clen + 1,
				    "the prefix length goes inside the brackets, as in "
				    "[fd00::/8]:PORT");
		if (close[1] != ':')
			return fail(err, clen + 1, "expected ':' after ']' in '%s'",
				    bw_quote(q, s, len));
		bad = parse_cidr(s + 1, clen - 1, 1, 6, r, err);
		port_off = clen + 2;
		return parse_ports(s + port_off, len - port_off, port_off, r, err) | bad;
	}

	const char *colon = NULL;
	for (size_t i = len; i > 0; i--) {
		if (s[i - 1] == ':') {
			colon = s + i - 1;
			break;
		}
	}
	if (!colon)
		return fail(err, len, "missing ':PORT' after the address in '%s'",
			    bw_quote(q, s, len));
	size_t alen = (size_t)(colon - s);
	if (memchr(s, ':', alen))
		return fail(err, 0, "IPv6 addresses go in brackets, as in [::1]:8000");
	if (alen == 0)
		return fail(err, 0, "missing address before ':' (an address, * or localhost)");
	port_off = alen + 1;

	bad = 0;
	if (alen == 1 && s[0] == '*') {
		/* family 0, prefix 0: any address of both families */
	} else if (alen == 9 && memcmp(s, "localhost", 9) == 0) {
		r->localhost = true;
	} else {
		bad = parse_cidr(s, alen, 0, 4, r, err);
	}
	return parse_ports(s + port_off, len - port_off, port_off, r, err) | bad;
}
