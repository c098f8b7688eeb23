// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfwarden.h"
#include "cgroup.h"
#include "govern.h"
#include "pins.h"
#include "util.h"

int bw_slot_referenced(struct bw_maps *m, uint32_t slot)
{
	uint64_t key, next;
	struct bw_cgroup v;
	int first = 1;

	while (!bpf_map_get_next_key(m->cgroups, first ? NULL : &key, &next)) {
		first = 0;
		key = next;
		if (!bpf_map_lookup_elem(m->cgroups, &key, &v) && v.policy == slot)
			return 1;
	}
	return 0;
}

/* Delete every key of a map whose policy field (psize bytes at offset) equals slot. */
static void delete_policy_keys(int fd, size_t key_size, size_t offset, size_t psize, uint32_t slot)
{
	char key[sizeof(struct bw_path_key)], next[sizeof(struct bw_path_key)];
	char **dead = NULL;
	size_t n = 0, cap = 0, i;
	int first = 1;

	while (!bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		uint32_t policy = 0;

		first = 0;
		memcpy(key, next, key_size);
		memcpy(&policy, key + offset, psize);
		if (policy != slot)
			continue;
		if (n == cap) {
			char **nd = realloc(dead, (cap = cap ? cap * 2 : 64) * sizeof(*nd));

			if (!nd)
				break;
			dead = nd;
		}
		dead[n] = malloc(key_size);
		if (!dead[n])
			break;
		memcpy(dead[n++], key, key_size);
	}
	/* Deleting while iterating would restart the walk; collect first. */
	for (i = 0; i < n; i++) {
		bpf_map_delete_elem(fd, dead[i]);
		free(dead[i]);
	}
	free(dead);
}

int bw_slot_release(struct bw_maps *m, uint32_t id)
{
	struct bw_policy empty = {};

	bpf_map_delete_elem(m->rbufs, &id);
	delete_policy_keys(m->file_rules, sizeof(struct bw_path_key),
			   offsetof(struct bw_path_key, policy), sizeof(__u32), id);
	delete_policy_keys(m->exec_rules, sizeof(struct bw_path_key),
			   offsetof(struct bw_path_key, policy), sizeof(__u32), id);
	delete_policy_keys(m->net_rules, sizeof(struct bw_net_key),
			   offsetof(struct bw_net_key, policy), sizeof(__u32), id);
	delete_policy_keys(m->unix_rules, sizeof(struct bw_unix_key),
			   offsetof(struct bw_unix_key, policy), sizeof(__u32), id);
	delete_policy_keys(m->inodes, sizeof(struct bw_inode_key),
			   offsetof(struct bw_inode_key, policy), sizeof(__u16), id);
	return bpf_map_update_elem(m->policies, &id, &empty, BPF_ANY) ? -errno : 0;
}

/* A slot is free when unused, or when its owner died and no cgroup refers to it. */
static int slot_free(struct bw_maps *m, uint32_t id)
{
	struct bw_policy p;

	if (bpf_map_lookup_elem(m->policies, &id, &p))
		return 0;
	if (!p.in_use)
		return 1;
	if (p.owner_pid && kill(p.owner_pid, 0) && errno == ESRCH && !bw_slot_referenced(m, id)) {
		bw_dbg("reclaiming policy slot %u of dead agent %u", id, p.owner_pid);
		return 1;
	}
	return 0;
}

static int write_keys(int fd, const struct bw_file_entry *v, size_t n, uint32_t id)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct bw_path_key k;

		bw_file_entry_key(&v[i], id, &k);
		if (bpf_map_update_elem(fd, &k, &v[i].val, BPF_ANY)) {
			int ret = -errno;

			bw_err("cannot store rule key %.*s: %s (the rule maps hold %d keys each "
			       "for all loaded profiles)",
			       (int)v[i].keylen, v[i].key, strerror(-ret), BW_MAX_FILE_KEYS);
			return ret;
		}
	}
	return 0;
}

static int write_net(struct bw_maps *m, const struct bw_compiled *c, uint32_t id)
{
	size_t i;

	for (i = 0; i < c->nnets; i++) {
		struct bw_net_key k = c->nets[i].key;

		k.policy = id;
		k.prefixlen = 64 + c->nets[i].key.prefixlen;
		if (bpf_map_update_elem(m->net_rules, &k, &c->nets[i].val, BPF_ANY)) {
			int ret = -errno;

			bw_err("cannot store a network rule: %s (at most %d keys for all loaded "
			       "profiles)",
			       strerror(-ret), BW_MAX_NET_KEYS);
			return ret;
		}
	}
	return 0;
}

static int write_unix(struct bw_maps *m, const struct bw_compiled *c, uint32_t id)
{
	size_t i;

	for (i = 0; i < c->nunixes; i++) {
		struct bw_unix_key k = c->unixes[i].key;

		k.policy = id;
		if (bpf_map_update_elem(m->unix_rules, &k, &c->unixes[i].val, BPF_ANY)) {
			int ret = -errno;

			bw_err("cannot store a unix socket rule: %s (at most %d for all loaded "
			       "profiles)",
			       strerror(-ret), BW_MAX_UNIX_KEYS);
			return ret;
		}
	}
	return 0;
}

static int write_rules(struct bw_maps *m, const struct bw_compiled *c, uint32_t id)
{
	int ret = write_keys(m->file_rules, c->files, c->nfiles, id);

	if (!ret)
		ret = write_keys(m->exec_rules, c->execs, c->nexecs, id);
	if (!ret)
		ret = write_net(m, c, id);
	return ret ? ret : write_unix(m, c, id);
}

/*
 * A slot's counters start from zero: the agent reports the lost and
 * throttled counts it finds as `lost` records, and must not report an
 * earlier owner's.
 */
static int zero_counters(struct bw_maps *m, uint32_t id)
{
	int ncpu = libbpf_num_possible_cpus(), ret = 0;
	struct bw_counters *zero;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	zero = calloc(ncpu, sizeof(*zero));
	if (!zero)
		return -ENOMEM;
	if (bpf_map_update_elem(m->counters, &id, zero, BPF_ANY)) {
		ret = -errno;
		bw_err("cannot reset the counters of policy slot %u: %s", id, strerror(-ret));
	}
	free(zero);
	return ret;
}

int bw_slot_install(struct bw_maps *m, const struct bw_compiled *c, struct bw_slot *slot)
{
	struct bw_policy pol = c->policy;
	struct bw_pins_done pins = {};
	uint32_t id;
	int ret, rb;

	ret = bw_lock(m);
	if (ret)
		return ret;
	for (id = 0; id < BW_MAX_POLICIES; id++)
		if (slot_free(m, id))
			break;
	if (id == BW_MAX_POLICIES) {
		bw_err("all %d policy slots are in use: detach a profile first", BW_MAX_POLICIES);
		ret = -ENOSPC;
		goto out;
	}
	/* Leftovers of a dead owner go before the slot is reused. */
	bw_slot_release(m, id);
	ret = zero_counters(m, id);
	if (ret)
		goto out;
	pol.in_use = 1;
	pol.owner_pid = getpid();
	/* A new learn session must not inherit what an earlier one has seen. */
	if (getrandom(&pol.learn_gen, sizeof(pol.learn_gen), 0) != sizeof(pol.learn_gen))
		pol.learn_gen = (uint32_t)time(NULL) ^ ((uint32_t)getpid() << 16);
	/* The kernel climbs to pins only once they are all written. */
	pol.has_pins = pol.has_exec_pins = 0;
	ret = bpf_map_update_elem(m->policies, &id, &pol, BPF_ANY) ? -errno : 0;
	if (ret)
		goto out;
	ret = write_rules(m, c, id);
	if (!ret)
		ret = bw_pins_install(m, c, id, &pol, &pins);
	slot->pins_resolved = pins.resolved;
	slot->link_scan_incomplete = pins.scan_incomplete;
	if (ret)
		goto fail;
	if (bpf_map_update_elem(m->policies, &id, &pol, BPF_ANY)) {
		ret = -errno;
		goto fail;
	}
	rb = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "bw_rb", 0, 0, BW_RINGBUF_SIZE, NULL);
	if (rb < 0) {
		ret = -errno;
		bw_err("cannot create the event ring buffer: %s", strerror(-ret));
		goto fail;
	}
	if (bpf_map_update_elem(m->rbufs, &id, &rb, BPF_ANY)) {
		ret = -errno;
		close(rb);
		goto fail;
	}
	slot->id = id;
	slot->rb_fd = rb;
	ret = 0;
	goto out;
fail:
	bw_slot_release(m, id);
out:
	bw_unlock(m);
	return ret;
}

struct govern_arg {
	struct bw_maps *m;
	struct bw_cgroup v;
	int ret;
};

static int govern_fn(const char *path, uint64_t id, void *arg)
{
	struct govern_arg *a = arg;

	if (bpf_map_update_elem(a->m->cgroups, &id, &a->v, BPF_ANY)) {
		a->ret = -errno;
		bw_err("cannot govern %s: %s (at most %d governed cgroups)", path, strerror(errno),
		       BW_MAX_CGROUPS);
		return a->ret;
	}
	return 0;
}

int bw_govern(struct bw_maps *m, const char *dir, uint32_t slot, uint8_t mode)
{
	struct govern_arg a = {.m = m};

	a.v.policy = slot;
	a.v.mode = mode;
	return bw_cgroup_walk(dir, govern_fn, &a);
}

struct ungovern_arg {
	struct bw_maps *m;
	int found;
	uint32_t slot;
};

/* Let go of the entries of one slot only: another session may govern a cgroup below. */
static int ungovern_fn(const char *path, uint64_t id, void *arg)
{
	struct ungovern_arg *a = arg;
	struct bw_cgroup v;

	if (bpf_map_lookup_elem(a->m->cgroups, &id, &v))
		return 0;
	if (!a->found) {
		a->found = 1;
		if (a->slot == UINT32_MAX)
			a->slot = v.policy;
	}
	if (v.policy == a->slot)
		bpf_map_delete_elem(a->m->cgroups, &id);
	return 0;
}

int bw_ungovern(struct bw_maps *m, const char *dir, uint32_t *slot)
{
	struct ungovern_arg a = {.m = m, .slot = slot && *slot != UINT32_MAX ? *slot : UINT32_MAX};
	int ret;

	ret = bw_cgroup_walk(dir, ungovern_fn, &a);
	if (ret)
		return ret;
	if (!a.found)
		return -ENOENT;
	if (slot)
		*slot = a.slot;
	return 0;
}
