// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test runner: every suite in `suites` runs, output CK_NORMAL, exit
 * status non-zero when any test failed. A new suite is one line here and
 * one declaration in suites.h.
 */
#include <check.h>
#include <stdlib.h>

#include "suites.h"

static Suite *(*const suites[])(void) = {
    lexer_suite,       diag_suite,
    parser_suite,      path_suite,
    net_suite,	       include_suite,
    validate_suite,    shipped_suite,
    cmd_check_suite,   compile_suite,
    jsonw_suite,       cgroup_suite,
    learn_suite,       learn_generalise_suite,
    learn_merge_suite, learn_names_suite,
    pins_suite,	       event_line_suite,
    hook_suite,	       positions_suite,
    libdir_suite,      view_suite,
    explain_suite,     diff_suite,
};

int main(void)
{
	SRunner *sr = srunner_create(NULL);
	int failed;

	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		srunner_add_suite(sr, suites[i]());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
