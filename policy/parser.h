/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Internal state of one parse: the profile being built, the diagnostics,
 * and the include chain. Shared by parser.c (statements), include.c (files)
 * validate.c (checks across rules) and profile.c (entry points).
 */
#ifndef BW_POLICY_PARSER_H
#define BW_POLICY_PARSER_H

#include <stdbool.h>
#include <sys/types.h>

#include "lexer.h"
#include "profile.h"

struct bw_file_id {
	dev_t dev;
	ino_t ino;
};

struct bw_chain_entry {
	struct bw_file_id id;
	bool has_id; /* false for a profile parsed from a string */
	const char *name;
};

struct bw_parser {
	struct bw_profile *p;
	struct bw_diags *diags;
	const char *libdir;
	int err;   /* a failure that is not the profile's: -ENOMEM */
	bool stop; /* the error limit was reached */

	size_t rules_cap, matches_cap, files_cap;
	size_t rules_seen;	  /* stored or not: rules past the limit are only counted */
	struct bw_origin over_at; /* the first rule past BW_MAX_RULES */

	struct bw_chain_entry chain[BW_INCLUDE_DEPTH_MAX + 1];
	int depth;		 /* entries in chain; the file being parsed is the last */
	struct bw_file_id *seen; /* every file read, for diamonds */
	size_t nseen, seen_cap;

	struct bw_origin name_at, mode_at, on_deny_at;
};

/* Record a diagnostic; sets ps->stop or ps->err as needed. */
void bw_report(struct bw_parser *ps, enum bw_severity sev, const char *file, int line, int col,
	       const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Parse one file's text; `file` is its name as stored in p->files. */
void bw_parse_buffer(struct bw_parser *ps, const char *file, char *buf, size_t len);

/* Append a name to p->files; returns the stored copy or NULL (ps->err set). */
const char *bw_add_file(struct bw_parser *ps, const char *name);

/* Remember a file as read; false if it was already (or on ENOMEM). */
bool bw_mark_seen(struct bw_parser *ps, const struct bw_file_id *id);

/*
 * Read a whole file of at most BW_PROFILE_FILE_MAX bytes into a malloc'd
 * buffer. Returns 0, -EFBIG when it is larger, or a negative errno.
 */
int bw_read_fd(int fd, char **buf, size_t *len);

/* `include NAME` at token `at` of `from`: resolve, check, parse. */
void bw_include(struct bw_parser *ps, const char *from, const struct bw_token *at, const char *name,
		size_t len);

/* Checks that need every rule: profile name present, rule limit, duplicates. */
void bw_validate(struct bw_parser *ps);

#endif /* BW_POLICY_PARSER_H */
