/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where the profile library is (the shipped profiles/ directory: the
 * abstractions that profiles and learned profiles include), found when the
 * agent runs, from where its own binary is, so that a checkout, a build tree
 * or an installed copy works wherever it lives. Nothing absolute is compiled
 * in: a VM guest or a container may see the same tree under another path.
 */
#ifndef BW_LIBDIR_H
#define BW_LIBDIR_H

#include <stddef.h>

/* Names the profile library, overriding the lookup, when set and not empty. */
#define BW_PROFILE_DIR_ENV "BPFWARDEN_PROFILE_DIR"

/*
 * The library of an agent whose executable is `exe` (absolute, as
 * /proc/self/exe gives it; NULL when unknown), given `env`, the value of
 * $BPFWARDEN_PROFILE_DIR (NULL when unset):
 *   `env` as it is, when not empty;
 *   else the first directory of EXEDIR/../profiles (a build tree,
 *   <checkout>/build/bpfwarden) and EXEDIR/../share/bpfwarden/profiles
 *   (installed as <prefix>/sbin/bpfwarden, e.g. /usr/share/bpfwarden/profiles).
 * Fills `dir` and returns 0; or returns -ENOENT with `tried` listing the
 * directories looked at, ", " between them; -ENAMETOOLONG if `dir` is short.
 */
int bw_profile_libdir_find(const char *env, const char *exe, char *dir, size_t size, char *tried,
			   size_t tsize);

/*
 * The library for this process (static storage; looked up at each call),
 * or NULL, after saying once on stderr where it looked: includes are then
 * found next to the including profile only.
 */
const char *bw_profile_libdir(void);

/*
 * The first of EXEDIR/../BELOW[i] (EXEDIR: the directory of `exe`, as for
 * the profile library) that holds `marker` (a relative path), or that is a
 * directory when `marker` is NULL. Returns as bw_profile_libdir_find.
 */
int bw_dir_near_exe(const char *exe, const char *const *below, size_t nbelow, const char *marker,
		    char *dir, size_t size, char *tried, size_t tsize);

#endif
