// SPDX-License-Identifier: GPL-2.0-only
/* Test helpers: parse, then look for diagnostics by position and text. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"

void parse_bytes(struct parsed *r, const char *text, size_t len, const char *libdir)
{
	memset(r, 0, sizeof(*r));
	r->ret = bw_profile_parse_string(T_NAME, text, len, libdir, &r->p, &r->d);
}

void parse_text(struct parsed *r, const char *text, const char *libdir)
{
	parse_bytes(r, text, strlen(text), libdir);
}

char *fixture(const char *rel)
{
	const char *dir = getenv("BW_TEST_PROFILES");
	char *path;

	ck_assert_msg(dir && dir[0], "BW_TEST_PROFILES is not set: run the tests with `make unit`");
	ck_assert_int_ge(asprintf(&path, "%s/%s", dir, rel), 0);
	return path;
}

void parse_fixture(struct parsed *r, const char *rel, const char *libdir)
{
	char *path = fixture(rel);

	memset(r, 0, sizeof(*r));
	r->ret = bw_profile_load(path, libdir, &r->p, &r->d);
	free(path);
}

void parsed_free(struct parsed *r)
{
	bw_profile_free(r->p);
	bw_diags_free(&r->d);
	r->p = NULL;
}

char *diag_dump(const struct parsed *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return strdup("(cannot dump)");
	if (r->d.n == 0)
		fprintf(f, "  (no diagnostics)\n");
	bw_diags_print(f, &r->d);
	fclose(f);
	return buf;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

char *diag_missing(const struct parsed *r, enum bw_severity sev, const char *file, int line,
		   int col, const char *substr)
{
	char *msg;

	for (size_t i = 0; i < r->d.n; i++) {
		const struct bw_diag *g = &r->d.v[i];
		if (g->severity == sev && ends_with(g->file, file) && g->line == line &&
		    g->col == col && strstr(g->msg, substr))
			return NULL;
	}
	if (asprintf(&msg, "no %s at %s:%d:%d containing \"%s\"; got:\n%s",
		     sev == BW_SEV_ERROR ? "error" : "warning", file, line, col, substr,
		     diag_dump(r)) < 0)
		msg = "no such diagnostic";
	return msg;
}

size_t count_sev(const struct parsed *r, enum bw_severity sev)
{
	size_t n = 0;

	for (size_t i = 0; i < r->d.n; i++)
		n += r->d.v[i].severity == sev;
	return n;
}
