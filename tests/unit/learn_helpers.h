/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The learn suites' helpers: build a set of accesses, write it as a profile,
 * parse it back with no diagnostic at all and compile it, then ask the
 * compiled policy what it allows.
 */
#ifndef BW_TEST_LEARN_HELPERS_H
#define BW_TEST_LEARN_HELPERS_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfwarden.h"
#include "compile.h"
#include "learn.h"
#include "profile.h"

#ifndef BW_PROFILE_LIBDIR
#error "the Makefile passes -DBW_PROFILE_LIBDIR"
#endif

#define R  BW_ACC_R
#define W  BW_ACC_W
#define RW (BW_ACC_R | BW_ACC_W)

/* Each adds one access and asserts it was taken. */
void add_file(struct bw_learn_set *s, unsigned acc, const char *path, const char *prog);
void add_exec(struct bw_learn_set *s, const char *path, const char *prog);
/* A file's code mapped executable (a library, or the program the loader was run on). */
void add_lib(struct bw_learn_set *s, const char *path, const char *prog);
void add_inet(struct bw_learn_set *s, int op, int proto, const uint8_t *addr, uint16_t port,
	      const char *prog);
void add_unix(struct bw_learn_set *s, int op, const char *name, const char *prog);
/* ::ffff:a.b.c.d, as the agent gives an IPv4 address; FIRST::LAST. */
void v4(uint8_t *addr, uint8_t a, uint8_t b, uint8_t c, uint8_t d);
void v6(uint8_t *addr, uint16_t first, uint8_t last);
/* n files DIR/fileNN.txt with access acc. */
struct bw_learn_set *files_in(const char *dir, int n, unsigned acc);

struct loaded {
	char *text;
	struct bw_profile *p;
	struct bw_compiled c;
};

/* The profile text (asserting the writer returned 0). */
char *write_text(const struct bw_learn_set *s, const struct bw_learn_opts *o);
char *diags_text(const struct bw_diags *d);
/* Parse (includes from libdir) with no diagnostic at all, and compile; takes text. */
void load_clean(struct loaded *l, const char *text, const char *libdir);
struct loaded gen_load(const struct bw_learn_set *s, const struct bw_learn_opts *o);
void loaded_free(struct loaded *l);

/* What the compiled profile allows. */
bool file_ok(const struct loaded *l, const char *path, unsigned acc);
bool exec_ok(const struct loaded *l, const char *path);
bool lib_ok(const struct loaded *l, const char *path); /* may be mapped executable */
bool inet_ok(const struct loaded *l, int op, int proto, const uint8_t *addr, uint16_t port);
bool unix_ok(const struct loaded *l, int op, const char *name);

/* The text. */
size_t count_of(const char *text, const char *needle);
bool rule_with(const char *text, const char *needle); /* a rule line (not a comment) holds it */
bool has_line(const char *text, const char *line);
char *line_before(const char *text, const char *line); /* malloc'd, NULL if no such line */
const char *acc_name(unsigned acc);

#define expect_line(text, line)                                                                    \
	ck_assert_msg(has_line((text), (line)), "no line '%s' in:\n%s", (line), (text))
#define expect_no_line(text, line)                                                                 \
	ck_assert_msg(!has_line((text), (line)), "unexpected line '%s' in:\n%s", (line), (text))

/*
 * What no learned profile may hold, stated independently of the writer: a
 * rule on the whole tree, a subtree on a system directory, a w subtree in the
 * system's tree, a subtree on, in or above a directory of secrets.
 */
bool sys_dir(const char *d);
void check_invariants(const struct loaded *l);

#endif /* BW_TEST_LEARN_HELPERS_H */
