// SPDX-License-Identifier: GPL-2.0-only
/*
 * The profile library, found at run time (libdir.h). It used to be the
 * checkout's absolute path compiled into the binary, which pointed nowhere
 * once the tree was seen under another path (a clone under /tmp, seen by
 * the VM guest elsewhere) or installed.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libdir.h"
#include "util.h"

/* The profile library below the directory above the binary's, in the order tried. */
static const char *const profile_below[] = {
    "profiles",			/* <checkout>/build/bpfwarden */
    "share/bpfwarden/profiles", /* <prefix>/sbin/bpfwarden */
};

int bw_dir_near_exe(const char *exe, const char *const *below, size_t nbelow, const char *marker,
		    char *dir, size_t size, char *tried, size_t tsize)
{
	const char *slash;
	size_t prefix, used = 0;
	struct stat st;

	if (tsize)
		tried[0] = '\0';
	slash = exe ? strrchr(exe, '/') : NULL;
	if (!slash) {
		snprintf(tried, tsize, "(nothing: where the binary is is unknown)");
		return -ENOENT;
	}
	/* /proc/self/exe has no symlink and no "..": the prefix is lexical. */
	for (prefix = (size_t)(slash - exe); prefix > 0 && exe[prefix - 1] != '/'; prefix--)
		;
	prefix = prefix ? prefix - 1 : 0;
	for (size_t i = 0; i < nbelow; i++) {
		char cand[PATH_MAX], probe[PATH_MAX + 64];
		int n = snprintf(cand, sizeof(cand), "%.*s/%s", (int)prefix, exe, below[i]);

		if (n < 0 || (size_t)n >= sizeof(cand))
			continue;
		snprintf(probe, sizeof(probe), "%s/%s", cand, marker ? marker : ".");
		if (stat(probe, &st) == 0 && (marker || S_ISDIR(st.st_mode))) {
			if ((size_t)n >= size)
				return -ENAMETOOLONG;
			memcpy(dir, cand, (size_t)n + 1);
			return 0;
		}
		if (used < tsize) {
			n = snprintf(tried + used, tsize - used, "%s%s", used ? ", " : "", cand);
			used = n < 0 ? tsize : used + (size_t)n;
		}
	}
	return -ENOENT;
}

int bw_profile_libdir_find(const char *env, const char *exe, char *dir, size_t size, char *tried,
			   size_t tsize)
{
	if (env && env[0]) {
		if (tsize)
			tried[0] = '\0';
		if ((size_t)snprintf(dir, size, "%s", env) >= size)
			return -ENAMETOOLONG;
		return 0;
	}
	return bw_dir_near_exe(exe, profile_below, sizeof(profile_below) / sizeof(profile_below[0]),
			       NULL, dir, size, tried, tsize);
}

const char *bw_profile_libdir(void)
{
	static char dir[PATH_MAX];
	static bool said;
	char exe[PATH_MAX], tried[2 * PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0)
		exe[n] = '\0';
	if (bw_profile_libdir_find(getenv(BW_PROFILE_DIR_ENV), n > 0 ? exe : NULL, dir, sizeof(dir),
				   tried, sizeof(tried)) == 0)
		return dir;
	if (!said)
		bw_err("no profile library: $" BW_PROFILE_DIR_ENV " is not set, and none of %s is "
		       "a directory; an include is found only next to the profile that names it",
		       tried);
	said = true;
	return NULL;
}
