// SPDX-License-Identifier: GPL-2.0-only
/*
 * Prometheus text exposition (format 0.0.4) on --metrics-addr, GET
 * /metrics; GET /healthz answers "ok" for a readiness probe. Counters come
 * from the kernel where it counts (per policy slot, per CPU: what was
 * refused, audited, learned, lost and throttled, so that events held back
 * by the rate limit still count), summed over the slots each profile has
 * had; the rest from the daemon. Labels are bounded: profile, operation,
 * mode, result, reason, map; a per-container series only with
 * --per-pod-metrics.
 *
 * Served from the daemon's one loop, which also answers bpfwarden-hook, so
 * nothing here ever waits on a client: sockets are non-blocking, a request
 * is read and its answer written as far as each socket allows at each turn
 * of the loop, every client is closed at its deadline
 * (D_METRICS_DEADLINE_MS) whatever it did, those past D_METRICS_CONNS are
 * closed as they come, and the text is made at most once a turn of the loop.
 */
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "daemon.h"
#include "event_line.h"
#include "session.h"
#include "util.h"

int d_metrics_open(const char *addr)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	char host[256];
	const char *port;
	int fd = -1, one = 1, ret;

	/* HOST:PORT, [V6]:PORT or :PORT (every address). */
	port = strrchr(addr, ':');
	if (!port || !port[1] || (size_t)(port - addr) >= sizeof(host))
		return -EINVAL;
	memcpy(host, addr, port - addr);
	host[port - addr] = '\0';
	port++;
	/* A port is 1 to 65535, in digits: getaddrinfo would take 80800 as 15264. */
	if (strspn(port, "0123456789") != strlen(port) || strlen(port) > 5 || atoi(port) < 1 ||
	    atoi(port) > 65535)
		return -EINVAL;
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	ret = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (ret)
		return -EINVAL;
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 16)) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		freeaddrinfo(res);
		return ret;
	}
	freeaddrinfo(res);
	return fd;
}

struct text {
	char *buf;
	size_t len, cap;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < t->cap - t->len) {
			t->len += n;
			return;
		}
		char *nb = realloc(t->buf, t->cap * 2 + n);

		if (!nb)
			return;
		t->buf = nb;
		t->cap = t->cap * 2 + n;
	}
}

/* A label value: backslash, quote and newline escaped. */
static const char *lv(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	for (; s && *s && o + 3 < len; s++) {
		if (*s == '\\' || *s == '"') {
			buf[o++] = '\\';
			buf[o++] = *s;
		} else if (*s == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else {
			buf[o++] = *s;
		}
	}
	buf[o] = '\0';
	return buf;
}

void d_profile_counts(struct daemon *d, const struct d_profile *p, struct bw_counters *sum,
		      uint64_t ops[BW_OPSTATS_PER_SLOT])
{
	int ncpu = libbpf_num_possible_cpus(), i;
	uint32_t slot = p->in.slot.id, op, idx;
	struct bw_counters *c;
	__u64 *v;

	*sum = p->base;
	memcpy(ops, p->base_ops, sizeof(p->base_ops));
	if (ncpu <= 0 || !p->in.installed)
		return;
	c = calloc(ncpu, sizeof(*c));
	if (c && !bpf_map_lookup_elem(d->maps.counters, &slot, c)) {
		for (i = 0; i < ncpu; i++) {
			sum->lost += c[i].lost;
			sum->denied += c[i].denied;
			sum->audited += c[i].audited;
			sum->learned += c[i].learned;
			sum->truncated += c[i].truncated;
			sum->throttled += c[i].throttled;
		}
	}
	free(c);
	v = calloc(ncpu, sizeof(*v));
	for (op = 0; v && op < BW_OPSTATS_PER_SLOT; op++) {
		idx = slot * BW_OPSTATS_PER_SLOT + op;
		if (bpf_map_lookup_elem(d->maps.opstats, &idx, v))
			continue;
		for (i = 0; i < ncpu; i++)
			ops[op] += v[i];
	}
	free(v);
}

/* Verdicts of one profile by operation name (both ends of rename are one), mode and verdict. */
static void put_decisions(struct text *t, const char *profile, const uint64_t *ops)
{
	static const char *const modes[BW_NMODES] = {"enforce", "audit", "learn"};
	static const char *const verdicts[2] = {"deny", "allow"};
	uint32_t op, other, mode, allowed;

	for (op = 1; op < BW_OP_MAX; op++) {
		const char *name = bw_op_name(op);
		bool first = true;

		/* An operation name met before was printed with this one's counts. */
		for (other = 1; other < op; other++)
			first &= strcmp(bw_op_name(other), name) != 0;
		if (!first)
			continue;
		for (mode = 0; mode < BW_NMODES; mode++)
			for (allowed = 0; allowed < 2; allowed++) {
				uint64_t n = 0;

				for (other = op; other < BW_OP_MAX; other++)
					if (!strcmp(bw_op_name(other), name))
						n += ops[BW_OPSTATS_OFFSET(other, mode, allowed)];
				if (n)
					put(t,
					    "bpfwarden_decisions_total{profile=\"%s\",op=\"%s\","
					    "mode=\"%s\",verdict=\"%s\"} %llu\n",
					    profile, name, modes[mode], verdicts[allowed],
					    (unsigned long long)n);
			}
	}
}

/* Entries in use of a hash map (a walk over its keys: these maps are small). */
static long map_fill(int fd, size_t key_size)
{
	char key[512], next[512];
	long n = 0;
	void *prev = NULL;

	if (fd < 0 || key_size > sizeof(key))
		return -1;
	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, key_size);
		prev = key;
		n++;
	}
	return n;
}

/* A pinned map whose fill the metrics report. */
struct map_row {
	const char *name;
	size_t off, key, cap;
	const char *trie; /* one trie per slot by this name: cap is each one's */
};

/*
 * The per-slot rule tries (bpf/maps.bpf.h), found among all the kernel's
 * maps by name in one pass: a lookup in the maps of maps that hold them
 * waits for a grace period on 6.1, each. For each row with a trie name:
 * keys[i] in all its tries, tries[i] how many (both zeroed by the caller).
 */
static void tries_fill(const struct map_row *rows, size_t n, long *keys, size_t *tries)
{
	__u32 id = 0;
	size_t i;

	while (!bpf_map_get_next_id(id, &id)) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_map_get_fd_by_id(id);

		if (fd < 0)
			continue; /* freed meanwhile */
		if (!bpf_map_get_info_by_fd(fd, &info, &len) && info.type == BPF_MAP_TYPE_LPM_TRIE)
			for (i = 0; i < n; i++) {
				long k;

				if (!rows[i].trie || strcmp(info.name, rows[i].trie))
					continue;
				k = map_fill(fd, rows[i].key);
				if (k >= 0) {
					keys[i] += k;
					tries[i]++;
				}
			}
		close(fd);
	}
}

/*
 * Run time of each of our programs from the kernel's BPF statistics, which
 * the daemon turns on (BPF_ENABLE_STATS) only with --bpf-stats: they cost
 * two clock reads per program run.
 */
static void prog_stats(struct daemon *d, struct text *t)
{
	__u32 id = 0;

	if (d->stats_fd < 0)
		return;
	put(t, "# HELP bpfwarden_bpf_run_seconds_total Time the kernel spent in each program.\n"
	       "# TYPE bpfwarden_bpf_run_seconds_total counter\n"
	       "# HELP bpfwarden_bpf_runs_total Runs of each program.\n"
	       "# TYPE bpfwarden_bpf_runs_total counter\n");
	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_prog_get_info_by_fd(fd, &info, &len) && !strncmp(info.name, "bw_", 3)) {
			put(t, "bpfwarden_bpf_run_seconds_total{program=\"%s\"} %.9f\n", info.name,
			    info.run_time_ns / 1e9);
			put(t, "bpfwarden_bpf_runs_total{program=\"%s\"} %llu\n", info.name,
			    (unsigned long long)info.run_cnt);
		}
		close(fd);
	}
}

static void render(struct daemon *d, struct text *t)
{
	char a[512], b[512], c[512];
	size_t i, r;

	/* The kernel's counts of each profile, read once for all the families below. */
	struct bw_counters *cnt = calloc(d->nprofiles + 1, sizeof(*cnt));
	uint64_t(*ops)[BW_OPSTATS_PER_SLOT] = calloc(d->nprofiles + 1, sizeof(*ops));
	static const struct {
		const char *name, *help, *label;
		size_t off; /* in struct bw_counters */
	} families[] = {
	    {"bpfwarden_refusals_total",
	     "What the mode made of the denials: refused, audited (let pass), learned.",
	     "result=\"denied\"", offsetof(struct bw_counters, denied)},
	    {"bpfwarden_refusals_total", NULL, "result=\"audited\"",
	     offsetof(struct bw_counters, audited)},
	    {"bpfwarden_refusals_total", NULL, "result=\"learned\"",
	     offsetof(struct bw_counters, learned)},
	    {"bpfwarden_events_lost_total", "Events not written, by reason.",
	     "reason=\"ringbuf_full\"", offsetof(struct bw_counters, lost)},
	    {"bpfwarden_events_lost_total", NULL, "reason=\"throttled\"",
	     offsetof(struct bw_counters, throttled)},
	    {"bpfwarden_paths_too_long_total",
	     "Operations whose path did not fit the kernel's buffer (refused unless in audit "
	     "mode).",
	     NULL, offsetof(struct bw_counters, truncated)},
	};

	if (!cnt || !ops)
		goto out;
	for (i = 0; i < d->nprofiles; i++)
		d_profile_counts(d, d->profiles[i], &cnt[i], ops[i]);
	put(t,
	    "# HELP bpfwarden_decisions_total Operations of governed processes decided, by "
	    "profile, operation, the mode they were decided under and the verdict of the rule or "
	    "default (counted in the kernel: throttled events count too).\n"
	    "# TYPE bpfwarden_decisions_total counter\n");
	for (i = 0; i < d->nprofiles; i++)
		put_decisions(t, lv(d->profiles[i]->name, a, sizeof(a)), ops[i]);
	for (r = 0; r < sizeof(families) / sizeof(families[0]); r++) {
		if (families[r].help)
			put(t, "# HELP %s %s\n# TYPE %s counter\n", families[r].name,
			    families[r].help, families[r].name);
		for (i = 0; i < d->nprofiles; i++)
			put(t, "%s{profile=\"%s\"%s%s} %llu\n", families[r].name,
			    lv(d->profiles[i]->name, a, sizeof(a)), families[r].label ? "," : "",
			    families[r].label ? families[r].label : "",
			    (unsigned long long)*(uint64_t *)((char *)&cnt[i] + families[r].off));
	}
out:
	free(cnt);
	free(ops);
	put(t, "# HELP bpfwarden_governed_containers Containers the daemon governs, by profile.\n"
	       "# TYPE bpfwarden_governed_containers gauge\n");
	for (i = 0; i < d->nprofiles; i++) {
		size_t j, n = 0;

		for (j = 0; j < d->ncontainers; j++)
			n += d->containers[j]->prof == d->profiles[i];
		put(t, "bpfwarden_governed_containers{profile=\"%s\"} %zu\n",
		    lv(d->profiles[i]->name, a, sizeof(a)), n);
	}
	put(t, "# HELP bpfwarden_map_entries Entries in use in the kernel's shared maps.\n"
	       "# TYPE bpfwarden_map_entries gauge\n"
	       "# HELP bpfwarden_map_capacity Entries those maps hold at most (the rule "
	       "tries: each profile's, summed).\n"
	       "# TYPE bpfwarden_map_capacity gauge\n");
	{
		static const struct map_row maps[] = {
		    {"cgroups", offsetof(struct bw_maps, cgroups), sizeof(__u64), BW_CGROUPS_MAP},
		    {"pending", offsetof(struct bw_maps, pending), sizeof(__u64), BW_MAX_PENDING},
		    {"inodes", offsetof(struct bw_maps, inodes), sizeof(struct bw_inode_key),
		     BW_MAX_INODE_PINS},
		    {"unix_rules", offsetof(struct bw_maps, unix_rules), sizeof(struct bw_unix_key),
		     BW_MAX_UNIX_KEYS},
		    {"unix_places", offsetof(struct bw_maps, unix_places),
		     sizeof(struct bw_unix_place_key), BW_MAX_UNIX_KEYS},
		    {"file_rules", offsetof(struct bw_maps, file_rules), sizeof(struct bw_path_key),
		     BW_MAX_FILE_KEYS, BW_FILE_TRIE},
		    {"exec_rules", offsetof(struct bw_maps, exec_rules), sizeof(struct bw_path_key),
		     BW_MAX_FILE_KEYS, BW_EXEC_TRIE},
		    {"net_rules", offsetof(struct bw_maps, net_rules), sizeof(struct bw_net_key),
		     BW_MAX_NET_KEYS, BW_NET_TRIE},
		    {"positions", offsetof(struct bw_maps, positions), sizeof(struct bw_pos_key),
		     BW_MAX_POSITIONS},
		    {"pos_pins", offsetof(struct bw_maps, pos_pins), sizeof(struct bw_pos_pin_key),
		     BW_MAX_POSITIONS},
		    {"pos_dirs", offsetof(struct bw_maps, pos_dirs), sizeof(struct bw_pos_dir_key),
		     BW_MAX_POSITIONS},
		};
#define NMAPS (sizeof(maps) / sizeof(maps[0]))
		long keys[NMAPS] = {0};
		size_t tries[NMAPS] = {0};

		tries_fill(maps, NMAPS, keys, tries);
		for (i = 0; i < NMAPS; i++) {
			int fd = *(int *)((char *)&d->maps + maps[i].off);
			bool trie = maps[i].trie;

			put(t, "bpfwarden_map_entries{map=\"%s\"} %ld\n", maps[i].name,
			    trie ? keys[i] : map_fill(fd, maps[i].key));
			put(t, "bpfwarden_map_capacity{map=\"%s\"} %zu\n", maps[i].name,
			    maps[i].cap * (trie ? tries[i] : 1));
		}
#undef NMAPS
	}
	put(t,
	    "# HELP bpfwarden_policy_slots_used Policy slots holding a profile.\n"
	    "# TYPE bpfwarden_policy_slots_used gauge\n"
	    "bpfwarden_policy_slots_used %zu\n"
	    "# HELP bpfwarden_policy_slots Policy slots in all.\n"
	    "# TYPE bpfwarden_policy_slots gauge\n"
	    "bpfwarden_policy_slots %d\n",
	    d->nprofiles, BW_MAX_POLICIES);
	put(t, "# HELP bpfwarden_hook_requests_total Requests of bpfwarden-hook, by answer.\n"
	       "# TYPE bpfwarden_hook_requests_total counter\n");
	for (r = BW_HOOK_GOVERNED; r <= BW_HOOK_FAIL; r++)
		put(t, "bpfwarden_hook_requests_total{result=\"%s\"} %llu\n",
		    bw_hook_result_name(r), (unsigned long long)d->metrics.hook[r]);
	put(t, "# HELP bpfwarden_hook_request_seconds Time to answer a hook request.\n"
	       "# TYPE bpfwarden_hook_request_seconds histogram\n");
	for (r = 0; r < D_LATENCY_BUCKETS; r++)
		put(t, "bpfwarden_hook_request_seconds_bucket{le=\"%g\"} %llu\n",
		    d_latency_bounds_ms[r] / 1000.0, (unsigned long long)d->metrics.latency_le[r]);
	put(t,
	    "bpfwarden_hook_request_seconds_bucket{le=\"+Inf\"} %llu\n"
	    "bpfwarden_hook_request_seconds_sum %.6f\n"
	    "bpfwarden_hook_request_seconds_count %llu\n",
	    (unsigned long long)d->metrics.latency_count, d->metrics.latency_us_sum / 1e6,
	    (unsigned long long)d->metrics.latency_count);
	put(t,
	    "# HELP bpfwarden_profile_loads_total Profile files read, and those refused.\n"
	    "# TYPE bpfwarden_profile_loads_total counter\n"
	    "bpfwarden_profile_loads_total{result=\"ok\"} %llu\n"
	    "bpfwarden_profile_loads_total{result=\"error\"} %llu\n",
	    (unsigned long long)(d->metrics.reloads - d->metrics.reload_errors),
	    (unsigned long long)d->metrics.reload_errors);
	if (d->per_pod_metrics) {
		put(t, "# HELP bpfwarden_container_info A governed container and its profile.\n"
		       "# TYPE bpfwarden_container_info gauge\n");
		for (i = 0; i < d->ncontainers; i++) {
			const struct d_container *k = d->containers[i];

			put(t,
			    "bpfwarden_container_info{namespace=\"%s\",pod=\"%s\",container=\"%s\","
			    "profile=\"%s\"} 1\n",
			    lv(k->k8s.namespace_, a, sizeof(a)), lv(k->k8s.pod, b, sizeof(b)),
			    lv(k->k8s.container, c, sizeof(c)), k->prof ? k->prof->name : "");
		}
	}
	prog_stats(d, t);
}

void d_metrics_changed(struct daemon *d)
{
	free(d->mtext);
	d->mtext = NULL;
}

/*
 * The /metrics text, made at most once a turn of the loop (d_metrics_changed
 * at each turn): as fresh as the request, and clients asking together or in
 * a loop cost one render a turn, never a wait of the hook behind many.
 */
static int metrics_text(struct daemon *d, const char **text, size_t *len)
{
	struct text t;

	if (!d->mtext) {
		t.buf = malloc(16384);
		t.cap = 16384;
		t.len = 0;
		if (!t.buf)
			return -ENOMEM;
		t.buf[0] = '\0';
		render(d, &t);
		free(d->mtext);
		d->mtext = t.buf;
		d->mtext_len = strlen(t.buf);
	}
	*text = d->mtext;
	*len = d->mtext_len;
	return 0;
}

static void mconn_close(struct d_mconn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	c->fd = -1;
	c->out = NULL;
	c->n = c->out_len = c->out_off = 0;
}

/* The request is whole (or as long as one may be): its answer, to be written. */
static void mconn_answer(struct daemon *d, struct d_mconn *c)
{
	const char *body = "not found: GET /metrics or /healthz\n";
	size_t blen, hlen;
	char head[256];
	int status = 404;

	c->req[c->n] = '\0';
	blen = strlen(body);
	if (!strncmp(c->req, "GET /metrics ", 13) || !strncmp(c->req, "GET /metrics?", 13)) {
		if (metrics_text(d, &body, &blen)) {
			mconn_close(c);
			return;
		}
		status = 200;
	} else if (!strncmp(c->req, "GET /healthz ", 13)) {
		body = "ok\n";
		blen = 3;
		status = 200;
	}
	hlen = (size_t)snprintf(
	    head, sizeof(head),
	    "HTTP/1.1 %d %s\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n\r\n",
	    status, status == 200 ? "OK" : "Not Found", blen);
	c->out = malloc(hlen + blen);
	if (!c->out) {
		mconn_close(c);
		return;
	}
	memcpy(c->out, head, hlen);
	memcpy(c->out + hlen, body, blen);
	c->out_len = hlen + blen;
	c->out_off = 0;
}

void d_metrics_accept(struct daemon *d, int lfd)
{
	size_t i;
	int fd;

	/* Every client waiting: one left in the backlog would wake the loop again. */
	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		for (i = 0; i < D_METRICS_CONNS && d->mconns[i].fd >= 0; i++)
			;
		if (i == D_METRICS_CONNS) {
			/* Past the cap: refused at once, the loop owes it nothing. */
			close(fd);
			continue;
		}
		d->mconns[i].fd = fd;
		d->mconns[i].deadline = bw_now_ms() + D_METRICS_DEADLINE_MS;
	}
}

size_t d_metrics_pollfds(struct daemon *d, struct pollfd *fds)
{
	size_t i, n = 0;

	for (i = 0; i < D_METRICS_CONNS; i++)
		if (d->mconns[i].fd >= 0)
			fds[n++] = (struct pollfd){.fd = d->mconns[i].fd,
						   .events = d->mconns[i].out ? POLLOUT : POLLIN};
	return n;
}

static void mconn_io(struct daemon *d, struct d_mconn *c, short revents)
{
	ssize_t r;

	if (revents & (POLLERR | POLLNVAL)) {
		mconn_close(c);
		return;
	}
	if (!c->out && (revents & (POLLIN | POLLHUP))) {
		r = read(c->fd, c->req + c->n, sizeof(c->req) - 1 - c->n);
		if (r <= 0) {
			if (r == 0 || (errno != EAGAIN && errno != EINTR))
				mconn_close(c);
			return;
		}
		c->n += (size_t)r;
		c->req[c->n] = '\0';
		if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n") ||
		    c->n == sizeof(c->req) - 1)
			mconn_answer(d, c);
		return;
	}
	if (c->out && (revents & POLLOUT)) {
		r = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (r <= 0) {
			mconn_close(c);
			return;
		}
		c->out_off += (size_t)r;
		if (c->out_off == c->out_len)
			mconn_close(c);
	}
}

void d_metrics_io(struct daemon *d, const struct pollfd *fds, size_t n)
{
	long now = bw_now_ms();
	size_t i, j;

	for (i = 0; i < D_METRICS_CONNS; i++) {
		struct d_mconn *c = &d->mconns[i];

		if (c->fd < 0)
			continue;
		for (j = 0; j < n; j++)
			if (fds[j].fd == c->fd) {
				if (fds[j].revents)
					mconn_io(d, c, fds[j].revents);
				break;
			}
		if (c->fd >= 0 && now >= c->deadline)
			mconn_close(c);
	}
}

long d_metrics_deadline(const struct daemon *d)
{
	long first = 0;
	size_t i;

	for (i = 0; i < D_METRICS_CONNS; i++)
		if (d->mconns[i].fd >= 0 && (!first || d->mconns[i].deadline < first))
			first = d->mconns[i].deadline;
	return first;
}

void d_metrics_close_all(struct daemon *d)
{
	size_t i;

	for (i = 0; i < D_METRICS_CONNS; i++)
		mconn_close(&d->mconns[i]);
	free(d->mtext);
	d->mtext = NULL;
}
