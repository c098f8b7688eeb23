/* SPDX-License-Identifier: GPL-2.0-only */
/* Parsing a profile in a test and asserting on its diagnostics. */
#ifndef BW_TEST_HELPERS_H
#define BW_TEST_HELPERS_H

#include <check.h>
#include <stdlib.h>

#include "profile.h"

/* The name string profiles are parsed under. */
#define T_NAME "t.profile"

struct parsed {
	int ret;
	struct bw_profile *p;
	struct bw_diags d;
};

/* Parse `text` as T_NAME (libdir may be NULL). */
void parse_text(struct parsed *r, const char *text, const char *libdir);
void parse_bytes(struct parsed *r, const char *text, size_t len, const char *libdir);
/* Load fixture `rel` from $BW_TEST_PROFILES. */
void parse_fixture(struct parsed *r, const char *rel, const char *libdir);
void parsed_free(struct parsed *r);

/* $BW_TEST_PROFILES + "/" + rel, malloc'd; fails the test if unset. */
char *fixture(const char *rel);

/* NULL when found, else a description of what is there (leaked: tests fork). */
char *diag_missing(const struct parsed *r, enum bw_severity sev, const char *file, int line,
		   int col, const char *substr);
char *diag_dump(const struct parsed *r);
size_t count_sev(const struct parsed *r, enum bw_severity sev);

/*
 * A diagnostic with this severity, file (a suffix of the recorded name),
 * line, column, and message containing `substr`.
 */
#define expect_diag(r, sev, file, line, col, substr)                                               \
	do {                                                                                       \
		char *m_ = diag_missing((r), (sev), (file), (line), (col), (substr));              \
		ck_assert_msg(m_ == NULL, "%s", m_);                                               \
	} while (0)
#define expect_error(r, line, col, substr)                                                         \
	expect_diag((r), BW_SEV_ERROR, T_NAME, (line), (col), (substr))
#define expect_warning(r, line, col, substr)                                                       \
	expect_diag((r), BW_SEV_WARNING, T_NAME, (line), (col), (substr))

/* Exactly these numbers of errors and warnings. */
#define expect_counts(r, nerr, nwarn)                                                              \
	ck_assert_msg(count_sev((r), BW_SEV_ERROR) == (size_t)(nerr) &&                            \
			  count_sev((r), BW_SEV_WARNING) == (size_t)(nwarn),                       \
		      "want %d errors, %d warnings; got:\n%s", (nerr), (nwarn), diag_dump(r))

/* Parsed without any diagnostic. */
#define expect_clean(r)                                                                            \
	do {                                                                                       \
		ck_assert_msg((r)->ret == 0 && (r)->d.n == 0, "ret %d, diagnostics:\n%s",          \
			      (r)->ret, diag_dump(r));                                             \
		ck_assert_ptr_nonnull((r)->p);                                                     \
	} while (0)

/* Failed with -EINVAL and no profile. */
#define expect_invalid(r)                                                                          \
	do {                                                                                       \
		ck_assert_int_eq((r)->ret, -EINVAL);                                               \
		ck_assert_ptr_null((r)->p);                                                        \
	} while (0)

#endif /* BW_TEST_HELPERS_H */
