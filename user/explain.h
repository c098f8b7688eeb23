/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `bpfwarden check --explain OBJECT PROFILE`: which rule of a compiled
 * profile decides an object, read from the same entries the kernel's maps
 * get (user/compile.c), so the answer is the kernel's lookup, not a second
 * reading of the profile.
 */
#ifndef BW_EXPLAIN_H
#define BW_EXPLAIN_H

#include <stddef.h>
#include <stdio.h>

#include "compile.h"
#include "profile.h"

/*
 * Write how p (compiled as c) decides obj to out, one line per access:
 *   /ABSOLUTE/PATH                      file r and w, exec run and map
 *   exec memfd
 *   net connect|bind tcp|udp ADDR:PORT  one address and one port
 *   net connect|bind unix PATH|@NAME
 *   net raw | net admin
 *   mount | chroot | userns | cgroup
 * Returns 0, or -EINVAL with why filled in for an object it cannot read.
 */
int bw_explain(const struct bw_profile *p, const struct bw_compiled *c, const char *obj, FILE *out,
	       char *why, size_t whylen);

#endif
