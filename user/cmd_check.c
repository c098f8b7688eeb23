// SPDX-License-Identifier: GPL-2.0-only
/*
 * `bpfwarden check FILE...`: parse each profile with its includes, print
 * every diagnostic, and say which profiles are valid. Loads nothing into
 * the kernel and needs no privilege.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_check.h"
#include "libdir.h"
#include "profile.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: bpfwarden check FILE...\n"
		   "Validate profiles: errors and warnings are printed as\n"
		   "FILE:LINE:COL: error: MESSAGE; exit status 1 if any profile has an error.\n"
		   "Includes are looked up next to the including file, then in the profile\n"
		   "library: $BPFWARDEN_PROFILE_DIR if set, else profiles/ in the build tree\n"
		   "the binary is in, else <prefix>/share/bpfwarden/profiles for a binary\n"
		   "installed in <prefix>/sbin.\n");
}

static int check_one(const char *path, const char *lib)
{
	struct bw_diags diags = {0};
	struct bw_profile *p = NULL;
	int err;

	err = bw_profile_load(path, lib, &p, &diags);
	bw_diags_print(stderr, &diags);
	if (err == 0)
		printf("%s: ok (%zu rules)\n", path, p->nrules);
	else if (err != -EINVAL || diags.nerrors == 0)
		fprintf(stderr, "bpfwarden check: %s: %s\n", path, strerror(-err));
	bw_profile_free(p);
	bw_diags_free(&diags);
	return err ? 1 : 0;
}

int cmd_check(int argc, char **argv)
{
	const char *lib = bw_profile_libdir();
	int first = 1, ret = 0;

	for (; first < argc; first++) {
		const char *a = argv[first];
		if (strcmp(a, "--") == 0) {
			first++;
			break;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		}
		if (a[0] != '-' || a[1] == '\0')
			break;
		fprintf(stderr, "bpfwarden check: unknown option '%s'\n", a);
		usage(stderr);
		return 2;
	}
	if (first >= argc) {
		fprintf(stderr, "bpfwarden check: no profile given\n");
		usage(stderr);
		return 2;
	}
	for (int i = first; i < argc; i++) {
		if (check_one(argv[i], lib))
			ret = 1;
	}
	/* Results go to a pipe as often as to a terminal: make sure they left. */
	if (fflush(stdout) != 0) {
		fprintf(stderr, "bpfwarden check: writing results: %s\n", strerror(errno));
		return 1;
	}
	return ret;
}
