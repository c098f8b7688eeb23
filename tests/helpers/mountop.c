// SPDX-License-Identifier: GPL-2.0-only
/*
 * mountop: a hostile program for the escape corpus (tests/escape/). It
 * changes how names resolve (namespaces, mounts, chroot, pivot_root) and
 * then uses the new names, one step at a time, each with the raw call:
 *
 *   mountop STEP [ARG...] [';' STEP [ARG...]]...
 *
 * Every step prints one line, "OK [DETAIL]" or "ERR <errno-name>", and the
 * first that fails ends the program (exit status 1), so the last line says
 * where the route stopped; a step written "?STEP" goes on after a failure
 * (a check before the route). Steps:
 *
 *   unshare-m                 a new mount namespace (as root)
 *   unshare-urm               a new user and mount namespace, root in it
 *                             mapped to the caller's uid and gid
 *   private PATH              make PATH's mounts private, recursively
 *   bind SRC DST              a bind mount
 *   move SRC DST              mount(MS_MOVE)
 *   remount-ro PATH           a read-only bind remount
 *   overlay LOWER UPPER WORK DST
 *   umount PATH
 *   open-tree SRC             open_tree(OPEN_TREE_CLONE): the tree descriptor
 *   move-tree DST             move_mount of the tree descriptor onto DST
 *   move-mount SRC DST        move_mount of a mounted tree
 *   fsopen FSTYPE             fsopen: the context descriptor
 *   fsconfig KEY VALUE        fsconfig(FSCONFIG_SET_STRING) on it
 *   fscreate                  fsconfig(FSCONFIG_CMD_CREATE) on it
 *   fsmount [FD]              fsmount of the context (or of descriptor FD):
 *                             the tree descriptor
 *   fspick PATH               fspick: the context descriptor
 *   setattr-ro PATH           mount_setattr(MOUNT_ATTR_RDONLY)
 *   setns PATH                setns into the mount namespace at PATH
 *   pivot NEW OLD             pivot_root
 *   chroot DIR | chdir DIR
 *   read PATH                 OK and the file's first line
 *   read-at NAME              the same, relative to the tree descriptor
 *   write PATH TEXT           truncate and write TEXT
 *   copy SRC DST              DST (made with mode 0755) with SRC's bytes
 *   connect PATH              a unix stream socket: OK and the peer's first line
 *   listen PATH               a unix stream socket bound at PATH; a child
 *                             answers the first connection with "served"
 *   exec PATH ARG0 [ARG...]   run PATH (it prints its own line)
 *
 * and steps that reach the host's kernel past the sandbox's cgroup:
 *
 *   remount-sb PATH ro|rw     remount PATH's file system (not a bind
 *                             remount: the superblock, every mount of it)
 *   fsconfig-flag NAME        fsconfig(FSCONFIG_SET_FLAG) on the context
 *   reconfigure               fsconfig(FSCONFIG_CMD_RECONFIGURE) on it
 *   umount-l PATH             umount2(MNT_DETACH)
 *   mount-fs TYPE DST [DATA]  a new mount of file system TYPE
 *   mknod-c PATH MAJOR MINOR  a character device node
 *   mknod-b PATH MAJOR MINOR  a block device node
 *   scan PATH TEXT            read all of PATH: "OK found" if TEXT is in it, else
 *                             "OK not found"
 *   peek PATH                 open read-only and read: OK and the byte count
 *   iopl                      iopl(3): every I/O port
 *   finit-module              finit_module(-1): OK when past its privilege
 *                             check (the kernel then says EBADF)
 *   reboot-cad-off            reboot(LINUX_REBOOT_CMD_CAD_OFF), harmless
 *   perf-cpu                  a software perf event on all of CPU 0
 *   af-alg                    socket(AF_ALG), which asks the kernel for its
 *                             module: OK and what socket(2) said
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/perf_event.h>
#include <linux/reboot.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

static int ctx_fd = -1, tree_fd = -1;

static int fail(void)
{
	int e = errno;

	printf("ERR %s\n", strerrorname_np(e) ? strerrorname_np(e) : "?");
	fflush(stdout);
	return 1;
}

static int ok(const char *detail)
{
	printf("OK%s%s\n", detail && *detail ? " " : "", detail ? detail : "");
	fflush(stdout);
	return 0;
}

/* A whole small file, written in one call. */
static int put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n < 0 ? -1 : 0;
}

/* OK and the first line read from fd (closed here). */
static int first_line(int fd)
{
	char buf[256];
	ssize_t n;

	if (fd < 0)
		return fail();
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return fail();
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return ok(buf);
}

static int unshare_userns(void)
{
	char map[64];
	uid_t uid = getuid();
	gid_t gid = getgid();

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS))
		return -1;
	if (put("/proc/self/setgroups", "deny"))
		return -1;
	snprintf(map, sizeof(map), "0 %u 1", uid);
	if (put("/proc/self/uid_map", map))
		return -1;
	snprintf(map, sizeof(map), "0 %u 1", gid);
	return put("/proc/self/gid_map", map);
}

static int copy(const char *src, const char *dst)
{
	int in = open(src, O_RDONLY | O_CLOEXEC), out = -1, ret = -1;
	char buf[65536];
	ssize_t n;

	if (in < 0)
		return -1;
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0)
		goto out;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			goto out;
	ret = n < 0 ? -1 : 0;
out:
	if (out >= 0)
		close(out);
	close(in);
	return ret;
}

static int connect_unix(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return fail();
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		int e = errno;

		close(fd);
		errno = e;
		return fail();
	}
	return first_line(fd);
}

/*
 * A unix socket bound at path and listening; a child answers its first
 * connection with "served" and exits.
 */
static int listen_unix(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), c;
	pid_t pid;

	if (fd < 0)
		return fail();
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 4)) {
		int e = errno;

		close(fd);
		errno = e;
		return fail();
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return fail();
	if (pid == 0) {
		alarm(5);
		c = accept(fd, NULL, NULL);
		if (c >= 0 && write(c, "served\n", 7) != 7)
			_exit(1);
		_exit(0);
	}
	close(fd);
	return ok(NULL);
}

static int set_ro(const char *path)
{
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};

	return mount_setattr(AT_FDCWD, path, 0, &attr, sizeof(attr));
}

static int do_setns(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -1;
	ret = setns(fd, CLONE_NEWNS);
	close(fd);
	return ret;
}

static int overlay(char **a)
{
	char opts[1024];

	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s", a[0], a[1], a[2]);
	return mount("overlay", a[3], "overlay", 0, opts);
}

/* A step whose call returns a descriptor to keep in *fd. */
static int keep(int *fd, int ret)
{
	if (ret < 0)
		return fail();
	*fd = ret;
	return ok(NULL);
}

/* OK and how many bytes a read of PATH's start gave. */
static int peek(const char *path)
{
	char buf[64], n_text[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return fail();
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return fail();
	snprintf(n_text, sizeof(n_text), "%zd bytes", n);
	return ok(n_text);
}

static int finit_module_bad_fd(void)
{
	if (syscall(SYS_finit_module, -1, "", 0) == 0 || errno != EBADF)
		return fail();
	return ok("past the privilege check");
}

static int perf_cpu_wide(void)
{
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_SOFTWARE,
	    .size = sizeof(attr),
	    .config = PERF_COUNT_SW_CPU_CLOCK,
	    .disabled = 1,
	};
	int fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return fail();
	close(fd);
	return ok(NULL);
}

static int af_alg(void)
{
	int fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	int e = errno;

	if (fd >= 0) {
		close(fd);
		return ok("socket");
	}
	return ok(strerrorname_np(e) ? strerrorname_np(e) : "?");
}

/* One step with its n arguments; 0 when it went through. */
/* Read all of path looking for text: "OK found" or "OK not found". */
static int scan(const char *path, const char *text)
{
	static char buf[(1 << 20) + 256];
	size_t tlen = strlen(text), keep = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	ssize_t n;

	if (fd < 0)
		return fail();
	/* The last tlen bytes of a chunk stay in front of the next: a match across the seam. */
	while (!found && (n = read(fd, buf + keep, sizeof(buf) - keep)) > 0) {
		size_t have = keep + (size_t)n;

		found = memmem(buf, have, text, tlen) != NULL;
		keep = have < tlen ? have : tlen;
		memmove(buf, buf + have - keep, keep);
	}
	close(fd);
	if (n < 0)
		return fail();
	return ok(found ? "found" : "not found");
}

static int step(const char *s, char **a, int n)
{
#define NEED(k)                                                                                    \
	do {                                                                                       \
		if (n < (k)) {                                                                     \
			fprintf(stderr, "mountop: %s needs %d arguments\n", s, k);                 \
			exit(2);                                                                   \
		}                                                                                  \
	} while (0)
#define CALL(x) ((x) < 0 ? fail() : ok(NULL))
	if (!strcmp(s, "unshare-m"))
		return CALL(unshare(CLONE_NEWNS));
	if (!strcmp(s, "unshare-urm"))
		return CALL(unshare_userns());
	if (!strcmp(s, "iopl"))
		return CALL(iopl(3));
	if (!strcmp(s, "finit-module"))
		return finit_module_bad_fd();
	if (!strcmp(s, "reboot-cad-off"))
		return CALL(reboot(LINUX_REBOOT_CMD_CAD_OFF));
	if (!strcmp(s, "perf-cpu"))
		return perf_cpu_wide();
	if (!strcmp(s, "af-alg"))
		return af_alg();
	if (!strcmp(s, "reconfigure"))
		return CALL(fsconfig(ctx_fd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0));
	NEED(0);
	if (!strcmp(s, "fscreate"))
		return CALL(fsconfig(ctx_fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0));
	if (!strcmp(s, "fsmount"))
		return keep(&tree_fd, fsmount(n ? atoi(a[0]) : ctx_fd, FSMOUNT_CLOEXEC, 0));
	NEED(1);
	if (!strcmp(s, "private"))
		return CALL(mount(NULL, a[0], NULL, MS_REC | MS_PRIVATE, NULL));
	if (!strcmp(s, "remount-ro"))
		return CALL(mount(NULL, a[0], NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL));
	if (!strcmp(s, "umount"))
		return CALL(umount2(a[0], 0));
	if (!strcmp(s, "umount-l"))
		return CALL(umount2(a[0], MNT_DETACH));
	if (!strcmp(s, "peek"))
		return peek(a[0]);
	if (!strcmp(s, "fsconfig-flag"))
		return CALL(fsconfig(ctx_fd, FSCONFIG_SET_FLAG, a[0], NULL, 0));
	if (!strcmp(s, "open-tree"))
		return keep(&tree_fd,
			    open_tree(AT_FDCWD, a[0], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
	if (!strcmp(s, "move-tree"))
		return CALL(move_mount(tree_fd, "", AT_FDCWD, a[0], MOVE_MOUNT_F_EMPTY_PATH));
	if (!strcmp(s, "fsopen"))
		return keep(&ctx_fd, fsopen(a[0], FSOPEN_CLOEXEC));
	if (!strcmp(s, "fspick"))
		return keep(&ctx_fd, fspick(AT_FDCWD, a[0], FSPICK_CLOEXEC));
	if (!strcmp(s, "setattr-ro"))
		return CALL(set_ro(a[0]));
	if (!strcmp(s, "setns"))
		return CALL(do_setns(a[0]));
	if (!strcmp(s, "chroot"))
		return CALL(chroot(a[0]));
	if (!strcmp(s, "chdir"))
		return CALL(chdir(a[0]));
	if (!strcmp(s, "read"))
		return first_line(open(a[0], O_RDONLY | O_CLOEXEC));
	if (!strcmp(s, "read-at"))
		return first_line(openat(tree_fd, a[0], O_RDONLY | O_CLOEXEC));
	if (!strcmp(s, "connect"))
		return connect_unix(a[0]);
	if (!strcmp(s, "listen"))
		return listen_unix(a[0]);
	NEED(2);
	if (!strcmp(s, "bind"))
		return CALL(mount(a[0], a[1], NULL, MS_BIND, NULL));
	if (!strcmp(s, "move"))
		return CALL(mount(a[0], a[1], NULL, MS_MOVE, NULL));
	if (!strcmp(s, "move-mount"))
		return CALL(move_mount(AT_FDCWD, a[0], AT_FDCWD, a[1], 0));
	if (!strcmp(s, "fsconfig"))
		return CALL(fsconfig(ctx_fd, FSCONFIG_SET_STRING, a[0], a[1], 0));
	if (!strcmp(s, "pivot"))
		return CALL(syscall(SYS_pivot_root, a[0], a[1]));
	if (!strcmp(s, "write"))
		return CALL(put(a[0], a[1]));
	if (!strcmp(s, "copy"))
		return CALL(copy(a[0], a[1]));
	if (!strcmp(s, "remount-sb"))
		return CALL(mount(NULL, a[0], NULL,
				  MS_REMOUNT | (strcmp(a[1], "ro") ? 0 : MS_RDONLY), NULL));
	if (!strcmp(s, "mount-fs"))
		return CALL(mount(a[0], a[1], a[0], 0, n > 2 ? a[2] : NULL));
	if (!strcmp(s, "exec")) {
		fflush(stdout);
		execv(a[0], a + 1);
		return fail();
	}
	if (!strcmp(s, "scan"))
		return scan(a[0], a[1]);
	NEED(3);
	if (!strcmp(s, "mknod-c"))
		return CALL(mknod(a[0], S_IFCHR | 0600, makedev(atoi(a[1]), atoi(a[2]))));
	if (!strcmp(s, "mknod-b"))
		return CALL(mknod(a[0], S_IFBLK | 0600, makedev(atoi(a[1]), atoi(a[2]))));
	NEED(4);
	if (!strcmp(s, "overlay"))
		return CALL(overlay(a));
	fprintf(stderr, "mountop: unknown step %s\n", s);
	exit(2);
#undef CALL
#undef NEED
}

int main(int argc, char **argv)
{
	int i = 1;

	while (i < argc) {
		int end = i + 1;

		while (end < argc && strcmp(argv[end], ";"))
			end++;
		const char *s = argv[i];
		bool go_on = s[0] == '?';

		/* exec takes the rest of its step as the new program's argv. */
		argv[end < argc ? end : argc] = NULL;
		if (step(s + go_on, argv + i + 1, end - i - 1) && !go_on)
			return 1;
		i = end + 1;
	}
	return 0;
}
