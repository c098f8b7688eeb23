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
 *   Attribute changes through a descriptor opened read-only (what setfattr,
 *   setfacl and chattr do):
 *   fsop ro-setxattr PATH NAME | ro-removexattr PATH NAME
 *   fsop ro-setacl PATH      (the system.posix_acl_access of setfacl -m u:1000:rwx)
 *   fsop ro-chattr PATH +i|-i   (FS_IOC_GETFLAGS, then FS_IOC_SETFLAGS)
 *   fsop ro-fsxattr PATH +i|-i  (FS_IOC_FSGETXATTR, then FS_IOC_FSSETXATTR)
 *   fsop -                   (one "OP PATH [PATH2]" a line from stdin, a result a line)
 */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/xattr.h>
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

/* include/uapi/linux/posix_acl_xattr.h: little-endian */
struct acl_entry {
	uint16_t tag, perm;
	uint32_t id;
};

static int set_acl(int fd)
{
	enum { USER_OBJ = 1, USER = 2, GROUP_OBJ = 4, MASK = 0x10, OTHER = 0x20 };
	const uint32_t none = UINT32_MAX;
	const struct acl_entry e[] = {
	    {USER_OBJ, 6, none}, {USER, 7, 1000},  {GROUP_OBJ, 4, none},
	    {MASK, 7, none},	 {OTHER, 4, none},
	};
	char buf[4 + sizeof(e)];
	uint32_t version = htole32(2);
	size_t i;

	memcpy(buf, &version, 4);
	for (i = 0; i < sizeof(e) / sizeof(e[0]); i++) {
		struct acl_entry le = {htole16(e[i].tag), htole16(e[i].perm), htole32(e[i].id)};

		memcpy(buf + 4 + i * sizeof(le), &le, sizeof(le));
	}
	return fsetxattr(fd, "system.posix_acl_access", buf, sizeof(buf), 0);
}

/* The immutable flag on (+i) or off, by FS_IOC_SETFLAGS or (fsx) FS_IOC_FSSETXATTR. */
static int set_immutable(int fd, const char *how, int fsx)
{
	int on = !how || strcmp(how, "-i"), flags;
	struct fsxattr fa;

	if (fsx) {
		if (ioctl(fd, FS_IOC_FSGETXATTR, &fa))
			return -1;
		fa.fsx_xflags =
		    on ? fa.fsx_xflags | FS_XFLAG_IMMUTABLE : fa.fsx_xflags & ~FS_XFLAG_IMMUTABLE;
		return ioctl(fd, FS_IOC_FSSETXATTR, &fa);
	}
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags))
		return -1;
	flags = on ? flags | FS_IMMUTABLE_FL : flags & ~FS_IMMUTABLE_FL;
	return ioctl(fd, FS_IOC_SETFLAGS, &flags);
}

/* The ro-* operations: an attribute changed through a read-only descriptor. */
static int attr_op(const char *op, const char *a, const char *b)
{
	int fd = open(a, O_RDONLY | O_NONBLOCK | O_CLOEXEC), ret = -1;

	if (fd < 0)
		return report(-1);
	if (!strcmp(op, "ro-setxattr") && b)
		ret = fsetxattr(fd, b, "escaped", 7, 0);
	else if (!strcmp(op, "ro-removexattr") && b)
		ret = fremovexattr(fd, b);
	else if (!strcmp(op, "ro-setacl"))
		ret = set_acl(fd);
	else if (!strcmp(op, "ro-chattr") || !strcmp(op, "ro-fsxattr"))
		ret = set_immutable(fd, b, op[3] == 'f');
	else
		errno = EINVAL;
	if (ret)
		ret = -errno;
	close(fd);
	errno = -ret;
	return report(ret);
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
	if (!strncmp(op, "ro-", 3))
		return attr_op(op, a, b);
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
