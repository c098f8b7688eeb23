/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Profile -> map contents. Pure C: user/slot.c writes what this produces
 * into bw_file_rules, bw_exec_rules, bw_net_rules, bw_unix_rules and
 * bw_policies; the inode pins are planned here, resolved by user/pins.c.
 */
#ifndef BW_COMPILE_H
#define BW_COMPILE_H

#include <stddef.h>
#include <stdint.h>
#include "bpfwarden.h"
#include "profile.h"

/* One trie entry: key bytes (path plus '/' or '\0'), and the decided values. */
struct bw_file_entry {
	char key[BW_KEY_PATH_MAX];
	unsigned keylen;
	struct bw_path_rule val;
};

/* One net trie entry (the policy id is added when it is stored). */
struct bw_net_entry {
	struct bw_net_key key;
	struct bw_net_value val;
	struct bw_net_value own; /* this prefix's own ranges, before inheritance */
};

/* One unix rule entry (the policy id is added when it is stored). */
struct bw_unix_entry {
	struct bw_unix_key key;
	struct bw_unix_value val;
};

/* A path to pin by device and inode once resolved in the governed namespace. */
struct bw_pin_req {
	const char *path; /* points into the profile */
	struct bw_inode_pin pin;
	int deny;    /* named by a deny rule */
	int subtree; /* a subtree deny: scan it for files with other names */
	int dir;     /* some rule on this path is a subtree rule */
	int cat;     /* BW_CAT_PIN_FILE or BW_CAT_PIN_EXEC */
};

struct bw_compiled {
	struct bw_policy policy;
	struct bw_file_entry *files; /* file rules, sorted by key */
	size_t nfiles;
	struct bw_file_entry *execs; /* exec rules (the `r` slot), sorted by key */
	size_t nexecs;
	int memfd_denied;
	struct bw_net_entry *nets;
	size_t nnets;
	struct bw_unix_entry *unixes;
	size_t nunixes;
	struct bw_pin_req *pins; /* planned here, resolved by user/pins.c */
	size_t npins;
};

/*
 * Compile the file, exec and net rules of `p`. Rule ids are 1 + the index in
 * p->rules. Returns 0, or -ENOMEM, -E2BIG, or -EOPNOTSUPP with `err` filled
 * when the profile uses what this build cannot enforce.
 */
int bw_compile(const struct bw_profile *p, struct bw_compiled *out, char *err, size_t errlen);
void bw_compiled_free(struct bw_compiled *c);
/*
 * The values the trie v (n entries) gives an object at path: its own
 * entry's, and with dir, the `below` of its subtree key or the nearest
 * above it.
 */
struct bw_inode_pin bw_pin_values(const struct bw_file_entry *v, size_t n, const char *path,
				  int dir);

/* The entry the kernel's longest-prefix lookup would return for `path`, or NULL. */
const struct bw_file_entry *bw_entries_lookup(const struct bw_file_entry *v, size_t n,
					      const char *path);
/* bw_entries_lookup's answer by binary search, on entries sorted as bw_compile leaves them. */
const struct bw_file_entry *bw_entries_find(const struct bw_file_entry *v, size_t n,
					    const char *path);
const struct bw_file_entry *bw_compiled_lookup(const struct bw_compiled *c, const char *path);

/* The trie key of an entry, stored under policy. */
void bw_file_entry_key(const struct bw_file_entry *e, uint32_t policy, struct bw_path_key *k);

/* A subtree key ("DIR/" and two stars): a unix rule for every socket below DIR. */
bool bw_unix_name_is_subtree(const char *name);

/*
 * The unix rule the kernel would pick for a socket name and op (BW_NOP_*):
 * the exact name, else the nearest subtree rule above it; NULL: the default.
 */
const struct bw_unix_entry *bw_unix_lookup(const struct bw_compiled *c, __u8 op, const char *name);

/* The port range the kernel would pick for a destination, or NULL (net unit tests). */
const struct bw_port_range *bw_net_lookup(const struct bw_compiled *c, int op, int proto,
					  const uint8_t addr[16], uint16_t port);

#endif /* BW_COMPILE_H */
