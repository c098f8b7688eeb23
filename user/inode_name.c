// SPDX-License-Identifier: GPL-2.0-only
/* Finding a path for a device and inode (inode_name.h says when and why). */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "bpfwarden.h"
#include "inode_name.h"
#include "mounts.h"
#include "util.h"

/* nftw(3) passes its callback no argument: the one search's state. */
static struct search {
	uint32_t dev;
	uint64_t ino;
	size_t budget;
	char *out;
	size_t len;
	int found;
} * search;

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	if (!search->budget)
		return 1;
	search->budget--;
	if (st->st_ino != search->ino || bw_kdev(st->st_dev) != search->dev || type == FTW_NS)
		return 0;
	snprintf(search->out, search->len, "%s", path);
	search->found = 1;
	return 1;
}

/* FTW_MOUNT: the object is on this file system; FTW_PHYS: a symlink is not a name of it. */
static int look_in(struct search *s, const char *dir)
{
	struct stat st;

	if (s->found || !s->budget || stat(dir, &st) || bw_kdev(st.st_dev) != s->dev)
		return s->found;
	search = s;
	nftw(dir, visit, 16, FTW_PHYS | FTW_MOUNT);
	search = NULL;
	return s->found;
}

static int look_in_mount(const struct bw_mount *m, void *arg)
{
	struct search *s = arg;

	if (bw_kdev(m->dev) != s->dev)
		return 0;
	return look_in(s, m->target);
}

int bw_inode_name(const struct bw_profile *p, uint32_t dev, uint64_t ino, char *out, size_t len)
{
	struct search s = {dev, ino, BW_NAME_SCAN_MAX, out, len, 0};
	size_t i;
	int pass;

	/* The directories of deny rules, then every other rule's, then the mounts. */
	for (pass = 0; pass < 2 && p; pass++)
		for (i = 0; i < p->nrules && !s.found; i++) {
			const struct bw_rule *r = &p->rules[i];

			if ((r->cat != BW_CAT_FILE && r->cat != BW_CAT_EXEC) || !r->file.path ||
			    (r->verdict == BW_V_DENY) != (pass == 0))
				continue;
			look_in(&s, r->file.path);
		}
	if (!s.found)
		bw_mounts_each(look_in_mount, &s);
	return s.found ? 0 : -ENOENT;
}
