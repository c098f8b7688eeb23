/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What changed between two versions of a profile (`bpfwarden diff OLD NEW`):
 * settings, and rules compared by what they say, not by where they are.
 */
#ifndef BW_POLICY_DIFF_H
#define BW_POLICY_DIFF_H

#include <stdio.h>

#include "profile.h"

/*
 * Write the differences from a to b to out, one a line:
 *   ~ SETTING: OLD -> NEW          a setting (name, mode, on-deny, a default, match lines)
 *   - FILE:LINE: RULE              a rule of a that b does not have
 *   + FILE:LINE: RULE              a rule of b that a does not have
 *   > FILE:LINE: RULE (was FILE:LINE: RULE)
 *                                  a rule of b that covers a rule of a it replaces
 *                                  (more paths, accesses, addresses or ports)
 *   < FILE:LINE: RULE (was FILE:LINE: RULE)
 *                                  one that covers less than the rule it replaces
 * A rule that only moved (another line, another include) is no difference.
 * Returns the number of lines written, or -ENOMEM.
 */
int bw_profile_diff(const struct bw_profile *a, const struct bw_profile *b, FILE *out);

/* Does rule x decide, the same way, everything rule y decides (and perhaps more)? */
bool bw_rule_covers(const struct bw_rule *x, const struct bw_rule *y);

#endif
