// SPDX-License-Identifier: GPL-2.0-only
/*
 * idroute: the hostile programs of tests/escape/test_identity.py, one
 * subcommand a route. Each reaches a file the profile forbids by a name
 * that is not the rule's, or by no name at all, and prints "OK <what it
 * read>" or "ERR <errno name>" (tests/escape/escape.py). With --go FILE it
 * first waits until FILE exists, so that the test can change the world
 * (create, rename, link, mount) after the profile is loaded and before the
 * attempt. C rather than Python: under TCG an interpreter's start costs
 * seconds, and every route runs twice.
 *
 *   idroute [--go FILE] read PATH...           open and read each file, a line each
 *   idroute [--go FILE] utimes PATH            change a file's times, nothing else
 *   idroute [--go FILE] handle MOUNTDIR PATH   name_to_handle_at, evict the dentry
 *                                              (drop_caches), open_by_handle_at
 *   idroute [--go FILE] treefd FD NAME         openat on an inherited descriptor
 *                                              (a detached tree)
 *   idroute [--go FILE] exec PATH              run a program (it prints what it
 *                                              reveals), "OK ran" when it exits 0
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int fail(void)
{
	const char *name = strerrorname_np(errno);

	printf("ERR %s\n", name ? name : "?");
	return 1;
}

/* Print what an open descriptor holds: the secret, if the route got through. */
static int show(int fd, const char *what)
{
	char buf[256];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);

	if (n < 0)
		return fail();
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	printf("OK %s%s%s\n", what, *what ? " " : "", buf);
	close(fd);
	return 0;
}

static int route_read(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? fail() : show(fd, "");
}

static int route_utimes(const char *path)
{
	struct timespec t[2] = {{1000000000, 0}, {1000000000, 0}};

	if (utimensat(AT_FDCWD, path, t, 0))
		return fail();
	printf("OK times changed\n");
	return 0;
}

/*
 * The handle is taken while the name is known; then every unused dentry is
 * dropped, so that opening the handle finds none and gets one with no
 * parent (disconnected). What /proc/self/fd says of it proves which.
 */
static int route_handle(const char *mountdir, const char *path)
{
	struct {
		struct file_handle fh;
		unsigned char bytes[MAX_HANDLE_SZ];
	} h = {.fh.handle_bytes = MAX_HANDLE_SZ};
	char link[64], seen[4096];
	int mount_id, mfd, fd, dc;
	ssize_t n;

	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0))
		return fail();
	sync();
	dc = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (dc < 0 || write(dc, "2\n", 2) != 2)
		return fail();
	close(dc);
	mfd = open(mountdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return fail();
	fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_CLOEXEC);
	close(mfd);
	if (fd < 0)
		return fail();
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, seen, sizeof(seen) - 1);
	seen[n > 0 ? n : 0] = '\0';
	return show(fd, strcmp(seen, path) ? "disconnected" : "connected");
}

static int route_treefd(const char *fdtext, const char *name)
{
	int fd = openat(atoi(fdtext), name, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? fail() : show(fd, "");
}

/* The child's exec failure comes back as its exit status: 100 + errno. */
static int route_exec(const char *path)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return fail();
	if (!pid) {
		execl(path, path, (char *)NULL);
		_exit(100 + errno);
	}
	if (waitpid(pid, &status, 0) < 0)
		return fail();
	if (WIFEXITED(status) && WEXITSTATUS(status) >= 100) {
		errno = WEXITSTATUS(status) - 100;
		return fail();
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("ERR status %d\n", status);
		return 1;
	}
	printf("OK ran\n");
	return 0;
}

static void wait_for(const char *path)
{
	struct timespec tick = {0, 20 * 1000 * 1000};
	struct stat st;
	int i;

	for (i = 0; i < 3000 && stat(path, &st); i++)
		nanosleep(&tick, NULL);
}

int main(int argc, char **argv)
{
	int ret = 2;

	if (argc > 2 && !strcmp(argv[1], "--go")) {
		wait_for(argv[2]);
		argc -= 2;
		argv += 2;
	}
	if (argc >= 3 && !strcmp(argv[1], "read")) {
		ret = 0;
		for (int i = 2; i < argc; i++)
			ret |= route_read(argv[i]);
	} else if (argc == 3 && !strcmp(argv[1], "utimes"))
		ret = route_utimes(argv[2]);
	else if (argc == 4 && !strcmp(argv[1], "handle"))
		ret = route_handle(argv[2], argv[3]);
	else if (argc == 4 && !strcmp(argv[1], "treefd"))
		ret = route_treefd(argv[2], argv[3]);
	else if (argc == 3 && !strcmp(argv[1], "exec"))
		ret = route_exec(argv[2]);
	else
		fprintf(
		    stderr,
		    "usage: idroute [--go FILE] read PATH... | utimes PATH | handle MOUNTDIR PATH "
		    "| treefd FD NAME | exec PATH\n");
	fflush(stdout);
	return ret;
}
