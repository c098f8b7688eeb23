/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The profile language v1 as data: what the parser produces from a profile
 * file and its includes, and what the compiler (user/compile.c) turns into
 * map entries. Pure C, no BPF: see docs/profile-language.md for the syntax.
 */
#ifndef BW_POLICY_PROFILE_H
#define BW_POLICY_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The modes, verdicts and on-deny actions are the kernel's (plain __u* types). */
#include "bpfwarden.h"

/*
 * Limits of the language (docs/profile-language.md, "Limits"); the kernel's
 * own (BW_RULE_PATH_MAX, BW_MAX_RULES) are in include/bpfwarden.h.
 */
/* Includes nest at most this deep below the top-level file. */
#define BW_INCLUDE_DEPTH_MAX 16
/* Largest profile file, top level or included (bytes). */
#define BW_PROFILE_FILE_MAX (8u << 20)
/* `profile NAME`: letters, digits, '.', '_', '-', at most this many bytes. */
#define BW_PROFILE_NAME_MAX 64
/* A rule's `as NAME`: the same characters, at most this many bytes. */
#define BW_RULE_NAME_MAX 64
/* sun_path holds 108 bytes: a path and its NUL, or NUL and an abstract name. */
#define BW_UNIX_PATH_MAX 107

/*
 * Rule categories. The first BW_CAT_COUNT have a `default` line; BW_CAT_NS
 * (`allow|deny mount|chroot|userns|cgroup`) has none: what it names is refused
 * unless a rule allows it.
 */
enum bw_cat { BW_CAT_FILE = 0, BW_CAT_EXEC, BW_CAT_NET, BW_CAT_COUNT, BW_CAT_NS = BW_CAT_COUNT };

/*
 * BW_NET_RAW: `allow|deny net raw`, raw IP and packet sockets; BW_NET_ADMIN:
 * `allow|deny net admin`, the network configuration (CAP_NET_ADMIN of the
 * host's user namespace). Neither names a protocol or an address.
 */
enum bw_net_op { BW_NET_CONNECT = 1, BW_NET_BIND, BW_NET_RAW, BW_NET_ADMIN };
enum bw_net_proto { BW_NET_TCP = 1, BW_NET_UDP, BW_NET_UNIX };

/* Where a rule or a diagnostic comes from: the file (after include) and line. */
struct bw_origin {
	const char *file; /* owned by the profile's file list */
	int line;	  /* 1-based */
	int col;	  /* 1-based, of the rule's first token */
};

struct bw_file_rule {
	/*
	 * File rules: BW_ACC_R | BW_ACC_W (include/bpfwarden.h). Exec rules:
	 * BW_ACC_X | BW_ACC_M (run and map: `exec PATH`, `exec memfd`), or
	 * BW_ACC_M alone (map only: `allow exec lib PATH`).
	 */
	unsigned access;
	char *path;   /* absolute, normalised, no trailing "/" or "**" */
	bool subtree; /* the rule ended in "/" "**": the directory and all below */
	/*
	 * The rule's last name ended in '*': path is DIR/NAME without it, and
	 * the rule is every name in DIR beginning with NAME (allow rules only).
	 */
	bool name_prefix;
	bool memfd; /* exec only: `allow exec memfd` (path is NULL) */
};

struct bw_net_rule {
	enum bw_net_op op;
	enum bw_net_proto proto;
	/*
	 * tcp/udp: family 4 or 6, or 0 for `*` (any address of both families)
	 * and for `localhost` (then addr is zero and prefixlen 0: the flag
	 * below says which addresses). IPv4-mapped IPv6 (::ffff:a.b.c.d, prefix
	 * 96 or more) is stored as IPv4. unix: 0.
	 */
	int family;
	uint8_t addr[16];	   /* network byte order; IPv4 in the first 4 bytes */
	int prefixlen;		   /* 0..32 or 0..128 */
	bool localhost;		   /* the `localhost` keyword: 127.0.0.0/8 and ::1 */
	uint16_t port_lo, port_hi; /* `*` is 0..65535 */
	/* unix: a filesystem path, or an abstract name (from `@name`) */
	char *unix_path;
	bool unix_abstract;
};

/* `allow|deny mount|chroot|userns|cgroup`: what = BW_NS_* (include/bpfwarden.h). */
struct bw_ns_rule {
	unsigned what;
};

struct bw_rule {
	enum bw_cat cat;
	enum bw_verdict verdict; /* BW_V_ALLOW or BW_V_DENY */
	struct bw_origin origin;
	char *name; /* `as NAME` after the rule; NULL if not named */
	union {
		struct bw_file_rule file; /* BW_CAT_FILE and BW_CAT_EXEC */
		struct bw_net_rule net;	  /* BW_CAT_NET */
		struct bw_ns_rule ns;	  /* BW_CAT_NS */
	};
};

/*
 * The slots of a path trie value (struct bw_path_rule) that a file or exec
 * rule decides, as BW_ACC_R (`r`) and BW_ACC_W (`w`): a file rule its
 * access; an exec rule running (BW_ACC_X) in `r` and mapping (BW_ACC_M) in `w`.
 */
static inline unsigned bw_rule_slots(const struct bw_rule *r)
{
	if (r->cat == BW_CAT_FILE)
		return r->file.access & (BW_ACC_R | BW_ACC_W);
	return (r->file.access & BW_ACC_X ? BW_ACC_R : 0) |
	       (r->file.access & BW_ACC_M ? BW_ACC_W : 0);
}

/*
 * A rule's identity that survives edits of its file: FNV-1a over its name
 * if it has one (`as NAME`: the identity then survives edits of the rule
 * itself), else over what the rule says (category, verdict, access, path or
 * address and ports, ...), never where it is. Two rules that say the same,
 * or carry the same name, have the same identity.
 */
uint64_t bw_rule_id(const struct bw_rule *r);

struct bw_profile;
/*
 * What the kernel's rule numbers mean in a profile: FNV-1a over its name
 * and each rule's identity and place (FILE:LINE). Two loads of one text
 * agree; an edit that adds, removes, moves or changes a rule does not, so
 * that a record of one version is never read with another's rules.
 */
uint64_t bw_profile_digest(const struct bw_profile *p);

/*
 * The rule as a profile line in canonical form ("allow file rw /srv/data",
 * "deny net connect tcp 10.0.0.0/8:443", quoting a path that needs it),
 * with its ` as NAME` when with_name. Parsed again it gives the same rule.
 * Returns the length, or -ENOSPC when buf was too small (it then holds a
 * cut, terminated string).
 */
int bw_rule_format(const struct bw_rule *r, bool with_name, char *buf, size_t len);
/* Room for any rule's canonical text: a path of escaped quotes and backslashes, a name. */
#define BW_RULE_TEXT_MAX (2 * BW_RULE_PATH_MAX + 128)

/* "mount", "chroot", "userns" for BW_NS_*; NULL for anything else. */
const char *bw_ns_name(unsigned what);

/* A `match` line; NULL fields were not given. Globs are kept as written. */
struct bw_match {
	struct bw_origin origin;
	char *cgroup;
	char *namespace_;
	char *pod;
	char *container;
};

/*
 * The match line as the profile would say it ("match cgroup=... pod=..."), its
 * selectors in a fixed order. Returns the length, or -ENOSPC when buf was too
 * small (it then holds a cut, terminated string).
 */
int bw_match_format(const struct bw_match *m, char *buf, size_t len);

struct bw_profile {
	char *name; /* `profile NAME`; NULL if absent (error) */
	char *path; /* the top-level file as given */
	/*
	 * The `mode` line; without one (mode_given false) mode is
	 * BW_MODE_ENFORCE, and the command line's --mode decides if given.
	 */
	enum bw_mode mode;
	bool mode_given;
	/* BW_V_ALLOW or BW_V_DENY per category; deny when not stated */
	enum bw_verdict defaults[BW_CAT_COUNT];
	struct bw_origin default_origin[BW_CAT_COUNT]; /* line 0: implicit */
	unsigned on_deny;			       /* BW_ON_DENY_LOG or BW_ON_DENY_KILL */
	struct bw_rule *rules;
	size_t nrules;
	struct bw_match *matches;
	size_t nmatches;
	/* The top-level file's `include` names as written, in order (not those of included files).
	 */
	char **includes;
	size_t nincludes;
	char **files; /* every file read (top level first); origins point here */
	size_t nfiles;
};

enum bw_severity { BW_SEV_ERROR = 0, BW_SEV_WARNING };

struct bw_diag {
	enum bw_severity severity;
	char *file;
	int line, col;
	char *msg;
};

struct bw_diags {
	struct bw_diag *v;
	size_t n;
	size_t nerrors;
};

/*
 * Parse the profile at `path` and everything it includes. `libdir` is the
 * profile library searched after the including file's directory (NULL: none).
 * Returns 0 and sets *out when there were no errors (warnings may be in
 * diags); -EINVAL when diags holds at least one error (*out is NULL);
 * another negative errno for a failure that is not the profile's fault:
 * the top-level file cannot be opened or read (-ENOENT, -EACCES, -EISDIR:
 * no diagnostic is added), or -ENOMEM. Diagnostics are appended to `diags`,
 * so one bw_diags can collect several parses; only this parse's errors
 * count.
 */
int bw_profile_load(const char *path, const char *libdir, struct bw_profile **out,
		    struct bw_diags *diags);

/*
 * Same, from a string; `name` stands in for the file name in diagnostics and
 * origins, and its directory part (none: the current directory) is where
 * relative includes are looked up first. The text is copied; it may hold
 * any bytes (NUL bytes are errors, not terminators). NULL arguments: -EFAULT.
 */
int bw_profile_parse_string(const char *name, const char *text, size_t len, const char *libdir,
			    struct bw_profile **out, struct bw_diags *diags);

void bw_profile_free(struct bw_profile *p);
void bw_diags_free(struct bw_diags *d);

/* Print as `FILE:LINE:COL: error: MESSAGE` (or `warning:`), one a line. */
void bw_diags_print(FILE *f, const struct bw_diags *d);

/*
 * Human-readable "FILE:LINE" of a rule, for events, or "default" for an
 * implicit origin (file NULL or line 0). Static buffer not used. Returns the
 * length written, -ENOSPC when buf was too small (it then holds a cut,
 * terminated string), -EINVAL for NULL arguments.
 */
int bw_origin_format(const struct bw_origin *o, char *buf, size_t len);

/* "enforce", "audit", "learn" ("unknown" for anything else), and back: 0 or -EINVAL. */
const char *bw_mode_name(enum bw_mode m);
int bw_mode_parse(const char *s, size_t len, enum bw_mode *out);
/* "allow" or "deny". */
const char *bw_verdict_name(enum bw_verdict v);

#endif /* BW_POLICY_PROFILE_H */
