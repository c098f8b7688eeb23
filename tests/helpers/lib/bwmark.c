// SPDX-License-Identifier: GPL-2.0-only
/*
 * libbwmark.so: a library whose only effect is to prove its code ran. When it
 * is loaded (LD_PRELOAD, dlopen, the loader mapping it) its constructor
 * writes "ran" to the file named by $BW_MARK, so a test can tell code that
 * ran from code that was refused without trusting the loader's messages.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void bw_mark(void)
{
	const char *path = getenv("BW_MARK");
	int fd;

	if (!path)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, "ran\n", 4) != 4)
		unlink(path);
	close(fd);
}
