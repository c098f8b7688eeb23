// SPDX-License-Identifier: GPL-2.0-only
/*
 * fsop: perform one file-system operation with the raw syscall and report
 * how it went, so integration tests assert the errno the kernel returned.
 * Prints "OK" or "ERR <errno-name>" and exits 0 or with the errno value.
 *
 *   fsop read PATH | write PATH | append PATH | trunc-open PATH | rdwr PATH
 *   fsop readdir DIR | create PATH | mkdir PATH | rmdir PATH | unlink PATH
 *   fsop truncate PATH | chmod PATH | chown PATH | mkfifo PATH | utimes PATH
 *   fsop rename FROM TO | link FROM TO | symlink TARGET LINKPATH
 *   fsop opath-reopen PATH   (O_PATH, then open /proc/self/fd/N for reading)
 *   fsop write-held PATH     (open for write, then write: a held descriptor)
 *   fsop -                   (one "OP PATH [PATH2]" a line from stdin, a result a line)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static int report(int ret)
{
	int e = errno;

	if (ret >= 0) {
		printf("OK\n");
		return 0;
	}
	printf("ERR %s\n", strerrorname_np(e) ? strerrorname_np(e) : "?");
	return e;
}

static int open_and_close(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);

	if (fd >= 0)
		close(fd);
	return fd;
}

static int one(const char *op, const char *a, const char *b)
{
	char buf[64];

	if (!strcmp(op, "read"))
		return report(open_and_close(a, O_RDONLY));
	if (!strcmp(op, "write"))
		return report(open_and_close(a, O_WRONLY));
	if (!strcmp(op, "append"))
		return report(open_and_close(a, O_WRONLY | O_APPEND));
	if (!strcmp(op, "rdwr"))
		return report(open_and_close(a, O_RDWR));
	if (!strcmp(op, "trunc-open"))
		return report(open_and_close(a, O_WRONLY | O_TRUNC));
	if (!strcmp(op, "create"))
		return report(open_and_close(a, O_WRONLY | O_CREAT | O_EXCL));
	if (!strcmp(op, "readdir")) {
		DIR *d = opendir(a);

		if (d)
			closedir(d);
		return report(d ? 0 : -1);
	}
	if (!strcmp(op, "mkdir"))
		return report(mkdir(a, 0755));
	if (!strcmp(op, "rmdir"))
		return report(rmdir(a));
	if (!strcmp(op, "unlink"))
		return report(unlink(a));
	if (!strcmp(op, "truncate"))
		return report(truncate(a, 0));
	if (!strcmp(op, "chmod"))
		return report(chmod(a, 0600));
	if (!strcmp(op, "chown"))
		return report(chown(a, 1, 1));
	if (!strcmp(op, "mkfifo"))
		return report(mkfifo(a, 0644));
	if (!strcmp(op, "utimes"))
		return report(utimes(a, NULL));
	if (!strcmp(op, "rename") && b)
		return report(rename(a, b));
	if (!strcmp(op, "link") && b)
		return report(link(a, b));
	if (!strcmp(op, "symlink") && b)
		return report(symlink(a, b));
	if (!strcmp(op, "opath-reopen")) {
		int fd = open(a, O_PATH | O_CLOEXEC);

		if (fd < 0)
			return report(-1);
		snprintf(buf, sizeof(buf), "/proc/self/fd/%d", fd);
		return report(open_and_close(buf, O_RDONLY));
	}
	if (!strcmp(op, "write-held")) {
		int fd = open(a, O_WRONLY | O_APPEND | O_CLOEXEC);

		if (fd < 0)
			return report(-1);
		return report(write(fd, "held\n", 5) == 5 ? 0 : -1);
	}
	fprintf(stderr, "fsop: unknown operation %s\n", op);
	return 2;
}

int main(int argc, char **argv)
{
	char line[8192];
	int last = 0;

	if (argc == 2 && !strcmp(argv[1], "-")) {
		while (fgets(line, sizeof(line), stdin)) {
			char *op = strtok(line, " \t\n"), *a = strtok(NULL, " \t\n");
			char *b = strtok(NULL, " \t\n");

			if (!op || !a) {
				printf("ERR usage\n");
				continue;
			}
			last = one(op, a, b);
			fflush(stdout);
		}
		return last;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: fsop OP PATH [PATH2] | fsop -\n");
		return 2;
	}
	return one(argv[1], argv[2], argc > 3 ? argv[3] : NULL);
}
