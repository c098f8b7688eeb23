/* SPDX-License-Identifier: GPL-2.0-only */
/* Paths in file, exec and unix socket rules: checked and normalised. */
#ifndef BW_POLICY_PATH_H
#define BW_POLICY_PATH_H

#include <stdbool.h>
#include <stddef.h>

enum bw_path_err {
	BW_PATH_OK = 0,
	BW_PATH_EMPTY,
	BW_PATH_RELATIVE,
	BW_PATH_DOT,	     /* a "." or ".." component */
	BW_PATH_DSTAR_INNER, /* "**" before the last component */
	BW_PATH_GLOB,	     /* any other '*' */
	BW_PATH_PREFIX_BARE, /* a last component of a star alone (not a subtree, not a prefix) */
	BW_PATH_TOO_LONG,    /* normalised path over the caller's limit */
	BW_PATH_NOMEM,
};

struct bw_path {
	char *path;	  /* malloc'd: "/" or "/a/b", no trailing "/" */
	size_t len;	  /* of path; also set for BW_PATH_TOO_LONG */
	bool subtree;	  /* the source ended in a "**" component */
	bool name_prefix; /* the last component ended in one '*': names beginning so */
	size_t err_off;	  /* byte offset in the source of the offending part */
};

/*
 * Normalise `s` (len bytes, no NUL inside): collapse "//", drop a trailing
 * "/", take a final "**" component as the subtree when `subtree_ok`, and a
 * last component NAME* (one '*', at its end, after at least one byte) as the
 * names in that directory beginning with NAME when `subtree_ok` too; then
 * path is the directory, '/' and NAME, without the '*'. On success out->path
 * is set and must be freed; on failure it is NULL.
 */
enum bw_path_err bw_path_parse(const char *s, size_t len, bool subtree_ok, size_t max,
			       struct bw_path *out);

/*
 * Is the normalised path /proc/self or below it? Such rules name a process's
 * own /proc entries whatever its PID: the kernel matches /proc/PID of the
 * current process to them, and nothing there is pinned (at load /proc/self
 * is the agent's own).
 */
bool bw_path_is_proc_self(const char *path);

#endif /* BW_POLICY_PATH_H */
