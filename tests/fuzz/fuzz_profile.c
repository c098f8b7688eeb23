// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the profile parser: any bytes, parsed as a profile
 * whose includes resolve in a small library (tests/fuzz/lib, relative to the
 * repository root that `make fuzz` runs from). Besides "no crash, no leak",
 * it checks what the parser promises about its output.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpfwarden.h>

#include "profile.h"

#define FUZZ_LIBDIR "tests/fuzz/lib"

static FILE *devnull;

#define require(cond)                                                                              \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "invariant broken: %s (%s:%d)\n", #cond, __FILE__,         \
				__LINE__);                                                         \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static void check_path(const char *path, size_t max)
{
	size_t len = strlen(path);

	require(path[0] == '/');
	require(len <= max);
	require(len == 1 || path[len - 1] != '/');
	require(!strstr(path, "//"));
	require(!strstr(path, "/./") && !strstr(path, "/../"));
	require(!strchr(path, '*'));
}

static void check_profile(const struct bw_profile *p)
{
	require(p->name && p->name[0]);
	require(p->nrules <= BW_MAX_RULES);
	require(p->nfiles >= 1);
	for (size_t i = 0; i < p->nrules; i++) {
		const struct bw_rule *r = &p->rules[i];
		require(r->origin.file && r->origin.line > 0 && r->origin.col > 0);
		require(r->verdict == BW_V_ALLOW || r->verdict == BW_V_DENY);
		switch (r->cat) {
		case BW_CAT_FILE:
			require(r->file.access && !(r->file.access & ~(BW_ACC_R | BW_ACC_W)));
			require(!r->file.memfd);
			check_path(r->file.path, BW_RULE_PATH_MAX);
			break;
		case BW_CAT_EXEC:
			require(r->file.access == 0);
			if (r->file.memfd)
				require(!r->file.path && !r->file.subtree);
			else
				check_path(r->file.path, BW_RULE_PATH_MAX);
			break;
		case BW_CAT_NET:
			if (r->net.proto == BW_NET_UNIX) {
				require(r->net.unix_path);
				if (!r->net.unix_abstract)
					check_path(r->net.unix_path, 107);
				break;
			}
			require(!r->net.unix_path);
			require(r->net.port_lo <= r->net.port_hi);
			require(r->net.family == 0 || r->net.family == 4 || r->net.family == 6);
			require(r->net.prefixlen >= 0 &&
				r->net.prefixlen <= (r->net.family == 4 ? 32 : 128));
			break;
		default:
			require(0);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bw_diags d = {0};
	struct bw_profile *p = NULL;
	char buf[64];
	int err;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	err = bw_profile_parse_string("/nonexistent/fuzz.profile", (const char *)data, size,
				      FUZZ_LIBDIR, &p, &d);
	require(err == 0 || err == -EINVAL);
	require((err == 0) == (p != NULL));
	require((err == 0) == (d.nerrors == 0));
	if (p) {
		check_profile(p);
		for (size_t i = 0; i < p->nrules; i++)
			require(bw_origin_format(&p->rules[i].origin, buf, sizeof(buf)) != -EINVAL);
	}
	for (size_t i = 0; i < d.n; i++)
		require(d.v[i].file && d.v[i].msg && d.v[i].line > 0 && d.v[i].col > 0);
	if (devnull)
		bw_diags_print(devnull, &d);
	bw_profile_free(p);
	bw_diags_free(&d);
	return 0;
}
