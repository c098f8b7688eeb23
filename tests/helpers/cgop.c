// SPDX-License-Identifier: GPL-2.0-only
/*
 * cgop: move this task between cgroups, or make cgroups, the ways a process
 * in a sandbox could, with the raw syscalls. Each step prints "OK [DETAIL]"
 * or "ERR <errno-name>"; the steps stop at the first error. At the end it
 * prints "cgroup PATH", where this thread is now (/proc/thread-self/cgroup).
 *
 *   cgop procs DIR          write our PID to DIR/cgroup.procs (open, then write)
 *   cgop threads DIR        write our TID to DIR/cgroup.threads
 *   cgop write-fd N         write our PID to descriptor N (a cgroup.procs opened by someone else)
 *   cgop clone-into DIR     clone3(CLONE_INTO_CGROUP) with an O_RDONLY descriptor of DIR;
 *                           OK names the child's cgroup, as the child saw it
 *   cgop pull DIR PID       write another process's PID to DIR/cgroup.procs
 *   cgop mkdirs DIR N       mkdir DIR/c0 ... DIR/c<N-1>; OK N, or ERR after "made K"
 *   cgop rmdirs DIR N       rmdir them again (what exists)
 *
 * Several steps can follow each other on one command line.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int err(void)
{
	int e = errno;

	printf("ERR %s\n", strerrorname_np(e) ? strerrorname_np(e) : "?");
	fflush(stdout);
	return -1;
}

/* The cgroup v2 path of this thread ("0::PATH"). */
static void where(char *out, size_t len)
{
	char buf[4096];
	FILE *f = fopen("/proc/thread-self/cgroup", "r");

	snprintf(out, len, "?");
	while (f && fgets(buf, sizeof(buf), f)) {
		if (!strncmp(buf, "0::", 3)) {
			buf[strcspn(buf, "\n")] = '\0';
			snprintf(out, len, "%s", buf + 3);
		}
	}
	if (f)
		fclose(f);
}

static int write_id(int fd, long id)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%ld\n", id);

	return write(fd, buf, n) == n ? 0 : -1;
}

static int move(const char *dir, const char *file, long id)
{
	char path[4096];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return err();
	ret = write_id(fd, id);
	if (ret)
		err();
	close(fd);
	if (!ret)
		printf("OK\n");
	return ret;
}

static int clone_into(const char *dir)
{
	struct clone_args args = {};
	char cg[4096];
	int fd, status, pipefd[2];
	pid_t pid;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || pipe(pipefd))
		return err();
	args.flags = CLONE_INTO_CGROUP;
	args.exit_signal = SIGCHLD;
	args.cgroup = (uint64_t)fd;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0) {
		close(fd);
		return err();
	}
	if (pid == 0) {
		where(cg, sizeof(cg));
		if (write(pipefd[1], cg, strlen(cg) + 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(fd);
	close(pipefd[1]);
	memset(cg, 0, sizeof(cg));
	if (read(pipefd[0], cg, sizeof(cg) - 1) < 0)
		cg[0] = '\0';
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	printf("OK child in %s\n", cg);
	return 0;
}

static int mkdirs(const char *dir, int n, int remove)
{
	char path[4096];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/c%d", dir, i);
		if (remove) {
			rmdir(path);
			continue;
		}
		if (mkdir(path, 0755)) {
			printf("made %d\n", i);
			return err();
		}
	}
	printf("OK %d\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	char cg[4096];
	int i, ret = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i + 1 < argc && !ret; i += 2) {
		const char *op = argv[i], *arg = argv[i + 1];

		if (!strcmp(op, "procs")) {
			ret = move(arg, "cgroup.procs", getpid());
		} else if (!strcmp(op, "threads")) {
			ret = move(arg, "cgroup.threads", gettid());
		} else if (!strcmp(op, "write-fd")) {
			ret = write_id(atoi(arg), getpid());
			if (ret)
				err();
			else
				printf("OK\n");
		} else if (!strcmp(op, "clone-into")) {
			ret = clone_into(arg);
		} else if (!strcmp(op, "pull") && i + 2 < argc) {
			ret = move(arg, "cgroup.procs", atol(argv[i + 2]));
			i++;
		} else if ((!strcmp(op, "mkdirs") || !strcmp(op, "rmdirs")) && i + 2 < argc) {
			ret = mkdirs(arg, atoi(argv[i + 2]), op[0] == 'r');
			i++;
		} else {
			fprintf(stderr, "cgop: bad step %s\n", op);
			return 2;
		}
	}
	where(cg, sizeof(cg));
	printf("cgroup %s\n", cg);
	return ret ? 1 : 0;
}
