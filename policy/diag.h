/* SPDX-License-Identifier: GPL-2.0-only */
/* Recording diagnostics while parsing (the public side is in profile.h). */
#ifndef BW_POLICY_DIAG_H
#define BW_POLICY_DIAG_H

#include "profile.h"

/*
 * Past this many errors the parse gives up; past this many warnings the
 * rest are counted out. Each limit leaves one diagnostic saying so, which
 * keeps a huge hostile input from costing memory in proportion to its size.
 */
#define BW_DIAG_MAX_ERRORS   1000
#define BW_DIAG_MAX_WARNINGS 1000

/*
 * Record one diagnostic. Returns 0, 1 when the error limit is reached (the
 * caller should stop parsing), or -ENOMEM.
 */
int bw_diag_add(struct bw_diags *d, enum bw_severity sev, const char *file, int line, int col,
		const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Quoted text fit for a message. */
#define BW_QUOTE_MAX 64
#define BW_QUOTE_BUF (BW_QUOTE_MAX * 4 + 8)

/*
 * `s` as printable ASCII: other bytes as \xNN, cut after BW_QUOTE_MAX source
 * bytes with "...". Returns buf, which holds at least BW_QUOTE_BUF bytes.
 */
const char *bw_quote(char *buf, const char *s, size_t len);

#endif /* BW_POLICY_DIAG_H */
