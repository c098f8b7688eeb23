/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef BW_UTIL_H
#define BW_UTIL_H

#include <stdbool.h>
#include <stdio.h>

extern bool bw_verbose;

/* Messages for people: prefixed with the program name, on stderr. */
#define bw_err(fmt, ...)  fprintf(stderr, "bpfwarden: " fmt "\n", ##__VA_ARGS__)
#define bw_info(fmt, ...) fprintf(stderr, "bpfwarden: " fmt "\n", ##__VA_ARGS__)
#define bw_dbg(fmt, ...)                                                                           \
	do {                                                                                       \
		if (bw_verbose)                                                                    \
			fprintf(stderr, "bpfwarden: " fmt "\n", ##__VA_ARGS__);                    \
	} while (0)

int bw_write_file(const char *path, const char *text);
/* Read up to len-1 bytes of a small file; returns bytes read or -errno. */
int bw_read_file(const char *path, char *buf, size_t len);

#endif
