/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef BW_LEARN_AGENT_H
#define BW_LEARN_AGENT_H

#include "bpfwarden.h"
#include "learn.h"

/* struct bw_events.on_learn: add one learn record to the set (ctx). */
void bw_learn_event(void *ctx, const struct bw_event *ev, const char *path, const char *exe,
		    bool here);

/* The host's file system, as the profile writer may look at it for secrets. */
extern const struct bw_learn_fs bw_learn_host_fs;

/* Generalisation knobs from the command line (--min-children, --exact: user/cli.c). */
extern unsigned bw_learn_min_children;
extern unsigned bw_learn_flags;
/* List the widenings on standard error after writing (not for learn --all's many profiles). */
extern bool bw_learn_tell_widenings;

/*
 * Write the learned profile to output (through output.tmp and a rename), named
 * after the command or cgroup `hint`, or, with hint NULL, as the first of
 * `bases` is (bw_learn_opts.bases: the profiles learning started from, or
 * those a merge read). Returns 0 or -errno after saying why.
 */
int bw_learn_save(struct bw_learn_set *set, const char *output, const char *hint,
		  const struct bw_profile *const *bases, size_t nbases);

#endif
