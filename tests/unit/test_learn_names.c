// SPDX-License-Identifier: GPL-2.0-only
/*
 * The predicates on names the learned-profile writer rests on, on their own
 * (user/learn/learn_names.h): per-run names, system directories, directories
 * of secrets and key-like names, what a rule can spell, the path order.
 */
#include <check.h>
#include <string.h>

#include "bpfwarden.h"
#include "learn_names.h"
#include "suites.h"

static const char *per_run(const char *c, bool leaf)
{
	return bw_learn_per_run(c, strlen(c), leaf);
}

#define expect_per_run(c, leaf, why)                                                               \
	do {                                                                                       \
		const char *w_ = per_run((c), (leaf));                                             \
		ck_assert_msg(w_ && !strcmp(w_, (why)), "%s: got %s, want %s", (c),                \
			      w_ ? w_ : "NULL", (why));                                            \
	} while (0)
#define expect_kept(c, leaf)                                                                       \
	ck_assert_msg(!per_run((c), (leaf)), "%s looks per-run: %s", (c), per_run((c), (leaf)))

START_TEST(per_run_pids_times_counters)
{
	expect_per_run("4242", false, "all digits"); /* /proc/4242, /srv/jobs/4242 */
	expect_per_run("7", true, "all digits");
	expect_per_run("out-4242.txt", true, "a number");
	expect_per_run("out.123.txt", true, "a number");
	expect_per_run("worker4242.log", true, "a number");
	expect_per_run("log-1712345678.txt", true, "a number");	     /* time.time() */
	expect_per_run("log-1712345678123456789", true, "a number"); /* time_ns() */
	expect_per_run("log-20260101T120000Z.txt", true, "a number");
	expect_per_run("2026-01-01_12-00-00.csv", true, "a number");
	expect_per_run("run-17", false, "a numbered run directory");
	expect_per_run("build_42", false, "a numbered run directory");
	/* Versions and library names: not runs. */
	expect_kept("python3.11", true);
	expect_kept("libfoo.so.6", true);
	expect_kept("libicudata.so.72.1", true);
	expect_kept("ld-linux-x86-64.so.2", true);
	expect_kept("x86_64-linux-gnu", false);
	expect_kept("libpcre2-8.so.0", true);
	expect_kept("libsqlite3.so.0", true);
	expect_kept("release-2", true); /* a file: NAME-N is a version */
	expect_kept("gcc-12", true);
	expect_kept("utf-8", true);
	expect_kept("base64.py", true);
	expect_kept("sha256", true);
	expect_kept("ed25519", false); /* a directory keeps the strict forms */
	expect_kept("python311", false);
	expect_kept("id_ed25519", true); /* a key keeps its name */
	expect_kept("ssh_host_ed25519_key.4242", true);
}
END_TEST

START_TEST(per_run_temporary_and_random_names)
{
	expect_per_run("tmpk3j2fqa9", true, "a temporary name");      /* tempfile */
	expect_per_run("tmpabcdefgh", true, "a temporary name");      /* all letters */
	expect_per_run("tmp_a_bcd_e", true, "a temporary name");      /* '_' is in its alphabet */
	expect_per_run("tmpk3j2fqa9.json", true, "a temporary name"); /* with a suffix */
	expect_per_run("tmp.Xk3J9aQ2mZ", true, "a temporary name");   /* mktemp */
	expect_per_run("tmp.aBcDeFgHiJ", true, "a temporary name");   /* capitals */
	expect_per_run("mail.Ab12Cd", true, "a temporary name");      /* mkstemp's XXXXXX */
	expect_per_run("out-AbCdEf", true, "a temporary name");	      /* two capitals */
	expect_per_run("out-k3j2fq9a.txt", true, "a random part");    /* prefix=, suffix= */
	expect_per_run("out-a_3kf9x2.txt", true, "a random part");
	expect_per_run("blob-3fa2b9c1.bin", true, "a hex part"); /* token_hex(4) */
	expect_per_run("3fa2b9c1", false, "a hex part");
	expect_per_run("sha-0123456789abcdef0123", false, "a long hex part");
	expect_per_run("0123456789abcdef0123456789abcdef", true, "a long hex part");
	expect_per_run("123e4567-e89b-12d3-a456-426614174000.json", true, "a UUID");
	/* Words. */
	expect_kept("tmp_config", true);
	expect_kept("tmpfiles", true);
	expect_kept("tmpfiles.d", false);
	expect_kept("README.Debian", true);
	expect_kept("foo.Config", true);
	expect_kept("HelloWorld.java", true);
	expect_kept("tokenizer.json", true);
	expect_kept("deadbeef", true); /* hex, but no digit */
	expect_kept("v1beta1", true);
	expect_kept("__init__.py", true);
	expect_kept("settings.py", true);
	expect_kept("", true);
}
END_TEST

/* The lasting beginning of a per-run name: what the next run's names share. */
START_TEST(per_run_stems)
{
	static const struct {
		const char *name, *stem;
	} t[] = {
	    {"PostgreSQL.3292570658", "PostgreSQL."},
	    {"sem.4242", "sem."},
	    {"pg.sess.123456", "pg.sess."},
	    {"sock.1234.lock", "sock."},
	    {"temp-12345.rdb", "temp-"},
	    {"out-4242.txt", "out-"},
	    {"app_5f3a9c2e11b04d7e", "app_"},
	    /* none: no separator, a stem too short or without a letter, nothing per-run */
	    {"tmpab12cd34", ""},
	    {"a.4242", ""},
	    {"12.4242", ""},
	    {"dump.rdb", ""},
	    {"libfoo.so.6", ""},
	    {"2024.4242", ""},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t n = bw_learn_per_run_stem(t[i].name, strlen(t[i].name));

		ck_assert_msg(n == strlen(t[i].stem) && !memcmp(t[i].name, t[i].stem, n),
			      "%s: stem of %zu bytes, want '%s'", t[i].name, n, t[i].stem);
	}
}
END_TEST

/* The learned profile is named after the program a command line runs, not its wrappers. */
START_TEST(command_names)
{
	static const struct {
		const char *argv[12];
		const char *name;
	} t[] = {
	    {{"/usr/bin/redis-server", "/etc/redis.conf"}, "/usr/bin/redis-server"},
	    {{"setpriv", "--reuid=redis", "--regid=redis", "--init-groups", "redis-server", "x"},
	     "redis-server"},
	    {{"runuser", "-u", "postgres", "--", "/usr/lib/postgresql/15/bin/postgres", "-D", "d"},
	     "/usr/lib/postgresql/15/bin/postgres"},
	    {{"sudo", "env", "A=1", "timeout", "30", "nice", "-n", "5", "nginx", "-g", "x"},
	     "nginx"},
	    {{"env", "LANG=C", "nginx"}, "nginx"},
	    {{"timeout", "30", "/opt/app/bin/app"}, "/opt/app/bin/app"},
	    {{"runuser", "-u", "app", "--", "sh", "/srv/job.sh"}, "/srv/job.sh"},
	    {{"sh", "-c", "exec app"}, "sh"},
	    {{"bash", "run.sh", "--fast"}, "run.sh"},
	    {{"nohup"}, NULL},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *got = bw_learn_command_name((char *const *)t[i].argv);

		ck_assert_msg((!got && !t[i].name) || (got && t[i].name && !strcmp(got, t[i].name)),
			      "case %zu: got %s, want %s", i, got ? got : "NULL",
			      t[i].name ? t[i].name : "NULL");
	}
}
END_TEST

START_TEST(system_directories)
{
	static const char *const sys[] = {
	    "/",	  "/tmp",     "/proc",	  "/srv",	  "/home/alice", "/usr/lib",
	    "/usr/local", "/var/lib", "/etc/ssh", "/root/.cache", "/opt/tool",	 "/boot/grub"};
	static const char *const not_sys[] = {"/tmp/job",	  "/srv/app",
					      "/var/lib/app",	  "/usr/lib/x86_64-linux-gnu",
					      "/home/alice/proj", "/run/app"};

	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++)
		ck_assert_msg(bw_learn_system_dir(sys[i]), "%s", sys[i]);
	for (size_t i = 0; i < sizeof(not_sys) / sizeof(not_sys[0]); i++)
		ck_assert_msg(!bw_learn_system_dir(not_sys[i]), "%s", not_sys[i]);
	ck_assert(bw_learn_in_os_tree("/usr/lib/foo"));
	ck_assert(bw_learn_in_os_tree("/dev/shm"));
	ck_assert(bw_learn_in_os_tree("/proc/sys/net"));
	ck_assert(bw_learn_in_os_tree("/etc"));
	ck_assert(!bw_learn_in_os_tree("/var/lib/app"));
	ck_assert(!bw_learn_in_os_tree("/usrx/lib"));
	ck_assert(!bw_learn_in_os_tree("/srv/usr"));
}
END_TEST

static const char *secret_in(const char *path)
{
	return bw_learn_secret_dir(path, 0);
}

START_TEST(directories_of_secrets)
{
	static const struct {
		const char *path, *pattern;
	} yes[] = {{"/home/alice/.ssh", ".ssh"},
		   {"/root/.ssh/keys", ".ssh"},
		   {"/etc/ssh", "etc/ssh"},
		   {"/var/lib/container/rootfs/etc/ssh", "etc/ssh"},
		   {"/home/alice/.gnupg/private-keys-v1.d", ".gnupg"},
		   {"/etc/ssl/private", "private"},
		   {"/etc/pki/tls/private", "pki"},
		   {"/home/alice/.aws", ".aws"},
		   {"/home/alice/.config/gcloud/configurations", ".config/gcloud"},
		   {"/home/alice/.azure", ".azure"},
		   {"/home/alice/.kube/cache", ".kube"},
		   {"/home/alice/.docker", ".docker"},
		   {"/home/alice/.password-store", ".password-store"},
		   {"/home/alice/.local/share/keyrings", "keyrings"},
		   {"/var/run/secrets/kubernetes.io/serviceaccount", "secrets"},
		   {"/run/credentials/app.service", "credentials"},
		   {"/etc/letsencrypt/live/example.org", "letsencrypt"},
		   {"/home/alice/.mozilla/firefox", ".mozilla"}};
	static const char *const no[] = {"/home/alice/proj",
					 "/home/alice/.config",
					 "/home/alice/.config/gcloudx",
					 "/etc/sshd",
					 "/srv/ssh",
					 "/usr/share/doc/openssh-client",
					 "/srv/app/.sshx",
					 "/srv/secretsauce"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		const char *p = secret_in(yes[i].path);

		ck_assert_msg(p && !strcmp(p, yes[i].pattern), "%s: got %s, want %s", yes[i].path,
			      p ? p : "NULL", yes[i].pattern);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ck_assert_msg(!secret_in(no[i]), "%s: %s", no[i], secret_in(no[i]));
	/* `from`: only what ends past it. Below /home/alice: .ssh; at .ssh itself: .ssh too. */
	ck_assert_str_eq(bw_learn_secret_dir("/home/alice/.ssh/x", strlen("/home/alice")), ".ssh");
	ck_assert_ptr_null(bw_learn_secret_dir("/home/alice/.ssh/x", strlen("/home/alice/.ssh")));
	/* A pattern that straddles `from` still counts: gcloud is below .config. */
	ck_assert_str_eq(bw_learn_secret_dir("/h/.config/gcloud/c", strlen("/h/.config")),
			 ".config/gcloud");
	ck_assert_ptr_null(bw_learn_secret_dir("/", 0));
}
END_TEST

START_TEST(holders_of_secrets)
{
	static const char *const yes[] = {"/home/alice/.config",      "/srv/u/.local",
					  "/home/alice/.local/share", "/run/user",
					  "/run/user/1000",	      "/var/run/user/1000"};
	static const char *const no[] = {"/home/alice/.config/app", "/home/alice",
					 "/run/user/1000/app", "/srv/user", "/srv/config"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		ck_assert_msg(bw_learn_secret_holder(yes[i], strlen(yes[i])), "%s", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ck_assert_msg(!bw_learn_secret_holder(no[i], strlen(no[i])), "%s", no[i]);
	/* A prefix of a longer path. */
	ck_assert(bw_learn_secret_holder("/srv/u/.config/app", strlen("/srv/u/.config")));
}
END_TEST

START_TEST(key_like_names)
{
	static const char *const yes[] = {"id_rsa",
					  "id_rsa.pub",
					  "id_ed25519",
					  "id_ecdsa-cert.pub",
					  "ssh_host_rsa_key",
					  "server.key",
					  "tls.KEY",
					  "cert.pem",
					  "store.p12",
					  "app.jks",
					  "vault.kdbx",
					  "secring.gpg",
					  "deploy_key",
					  "ca-key",
					  ".netrc",
					  ".git-credentials",
					  ".pgpass",
					  "authorized_keys",
					  "client_secret.json",
					  "credentials",
					  "credentials.db",
					  "access_tokens.db",
					  "token",
					  "api_key.txt",
					  "db-password",
					  "private.txt",
					  "secrets.yaml",
					  "htpasswd",
					  ".vault-token",
					  "shadow"};
	static const char *const no[] = {
	    "tokenizer.json", "config.json", "known_hosts", "keyboard.map", "monkey.txt",
	    "secretary.txt",  "file00.txt",  "ca.crt",	    "README",	    "privately.md"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		ck_assert_msg(bw_learn_key_like(yes[i], strlen(yes[i])), "%s", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ck_assert_msg(!bw_learn_key_like(no[i], strlen(no[i])), "%s: %s", no[i],
			      bw_learn_key_like(no[i], strlen(no[i])));
	/* A length, not a NUL: the name is a component of a longer path. */
	ck_assert(!bw_learn_key_like("id_rsa", 2));
}
END_TEST

START_TEST(what_a_rule_can_spell)
{
	char buf[160], p251[252];

	ck_assert_ptr_null(bw_learn_path_problem("/srv/a b", BW_RULE_PATH_MAX, buf, sizeof(buf)));
	ck_assert_str_eq(bw_learn_path_problem("", BW_RULE_PATH_MAX, buf, sizeof(buf)),
			 "no path: a pipe, socket, memfd or other file without a name");
	ck_assert_str_eq(bw_learn_path_problem("rel", BW_RULE_PATH_MAX, buf, sizeof(buf)),
			 "not an absolute path");
	ck_assert_ptr_nonnull(
	    strstr(bw_learn_path_problem("/a\nb", BW_RULE_PATH_MAX, buf, 160), "control byte"));
	ck_assert_str_eq(bw_learn_path_problem("/a/../b", BW_RULE_PATH_MAX, buf, sizeof(buf)),
			 "a '.' or '..' component");
	ck_assert_ptr_nonnull(
	    strstr(bw_learn_path_problem("/a*b", BW_RULE_PATH_MAX, buf, sizeof(buf)), "glob"));
	memset(p251, 'b', 251);
	p251[0] = '/';
	p251[251] = '\0';
	ck_assert_str_eq(bw_learn_path_problem(p251, BW_RULE_PATH_MAX, buf, sizeof(buf)),
			 "path is 251 bytes long, a rule names at most 250: BW_RULE_PATH_MAX");
	ck_assert_ptr_null(bw_learn_unix_problem("@abstract", buf, sizeof(buf)));
	ck_assert_ptr_null(bw_learn_unix_problem("/run/a.sock", buf, sizeof(buf)));
	ck_assert_str_eq(bw_learn_unix_problem("@", buf, sizeof(buf)),
			 "an empty abstract socket name");
	ck_assert_ptr_nonnull(bw_learn_unix_problem("relative", buf, sizeof(buf)));
	ck_assert(bw_learn_profile_name_ok("job-1.2_x"));
	ck_assert(!bw_learn_profile_name_ok("-job"));
	ck_assert(!bw_learn_profile_name_ok("a b"));
	ck_assert(!bw_learn_profile_name_ok(""));
}
END_TEST

START_TEST(loaders_by_name)
{
	static const char *const yes[] = {
	    "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
	    "/lib64/ld-linux-x86-64.so.2",
	    "/lib/ld-linux-aarch64.so.1",
	    "/lib/ld-linux.so.2",
	    "/lib64/ld64.so.2",
	    "/lib/ld-musl-x86_64.so.1",
	    "/lib/x86_64-linux-gnu/ld-2.31.so",
	    "ld.so.1",
	};
	static const char *const no[] = {
	    "/usr/bin/ld",	 "/usr/bin/ld.bfd",	"/usr/bin/ld.gold",
	    "/usr/bin/ldd",	 "/sbin/ldconfig",	"/usr/lib/libld.so.1",
	    "/opt/ld-tools/run", "/usr/bin/ld-wrapper", "/opt/ld-x.so.config",
	};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		ck_assert_msg(bw_learn_is_loader(yes[i]), "%s is a loader", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ck_assert_msg(!bw_learn_is_loader(no[i]), "%s is not a loader", no[i]);
}
END_TEST

START_TEST(path_order_keeps_a_directory_together)
{
	/* '/' before every other byte: /a, /a/z, /a-b, /b. */
	ck_assert_int_lt(bw_learn_path_cmp("/a", "/a/z"), 0);
	ck_assert_int_lt(bw_learn_path_cmp("/a/z", "/a-b"), 0);
	ck_assert_int_lt(bw_learn_path_cmp("/a-b", "/b"), 0);
	ck_assert_int_lt(bw_learn_path_cmp("/a/zzz", "/a0"), 0);
	ck_assert_int_eq(bw_learn_path_cmp("/a/b", "/a/b"), 0);
	ck_assert_int_gt(bw_learn_path_cmp("/a/b", "/a"), 0);
}
END_TEST

Suite *learn_names_suite(void)
{
	Suite *s = suite_create("learn_names");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, per_run_pids_times_counters);
	tcase_add_test(tc, per_run_temporary_and_random_names);
	tcase_add_test(tc, per_run_stems);
	tcase_add_test(tc, command_names);
	tcase_add_test(tc, system_directories);
	tcase_add_test(tc, directories_of_secrets);
	tcase_add_test(tc, holders_of_secrets);
	tcase_add_test(tc, key_like_names);
	tcase_add_test(tc, what_a_rule_can_spell);
	tcase_add_test(tc, path_order_keeps_a_directory_together);
	tcase_add_test(tc, loaders_by_name);
	suite_add_tcase(s, tc);
	return s;
}
