/* SPDX-License-Identifier: GPL-2.0-only */
/* The unit test suites; main.c runs every one listed in its array. */
#ifndef BW_TEST_SUITES_H
#define BW_TEST_SUITES_H

#include <check.h>

Suite *lexer_suite(void);
Suite *diag_suite(void);
Suite *parser_suite(void);
Suite *path_suite(void);
Suite *net_suite(void);
Suite *include_suite(void);
Suite *validate_suite(void);
Suite *shipped_suite(void);
Suite *cmd_check_suite(void);
Suite *compile_suite(void);
Suite *jsonw_suite(void);
Suite *cgroup_suite(void);
Suite *learn_suite(void);
Suite *learn_generalise_suite(void);
Suite *learn_merge_suite(void);
Suite *learn_names_suite(void);
Suite *pins_suite(void);
Suite *event_line_suite(void);
Suite *hook_suite(void);
Suite *positions_suite(void);
Suite *libdir_suite(void);
Suite *view_suite(void);
Suite *explain_suite(void);
Suite *diff_suite(void);

/* tests/unit/tmpdir.c: a scratch directory ($TMPDIR/name-XXXXXX), removed with its files. */
void bw_test_tmpdir(char *dir, size_t len, const char *name);
void bw_test_rmtree(const char *dir);

#endif /* BW_TEST_SUITES_H */
