// SPDX-License-Identifier: GPL-2.0-only
/* A scratch directory for a unit test's files, and its removal. */
#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include "suites.h"

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	remove(path);
	return 0;
}

void bw_test_tmpdir(char *dir, size_t len, const char *name)
{
	snprintf(dir, len, "%s/%s-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

void bw_test_rmtree(const char *dir)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
