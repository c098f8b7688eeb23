/* SPDX-License-Identifier: GPL-2.0-only */
/* `bpfwarden check FILE...`: validate profiles. */
#ifndef BW_CMD_CHECK_H
#define BW_CMD_CHECK_H

/*
 * argv[0] is "check". Diagnostics go to stderr as FILE:LINE:COL: ..., one
 * "FILE: ok (N rules)" line per valid profile to stdout. Returns 0 when all
 * profiles are valid, 1 when any is not, 2 on a usage error.
 */
int cmd_check(int argc, char **argv);

#endif /* BW_CMD_CHECK_H */
