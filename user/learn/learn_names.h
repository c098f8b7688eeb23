/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Predicates on names that the profile writer's decisions rest on: which
 * names a rule can spell, which look like they belong to one run, which
 * directories are the system's, which hold secrets (names.c, secrets.c).
 * Pure: no file system, no allocation. docs/learn.md says what each one
 * recognises and why.
 */
#ifndef BW_LEARN_NAMES_H
#define BW_LEARN_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/* Component-wise order: '/' sorts before every other byte, so a directory's
 * paths stay together and `/d` comes before everything under `/d/`. */
int bw_learn_path_cmp(const char *a, const char *b);

bool bw_learn_is_control(unsigned char c);

/*
 * Why a path cannot be a rule's operand, NULL when it can (a message in buf
 * when it says a length). `max`: BW_RULE_PATH_MAX for file and exec rules,
 * BW_UNIX_PATH_MAX for sockets.
 */
const char *bw_learn_path_problem(const char *p, size_t max, char *buf, size_t len);
/* The same for a unix socket name: "/path" or "@abstract". */
const char *bw_learn_unix_problem(const char *u, char *buf, size_t len);

/*
 * Is this the dynamic loader (ld-linux-x86-64.so.2, ld-linux-aarch64.so.1,
 * ld64.so.2, ld-musl-x86_64.so.1, ld-2.31.so ...), by its file name? Run
 * directly it runs any program it can read.
 */
bool bw_learn_is_loader(const char *path);

/* A name `profile NAME` accepts. */
bool bw_learn_profile_name_ok(const char *s);

/*
 * Why the path component c[0..n) looks like it names one run (a PID, a time,
 * a temporary or random name), or NULL. `leaf`: the last component (a file),
 * where `NAME-N` is a version more often than a run.
 */
const char *bw_learn_per_run(const char *c, size_t n, bool leaf);

/*
 * The lasting beginning of a per-run file name c[0..n): up to and including
 * its last '.', '-' or '_' after which the rest looks per-run and before
 * which nothing does (PostgreSQL.3292570658: "PostgreSQL.", 11 bytes);
 * 0 when there is none, or it is shorter than 3 bytes or has no letter.
 */
size_t bw_learn_per_run_stem(const char *c, size_t n);

/*
 * The word of a command line (argv, NULL-terminated) that names what it runs,
 * for the learned profile's name: past the programs that only run another
 * (runuser, sudo, env, timeout, nice, setpriv, ...) and their options (up to
 * "--" when they have one, else to the first word that is neither an option
 * nor VAR=value), and for a shell running a script, the script. NULL when
 * nothing is left.
 */
const char *bw_learn_command_name(char *const *argv);

/* "/", a top-level directory, or a first-level child of /usr, /etc, /bin,
 * /sbin, /lib, /lib64, /boot, /var, /opt, /root or /home. */
bool bw_learn_system_dir(const char *dir);
/* Inside /usr, /etc, /bin, /sbin, /lib, /lib64, /boot, /proc, /sys or /dev:
 * the system's own files, kernel knobs, devices. */
bool bw_learn_in_os_tree(const char *path);

/*
 * The pattern of a directory of secrets (".ssh", ".config/gcloud",
 * "private", ...) that a component of `path` ending past byte `from` ends,
 * or NULL. from 0: is the path in one; from strlen(dir): is there one below
 * dir on this path.
 */
const char *bw_learn_secret_dir(const char *path, size_t from);
/* The pattern when the directory dir[0..n) holds directories of secrets among
 * other things (.config, .local, a user's runtime directory), or NULL. */
const char *bw_learn_secret_holder(const char *dir, size_t n);
/* Why the file name c[0..n) looks like a key, a credential or a secret
 * (id_rsa, *.key, .netrc, client_secret.json), or NULL. */
const char *bw_learn_key_like(const char *c, size_t n);

#endif /* BW_LEARN_NAMES_H */
