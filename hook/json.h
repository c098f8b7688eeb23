/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small JSON reader for what container runtimes hand a hook: the OCI
 * state, a bundle's config.json, an NRI v0.1 request. The whole text is
 * parsed into a tree (strings decoded to UTF-8, NUL-terminated); lookups
 * walk it. Bounded: nesting depth BWJ_DEPTH_MAX, any input is either a
 * tree or an error with its byte offset, never a crash (tests/fuzz/fuzz_hook.c
 * fuzzes it with what is built on it).
 */
#ifndef BW_HOOK_JSON_H
#define BW_HOOK_JSON_H

#include <stdbool.h>
#include <stddef.h>

#define BWJ_DEPTH_MAX 64

enum bwj_type { BWJ_NULL, BWJ_BOOL, BWJ_NUM, BWJ_STR, BWJ_ARR, BWJ_OBJ };

struct bwj {
	enum bwj_type type;
	const char *key; /* in an object: the member's name */
	const char *str; /* BWJ_STR: decoded, NUL-terminated (may hold NUL from \u0000) */
	size_t len;	 /* its length */
	double num;	 /* BWJ_NUM; BWJ_BOOL: 0 or 1 */
	struct bwj *child, *next;
};

/*
 * Parse text (len bytes) into a tree; NULL on error with a reason and the
 * byte offset in err. Free with bwj_free.
 */
struct bwj *bwj_parse(const char *text, size_t len, char *err, size_t errlen);
void bwj_free(struct bwj *root);

/* The member key of an object, NULL if absent or v is not an object. */
const struct bwj *bwj_get(const struct bwj *v, const char *key);
/* A path of member names, e.g. bwj_path(v, "linux", "cgroupsPath", NULL). */
const struct bwj *bwj_path(const struct bwj *v, ...);
/* The string of v, NULL unless v is a string without NUL bytes. */
const char *bwj_str(const struct bwj *v);
/* v as a whole number in [min, max]: 0, or -1 when it is not one. */
int bwj_int(const struct bwj *v, long long min, long long max, long long *out);

#endif
