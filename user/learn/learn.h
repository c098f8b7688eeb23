/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Learn mode aggregation: what a workload did (one struct bw_learned per
 * learn event), merged per object, written as a profile a person can review
 * and `bpfwarden check` accepts. Pure C, no BPF. The choices it makes
 * (folding into abstractions, generalisation, what cannot be expressed) are
 * specified in docs/learn.md; user/learn/internal.h maps them to files.
 */
#ifndef BW_LEARN_H
#define BW_LEARN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"

/* Program names kept per learned object (the smallest ones, so any input order agrees). */
#define BW_LEARN_PROGS 3
/* Default of bw_learn_opts.min_children. */
#define BW_LEARN_MIN_CHILDREN 8

/* One observed access, as the agent decodes a learn event. */
struct bw_learned {
	enum bw_cat cat;  /* BW_CAT_FILE, BW_CAT_EXEC, BW_CAT_NET or BW_CAT_NS */
	unsigned access;  /* file: BW_ACC_R | BW_ACC_W (other bits are ignored); exec:
			     BW_ACC_X run (also 0), BW_ACC_M mapped executable */
	const char *path; /* file and exec: absolute path as seen by the process;
			     exec: NULL or "" is a program run from a memfd */
	int net_op;	  /* BW_NET_CONNECT (sendmsg too), BW_NET_BIND, BW_NET_RAW, BW_NET_ADMIN */
	int proto;	  /* BW_NET_TCP, BW_NET_UDP, BW_NET_UNIX (unused for raw, admin) */
	int family;	  /* 4 or 6: the socket's */
	uint8_t addr[16]; /* IPv6 form; IPv4 as ::ffff:a.b.c.d */
	uint16_t port;	  /* host order */
	const char *unix_name; /* "/path" or "@abstract" */
	const char *program;   /* exe path of the process, or its comm if unknown; may be NULL */
	unsigned what;	       /* BW_CAT_NS: BW_NS_* (mount, chroot, userns or cgroup) */
	/* Accesses the record stands for: 0 is one (an event); a merge passes a
	 * learned rule's "seen N times" (user/learn/merge.c). */
	unsigned long long count;
	bool more_programs; /* programs did it that are not named ("and others") */
	/*
	 * The agent sees the object at `path` too (the process's view was the
	 * agent's, or the agent found the same name for it): what the writer
	 * reads there is what the process read. False when unknown (a merge).
	 */
	bool here;
};

struct bw_learn_set;

struct bw_learn_set *bw_learn_new(void);
void bw_learn_free(struct bw_learn_set *s);

/*
 * Record one access. Equal objects (same file or program path after "//" and
 * trailing "/" are folded; same net operation, protocol, address and port;
 * same unix name; raw sockets; the same change of the view) are merged: a
 * count, the union of the access bits, the programs that did it. Strings are
 * copied. Returns 0, -EINVAL for an access that names no object (bad
 * category, operation, protocol or family, file access without r or w), or
 * -ENOMEM.
 */
int bw_learn_add(struct bw_learn_set *s, const struct bw_learned *l);

/* Was this program (its exact path) learned as run (not only mapped)? */
bool bw_learn_has_exec(const struct bw_learn_set *s, const char *path);

/* Distinct objects recorded, and accesses recorded (calls that succeeded). */
size_t bw_learn_count(const struct bw_learn_set *s);
unsigned long long bw_learn_events(const struct bw_learn_set *s);

/* bw_learn_opts.flags */
#define BW_LEARN_NO_FANOUT   0x1 /* no `/dir/...` for directories with many files */
#define BW_LEARN_NO_VOLATILE 0x2 /* no `/parent/...` for per-run names */
/* The bases' rules that bw_learn_rule_is_object calls objects were added to the set (a
 * merge): they are generalised again with the rest, not kept as written. */
#define BW_LEARN_BASE_OBJECTS 0x4

/*
 * What the writer may ask the file system, to refuse a subtree rule over
 * secrets it can see there: never to allow more (a path that cannot be looked
 * at is judged by its name alone). The agent passes bw_learn_host_fs; unit
 * tests pass their own.
 */
struct bw_learn_fs {
	/* lstat(2)'s st_mode of path: 0 or -errno. */
	int (*mode)(void *ctx, const char *path, unsigned *mode);
	/* each(arg, name, lstat mode) for every entry of dir but "." and "..", until
	 * it returns non-zero, which list returns; 0 when done, or -errno. */
	int (*list)(void *ctx, const char *dir,
		    int (*each)(void *arg, const char *name, unsigned mode), void *arg);
	/* The bytes of regular file path, symlinks not followed, into buf: their
	 * number, -EFBIG when there are more than cap, or -errno. NULL: the writer
	 * reads nothing (no content roots, "Generalisation" in docs/learn.md). */
	long (*read)(void *ctx, const char *path, char *buf, size_t cap);
	void *ctx;
};

/* Entries a subtree candidate's directory may hold for the file system check
 * to finish; past that it is refused (it could not be checked). */
#define BW_LEARN_WALK_MAX 10000

struct bw_learn_opts {
	const char *name;		 /* `profile NAME`; NULL: "learned" */
	const char *libdir;		 /* the profile library abstractions are read from */
	const char *const *abstractions; /* NULL-terminated include names, or NULL */
	unsigned min_children;		 /* 0: BW_LEARN_MIN_CHILDREN */
	unsigned flags;			 /* BW_LEARN_NO_* */
	const struct bw_learn_fs *fs;	 /* NULL: judge directories by their names only */
	/*
	 * Profiles to start from: `--profile START` when learning (one), every
	 * input of `profile merge`. The first gives the name (unless `name` is
	 * set), the mode, the defaults, on-deny and the match lines; every base's
	 * top-level includes are included, and its own rules (those of its
	 * top-level file) are kept as they say, under "# kept from FILE". What
	 * they allow is not written again. NULL: start from nothing, `default deny`.
	 */
	const struct bw_profile *const *bases;
	size_t nbases;
	/*
	 * Where to list the rules that allow more than was seen (subtree, name
	 * prefix and library directory rules the writer made, not kept ones),
	 * each with why, for the reviewer (bw_learn_widenings); NULL: nowhere.
	 */
	FILE *widenings;
	/*
	 * Where to say, in one line, why nothing was written when the kept
	 * rules and the abstractions each load but not together (-EINVAL);
	 * NULL: nowhere.
	 */
	char *why;
	size_t why_len;
};

/*
 * Is this rule one learned object (an allow rule with one exact path, a
 * single address and port, a unix name, `net raw`, `net admin`, `exec memfd`,
 * a change of the view; not named with `as`)? Those are what a learned
 * profile's rules are before generalisation.
 */
bool bw_learn_rule_is_object(const struct bw_rule *r);

/*
 * Add the object rules of p's top-level file (bw_learn_rule_is_object) to
 * the set, as a merge does: each with the count and programs of the
 * "# seen N times, by PROG, ..." comment on the line above it in `text`
 * (p's top-level file's bytes), or one access by no named program. Returns
 * the number of rules added, or -ENOMEM.
 */
long bw_learn_add_profile(struct bw_learn_set *s, const struct bw_profile *p, const char *text,
			  size_t len);

/*
 * Write the learned profile to `out` (opts may be NULL: defaults, no
 * abstractions). The same set gives the same text whatever order the
 * accesses were added in. The text is parsed and compiled before it is
 * written; should that find a problem (only a kernel limit can: more than
 * BW_MAX_RULES rules, more than BW_NET_RANGES ports on one address), the
 * profile is still written, with comments at its top saying what to change.
 * An abstraction that cannot be read is not included (a comment says why).
 * Returns 0 when written; -EINVAL (nothing written) for a bad name, an empty
 * include name or one with a control byte, or abstractions that each load but
 * together do not (over BW_MAX_RULES); -ENOMEM; -EIO when writing to `out`
 * failed.
 */
int bw_learn_write_profile(const struct bw_learn_set *s, const struct bw_learn_opts *opts,
			   FILE *out);

#endif /* BW_LEARN_H */
