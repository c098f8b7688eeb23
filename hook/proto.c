// SPDX-License-Identifier: GPL-2.0-only
/* The hook <-> daemon request codec (proto.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

struct field {
	const char *key;
	size_t off; /* of a const char * in struct bw_hook_req */
};

#define STR_FIELD(k, m)                                                                            \
	{                                                                                          \
		k, offsetof(struct bw_hook_req, m)                                                 \
	}

static const struct field fields[] = {
    STR_FIELD("op", op),
    STR_FIELD("via", via),
    STR_FIELD("cgroup", cgroup),
    STR_FIELD("root", root),
    STR_FIELD("namespace", id.namespace_),
    STR_FIELD("pod", id.pod),
    STR_FIELD("pod_uid", id.pod_uid),
    STR_FIELD("container", id.container),
    STR_FIELD("container_id", id.container_id),
    STR_FIELD("image", id.image),
    STR_FIELD("sandbox_id", id.sandbox_id),
    STR_FIELD("type", id.type),
    STR_FIELD("profile", id.profile),
};

#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static const char **field_of(const struct bw_hook_req *r, size_t i)
{
	return (const char **)((char *)r + fields[i].off);
}

struct out {
	char *p;
	size_t len, n;
	int err;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->n + n >= o->len) {
		o->err = -ENOSPC;
		return;
	}
	memcpy(o->p + o->n, s, n);
	o->n += n;
}

static void put_value(struct out *o, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\')
			put(o, "\\\\", 2);
		else if (*v == '\n')
			put(o, "\\n", 2);
		else
			put(o, v, 1);
	}
}

int bw_hook_req_encode(const struct bw_hook_req *r, char *out, size_t len)
{
	struct out o = {out, len, 0, 0};
	char num[64];
	size_t i;

	put(&o, BW_HOOK_MAGIC "\n", sizeof(BW_HOOK_MAGIC));
	for (i = 0; i < NFIELDS; i++) {
		const char *v = *field_of(r, i);

		if (!v)
			continue;
		put(&o, fields[i].key, strlen(fields[i].key));
		put(&o, " ", 1);
		put_value(&o, v);
		put(&o, "\n", 1);
	}
	snprintf(num, sizeof(num), "pid %lld\ncgroup_id %" PRIu64 "\n\n", r->pid, r->cgroup_id);
	put(&o, num, strlen(num));
	if (o.err)
		return o.err;
	out[o.n] = '\0';
	return (int)o.n;
}

int bw_hook_req_complete(const char *buf, size_t len)
{
	return len >= 2 && buf[len - 1] == '\n' && buf[len - 2] == '\n';
}

/* Undo the escapes of the value at v in place; -EINVAL for a bad escape. */
static int unescape(char *v)
{
	char *o = v;

	for (; *v; v++) {
		if (*v != '\\') {
			*o++ = *v;
			continue;
		}
		v++;
		if (*v == '\\')
			*o++ = '\\';
		else if (*v == 'n')
			*o++ = '\n';
		else
			return -EINVAL;
	}
	*o = '\0';
	return 0;
}

static int parse_u64(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end || *out > max ? -EINVAL : 0;
}

int bw_hook_req_decode(const char *in, size_t len, struct bw_hook_req *r)
{
	unsigned seen = 0, seen_pid = 0, seen_id = 0;
	char *line, *next;
	size_t i;
	memset(r, 0, sizeof(*r));
	if (len > BW_HOOK_MSG_MAX || !bw_hook_req_complete(in, len) || memchr(in, '\0', len))
		return -EINVAL;
	r->buf = malloc(len + 1);
	if (!r->buf)
		return -ENOMEM;
	memcpy(r->buf, in, len);
	r->buf[len] = '\0';
	line = r->buf;
	next = strchr(line, '\n');
	*next = '\0';
	if (strcmp(line, BW_HOOK_MAGIC))
		goto bad;
	for (line = next + 1; *line; line = next + 1) {
		char *sp, *v;

		if (*line == '\n') {
			/* The closing empty line ends the request: nothing may follow. */
			if (line[1])
				goto bad;
			break;
		}
		next = strchr(line, '\n');
		*next = '\0';
		sp = strchr(line, ' ');
		if (!sp)
			goto bad;
		*sp = '\0';
		v = sp + 1;
		if (unescape(v))
			goto bad;
		if (!strcmp(line, "pid") || !strcmp(line, "cgroup_id")) {
			unsigned long long n;
			int is_pid = line[0] == 'p';

			unsigned *seen_num = is_pid ? &seen_pid : &seen_id;

			if ((*seen_num)++ || parse_u64(v, is_pid ? 0x7fffffff : UINT64_MAX, &n))
				goto bad;
			if (is_pid)
				r->pid = (long long)n;
			else
				r->cgroup_id = n;
			continue;
		}
		for (i = 0; i < NFIELDS; i++)
			if (!strcmp(line, fields[i].key))
				break;
		if (i == NFIELDS)
			continue; /* a newer hook's field */
		if (seen & (1u << i))
			goto bad;
		seen |= 1u << i;
		*field_of(r, i) = v;
	}
	if (!r->op || !seen_pid)
		goto bad;
	return 0;
bad:
	bw_hook_req_free(r);
	return -EINVAL;
}

void bw_hook_req_free(struct bw_hook_req *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

static const char *const result_names[] = {
    [BW_HOOK_GOVERNED] = "governed",
    [BW_HOOK_PENDING] = "pending",
    [BW_HOOK_UNSELECTED] = "unselected",
    [BW_HOOK_EXEMPT] = "exempt",
    [BW_HOOK_FAIL] = "fail",
};

const char *bw_hook_result_name(enum bw_hook_result r)
{
	return r >= BW_HOOK_GOVERNED && r <= BW_HOOK_FAIL ? result_names[r] : "unknown";
}

int bw_hook_resp_encode(const struct bw_hook_resp *r, char *out, size_t len)
{
	const char *name = bw_hook_result_name(r->result);
	int n;

	if (r->result < BW_HOOK_GOVERNED || r->result > BW_HOOK_FAIL || strchr(r->detail, '\n'))
		return -EINVAL;
	if (r->result == BW_HOOK_FAIL)
		n = snprintf(out, len, "fail %s\n", r->detail);
	else if (r->result == BW_HOOK_UNSELECTED)
		n = snprintf(out, len, "ok unselected\n");
	else
		n = snprintf(out, len, "ok %s %s\n", name, r->detail);
	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

int bw_hook_resp_decode(const char *in, size_t len, struct bw_hook_resp *r)
{
	char line[BW_HOOK_RESP_MAX + 32], *rest;
	int i;

	memset(r, 0, sizeof(*r));
	if (len && in[len - 1] == '\n')
		len--;
	if (len >= sizeof(line) || memchr(in, '\n', len) || memchr(in, '\0', len))
		return -EINVAL;
	memcpy(line, in, len);
	line[len] = '\0';
	if (!strncmp(line, "fail ", 5)) {
		r->result = BW_HOOK_FAIL;
		snprintf(r->detail, sizeof(r->detail), "%s", line + 5);
		return 0;
	}
	if (strncmp(line, "ok ", 3))
		return -EINVAL;
	rest = line + 3;
	for (i = BW_HOOK_GOVERNED; i < BW_HOOK_FAIL; i++) {
		size_t n = strlen(result_names[i]);

		if (strncmp(rest, result_names[i], n) || (rest[n] != ' ' && rest[n] != '\0'))
			continue;
		if ((i == BW_HOOK_UNSELECTED) != (rest[n] == '\0'))
			return -EINVAL;
		r->result = i;
		if (rest[n] == ' ')
			snprintf(r->detail, sizeof(r->detail), "%s", rest + n + 1);
		return r->detail[0] || i == BW_HOOK_UNSELECTED ? 0 : -EINVAL;
	}
	return -EINVAL;
}
