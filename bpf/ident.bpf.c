// SPDX-License-Identifier: GPL-2.0-only
/*
 * The identity of rule objects, kept for every process, governed or not:
 * what changes it is mostly done outside the sandbox, after the profile was
 * loaded (docs/enforcement.md, "Objects that appear after load").
 *
 *  - An object that comes to a rule's position (user/positions.c: created,
 *    looked up into the dcache, renamed there) gets the position's pins in
 *    bw_inodes at once, before anyone can reach it (d_instantiate runs
 *    before the dentry gets its inode; inode_rename before the rename). A
 *    directory on the way to deeper positions is recorded in bw_pos_dirs,
 *    so what appears below it is found in turn. The object that was there
 *    before keeps a pin that can refuse (bw_adopt_pin).
 *  - A new hard link to a file under a denied directory pins the file
 *    itself (inode_link): the climb from the new name never passes the
 *    directory.
 *  - An object whose last name and last user are gone takes its pins
 *    with it (inode_free_security).
 *
 * Both also end what the decision cache keeps for the inode
 * (bpf/dcache.bpf.h): a new dentry of it, or a new pin.
 *
 * Nothing here refuses anything, and nothing runs on open. Outside the
 * directories of positions the cost is one bitmap test per dentry
 * instantiation (a creation or a dcache miss). Built with -mcpu=v3: bitmap
 * bits are set with atomic ORs, as the agent sets its own.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "pins.bpf.h"
#include "kernel.bpf.h"
#include "dcache.bpf.h"
#include "unixplace.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* The key of a position being looked up: too big for the stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bw_pos_key);
} bw_pos_scratch SEC(".maps");

static __always_inline bool bw_bit_test(void *bitmap, __u64 ino)
{
	__u32 word = bw_pinbits_word(ino);
	__u64 *bits = bpf_map_lookup_elem(bitmap, &word);

	return bits && (*bits & bw_pinbits_bit(ino));
}

static __always_inline void bw_bit_set(void *bitmap, __u64 ino)
{
	__u32 word = bw_pinbits_word(ino);
	__u64 *bits = bpf_map_lookup_elem(bitmap, &word);

	if (bits)
		__sync_fetch_and_or(bits, bw_pinbits_bit(ino));
}

/* A pin the kernel could not store leaves an object unpinned: counted, and reported. */
static __always_inline void bw_pin_put(struct bw_inode_key *k, const struct bw_inode_pin *pin,
				       __u64 flags)
{
	__u32 slot = k->policy;
	struct bw_counters *c;
	long err;

	bw_bit_set(&bw_pinbits, k->ino);
	err = bpf_map_update_elem(&bw_inodes, k, pin, flags);
	/* After the write: a verdict kept while it was on the way is not used again. */
	bw_dc_invalidate();
	if (err && err != -EEXIST) {
		c = bpf_map_lookup_elem(&bw_counters, &slot);
		if (c)
			__sync_fetch_and_add(&c->pins_lost, 1);
	}
}

struct bw_adopt {
	__u64 pos;
	__u64 mask[BW_SLOT_WORDS]; /* slots with a pin here in this category */
	__u64 ino;
	__u32 dev;
	__u32 cat;
};

/* Can pin refuse anything: its object, or what is below it? */
static __always_inline bool bw_pin_denies(const struct bw_inode_pin *pin)
{
	return pin->self.verdict_r == BW_V_DENY || pin->self.verdict_w == BW_V_DENY ||
	       pin->below.verdict_r == BW_V_DENY || pin->below.verdict_w == BW_V_DENY;
}

/* One slot's pin of the position goes to the object that came there. */
static long bw_adopt_pin(__u32 slot, struct bw_adopt *a)
{
	struct bw_pos_pin_key pk = {};
	struct bw_inode_key k = {}, old;
	struct bw_inode_pin *prev;
	struct bw_pos_pin *pp;

	if (!((a->mask[(slot >> 6) & (BW_SLOT_WORDS - 1)] >> (slot & 63)) & 1))
		return 0;
	pk.pos = a->pos;
	pk.policy = slot;
	pk.cat = a->cat;
	pp = bpf_map_lookup_elem(&bw_pos_pins, &pk);
	if (!pp)
		return 0;
	k.ino = a->ino;
	k.dev = a->dev;
	k.policy = slot;
	k.cat = a->cat;
	if (pp->ino && pp->ino != a->ino && !bw_pin_denies(&pp->pin)) {
		/*
		 * What was here before leaves the rule's place, and a pin that
		 * only allows goes with it, unless another rule's pin was merged
		 * into it. A pin that can refuse stays with its object under
		 * whatever name it has now (renamed away, or a hard link of a
		 * file replaced by rename): a deny rule's object keeps its
		 * protection for as long as it exists.
		 */
		old = k;
		old.ino = pp->ino;
		prev = bpf_map_lookup_elem(&bw_inodes, &old);
		if (prev && *(__u64 *)&prev->self == *(__u64 *)&pp->pin.self &&
		    *(__u64 *)&prev->below == *(__u64 *)&pp->pin.below)
			bpf_map_delete_elem(&bw_inodes, &old);
	}
	bw_pin_put(&k, &pp->pin, BPF_ANY);
	pp->ino = a->ino;
	return 0;
}

/* Each slot pinning at this position in category cat gives its pin. */
static __always_inline void bw_adopt_cat(struct bw_adopt *a, const struct bw_pos *pos, __u32 cat)
{
	__u64 any = 0;
	int i;

	for (i = 0; i < BW_SLOT_WORDS; i++) {
		a->mask[i] = pos->pins[cat & 1][i];
		any |= a->mask[i];
	}
	a->cat = cat;
	if (any)
		bpf_loop(bw_slots_used(), bw_adopt_pin, a, 0);
}

/* inode comes to the position (dir, the name of dentry): give it what is due there. */
static __always_inline void bw_adopt_at(struct inode *dir, struct dentry *dentry,
					struct inode *inode)
{
	struct bw_pos_dir_key dk = {}, nk = {};
	struct bw_adopt a = {};
	struct bw_pos_key *key;
	struct bw_pos *pos;
	__u32 zero = 0, len;
	__u64 *dpos;

	dk.ino = dir->i_ino;
	if (!bw_bit_test(&bw_posbits, dk.ino))
		return;
	dk.dev = BPF_CORE_READ(dir, i_sb, s_dev);
	dpos = bpf_map_lookup_elem(&bw_pos_dirs, &dk);
	if (!dpos)
		return;
	key = bpf_map_lookup_elem(&bw_pos_scratch, &zero);
	if (!key)
		return;
	len = BPF_CORE_READ(dentry, d_name.len);
	if (len >= BW_POS_NAME)
		return;
	__builtin_memset(key->name, 0, sizeof(key->name));
	key->dir = *dpos;
	bpf_probe_read_kernel(key->name, len & (BW_POS_NAME - 1),
			      BPF_CORE_READ(dentry, d_name.name));
	pos = bpf_map_lookup_elem(&bw_positions, key);
	if (!pos)
		return;
	a.pos = pos->pos;
	a.ino = BPF_CORE_READ(inode, i_ino);
	a.dev = dk.dev;
	if (pos->dir) {
		if (pos->last_dir && pos->last_dir != a.ino) {
			nk.ino = pos->last_dir;
			nk.dev = a.dev;
			bpf_map_delete_elem(&bw_pos_dirs, &nk);
		}
		nk.ino = a.ino;
		nk.dev = a.dev;
		bw_bit_set(&bw_posbits, a.ino);
		bpf_map_update_elem(&bw_pos_dirs, &nk, &a.pos, BPF_ANY);
		pos->last_dir = a.ino;
	}
	bw_adopt_cat(&a, pos, BW_CAT_PIN_FILE);
	bw_adopt_cat(&a, pos, BW_CAT_PIN_EXEC);
}

struct bw_unix_adopt {
	__u64 ino;
	__u32 dev;
	__u32 pad;
};

/* One slot's `deny net connect unix` rule of the place pins the socket file there. */
static long bw_unix_adopt_slot(__u32 slot, struct bw_unix_adopt *a)
{
	struct bw_unix_place_scratch *ps;
	struct bw_inode_pin pin = {};
	struct bw_inode_key k = {};
	struct bw_unix_value *v;
	__u32 zero = 0;

	ps = bpf_map_lookup_elem(&bw_unix_place_scratch, &zero);
	if (!ps)
		return 1;
	ps->key.policy = slot;
	ps->key.op = BW_NOP_CONNECT;
	v = bpf_map_lookup_elem(&bw_unix_places, &ps->key);
	if (!v || v->verdict != BW_V_DENY)
		return 0;
	pin.self.verdict_r = BW_V_DENY;
	pin.self.rule_r = v->rule;
	k.ino = a->ino;
	k.dev = a->dev;
	k.policy = slot;
	k.cat = BW_CAT_PIN_UNIX;
	bw_pin_put(&k, &pin, BPF_ANY);
	return 0;
}

/*
 * A socket file comes to a place (made there by bind, or renamed there),
 * whoever does it: the slots with a deny rule for the place pin it, so a
 * later rename does not take it out of the rule (bw_unix_pin_denied in
 * bpf/unix.bpf.h).
 */
static __always_inline void bw_unix_adopt_at(struct dentry *dentry, struct inode *inode)
{
	struct bw_unix_place_scratch *ps;
	struct bw_unix_adopt a = {};
	__u32 zero = 0;

	ps = bpf_map_lookup_elem(&bw_unix_place_scratch, &zero);
	if (!ps || bw_unix_place_of(&ps->key, dentry))
		return;
	a.ino = BPF_CORE_READ(inode, i_ino);
	a.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	bpf_loop(bw_slots_used(), bw_unix_adopt_slot, &a, 0);
}

/* Every new dentry with an inode: a creation, or a lookup that missed the dcache. */
SEC("lsm/d_instantiate")
int BPF_PROG(bw_d_inst, struct dentry *dentry, struct inode *inode)
{
	struct inode *dir;

	/*
	 * A socket's inode (sockfs: every socket(2) comes here) has no name to
	 * open or to be at a rule's position by.
	 */
	if (!inode || inode->i_sb->s_magic == BW_SOCKFS_MAGIC)
		return 0;
	/* A verdict kept for the inode's old dentry must not be taken for this one. */
	bw_dc_forget(inode);
	/* Plain loads through the hook's typed pointers: every new dentry comes here. */
	dir = dentry->d_parent->d_inode;
	if (dir)
		bw_adopt_at(dir, dentry, inode);
	if ((inode->i_mode & S_IFMT) == S_IFSOCK)
		bw_unix_adopt_at(dentry, inode);
	return 0;
}

/* Both directions of an exchange come here, one call each. */
SEC("lsm/inode_rename")
int BPF_PROG(bw_inode_rename, struct inode *old_dir, struct dentry *old_dentry,
	     struct inode *new_dir, struct dentry *new_dentry, int ret)
{
	struct inode *inode;

	if (ret)
		return ret;
	inode = BPF_CORE_READ(old_dentry, d_inode);
	if (!inode)
		return 0;
	bw_adopt_at(new_dir, new_dentry, inode);
	if ((BPF_CORE_READ(inode, i_mode) & S_IFMT) == S_IFSOCK)
		bw_unix_adopt_at(new_dentry, inode);
	return 0;
}

struct bw_link {
	struct dentry *dentry;
	__u64 ino;
	__u32 dev;
	__u32 pad;
};

/* Pin the linked file with its directory's subtree values, if they can deny. */
static __always_inline void bw_link_pin(struct bw_link *l, const struct bw_policy *pol, __u32 slot,
					__u8 cat)
{
	struct bw_pin_walk pw = {};
	struct bw_inode_pin pin = {};
	struct bw_inode_key k = {};

	if (!bw_fs_has_pins(pol, l->dev))
		return;
	bw_pins_walk(&pw, l->dentry, slot, cat, false, false);
	if (pw.have_self || !pw.have_below)
		return;
	if (pw.below.verdict_r != BW_V_DENY && pw.below.verdict_w != BW_V_DENY)
		return;
	pin.self = pw.below;
	k.ino = l->ino;
	k.dev = l->dev;
	k.policy = slot;
	k.cat = cat;
	bw_pin_put(&k, &pin, BPF_NOEXIST);
}

static long bw_link_policy(__u32 slot, struct bw_link *l)
{
	struct bw_policy *pol = bpf_map_lookup_elem(&bw_policies, &slot);

	if (!pol || !pol->in_use)
		return 0;
	if (pol->has_pins)
		bw_link_pin(l, pol, slot, BW_CAT_PIN_FILE);
	if (pol->has_exec_pins)
		bw_link_pin(l, pol, slot, BW_CAT_PIN_EXEC);
	return 0;
}

/*
 * A hard link, by anyone: a file under a denied directory keeps its
 * denial under the new name. (Inside a sandbox path_link refuses such a
 * link first.) Called before the link is made; if it then fails the pin
 * only repeats what the file's directory says.
 */
SEC("lsm/inode_link")
int BPF_PROG(bw_inode_link, struct dentry *old_dentry, struct inode *dir, struct dentry *new_dentry,
	     int ret)
{
	struct bw_link l = {};
	struct inode *inode;

	if (ret)
		return ret;
	inode = BPF_CORE_READ(old_dentry, d_inode);
	if (!inode)
		return 0;
	l.dentry = old_dentry;
	l.ino = BPF_CORE_READ(inode, i_ino);
	l.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	bpf_loop(bw_slots_used(), bw_link_policy, &l, 0);
	return 0;
}

struct bw_gone {
	__u64 ino;
	__u32 dev;
	__u32 sock; /* a socket file: its unix pins go too */
};

static long bw_gone_slot(__u32 slot, struct bw_gone *g)
{
	struct bw_inode_key k = {.ino = g->ino, .dev = g->dev, .policy = slot};

	k.cat = BW_CAT_PIN_FILE;
	bpf_map_delete_elem(&bw_inodes, &k);
	k.cat = BW_CAT_PIN_EXEC;
	bpf_map_delete_elem(&bw_inodes, &k);
	if (g->sock) {
		k.cat = BW_CAT_PIN_UNIX;
		bpf_map_delete_elem(&bw_inodes, &k);
	}
	return 0;
}

/*
 * An object gone for good (no name left, its last user gone): its pins go
 * with it. Kept, they would fill bw_inodes with objects that no longer
 * exist (a deny rule's file replaced by rename keeps its pin, above, at
 * every update of it) and, once the file system gives the inode number to
 * a new file, refuse that file by a rule that never named it. An inode
 * only evicted from memory still has its names (i_nlink): its pins stay.
 */
SEC("lsm/inode_free_security")
int BPF_PROG(bw_inode_gone, struct inode *inode)
{
	struct bw_gone g;

	if (BPF_CORE_READ(inode, i_nlink))
		return 0;
	g.ino = BPF_CORE_READ(inode, i_ino);
	if (!bw_bit_test(&bw_pinbits, g.ino))
		return 0;
	g.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	g.sock = (BPF_CORE_READ(inode, i_mode) & S_IFMT) == S_IFSOCK;
	bpf_loop(bw_slots_used(), bw_gone_slot, &g, 0);
	return 0;
}
