// SPDX-License-Identifier: GPL-2.0-only
/*
 * Generalisation, both ways round (docs/learn.md, "Generalisation"): what a
 * workload did with per-run names (read or written, in its job directory) is
 * allowed again for the next run's names; and no subtree rule is ever written
 * on, in or above a system directory or a directory of secrets, so that an
 * unread key is never allowed. The file system is a fake one here: the writer
 * asks it through struct bw_learn_fs.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "learn_helpers.h"
#include "suites.h"

/* ---- a fake file system ---- */

#define DIR_(m) (S_IFDIR | (m))
#define REG(m)	(S_IFREG | (m))

struct fake_entry {
	const char *path;
	unsigned mode;
};

/* A regular file's contents, for bw_learn_fs.read. */
struct fake_text {
	const char *path, *text;
};

struct fake_fs {
	const struct fake_entry *v; /* ends with a NULL path */
	const struct fake_text *texts; /* ends with a NULL path; NULL: none */
	const char *err_dir;	    /* listing it fails with err */
	int err;
	const char *big_dir; /* holds `big` more regular files */
	size_t big;
	unsigned lists; /* calls to list */
};

static int fake_mode(void *ctx, const char *path, unsigned *mode)
{
	struct fake_fs *f = ctx;

	for (const struct fake_entry *e = f->v; e->path; e++) {
		if (!strcmp(e->path, path)) {
			*mode = e->mode;
			return 0;
		}
	}
	return -ENOENT;
}

static int fake_list(void *ctx, const char *dir,
		     int (*each)(void *arg, const char *name, unsigned mode), void *arg)
{
	struct fake_fs *f = ctx;
	size_t n = strlen(dir);
	unsigned mode;
	char name[32];
	int ret;

	f->lists++;
	if (f->err_dir && !strcmp(dir, f->err_dir))
		return f->err;
	if (fake_mode(ctx, dir, &mode))
		return -ENOENT;
	if (!S_ISDIR(mode))
		return -ENOTDIR;
	for (const struct fake_entry *e = f->v; e->path; e++) {
		const char *p = e->path;

		if (!strncmp(p, dir, n) && p[n] == '/' && !strchr(p + n + 1, '/') &&
		    (ret = each(arg, p + n + 1, e->mode)))
			return ret;
	}
	for (size_t i = 0; f->big_dir && !strcmp(dir, f->big_dir) && i < f->big; i++) {
		snprintf(name, sizeof(name), "x%06zu", i);
		if ((ret = each(arg, name, REG(0644))))
			return ret;
	}
	return 0;
}

static long fake_read(void *ctx, const char *path, char *buf, size_t cap)
{
	struct fake_fs *f = ctx;

	for (const struct fake_text *t = f->texts; t && t->path; t++) {
		if (!strcmp(t->path, path)) {
			size_t n = strlen(t->text);

			if (n > cap)
				return -EFBIG;
			memcpy(buf, t->text, n);
			return (long)n;
		}
	}
	return -ENOENT;
}

static struct bw_learn_fs fake(struct fake_fs *f)
{
	return (struct bw_learn_fs){
	    .mode = fake_mode, .list = fake_list, .read = fake_read, .ctx = f};
}

/* A file access the agent saw at the same name as the process (bw_learned.here). */
static void add_here(struct bw_learn_set *s, unsigned acc, const char *path, const char *prog)
{
	struct bw_learned l = {
	    .cat = BW_CAT_FILE, .access = acc, .path = path, .program = prog, .here = true};

	ck_assert_int_eq(bw_learn_add(s, &l), 0);
}

/* The comment line before `rule` holds `want`. */
static void expect_note(const char *text, const char *rule, const char *want)
{
	char *c = line_before(text, rule);

	ck_assert_msg(c && strstr(c, want), "before '%s': want '%s', got '%s' in:\n%s", rule, want,
		      c ? c : "(no such rule)", text);
	free(c);
}

/* Nine files in dir with access acc become `allow file ACC DIR/` `**`. */
static void expect_fanout(const char *dir, unsigned acc)
{
	struct bw_learn_set *s = files_in(dir, 9, acc);
	struct loaded l = gen_load(s, NULL);
	char line[256];

	snprintf(line, sizeof(line), "allow file %s %s/**", acc_name(acc), dir);
	expect_line(l.text, line);
	check_invariants(&l);
	loaded_free(&l);
	bw_learn_free(s);
}

/* Without per-run generalisation (--exact), no subtree rule, and `line` is one of the rules. */
static void expect_exact_when_told(const struct bw_learn_set *s, const char *line)
{
	struct bw_learn_opts o = {.flags = BW_LEARN_NO_VOLATILE};
	struct loaded l = gen_load(s, &o);

	ck_assert(!rule_with(l.text, "/**"));
	expect_line(l.text, line);
	loaded_free(&l);
}

/* ---- tests ---- */

START_TEST(fanout_threshold)
{
	struct bw_learn_set *s = files_in("/srv/data", 7, R);
	struct loaded l = gen_load(s, NULL);

	ck_assert_uint_eq(count_of(l.text, "\nallow file r /srv/data/file"), 7);
	ck_assert_ptr_null(strstr(l.text, "/srv/data/**"));
	ck_assert(!file_ok(&l, "/srv/data/file07.txt", R));
	loaded_free(&l);
	bw_learn_free(s);

	s = files_in("/srv/data", 8, R);
	add_file(s, R, "/srv/other", "x");
	l = gen_load(s, NULL);
	expect_line(l.text, "allow file r /srv/data/**");
	ck_assert_ptr_null(strstr(l.text, "/srv/data/file"));
	ck_assert_ptr_nonnull(strstr(l.text, "# seen 8 times, by /usr/bin/python3.11; generalised "
					     "from 8 learned files: 8 directly in it with access r "
					     "(min_children 8)\nallow file r /srv/data/**\n"));
	for (int i = 0; i < 8; i++) {
		char p[64];

		snprintf(p, sizeof(p), "/srv/data/file%02d.txt", i);
		ck_assert(file_ok(&l, p, R));
	}
	ck_assert(file_ok(&l, "/srv/data/new", R));  /* the point of generalising */
	ck_assert(!file_ok(&l, "/srv/data/new", W)); /* but only the access seen */
	ck_assert(!file_ok(&l, "/srv/datax", R));    /* a prefix is not a directory */
	ck_assert(!file_ok(&l, "/srv/other2", R));
	check_invariants(&l);
	loaded_free(&l);
	bw_learn_free(s);

	/* min_children is configurable. */
	s = files_in("/srv/data", 3, RW);
	{
		struct bw_learn_opts o = {.min_children = 3};

		l = gen_load(s, &o);
		expect_line(l.text, "allow file rw /srv/data/**");
		loaded_free(&l);
		o.min_children = 4;
		l = gen_load(s, &o);
		ck_assert(!rule_with(l.text, "/**"));
		loaded_free(&l);
		o.min_children = 3;
		o.flags = BW_LEARN_NO_FANOUT;
		l = gen_load(s, &o);
		ck_assert(!rule_with(l.text, "/**"));
		loaded_free(&l);
	}
	bw_learn_free(s);
}
END_TEST

START_TEST(fanout_needs_the_same_access_and_direct_children)
{
	struct bw_learn_set *s = files_in("/srv/data", 4, R);
	struct loaded l;
	char p[64];

	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "/srv/data/rw%d", i);
		add_file(s, RW, p, "x");
		/* Files in subdirectories are not children of /srv/data. */
		snprintf(p, sizeof(p), "/srv/data/sub%d/f", i);
		add_file(s, R, p, "x");
	}
	l = gen_load(s, NULL);
	ck_assert(!rule_with(l.text, "/**"));
	ck_assert_uint_eq(count_of(l.text, "\nallow file "), 12);
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

START_TEST(never_the_root)
{
	struct bw_learn_set *s = bw_learn_new();
	struct bw_learn_opts o = {.min_children = 1};
	struct loaded l;

	add_file(s, R, "/a", "x");
	add_file(s, RW, "/b", "x");
	add_file(s, R, "/", "x");
	add_file(s, R, "/12345", "x"); /* per-run, but its parent is / */
	add_file(s, R, "/tmpab12cd34", "x");
	l = gen_load(s, &o);
	ck_assert(!rule_with(l.text, " /**"));
	ck_assert(!rule_with(l.text, "\"/**"));
	expect_line(l.text, "allow file r /");
	expect_line(l.text, "allow file r /12345");
	ck_assert(file_ok(&l, "/", R));
	ck_assert(!file_ok(&l, "/c", R));
	check_invariants(&l);
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

START_TEST(no_subtree_on_system_directories)
{
	static const char *const sys[] = {"/etc",	 "/usr/lib", "/usr/local",   "/var/lib",
					  "/home/alice", "/tmp",     "/root/.cache", "/opt/tool",
					  "/proc",	 "/dev",     "/lib64/x",     "/boot/grub"};

	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++) {
		for (unsigned acc = R; acc <= RW; acc++) {
			struct bw_learn_set *s = files_in(sys[i], 12, acc);
			struct bw_learn_opts o = {.min_children = 2};
			struct loaded l = gen_load(s, &o);

			ck_assert_msg(!rule_with(l.text, "/**"), "%s %s:\n%s", sys[i],
				      acc_name(acc), l.text);
			ck_assert_uint_eq(count_of(l.text, "\nallow file "), 12);
			loaded_free(&l);
			bw_learn_free(s);
		}
	}
}
END_TEST

START_TEST(w_subtrees_stay_out_of_the_system_tree)
{
	static const char *const deep[] = {"/usr/lib/foo", "/etc/app/conf.d", "/proc/sys/net",
					   "/sys/fs/cgroup", "/dev/shm/x"};
	struct bw_learn_set *s;
	struct loaded l;

	for (size_t i = 0; i < sizeof(deep) / sizeof(deep[0]); i++) {
		s = files_in(deep[i], 9, RW);
		l = gen_load(s, NULL);
		ck_assert_msg(!rule_with(l.text, "/**"), "%s:\n%s", deep[i], l.text);
		loaded_free(&l);
		bw_learn_free(s);
		/* Reading there may be generalised: it is below the system directories. */
		s = files_in(deep[i], 9, R);
		l = gen_load(s, NULL);
		ck_assert_msg(rule_with(l.text, "/**"), "%s:\n%s", deep[i], l.text);
		check_invariants(&l);
		loaded_free(&l);
		bw_learn_free(s);
	}
	/* Where a workload's own data lives, w subtrees are fine. */
	expect_fanout("/var/lib/app", RW);
	/* Written only: read too, the workload reads back what it wrote there. */
	expect_fanout("/home/alice/proj", W | R);
	expect_fanout("/tmp/job", RW);
}
END_TEST

START_TEST(per_run_reads)
{
	struct bw_learn_set *s = bw_learn_new();
	struct loaded l;
	char *c;

	add_file(s, R, "/srv/jobs/4242/out.txt", "x");	 /* digits */
	add_file(s, R, "/srv/cache/tmpab12cd34/x", "x"); /* tempfile */
	add_file(s, R, "/srv/blobs/sha-0123456789abcdef0123/data", "x");
	add_file(s, R, "/srv/u/123e4567-e89b-12d3-a456-426614174000.json", "x");
	add_file(s, R, "/srv/ci/run-171/log", "x");
	add_file(s, R, "/srv/spool/mail.Ab12Cd", "x"); /* mkstemp */
	add_file(s, R, "/srv/keep/tmp_config", "x");   /* not per-run */
	add_file(s, R, "/srv/keep/python3.11", "x");
	add_file(s, R, "/srv/keep/tmpfiles", "x");
	add_file(s, R, "/srv/keep/libfoo.so.6", "x");
	add_file(s, R, "/srv/conf/release-2/x", "x");	/* a numbered directory... */
	add_file(s, R, "/srv/conf2/release-2", "x");	/* ...but not a numbered file */
	add_file(s, RW, "/srv/w/9999/x", "x");		/* written too: generalised rw */
	add_file(s, R, "/proc/1234/status", "x");	/* /proc is a system directory */
	add_file(s, R, "/tmp/tmpk3j2fqa9/mod.py", "x"); /* so is /tmp */
	l = gen_load(s, NULL);
	expect_line(l.text, "allow file r /srv/jobs/**");
	expect_line(l.text, "allow file r /srv/cache/**");
	expect_line(l.text, "allow file r /srv/blobs/**");
	expect_line(l.text, "allow file r /srv/u/**");
	expect_line(l.text, "allow file r /srv/ci/**");
	expect_line(l.text, "allow file r /srv/spool/**");
	expect_line(l.text, "allow file r /srv/conf/**");
	expect_line(l.text, "allow file r /srv/conf2/release-2");
	expect_line(l.text, "allow file rw /srv/w/**");
	expect_line(l.text, "allow file r /proc/1234/status");
	expect_line(l.text, "allow file r /tmp/tmpk3j2fqa9/mod.py");
	expect_line(l.text, "allow file r /srv/keep/tmp_config");
	expect_line(l.text, "allow file r /srv/keep/python3.11");
	expect_line(l.text, "allow file r /srv/keep/tmpfiles");
	expect_line(l.text, "allow file r /srv/keep/libfoo.so.6");
	ck_assert_ptr_null(strstr(l.text, "/srv/keep/**"));
	c = line_before(l.text, "allow file r /proc/1234/status");
	ck_assert_str_eq(c, "# seen 1 time, by x; kept exact although '1234' looks per-run (all "
			    "digits): /proc is a system directory");
	free(c);
	c = line_before(l.text, "allow file r /srv/jobs/**");
	ck_assert_str_eq(c, "# seen 1 time, by x; generalised from 1 learned file: per-run names "
			    "like '4242' (all digits)");
	free(c);
	/* The next run's names are allowed, with the access this run's had. */
	ck_assert(file_ok(&l, "/srv/jobs/4243/out.txt", R));
	ck_assert(!file_ok(&l, "/srv/jobs/4243/out.txt", W));
	ck_assert(file_ok(&l, "/srv/cache/tmpzz99yy88/x", R));
	ck_assert(file_ok(&l, "/srv/w/9998/x", RW));
	ck_assert(!file_ok(&l, "/proc/1235/status", R));
	ck_assert(!file_ok(&l, "/srv/conf2/other", R));
	check_invariants(&l);
	loaded_free(&l);

	expect_exact_when_told(s, "allow file r /srv/jobs/4242/out.txt");
	bw_learn_free(s);
}
END_TEST

START_TEST(redundant_subtrees_are_dropped)
{
	struct bw_learn_set *s = bw_learn_new();
	struct loaded l;
	char p[64];

	/* A subtree on /srv/a from a per-run name; /srv/a/b has 8 files: covered already. */
	add_file(s, R, "/srv/a/777/x", "x");
	for (int i = 0; i < 8; i++) {
		snprintf(p, sizeof(p), "/srv/a/b/f%d", i);
		add_file(s, R, p, "y");
	}
	l = gen_load(s, NULL);
	expect_line(l.text, "allow file r /srv/a/**");
	ck_assert_ptr_null(strstr(l.text, "/srv/a/b"));
	ck_assert_ptr_nonnull(strstr(l.text, "# seen 9 times, by x, y; generalised from 9"));
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

START_TEST(per_run_writes_in_the_job_directory)
{
	struct bw_learn_set *s = bw_learn_new();
	struct loaded l;

	add_file(s, RW, "/srv/job/out-4242.txt", "py");		  /* a PID, read back */
	add_file(s, W, "/srv/job/log-20260101T120000.txt", "py"); /* a time */
	add_file(s, RW, "/srv/job/tmpk3j2fqa9", "py");		  /* tempfile.mkstemp() */
	add_file(s, W, "/srv/job/part-3fa2b9c1.csv", "py");	  /* a hex suffix */
	add_file(s, W, "/srv/job/result.json", "py");		  /* a fixed name */
	add_file(s, R, "/srv/job/in.json", "py");
	add_file(s, R, "/srv/other/data.txt", "py");
	l = gen_load(s, NULL);
	expect_line(l.text, "allow file rw /srv/job/**");
	expect_note(
	    l.text, "allow file rw /srv/job/**",
	    "generalised from 6 learned files: per-run names like 'log-20260101T120000.txt'");
	ck_assert_uint_eq(count_of(l.text, "\nallow file "), 2);
	expect_line(l.text, "allow file r /srv/other/data.txt");
	/* The next run's names. */
	ck_assert(file_ok(&l, "/srv/job/out-4343.txt", RW));
	ck_assert(file_ok(&l, "/srv/job/log-20260102T090000.txt", W));
	ck_assert(file_ok(&l, "/srv/job/tmpzz99yy88", RW));
	ck_assert(file_ok(&l, "/srv/job/part-00aa11bb.csv", W));
	/* Nothing outside the job directory. */
	ck_assert(!file_ok(&l, "/srv/other/data.txt", W));
	ck_assert(!file_ok(&l, "/srv/other/out-4343.txt", W));
	ck_assert(!file_ok(&l, "/srv/jobx/out-4343.txt", W));
	ck_assert(!file_ok(&l, "/srv/out-4343.txt", W));
	check_invariants(&l);
	loaded_free(&l);
	expect_exact_when_told(s, "allow file rw /srv/job/out-4242.txt");
	bw_learn_free(s);
}
END_TEST

/*
 * A service's shared-memory segments, named anew at every start
 * (PostgreSQL's /dev/shm/PostgreSQL.NNN), learned over two starts: one name
 * prefix with the access of both, so that the next start's segment is allowed
 * and no other service's is.
 */
START_TEST(per_run_segments_become_one_name_prefix)
{
	struct bw_learn_set *s = bw_learn_new();
	struct loaded l;

	add_file(s, RW, "/dev/shm/PostgreSQL.3292570658", "postgres");
	add_file(s, R, "/dev/shm/PostgreSQL.1804289383", "postgres");
	add_file(s, W, "/dev/shm/PostgreSQL.846930886", "postgres");
	l = gen_load(s, NULL);
	expect_line(l.text, "allow file rw /dev/shm/PostgreSQL.*");
	ck_assert_ptr_null(strstr(l.text, "PostgreSQL.3292570658\n"));
	ck_assert_ptr_null(strstr(strstr(l.text, "PostgreSQL.*") + 1, "allow file"
								      " rw /dev/shm/PostgreSQL.*"));
	ck_assert(file_ok(&l, "/dev/shm/PostgreSQL.1714636915", RW));
	ck_assert_msg(!file_ok(&l, "/dev/shm/redis.1714636915", W), "%s", l.text);
	ck_assert_msg(!file_ok(&l, "/dev/shm/PostgreSQL.1/x", W), "%s", l.text);
	check_invariants(&l);
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

/*
 * Where a per-run write may not become a subtree rule: the file stays exact,
 * and says why, unless its name has a lasting beginning outside the system's
 * own tree (or in /dev/shm) and outside secrets: then the names beginning so.
 */
START_TEST(per_run_writes_never_in_system_or_secret_directories)
{
	static const struct {
		const char *path, *note;
	} exact[] = {
	    {"/etc/app/run/app-4242.pid", "/etc/app/run is in the system's own tree"},
	    {"/usr/local/share/app/cache-4242", "is in the system's own tree"},
	    {"/home/alice/.ssh/known_hosts.4242",
	     "/home/alice/.ssh is a directory of secrets ('.ssh')"},
	    {"/srv/app/.aws/cli-4242.json", "/srv/app/.aws is a directory of secrets ('.aws')"},
	    {"/srv/app/.kube/cache/x-4242",
	     "/srv/app/.kube/cache is inside a directory of secrets ('.kube')"},
	    {"/home/alice/.config/out-4242",
	     "/home/alice/.config is '.config', which holds directories of secrets"},
	    {"/run/user/1000/app.sock",
	     "/run/user is 'run/user', which holds directories of secrets"},
	};
	struct bw_learn_set *s = bw_learn_new();
	char rule[128];
	struct loaded l;

	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		add_file(s, W, exact[i].path, "x");
	/* Where the name has a lasting beginning: the names beginning so, in that directory. */
	static const struct {
		const char *path, *rule, *note;
	} prefix[] = {
	    {"/tmp/out-4242.txt", "allow file w /tmp/out-*", "/tmp is a system directory"},
	    {"/home/alice/out-4242.txt", "allow file w /home/alice/out-*",
	     "/home/alice is a system directory"},
	    {"/dev/shm/sem.4242", "allow file w /dev/shm/sem.*",
	     "/dev/shm is in the system's own tree"},
	};
	for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		add_file(s, W, prefix[i].path, "x");
	add_file(s, W, "/var/lib/app/state-4242.json", "x"); /* a service's own data */
	add_file(s, W, "/home/alice/.config/app/cache-4242", "x");
	l = gen_load(s, NULL);
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++) {
		snprintf(rule, sizeof(rule), "allow file w %s", exact[i].path);
		expect_line(l.text, rule);
		expect_note(l.text, rule, "looks per-run");
		expect_note(l.text, rule, exact[i].note);
	}
	for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++) {
		expect_line(l.text, prefix[i].rule);
		expect_note(l.text, prefix[i].rule, "per-run names like");
		expect_note(l.text, prefix[i].rule, prefix[i].note);
		ck_assert(file_ok(&l, prefix[i].path, W));
	}
	ck_assert(file_ok(&l, "/dev/shm/sem.4243", W));
	ck_assert(!file_ok(&l, "/dev/shm/sem.4243/x", W));
	ck_assert(!file_ok(&l, "/dev/shm/other.4243", W));
	ck_assert(!file_ok(&l, "/tmp/x-4243.txt", W));
	expect_line(l.text, "allow file rw /var/lib/app/**");
	expect_note(l.text, "allow file rw /var/lib/app/**", "read too: written only");
	expect_line(l.text, "allow file rw /home/alice/.config/app/**");
	ck_assert(!file_ok(&l, "/home/alice/.ssh/authorized_keys", W));
	ck_assert(!file_ok(&l, "/home/alice/.config/gcloud/credentials.db", W));
	check_invariants(&l);
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

/* Directories of keys and credentials, as a workload would read them: never a subtree rule. */
START_TEST(directories_of_secrets_are_never_generalised)
{
	static const char *const dirs[] = {"/home/alice/.ssh",
					   "/srv/app/.ssh",
					   "/home/alice/.gnupg/private-keys-v1.d",
					   "/home/alice/.gnupg",
					   "/etc/ssl/private",
					   "/etc/pki/tls/private",
					   "/home/alice/.aws",
					   "/home/alice/.config/gcloud",
					   "/home/alice/.config/gcloud/legacy_credentials",
					   "/home/alice/.azure",
					   "/home/alice/.kube",
					   "/home/alice/.docker",
					   "/home/alice/.password-store/web",
					   "/home/alice/.local/share/keyrings",
					   "/etc/kubernetes/pki",
					   "/var/lib/kubelet/pki",
					   "/var/run/secrets/kubernetes.io/serviceaccount",
					   "/run/secrets/db",
					   "/run/credentials/app.service",
					   "/etc/letsencrypt/live/example.org",
					   "/srv/app/secrets"};
	char p[256];

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		for (unsigned acc = R; acc <= RW; acc++) {
			struct bw_learn_set *s = files_in(dirs[i], 12, acc);
			struct bw_learn_opts o = {.min_children = 2};
			struct loaded l = gen_load(s, &o);

			ck_assert_msg(!rule_with(l.text, "/**"), "%s %s:\n%s", dirs[i],
				      acc_name(acc), l.text);
			ck_assert_uint_eq(count_of(l.text, "\nallow file "), 12);
			snprintf(p, sizeof(p), "allow file %s %s/file00.txt", acc_name(acc),
				 dirs[i]);
			expect_note(l.text, p, "directory of secrets");
			snprintf(p, sizeof(p), "%s/file11.txt", dirs[i]);
			ck_assert(file_ok(&l, p, acc)); /* what was read still is */
			snprintf(p, sizeof(p), "%s/id_ed25519", dirs[i]);
			ck_assert(!file_ok(&l, p, R)); /* an unread key is not */
			check_invariants(&l);
			loaded_free(&l);
			bw_learn_free(s);
		}
	}
}
END_TEST

START_TEST(secrets_recognised_by_what_was_learned)
{
	struct bw_learn_set *s = files_in("/srv/certs", 7, R);
	struct loaded l;

	/* One key-like name among the files makes the directory one of secrets. */
	add_file(s, R, "/srv/certs/server.key", "x");
	l = gen_load(s, NULL);
	ck_assert(!rule_with(l.text, "/**"));
	expect_note(l.text, "allow file r /srv/certs/file00.txt",
		    "/srv/certs is a directory of secrets: 'server.key' was learned in it");
	loaded_free(&l);
	bw_learn_free(s);

	/* A directory of secrets learned below makes a subtree above it one too. */
	s = files_in("/srv/users/alice", 8, R);
	add_file(s, R, "/srv/users/alice/.ssh/config", "x");
	l = gen_load(s, NULL);
	ck_assert(!rule_with(l.text, "/**"));
	expect_note(l.text, "allow file r /srv/users/alice/file00.txt",
		    "above a directory of secrets ('.ssh'; learned: .ssh/config)");
	ck_assert(!file_ok(&l, "/srv/users/alice/.ssh/id_rsa", R));
	loaded_free(&l);
	bw_learn_free(s);

	/* So does a holder of them, and a per-run read below a secrets holder stays exact. */
	s = files_in("/srv/users/bob", 8, R);
	add_file(s, R, "/srv/users/bob/.config/app/settings.ini", "x");
	add_file(s, R, "/srv/users/bob/.config/4242/x", "x");
	l = gen_load(s, NULL);
	ck_assert(!rule_with(l.text, "/**"));
	expect_note(l.text, "allow file r /srv/users/bob/file00.txt",
		    "above '.config', which holds directories of secrets");
	expect_note(l.text, "allow file r /srv/users/bob/.config/4242/x",
		    "/srv/users/bob/.config is '.config', which holds directories of secrets");
	loaded_free(&l);
	bw_learn_free(s);

	/* .config itself: no; a program's own directory in it: yes. */
	s = files_in("/home/alice/.config", 8, R);
	l = gen_load(s, NULL);
	ck_assert(!rule_with(l.text, "/**"));
	loaded_free(&l);
	bw_learn_free(s);
	s = files_in("/home/alice/.config/app", 8, R);
	l = gen_load(s, NULL);
	expect_line(l.text, "allow file r /home/alice/.config/app/**");
	check_invariants(&l);
	loaded_free(&l);
	bw_learn_free(s);

	/* Words inside other words are not secrets: a model's tokenizer is data. */
	s = files_in("/srv/model", 6, R);
	add_file(s, R, "/srv/model/tokenizer.json", "x");
	add_file(s, R, "/srv/model/tokenizer_config.json", "x");
	l = gen_load(s, NULL);
	expect_line(l.text, "allow file r /srv/model/**");
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

/* Eight of ten files read in each directory; what is on disk decides the rest. */
static struct loaded fs_case(const char *dir, const struct fake_entry *disk, struct fake_fs *f)
{
	struct bw_learn_set *s = files_in(dir, 8, R);
	struct bw_learn_fs fs = fake(f);
	struct bw_learn_opts o = {.fs = &fs};
	struct loaded l;

	f->v = disk;
	l = gen_load(s, &o);
	check_invariants(&l);
	bw_learn_free(s);
	return l;
}

START_TEST(secrets_recognised_on_disk)
{
	static const struct fake_entry shared[] = {
	    {"/srv", DIR_(0755)},
	    {"/srv/shared", DIR_(0755)},
	    {"/srv/shared/file00.txt", REG(0644)},
	    {"/srv/shared/file01.txt", REG(0644)},
	    {"/srv/shared/n09.dat", REG(0600)}, /* unread, and hidden from others on purpose */
	    {NULL, 0}};
	static const struct fake_entry vault[] = {{"/srv", DIR_(0755)},
						  {"/srv/vault", DIR_(0700)},
						  {"/srv/vault/file00.txt", REG(0600)},
						  {NULL, 0}};
	static const struct fake_entry deep[] = {{"/srv", DIR_(0755)},
						 {"/srv/data", DIR_(0755)},
						 {"/srv/data/sub", DIR_(0755)},
						 {"/srv/data/sub/.ssh", DIR_(0700)},
						 {NULL, 0}};
	static const struct fake_entry key[] = {{"/srv", DIR_(0755)},
						{"/srv/certs", DIR_(0755)},
						{"/srv/certs/tls", DIR_(0755)},
						{"/srv/certs/tls/server.key", REG(0644)},
						{NULL, 0}};
	struct fake_fs f = {0};
	struct loaded l;

	l = fs_case("/srv/shared", shared, &f);
	ck_assert(!rule_with(l.text, "/**"));
	expect_note(l.text, "allow file r /srv/shared/file00.txt",
		    "/srv/shared is a directory of secrets: it holds 'n09.dat', which others may "
		    "not read (mode 0600) in a directory they may list");
	ck_assert(!file_ok(&l, "/srv/shared/n09.dat", R));
	loaded_free(&l);
	{
		/* Without looking, the names alone allow it: the file system only refuses. */
		struct bw_learn_set *s = files_in("/srv/shared", 8, R);

		l = gen_load(s, NULL);
		expect_line(l.text, "allow file r /srv/shared/**");
		loaded_free(&l);
		bw_learn_free(s);
	}
	l = fs_case("/srv/vault", vault, &f);
	ck_assert(!rule_with(l.text, "/**"));
	expect_note(l.text, "allow file r /srv/vault/file00.txt",
		    "/srv/vault is a directory of secrets: private (mode 0700) in a directory "
		    "others may list");
	loaded_free(&l);
	l = fs_case("/srv/data", deep, &f);
	ck_assert(!rule_with(l.text, "/**"));
	expect_note(l.text, "allow file r /srv/data/file00.txt",
		    "above a directory of secrets ('.ssh': sub/.ssh)");
	loaded_free(&l);
	l = fs_case("/srv/certs", key, &f);
	ck_assert(!rule_with(l.text, "/**"));
	expect_note(l.text, "allow file r /srv/certs/file00.txt",
		    "it holds 'tls/server.key', a key's name");
	loaded_free(&l);
}
END_TEST

START_TEST(on_disk_the_workloads_own_files_are_not_secrets)
{
	static const struct fake_entry job[] = {
	    {"/srv", DIR_(0755)},
	    {"/srv/job", DIR_(0755)},
	    {"/srv/job/out-4242.txt", REG(0600)}, /* mkstemp's mode, written by the workload */
	    {"/srv/job/result.json", REG(0600)},  /* renamed from a mkstemp file */
	    {"/srv/job/tmpab12cd34", REG(0600)},  /* an earlier run's, never learned */
	    {"/srv/job/tmpdir.Xy12Ab", DIR_(0700)},
	    {"/srv/job/in.json", REG(0644)},
	    {NULL, 0}};
	/* umask 077: everything private, nothing more private than its directory. */
	static const struct fake_entry tight[] = {{"/srv", DIR_(0755)},
						  {"/srv/home", DIR_(0700)},
						  {"/srv/home/proj", DIR_(0700)},
						  {"/srv/home/proj/file00.txt", REG(0600)},
						  {"/srv/home/proj/notes.txt", REG(0600)},
						  {NULL, 0}};
	/* A symlink is not followed: the kernel checks where it leads. */
	static const struct fake_entry link[] = {{"/srv", DIR_(0755)},
						 {"/srv/data", DIR_(0755)},
						 {"/srv/data/keys", S_IFLNK | 0777},
						 {"/srv/data/keys/.ssh", DIR_(0700)},
						 {NULL, 0}};
	struct bw_learn_set *s = bw_learn_new();
	struct fake_fs f = {.v = job};
	struct bw_learn_fs fs = fake(&f);
	struct bw_learn_opts o = {.fs = &fs};
	struct loaded l;

	add_file(s, RW, "/srv/job/out-4242.txt", "x");
	add_file(s, W, "/srv/job/result.json", "x");
	add_file(s, R, "/srv/job/in.json", "x");
	l = gen_load(s, &o);
	expect_line(l.text, "allow file rw /srv/job/**");
	ck_assert_uint_ge(f.lists, 2); /* it did look, below too */
	loaded_free(&l);
	bw_learn_free(s);

	l = fs_case("/srv/home/proj", tight, &f);
	expect_line(l.text, "allow file r /srv/home/proj/**");
	loaded_free(&l);
	l = fs_case("/srv/data", link, &f);
	expect_line(l.text, "allow file r /srv/data/**");
	loaded_free(&l);
	/* Not there (another mount namespace, removed since): its names decide. */
	l = fs_case("/srv/gone", link, &f);
	expect_line(l.text, "allow file r /srv/gone/**");
	loaded_free(&l);
}
END_TEST

START_TEST(on_disk_what_cannot_be_checked_is_refused)
{
	static const struct fake_entry disk[] = {{"/srv", DIR_(0755)},
						 {"/srv/big", DIR_(0755)},
						 {"/srv/data", DIR_(0755)},
						 {"/srv/data/sub", DIR_(0755)},
						 {"/srv/evil", DIR_(0755)},
						 {"/srv/evil/a\nallow net raw #.key", REG(0644)},
						 {NULL, 0}};
	struct fake_fs f = {.big_dir = "/srv/big", .big = BW_LEARN_WALK_MAX + 1};
	struct loaded l;

	l = fs_case("/srv/big", disk, &f);
	ck_assert(!rule_with(l.text, "/**"));
	expect_note(l.text, "allow file r /srv/big/file00.txt",
		    "too large to check for secrets (over 10000 entries)");
	loaded_free(&l);
	f.big = BW_LEARN_WALK_MAX; /* just enough */
	l = fs_case("/srv/big", disk, &f);
	expect_line(l.text, "allow file r /srv/big/**");
	loaded_free(&l);

	f.err_dir = "/srv/data/sub";
	f.err = -EIO;
	l = fs_case("/srv/data", disk, &f);
	ck_assert(!rule_with(l.text, "/**"));
	expect_note(l.text, "allow file r /srv/data/file00.txt",
		    "not checked for secrets ('sub': Input/output error)");
	loaded_free(&l);

	/* What the file system names reaches a comment only, escaped. */
	l = fs_case("/srv/evil", disk, &f);
	ck_assert(!rule_with(l.text, "/**"));
	ck_assert(!rule_with(l.text, "net raw"));
	ck_assert_int_ne(l.c.policy.net_raw, BW_V_ALLOW);
	expect_note(l.text, "allow file r /srv/evil/file00.txt",
		    "it holds 'a\\x0aallow net raw #.key', a key's name");
	loaded_free(&l);
}
END_TEST

/*
 * A web server's document root, named by the configuration it read: what it
 * served while learning was a sample, the next request asks for another file.
 */
#define NGINX "/usr/sbin/nginx"

static const struct fake_entry site[] = {{"/srv", DIR_(0755)},
					  {"/srv/conf", DIR_(0755)},
					  {"/srv/conf/nginx.conf", REG(0644)},
					  {"/srv/www", DIR_(0755)},
					  {"/srv/www/index.html", REG(0644)},
					  {"/srv/www/a", DIR_(0755)},
					  {"/srv/www/a/b.html", REG(0644)},
					  {"/srv/www/unread.html", REG(0644)},
					  {"/srv/old", DIR_(0755)},
					  {"/srv/old/x.html", REG(0644)},
					  {"/srv/keys", DIR_(0755)},
					  {"/srv/keys/a.txt", REG(0644)},
					  {"/srv/keys/server.key", REG(0644)},
					  {"/srv/logs", DIR_(0755)},
					  {"/srv/logs/access.log", REG(0644)},
					  {"/srv/www.log", REG(0644)},
					  {NULL, 0}};

static const struct fake_text site_conf[] = {
    {"/srv/conf/nginx.conf", "# root /srv/old;\n"
			     "server {\n"
			     "\tlisten 127.0.0.1:8080; root \"/srv/www/\"; # was /srv/old\n"
			     "\taccess_log /srv/logs/access.log;\n"
			     "\tlocation /img/ { }\n"
			     "\tssl_certificate_key /srv/keys/server.key; include /srv/keys;\n"
			     "\terror_log /srv/www.log; proxy_pass http://x/srv/old;\n"
			     "}\n"},
    {"/etc/nginx.conf", "root /srv/www;\n"},
    {NULL, NULL}};

/* The learned set of one run of the site: conf_here says how the conf was seen. */
static struct bw_learn_set *site_run(const char *conf, bool conf_here, const char *reader)
{
	struct bw_learn_set *s = bw_learn_new();

	if (conf_here)
		add_here(s, R, conf, NGINX);
	else
		add_file(s, R, conf, NGINX);
	add_here(s, R, "/srv/www/index.html", reader);
	add_here(s, R, "/srv/www/a/b.html", reader);
	add_here(s, R, "/srv/old/x.html", NGINX);
	add_here(s, R, "/srv/keys/a.txt", NGINX);
	add_here(s, W, "/srv/logs/access.log", NGINX);
	return s;
}

static struct loaded site_load(struct bw_learn_set *s, unsigned flags)
{
	struct fake_fs f = {.v = site, .texts = site_conf};
	struct bw_learn_fs fs = fake(&f);
	struct bw_learn_opts o = {.fs = &fs, .flags = flags};
	struct loaded l = gen_load(s, &o);

	check_invariants(&l);
	bw_learn_free(s);
	return l;
}

START_TEST(content_roots_named_by_the_configuration)
{
	struct loaded l = site_load(site_run("/srv/conf/nginx.conf", true, NGINX), 0);

	expect_line(l.text, "allow file r /srv/www/**");
	expect_note(l.text, "allow file r /srv/www/**",
		    "generalised from 2 learned files: a content root, named in "
		    "/srv/conf/nginx.conf:3, a configuration file the same program read");
	ck_assert(file_ok(&l, "/srv/www/unread.html", R));
	ck_assert(file_ok(&l, "/srv/www/new/page.html", R));
	ck_assert(!file_ok(&l, "/srv/www/index.html", W));
	/* Named in a comment, behind a URL, as a file, as nothing on disk, or over a key. */
	ck_assert(!rule_with(l.text, "/srv/old/**"));
	ck_assert(!file_ok(&l, "/srv/old/y.html", R));
	ck_assert(!rule_with(l.text, "/srv/logs/**"));
	ck_assert(!rule_with(l.text, "/img"));
	ck_assert(!rule_with(l.text, "/srv/keys/**"));
	ck_assert(!file_ok(&l, "/srv/keys/server.key", R));
	expect_line(l.text, "allow file w /srv/logs/access.log");
	loaded_free(&l);
}
END_TEST

START_TEST(content_roots_need_the_same_file_and_program)
{
	struct loaded l;

	/* The configuration seen at another name (a container's): not read here. */
	l = site_load(site_run("/srv/conf/nginx.conf", false, NGINX), 0);
	ck_assert(!rule_with(l.text, "/**"));
	loaded_free(&l);
	/* The files below read by another program than the one that read it. */
	l = site_load(site_run("/srv/conf/nginx.conf", true, "/usr/bin/cat"), 0);
	ck_assert(!rule_with(l.text, "/srv/www/**"));
	loaded_free(&l);
	/* The host's own settings, directly in /etc. */
	l = site_load(site_run("/etc/nginx.conf", true, NGINX), 0);
	ck_assert(!rule_with(l.text, "/**"));
	loaded_free(&l);
	/* --exact. */
	l = site_load(site_run("/srv/conf/nginx.conf", true, NGINX),
		      BW_LEARN_NO_FANOUT | BW_LEARN_NO_VOLATILE);
	ck_assert(!rule_with(l.text, "/**"));
	expect_line(l.text, "allow file r /srv/www/index.html");
	loaded_free(&l);
}
END_TEST

Suite *learn_generalise_suite(void)
{
	Suite *s = suite_create("learn_generalise");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, fanout_threshold);
	tcase_add_test(tc, fanout_needs_the_same_access_and_direct_children);
	tcase_add_test(tc, never_the_root);
	tcase_add_test(tc, no_subtree_on_system_directories);
	tcase_add_test(tc, w_subtrees_stay_out_of_the_system_tree);
	tcase_add_test(tc, per_run_reads);
	tcase_add_test(tc, redundant_subtrees_are_dropped);
	tcase_add_test(tc, per_run_writes_in_the_job_directory);
	tcase_add_test(tc, per_run_writes_never_in_system_or_secret_directories);
	tcase_add_test(tc, per_run_segments_become_one_name_prefix);
	tcase_add_test(tc, directories_of_secrets_are_never_generalised);
	tcase_add_test(tc, secrets_recognised_by_what_was_learned);
	tcase_add_test(tc, secrets_recognised_on_disk);
	tcase_add_test(tc, on_disk_the_workloads_own_files_are_not_secrets);
	tcase_add_test(tc, on_disk_what_cannot_be_checked_is_refused);
	tcase_add_test(tc, content_roots_named_by_the_configuration);
	tcase_add_test(tc, content_roots_need_the_same_file_and_program);
	suite_add_tcase(s, tc);
	return s;
}
