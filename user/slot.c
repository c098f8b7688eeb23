// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfwarden.h"
#include "slot.h"
#include "rawdevs.h"
#include "pins.h"
#include "positions.h"
#include "probe.h"
#include "util.h"

/*
 * Is any governed cgroup, one waiting for its first exec, or a service
 * selector (which makes them) using slot?
 */
static int slot_referenced(struct bw_maps *m, uint32_t slot)
{
	struct bw_cg_select sel;
	uint64_t key, next;
	struct bw_cgroup v;
	uint32_t k;
	int first = 1;

	for (k = 0; m->cg_select >= 0 && k < BW_CG_SELECT_MAX; k++)
		if (!bpf_map_lookup_elem(m->cg_select, &k, &sel) && sel.glob[0] &&
		    sel.v.policy == slot)
			return 1;
	while (!bpf_map_get_next_key(m->cgroups, first ? NULL : &key, &next)) {
		first = 0;
		key = next;
		if (!bpf_map_lookup_elem(m->cgroups, &key, &v) && v.policy == slot)
			return 1;
	}
	first = 1;
	while (m->pending >= 0 && !bpf_map_get_next_key(m->pending, first ? NULL : &key, &next)) {
		first = 0;
		key = next;
		if (!bpf_map_lookup_elem(m->pending, &key, &v) && v.policy == slot)
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

/*
 * What of a slot is kept by key in maps shared by every slot: its unix
 * names, and its pins and positions, which the kernel writes too
 * (bpf/ident.bpf.c).
 */
static void release_keys(struct bw_maps *m, uint32_t id)
{
	delete_policy_keys(m->unix_rules, sizeof(struct bw_unix_key),
			   offsetof(struct bw_unix_key, policy), sizeof(__u32), id);
	delete_policy_keys(m->unix_places, sizeof(struct bw_unix_place_key),
			   offsetof(struct bw_unix_place_key, policy), sizeof(__u16), id);
	delete_policy_keys(m->inodes, sizeof(struct bw_inode_key),
			   offsetof(struct bw_inode_key, policy), sizeof(__u16), id);
	delete_policy_keys(m->pos_pins, sizeof(struct bw_pos_pin_key),
			   offsetof(struct bw_pos_pin_key, policy), sizeof(__u16), id);
	bw_positions_release(m, id);
}

#define BW_SLOT_NAMES BW_RUN_DIR "/slots"

void bw_slot_name_set(uint32_t id, const char *name, uint64_t digest)
{
	char path[sizeof(BW_SLOT_NAMES) + 16];
	FILE *f;

	mkdir(BW_SLOT_NAMES, 0755);
	snprintf(path, sizeof(path), BW_SLOT_NAMES "/%u", id);
	f = fopen(path, "we");
	if (f && fprintf(f, "%s\n%016llx\n", name, (unsigned long long)digest) < 0) {
		fclose(f);
		f = NULL;
	}
	if (!f || fclose(f))
		bw_dbg("cannot record the name of slot %u: %s", id, strerror(errno));
}

int bw_slot_name_get(uint32_t id, char *out, size_t len, uint64_t *digest)
{
	char path[sizeof(BW_SLOT_NAMES) + 16], line[32];
	unsigned long long d;
	int ret = -ENOENT;
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), BW_SLOT_NAMES "/%u", id);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	if (!fgets(out, (int)len, f))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	if (fgets(line, sizeof(line), f) && sscanf(line, "%16llx", &d) == 1) {
		if (digest)
			*digest = d;
		ret = 0;
	}
	fclose(f);
	return ret;
}

int bw_slot_ring(struct bw_maps *m, uint32_t id)
{
	__u32 map_id;
	int fd;

	if (bpf_map_lookup_elem(m->rbufs, &id, &map_id))
		return -errno;
	fd = bpf_map_get_fd_by_id(map_id);
	return fd < 0 ? -errno : fd;
}

/*
 * Called once no cgroup refers to the slot. A decision that read an entry
 * naming it just before may still be running: a delete from a map of maps
 * (bw_rbufs, the rule tries) returns only after every running BPF program
 * has finished (the kernel's maybe_wait_bpf_programs, a synchronize_rcu), so
 * those go first and no decision sees half-deleted pins. The tries go
 * whole, with every rule of the slot.
 */
static int slot_release(struct bw_maps *m, uint32_t id)
{
	struct bw_policy empty = {};
	char path[sizeof(BW_SLOT_NAMES) + 16];

	snprintf(path, sizeof(path), BW_SLOT_NAMES "/%u", id);
	unlink(path);

	bpf_map_delete_elem(m->rbufs, &id);
	bpf_map_delete_elem(m->file_rules, &id);
	bpf_map_delete_elem(m->exec_rules, &id);
	bpf_map_delete_elem(m->net_rules, &id);
	release_keys(m, id);
	return bpf_map_update_elem(m->policies, &id, &empty, BPF_ANY) ? -errno : 0;
}

/*
 * bw_slot_end: one past the highest slot in use (in_use, whether its owner
 * lives or not), for the kernel's loops over slots. Kept under bw_lock.
 */
static int slot_end_sync(struct bw_maps *m)
{
	static struct bw_policy all[BW_MAX_POLICIES];
	__u32 zero = 0, end = BW_MAX_POLICIES;
	int ret = bw_policies_read(m, all);

	if (ret)
		return ret;
	while (end > 0 && !all[end - 1].in_use)
		end--;
	return bpf_map_update_elem(m->slot_end, &zero, &end, BPF_ANY) ? -errno : 0;
}

/*
 * A slot is free when unused, or when its owner died and no cgroup refers
 * to it; *dead says which.
 */
static int slot_free(struct bw_maps *m, uint32_t id, int *dead)
{
	struct bw_policy p;

	*dead = 0;
	if (bpf_map_lookup_elem(m->policies, &id, &p))
		return 0;
	if (!p.in_use)
		return 1;
	if (p.owner_pid && kill(p.owner_pid, 0) && errno == ESRCH && !slot_referenced(m, id)) {
		bw_dbg("reclaiming policy slot %u of dead agent %u", id, p.owner_pid);
		*dead = 1;
		return 1;
	}
	return 0;
}

/*
 * A new trie for one slot's rules of a category (bpf/maps.bpf.h): sized as
 * the maps' inner template, which the kernel holds it to.
 */
static int trie_new(const char *name, size_t key_size, size_t value_size, __u32 max)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
	int fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, name, key_size, value_size, max, &opts);

	if (fd < 0) {
		const char *caps = bw_caps_missing(BW_NEED_BPF);
		int ret = -errno;

		bw_err("cannot create the rule trie %s: %s", name,
		       ret == -EPERM && caps ? caps : strerror(-ret));
		return ret;
	}
	return fd;
}

static int write_keys(int fd, const struct bw_file_entry *v, size_t n, uint32_t id)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct bw_path_key k;

		bw_file_entry_key(&v[i], id, &k);
		if (bpf_map_update_elem(fd, &k, &v[i].val, BPF_ANY)) {
			int ret = -errno;

			bw_err("cannot store rule key %.*s: %s (a profile holds at most %d keys "
			       "of each kind)",
			       (int)v[i].keylen, v[i].key, strerror(-ret), BW_MAX_FILE_KEYS);
			return ret;
		}
	}
	return 0;
}

static int write_net(int fd, const struct bw_compiled *c, uint32_t id)
{
	size_t i;

	for (i = 0; i < c->nnets; i++) {
		struct bw_net_key k = c->nets[i].key;

		k.policy = id;
		k.prefixlen = BW_NET_KEY_HEAD_BITS + c->nets[i].key.prefixlen;
		if (bpf_map_update_elem(fd, &k, &c->nets[i].val, BPF_ANY)) {
			int ret = -errno;

			bw_err("cannot store a network rule: %s (a profile holds at most %d)",
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

/* A trie put in its slot only once full: the kernel never decides by half of it. */
static int trie_place(int outer, uint32_t id, int trie)
{
	int ret = bpf_map_update_elem(outer, &id, &trie, BPF_ANY) ? -errno : 0;

	if (ret)
		bw_err("cannot place a rule trie in policy slot %u: %s", id, strerror(-ret));
	return ret;
}

static int write_rules(struct bw_maps *m, const struct bw_compiled *c, uint32_t id)
{
	int files, execs, nets, ret;

	/* One creation error said once: the next trie is not tried after a failure. */
	files = trie_new(BW_FILE_TRIE, sizeof(struct bw_path_key), sizeof(struct bw_path_rule),
			 BW_MAX_FILE_KEYS);
	execs = files < 0 ? -1
			  : trie_new(BW_EXEC_TRIE, sizeof(struct bw_path_key),
				     sizeof(struct bw_path_rule), BW_MAX_FILE_KEYS);
	nets = execs < 0 ? -1
			 : trie_new(BW_NET_TRIE, sizeof(struct bw_net_key),
				    sizeof(struct bw_net_value), BW_MAX_NET_KEYS);
	ret = files < 0 ? files : execs < 0 ? execs : nets < 0 ? nets : 0;
	if (!ret)
		ret = write_keys(files, c->files, c->nfiles, id);
	if (!ret)
		ret = write_keys(execs, c->execs, c->nexecs, id);
	if (!ret)
		ret = write_net(nets, c, id);
	if (!ret)
		ret = trie_place(m->file_rules, id, files);
	if (!ret)
		ret = trie_place(m->exec_rules, id, execs);
	if (!ret)
		ret = trie_place(m->net_rules, id, nets);
	/* The slot keeps what was placed; a failed install releases it. */
	if (files >= 0)
		close(files);
	if (execs >= 0)
		close(execs);
	if (nets >= 0)
		close(nets);
	return ret ? ret : write_unix(m, c, id);
}

/* Likewise its verdicts per operation, mode and verdict. */
static int zero_opstats(struct bw_maps *m, uint32_t id, int ncpu)
{
	__u64 *zero = calloc(ncpu, sizeof(*zero));
	__u32 i, idx;
	int ret = 0;

	if (id >= BW_OPSTATS_SLOTS)
		return 0; /* not counted (include/bpfwarden.h) */
	if (!zero)
		return -ENOMEM;
	for (i = 0; i < BW_OPSTATS_PER_SLOT && !ret; i++) {
		idx = id * BW_OPSTATS_PER_SLOT + i;
		if (bpf_map_update_elem(m->opstats, &idx, zero, BPF_ANY))
			ret = -errno;
	}
	free(zero);
	return ret;
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
	return ret ? ret : zero_opstats(m, id, ncpu);
}

/*
 * The objects of c's rules, for the kernel to find under any name: each
 * view's positions (places the kernel follows, user/positions.c) before its
 * pins (stat(2)s, user/pins.c), so that what appears in between is pinned
 * by one or the other; *pol gets the pins' file systems.
 */
static int objects_install(const struct bw_maps *m, const struct bw_compiled *c, uint32_t policy,
			   const struct bw_pin_view *views, size_t nviews, struct bw_policy *pol,
			   struct bw_pins_done *done)
{
	struct bw_pos_done pos = {};
	struct bw_pin_set ps = {};
	size_t i;
	int ret = 0;

	/*
	 * Positions before the stat(2)s: what appears in between is pinned by
	 * one or the other. Each view places them in its own mounts.
	 */
	if (!nviews) {
		ret = bw_positions_install(m, c, policy, NULL, &pos, NULL);
		if (!ret)
			ret = bw_unix_places_write(m, c, policy, NULL);
		if (!ret)
			ret = bw_pins_resolve_view(c, policy, NULL, &ps);
	}
	for (i = 0; i < nviews && !ret; i++) {
		ret = bw_positions_install(m, c, policy, &views[i], &pos, NULL);
		if (!ret)
			ret = bw_unix_places_write(m, c, policy, &views[i]);
	}
	for (i = 0; i < nviews && !ret; i++)
		ret = bw_pins_resolve_view(c, policy, &views[i], &ps);
	if (!ret)
		ret = bw_pins_write(m, &ps);
	ps.pos_deny = pos.deny;
	ps.pos_devs = pos.devs;
	ps.npos_devs = pos.ndevs;
	ps.npos_devs_max = sizeof(pos.devs) / sizeof(pos.devs[0]);
	bw_pins_policy(c, &ps, pol);
	done->resolved = ps.n;
	done->scan_incomplete = ps.scan_incomplete;
	done->positions = pos.n;
	bw_pin_set_free(&ps);
	return ret;
}

/* Add b's file systems to a's, or say "many" when they do not fit. */
static void merge_devs(struct bw_policy *a, const struct bw_policy *b)
{
	size_t i, j;

	if (a->npin_devs == BW_PIN_DEVS_MANY)
		return;
	if (b->npin_devs == BW_PIN_DEVS_MANY) {
		a->npin_devs = BW_PIN_DEVS_MANY;
		return;
	}
	for (i = 0; i < b->npin_devs; i++) {
		for (j = 0; j < a->npin_devs; j++)
			if (a->pin_devs[j] == b->pin_devs[i])
				break;
		if (j < a->npin_devs)
			continue;
		if (a->npin_devs == sizeof(a->pin_devs) / sizeof(a->pin_devs[0])) {
			a->npin_devs = BW_PIN_DEVS_MANY;
			return;
		}
		a->pin_devs[a->npin_devs++] = b->pin_devs[i];
	}
}

static int objects_add_view(const struct bw_maps *m, const struct bw_compiled *c, uint32_t policy,
			    const struct bw_pin_view *v, struct bw_policy *pol,
			    struct bw_pins_done *done, struct bw_pin_set *out,
			    struct bw_pos_set *pos_out)
{
	struct bw_pos_done pos = {};
	struct bw_pos_set rec = {};
	struct bw_pin_set ps = {};
	struct bw_policy add = *pol;
	int ret;

	ret = bw_positions_install(m, c, policy, v, &pos, &rec);
	if (!ret)
		ret = bw_unix_places_write(m, c, policy, v);
	if (!ret)
		ret = bw_pins_resolve_view(c, policy, v, &ps);
	if (!ret)
		ret = bw_pins_write(m, &ps);
	if (!ret) {
		ps.pos_deny = pos.deny;
		ps.pos_devs = pos.devs;
		ps.npos_devs = pos.ndevs;
		ps.npos_devs_max = sizeof(pos.devs) / sizeof(pos.devs[0]);
		bw_pins_policy(c, &ps, &add);
		pol->has_pins |= add.has_pins;
		pol->has_exec_pins |= add.has_exec_pins;
		merge_devs(pol, &add);
	}
	done->resolved = ps.n;
	done->scan_incomplete = ps.scan_incomplete;
	done->positions = pos.n;
	if (out && !ret)
		*out = ps;
	else
		bw_pin_set_free(&ps);
	if (pos_out && !ret)
		*pos_out = rec;
	else
		bw_pos_set_free(&rec);
	return ret;
}

int bw_slot_install(struct bw_maps *m, const struct bw_compiled *c, struct bw_slot *slot)
{
	return bw_slot_install_views(m, c, NULL, 0, slot);
}

int bw_slot_install_views(struct bw_maps *m, const struct bw_compiled *c,
			  const struct bw_pin_view *views, size_t nviews, struct bw_slot *slot)
{
	struct bw_policy pol = c->policy;
	struct bw_pins_done pins = {};
	uint32_t id;
	int ret, rb, dead = 0;

	ret = bw_lock(m);
	if (ret)
		return ret;
	for (id = 0; id < BW_MAX_POLICIES; id++)
		if (slot_free(m, id, &dead))
			break;
	if (id == BW_MAX_POLICIES) {
		bw_err("all %d policy slots are in use: detach a profile first", BW_MAX_POLICIES);
		ret = -ENOSPC;
		goto out;
	}
	/*
	 * Leftovers of a dead owner go before the slot is reused. An unused
	 * slot holds no ring buffer or tries (only an owner places them, under
	 * the lock, once the slot is in use), and deleting them anyway would
	 * wait for a grace period each on 6.1, found or not; the kernel may
	 * have left it pins and positions, though.
	 */
	if (dead)
		slot_release(m, id);
	else
		release_keys(m, id);
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
	/* Before its positions: the kernel follows them for slots below the end only. */
	ret = slot_end_sync(m);
	if (ret) {
		bw_err("cannot record the policy slots in use: %s", strerror(-ret));
		goto fail;
	}
	ret = write_rules(m, c, id);
	if (!ret)
		ret = objects_install(m, c, id, views, nviews, &pol, &pins);
	slot->pins_resolved = pins.resolved;
	slot->positions = pins.positions;
	slot->link_scan_incomplete = pins.scan_incomplete;
	if (ret)
		goto fail;
	if (bpf_map_update_elem(m->policies, &id, &pol, BPF_ANY)) {
		ret = -errno;
		goto fail;
	}
	rb = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "bw_rb", 0, 0, BW_RINGBUF_SIZE, NULL);
	if (rb < 0) {
		const char *caps = bw_caps_missing(BW_NEED_BPF);

		ret = -errno;
		bw_err("cannot create the event ring buffer: %s",
		       ret == -EPERM && caps ? caps : strerror(-ret));
		goto fail;
	}
	if (bpf_map_update_elem(m->rbufs, &id, &rb, BPF_ANY)) {
		ret = -errno;
		close(rb);
		goto fail;
	}
	slot->id = id;
	slot->rb_fd = rb;
	/* Before any cgroup is governed by it. */
	ret = bw_cg_moves_sync(m);
	if (ret)
		goto fail;
	ret = bw_rawdevs_sync(m);
	if (ret) {
		bw_err("cannot list the block devices that hold the host's files: %s",
		       strerror(-ret));
		goto fail;
	}
	goto out;
fail:
	slot_release(m, id);
	slot_end_sync(m);
out:
	bw_unlock(m);
	return ret;
}

int bw_slot_put(struct bw_maps *m, uint32_t id)
{
	int ret = bw_lock(m);

	if (ret)
		return ret;
	ret = slot_referenced(m, id) ? -EBUSY : slot_release(m, id);
	if (!ret) {
		slot_end_sync(m);
		bw_cg_moves_sync(m);
	}
	bw_unlock(m);
	return ret;
}

int bw_slot_add_view(struct bw_maps *m, const struct bw_compiled *c, uint32_t id,
		     const struct bw_pin_view *v, struct bw_pins_done *done,
		     struct bw_pin_set *pins, struct bw_pos_set *pos)
{
	struct bw_policy pol;
	int ret = bw_lock(m);

	if (ret)
		return ret;
	if (bpf_map_lookup_elem(m->policies, &id, &pol) || !pol.in_use) {
		ret = -ENOENT;
		goto out;
	}
	ret = objects_add_view(m, c, id, v, &pol, done, pins, pos);
	/* The new pins are in the map already: now the kernel may climb to them. */
	if (!ret && bpf_map_update_elem(m->policies, &id, &pol, BPF_ANY))
		ret = -errno;
out:
	bw_unlock(m);
	return ret;
}

int bw_slot_drop_view(struct bw_maps *m, uint32_t id, const struct bw_inode_key *keys, size_t n,
		      const struct bw_pos_set *pos)
{
	int ret = bw_lock(m);

	if (ret)
		return ret;
	bw_pins_drop(m, keys, n);
	if (pos)
		bw_positions_drop(m, id, pos->links, pos->nlinks, pos->pins, pos->npins, pos->devs,
				  pos->ndevs);
	bw_unlock(m);
	return 0;
}

/* An agent killed without letting go leaves its slot: nothing refers to it once replaced. */
void bw_slot_reclaim_orphan(struct bw_maps *m, uint32_t id)
{
	struct bw_policy p;

	if (bpf_map_lookup_elem(m->policies, &id, &p) || !p.in_use || !p.owner_pid)
		return;
	if (kill(p.owner_pid, 0) && errno == ESRCH && !slot_referenced(m, id)) {
		bw_dbg("releasing policy slot %u of dead agent %u", id, p.owner_pid);
		slot_release(m, id);
	}
}
