// SPDX-License-Identifier: GPL-2.0-only
/*
 * Names that mark secrets (learn_names.h): directories of keys and
 * credentials, the directories that hold them, and key-like file names. The
 * lists are the specification's (docs/learn.md, "What is never generalised");
 * a name added here is refused a subtree rule everywhere.
 */
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "learn_names.h"

static bool is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/*
 * Directories of secrets: keys, credentials, tokens, saved passwords. A
 * pattern is one or more components ('*' is any one), matched against
 * consecutive components anywhere in a path. Both the home-directory forms
 * and the system ones, since a container's paths are its own.
 */
static const char *const secret_dirs[] = {
    /* keys and the agents that hold them */
    ".ssh", "etc/ssh", ".gnupg", "gnupg", "private-keys-v1.d", ".password-store", ".pki", "pki",
    "private", "keyrings", "keyring", "kwalletd", ".local/share/kwalletd",
    /* credentials handed to services and containers */
    "secrets", "credentials", "credstore", "credstore.encrypted", "letsencrypt", "wireguard",
    "ipsec.d",
    /* cloud, cluster and registry logins */
    ".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".oci", ".terraform.d", ".config/gh",
    ".config/hub", ".config/doctl", ".config/rclone", ".config/op", ".1password", ".vault.d",
    /* browsers and mail clients: saved passwords and cookies */
    ".mozilla", ".thunderbird", ".config/google-chrome", ".config/chromium", NULL};

/* Directories that hold directories of secrets among everything else: no subtree rule on them
 * (one below them is judged on its own). */
static const char *const secret_holders[] = {".config",	 ".local",     ".local/share",
					     "run/user", "run/user/*", NULL};

/* Component `i` of the pattern, counting from its end: *s and *n; false past its start. */
static bool pat_comp(const char *pat, size_t i, const char **s, size_t *n)
{
	const char *end = pat + strlen(pat), *b;

	for (;;) {
		for (b = end; b > pat && b[-1] != '/'; b--)
			;
		if (!i--) {
			*s = b;
			*n = (size_t)(end - b);
			return true;
		}
		if (b == pat)
			return false;
		end = b - 1;
	}
}

/* Does the pattern match the components of path ending at byte `end` (exclusive)? */
static bool match_at(const char *path, size_t end, const char *pat)
{
	const char *ps;
	size_t pn, i;

	for (i = 0; pat_comp(pat, i, &ps, &pn); i++) {
		size_t b = end;

		while (b > 0 && path[b - 1] != '/')
			b--;
		if (!b || (!(pn == 1 && *ps == '*') && (end - b != pn || memcmp(path + b, ps, pn))))
			return false;
		end = b - 1;
	}
	return true;
}

const char *bw_learn_secret_dir(const char *path, size_t from)
{
	size_t n = strlen(path);

	/* Each component that ends at or after `from`: the patterns that end there. */
	for (size_t e = 1; e <= n; e++) {
		if (e < n && path[e] != '/')
			continue;
		if (e <= from)
			continue;
		for (const char *const *p = secret_dirs; *p; p++)
			if (match_at(path, e, *p))
				return *p;
	}
	return NULL;
}

const char *bw_learn_secret_holder(const char *dir, size_t n)
{
	for (const char *const *p = secret_holders; *p; p++)
		if (match_at(dir, n, *p))
			return *p;
	return NULL;
}

/* Does the word appear in c[0..n) with no letter just before it, nor just after it (but a
 * plural s)? Case-insensitive. */
static bool has_word(const char *c, size_t n, const char *word)
{
	size_t wn = strlen(word);

	for (size_t i = 0; i + wn <= n; i++) {
		size_t e = i + wn;

		if (strncasecmp(c + i, word, wn) || (i && is_letter(c[i - 1])))
			continue;
		if (e < n && (c[e] == 's' || c[e] == 'S'))
			e++;
		if (e == n || !is_letter(c[e]))
			return true;
	}
	return false;
}

static bool ends_with(const char *c, size_t n, const char *suffix)
{
	size_t sn = strlen(suffix);

	return n >= sn && !strncasecmp(c + n - sn, suffix, sn);
}

const char *bw_learn_key_like(const char *c, size_t n)
{
	/* ssh identities (and their .pub, -cert.pub) and host keys */
	static const char *const prefixes[] = {"id_rsa",     "id_dsa",	  "id_ecdsa",
					       "id_ed25519", "ssh_host_", NULL};
	/* key stores, private keys, encrypted secrets */
	static const char *const suffixes[] = {
	    ".key", ".pem", ".p12", ".pfx",    ".jks", ".keystore", ".kdbx", ".gpg", ".pgp",
	    ".asc", ".ppk", ".age", ".keytab", "_key", "-key",	    ".priv", NULL};
	/* files that hold a login or a token by convention */
	static const char *const names[] = {
	    "authorized_keys", "identity", ".netrc",	   "_netrc",	 ".git-credentials",
	    ".pgpass",	       ".my.cnf",  ".vault-token", ".npmrc",	 ".pypirc",
	    ".s3cfg",	       ".boto",	   ".dockercfg",   "kubeconfig", "htpasswd",
	    ".htpasswd",       "shadow",   "gshadow",	   "keystore",	 NULL};
	/* words that name a secret, as words (not inside another: tokenizer.json is not one) */
	static const char *const words[] = {"secret", "credential", "password", "passwd",  "token",
					    "apikey", "api_key",    "api-key",	"private", NULL};
	const char *const *p;

	for (p = prefixes; *p; p++)
		if (n >= strlen(*p) && !memcmp(c, *p, strlen(*p)))
			return "a key's name";
	for (p = suffixes; *p; p++)
		if (ends_with(c, n, *p))
			return "a key's name";
	for (p = names; *p; p++)
		if (strlen(*p) == n && !memcmp(c, *p, n))
			return "a credentials file's name";
	for (p = words; *p; p++)
		if (has_word(c, n, *p))
			return "a secret's name";
	return NULL;
}
