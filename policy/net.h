/* SPDX-License-Identifier: GPL-2.0-only */
/* The ADDR:PORTS operand of tcp and udp net rules. */
#ifndef BW_POLICY_NET_H
#define BW_POLICY_NET_H

#include <stddef.h>

#include "profile.h"

/*
 * Errors: a message, and the byte offset in the operand it is about. The
 * address and the ports are checked apart, so there can be two.
 */
struct bw_net_err {
	struct {
		char msg[320];
		size_t off;
	} v[2];
	int n;
};

/*
 * Parse `s` (len bytes) into r's family, addr, prefixlen, localhost and
 * ports. Returns 0, or -1 with err filled in.
 */
int bw_net_parse_endpoint(const char *s, size_t len, struct bw_net_rule *r, struct bw_net_err *err);

#endif /* BW_POLICY_NET_H */
