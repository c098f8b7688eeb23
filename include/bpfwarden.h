/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel <-> agent ABI of bpfwarden: limits, map keys and values, event
 * records. Only fixed-width __u* types with explicit padding; every struct's
 * size is asserted so that a change on one side cannot silently skew the
 * other.
 */
#ifndef BPFWARDEN_H
#define BPFWARDEN_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * A path in a file rule key. The LPM trie caps a key's data at 256 bytes;
 * 4 of them carry the policy id, so a rule path plus its terminator ('\0' for
 * an exact rule, '/' for a subtree rule, none for a name prefix) fits in 252
 * bytes.
 */
#define BW_KEY_PATH_MAX 252
/* Longest path a rule may name (bytes, without a trailing subtree glob). */
#define BW_RULE_PATH_MAX 250
/* Kernel-side path buffer: paths longer than this are flagged and denied. */
#define BW_PATH_BUF 4096
/* Components walked from a dentry to the process root before giving up. */
#define BW_PATH_DEPTH 256
/* Profiles loaded at once (one policy slot each) and cgroups agents govern. */
#define BW_MAX_POLICIES 1024
/* A set of policy slots: one bit each. */
#define BW_SLOT_WORDS  (BW_MAX_POLICIES / 64)
#define BW_MAX_CGROUPS 8192
/* Cgroups waiting for their first exec to be governed (containers being set up). */
#define BW_MAX_PENDING 1024
/*
 * Cgroups made by mkdir below governed ones inherit their entry (the
 * governed-cgroup map holds both kinds): at most BW_MAX_CGROUPS_MADE of them
 * on the host and BW_CGROUPS_MADE_PER_SLOT below the cgroups of one policy
 * slot, unless bw_cg_limits says fewer. The map has room for both kinds, so
 * sandboxes making cgroups never take the room an agent needs to govern.
 */
#define BW_MAX_CGROUPS_MADE	 8192
#define BW_CGROUPS_MADE_PER_SLOT 1024
#define BW_CGROUPS_MAP		 (BW_MAX_CGROUPS + BW_MAX_CGROUPS_MADE)
/* Trie entries (each subtree rule takes two), net keys and pinned deny inodes, all profiles. */
#define BW_MAX_NET_KEYS	  16384
#define BW_MAX_UNIX_KEYS  16384
#define BW_MAX_FILE_KEYS  131072
#define BW_MAX_INODE_PINS 16384
/*
 * A bitmap over inode numbers that says "this inode may be pinned": 2^14
 * 64-bit words, indexed by the top bits of ino * BW_PINBITS_MUL, the bit by
 * bits 20..25 of the same product. Shared by all policies.
 */
#define BW_PINBITS_SHIFT 14
#define BW_PINBITS_WORDS (1 << BW_PINBITS_SHIFT)
#define BW_PINBITS_MUL	 0x9e3779b97f4a7c15ULL

/*
 * Both sides compute the bitmap position of an inode with these, the kernel
 * to test it and the agent to set it: were they to disagree, a pin would be
 * skipped. Plain C without libc, for BPF and user space alike.
 */
static inline __u32 bw_pinbits_word(__u64 ino)
{
	return (__u32)((ino * BW_PINBITS_MUL) >> (64 - BW_PINBITS_SHIFT));
}

static inline __u64 bw_pinbits_bit(__u64 ino)
{
	return 1ULL << (((ino * BW_PINBITS_MUL) >> 20) & 63);
}

/*
 * The kernel's own dev_t (super_block.s_dev, what BPF reads): 12 bits of
 * major above 20 bits of minor. User space sees st_dev in glibc's encoding;
 * pins and events carry the kernel's, converted with these.
 */
#define BW_DEV_MINOR_BITS 20

static inline __u32 bw_dev_encode(__u32 major, __u32 minor)
{
	return major << BW_DEV_MINOR_BITS | minor; /* the kernel's MKDEV() */
}

static inline __u32 bw_dev_major(__u32 dev)
{
	return dev >> BW_DEV_MINOR_BITS;
}

static inline __u32 bw_dev_minor(__u32 dev)
{
	return dev & ((1U << BW_DEV_MINOR_BITS) - 1);
}
/* Rules in one profile after includes. */
#define BW_MAX_RULES 16384
/*
 * Block devices that hold the host's files (bw_rawdevs). With more, the
 * key BW_RAWDEVS_ALL (no device's) is written too: every block device is.
 */
#define BW_MAX_RAWDEVS 1024
#define BW_RAWDEVS_ALL 0
/* Ring buffer of one policy (bytes, power of two). */
#define BW_RINGBUF_SIZE (1 << 20)

enum bw_mode {
	BW_MODE_ENFORCE = 0,
	BW_MODE_AUDIT = 1,
	BW_MODE_LEARN = 2,
};

/* Access bits: r is reading, w is every change (contract, "Profile language"). */
#define BW_ACC_R 0x1
#define BW_ACC_W 0x2
#define BW_ACC_X 0x4 /* executing: decided by exec rules (the `r` slot of their values) */
/*
 * Mapping a file's code executable (mmap, mprotect with PROT_EXEC): decided by
 * exec rules with the `w` slot of their values, which `allow exec lib` fills
 * alone and `allow exec` together with `r`.
 */
#define BW_ACC_M 0x8

enum bw_verdict {
	BW_V_NONE = 0, /* no rule: the category default decides */
	BW_V_ALLOW = 1,
	BW_V_DENY = 2,
};

/* Governed cgroup -> its policy slot and mode. */
struct bw_cgroup {
	__u32 policy;
	__u8 mode; /* enum bw_mode */
	__u8 pad;
	/* Made by mkdir: 1 + the slot it is counted in (bw_cg_count); 0: an agent's. */
	__u16 charged;
};
_Static_assert(sizeof(struct bw_cgroup) == 8, "bw_cgroup size");

/*
 * How many entries bw_cgroups holds, by kind: index s < BW_MAX_POLICIES
 * counts the cgroups made below cgroups of slot s (charged s + 1),
 * BW_CG_MADE all made ones, BW_CG_AGENT the agents' own. Each count has two
 * halves so that no writer needs the other's lock: index i (the kernel's,
 * changed only by BPF programs with atomic adds at mkdir and rmdir) and
 * BW_CG_COUNTS + i (the agents', changed only under their lock as they
 * govern and let go). The count is the sum of the halves; either half alone
 * may be negative.
 */
#define BW_CG_MADE	 BW_MAX_POLICIES
#define BW_CG_AGENT	 (BW_MAX_POLICIES + 1)
#define BW_CG_COUNTS	 (BW_MAX_POLICIES + 2)
#define BW_CG_AGENT_HALF BW_CG_COUNTS /* + i: the agents' half of count i */

/*
 * Limits on made cgroups, read at every mkdir below a governed cgroup; 0
 * stands for the default (BW_CGROUPS_MADE_PER_SLOT, BW_MAX_CGROUPS_MADE),
 * and made is never more than BW_MAX_CGROUPS_MADE, the room the map has.
 */
struct bw_cg_limits {
	__u32 per_slot; /* made by a sandbox: below cgroups of one slot, by a governed process */
	__u32 made;	/* made below governed cgroups on the host, by anyone */
};
_Static_assert(sizeof(struct bw_cg_limits) == 8, "bw_cg_limits size");

/*
 * A service selector: a profile's `match cgroup=GLOB` line without other
 * keys, which the daemon's profiles put in force for cgroups made later
 * (user/daemon/services.c). bpf/cgroup.bpf.c matches each cgroup made
 * outside every governed one against the selectors in index order (the
 * daemon writes them by profile name, the hook's order) and makes the
 * first match's entry wait for the cgroup's first exec (bw_pending), or
 * govern it at once where no exec hook exists (pending 0). The glob is
 * fnmatch's without flags, restricted to '*' (any bytes, '/' too), '?' (one
 * byte) and literal bytes, matched against the cgroup's path from the
 * cgroup2 root ("/system.slice/x.service").
 */
#define BW_CG_SELECT_MAX 32
#define BW_CG_GLOB_LEN	 128
#define BW_CG_PATH_LEN	 512
struct bw_cg_select {
	char glob[BW_CG_GLOB_LEN]; /* NUL-terminated; "" : the entry is unused */
	struct bw_cgroup v;	   /* what a matching cgroup gets (charged 0: an agent's) */
	__u32 pending;		   /* 1: from its first exec (bw_pending); 0: from its mkdir */
	__u32 missed;		   /* matching cgroups left ungoverned: no room (the kernel adds) */
};
_Static_assert(sizeof(struct bw_cg_select) == 144, "bw_cg_select size");

#define BW_ON_DENY_LOG	0
#define BW_ON_DENY_KILL 1

/* Per-policy settings that are not rules, and the slot's owner. */
struct bw_policy {
	__u8 default_file; /* enum bw_verdict: ALLOW or DENY */
	__u8 default_exec;
	__u8 default_net;
	__u8 on_deny;
	__u8 has_pins;	    /* deny file rules of this policy are pinned in bw_inodes */
	__u8 has_exec_pins; /* deny exec rules likewise */
	__u8 exec_memfd;    /* `allow exec memfd` */
	__u8 in_use;	    /* slot taken (agent side only) */
	__u16 exec_memfd_rule;
	__u16 net_raw_rule;
	__u8 net_raw; /* enum bw_verdict of `net raw` rules; NONE: default_net decides */
	/*
	 * `net admin` rules: enum bw_verdict, NONE refused like DENY (no default
	 * allows it) but learnable; where a pad was, so that entries written
	 * before it existed read as "no rule".
	 */
	__u8 net_admin;
	__u16 net_admin_rule;
	__u32 owner_pid;  /* agent that streams this slot's events */
	__u32 event_rate; /* deny/audit events per cgroup and second; 0: no limit */
	__u32 learn_gen;  /* new for every installed profile: what a learn session has seen */
	/*
	 * The file systems holding this policy's rule pins: the climb to find
	 * a pin never leaves the object's file system, so on any other it is
	 * skipped. BW_PIN_DEVS_MANY: more than fit here, always climb.
	 */
	__u8 npin_devs;
	/*
	 * BW_SELF_*: this policy's file or exec rules name /proc/self, which
	 * the kernel looks up for a process's own /proc/PID entries
	 * (bpf/decide.bpf.h); where a pad was, so older entries read as none.
	 */
	__u8 proc_self;
	/*
	 * BW_NOP_* bits (1 << op): this policy has unix subtree rules for the
	 * operation, so a name no exact rule decides is looked up again by each
	 * directory above it; where a pad was, so older entries read as none.
	 */
	__u8 unix_subtree;
	__u8 pad3;
	__u32 pin_devs[4];
	/*
	 * `allow|deny mount|chroot|userns|cgroup`, indexed by BW_NS_*: enum
	 * bw_verdict (deny wins; NONE: no rule, refused like DENY but learnable)
	 * and the deciding rule (bw_ns_rule()). Changes of the sandbox's view, and
	 * moves of tasks between its own cgroups, are refused unless allowed,
	 * whatever the defaults say. cgroup_rule sits where a pad was, so that
	 * entries written before `cgroup` existed read as "no rule".
	 */
	__u16 ns_rule[3];
	__u8 ns[4];
	__u16 cgroup_rule;
};
_Static_assert(sizeof(struct bw_policy) == 60, "bw_policy size");

/* The rule that decided ns[what] (0: no rule). */
static inline __u16 bw_ns_rule(const struct bw_policy *pol, unsigned what)
{
	return what < 3 ? pol->ns_rule[what] : pol->cgroup_rule; /* 3: BW_NS_CGROUP */
}

/*
 * What a process may change of how names resolve (bw_policy.ns): mount
 * topology (mount, umount, move_mount, pivot_root, the new mount API), its
 * root (chroot, entering another mount namespace) and new user namespaces.
 */
#define BW_NS_MOUNT  0
#define BW_NS_CHROOT 1
#define BW_NS_USERNS 2
/*
 * Not a change of the view, but decided like one: moving tasks between the
 * cgroups of the sandbox's own subtree (cgroup.procs, cgroup.threads,
 * clone3(CLONE_INTO_CGROUP)). Moves out of it are refused whatever it says.
 */
#define BW_NS_CGROUP 3
#define BW_NS_COUNT  4

#define BW_PIN_DEVS_MANY 0xff

/* LPM trie key: policy id, then the path bytes, compared bit by bit. */
#define BW_PATH_KEY_HEAD_BITS 32 /* policy: a key's prefixlen counts it, then the path bits */
struct bw_path_key {
	__u32 prefixlen; /* bits, counting the 32 of policy */
	__u32 policy;
	char path[BW_KEY_PATH_MAX];
};
_Static_assert(sizeof(struct bw_path_key) == 260, "bw_path_key size");

/*
 * prefixlen of a key for a path of len bytes, its terminator not counted:
 * the policy, the path and the terminator ('\0', or '/' for a subtree key).
 * A path too long for any key is compared on the key's whole length, where
 * only subtree keys can match it.
 */
static inline __u32 bw_path_key_bits(__u32 len)
{
	if (len >= BW_KEY_PATH_MAX)
		return BW_PATH_KEY_HEAD_BITS + BW_KEY_PATH_MAX * 8;
	return BW_PATH_KEY_HEAD_BITS + (len + 1) * 8;
}

/*
 * Decision of the most specific rule for each access; the compiler fills the
 * accesses a key's own rules leave open from its nearest ancestor, so one
 * trie lookup decides. rule ids index the profile's rule table (0: default).
 * Exec rules: `r` is running the file (BW_ACC_X), `w` mapping its code
 * executable (BW_ACC_M).
 */
struct bw_path_rule {
	__u16 rule_r;
	__u16 rule_w;
	__u8 verdict_r; /* enum bw_verdict */
	__u8 verdict_w;
	__u8 flags; /* BW_PIN_* (pins only) */
	/*
	 * A name prefix key (DIR/NAME*, stored as "DIR/NAME" with no
	 * terminator): the offset of NAME in the key, 0 for every other key.
	 * It decides only paths with no '/' from there on; a deeper path is
	 * decided by the key of DIR/, looked up again (bpf/decide.bpf.h).
	 */
	__u8 name_at;
};

/*
 * A pin taken from a mount's root rather than from a rule. Only attribute
 * changes, whose hook gets no mount to build a path from, are decided by it.
 */
#define BW_PIN_MOUNT 0x1
/*
 * Trie values only: the key is /proc/self or below it, a rule on a process's
 * own /proc entries, whatever its PID (a rule on /proc/self or below).
 */
#define BW_PATH_SELF 0x2
#define BW_SELF_FILE 0x1 /* bw_policy.proc_self: in the file trie */
#define BW_SELF_EXEC 0x2 /* in the exec trie */
_Static_assert(sizeof(struct bw_path_rule) == 8, "bw_path_rule size");

/*
 * Objects named by deny rules (and by allow rules nested in a denied subtree)
 * pinned by device and inode, so that a hard link, a bind mount, /proc/PID/root
 * or another mount namespace reaches the same decision as the rule's path.
 */
struct bw_inode_key {
	__u64 ino;
	__u32 dev; /* kernel dev_t of the super block: bw_dev_encode() */
	__u16 policy;
	__u16 cat; /* BW_CAT_PIN_* */
};

#define BW_CAT_PIN_FILE 0
#define BW_CAT_PIN_EXEC 1
/*
 * A socket file that a `deny net connect unix PATH` rule names (self.rule_r,
 * self.verdict_r): denied under any name a rename gives it later. Pinned by
 * the agent for a socket there at load, and by the kernel when one is made
 * at the rule's place (struct bw_unix_place_key). No position, no climb.
 */
#define BW_CAT_PIN_UNIX 2
_Static_assert(sizeof(struct bw_inode_key) == 16, "bw_inode_key size");

/*
 * `self` decides the pinned object itself, `below` everything under a pinned
 * directory (BW_V_NONE for a file rule). The values are the trie's values for
 * the object's own key and its subtree key, so a pin never disagrees with the
 * path of the object it was taken from.
 */
struct bw_inode_pin {
	struct bw_path_rule self;
	struct bw_path_rule below;
};
_Static_assert(sizeof(struct bw_inode_pin) == 16, "bw_inode_pin size");

/*
 * Positions: where the objects of rules are, or may appear later, in their
 * file system's own tree (user/positions.c plans them, bpf/ident.bpf.c
 * follows them). A position is a directory's position and a name below it;
 * its id is a hash of the file system and its path from that file system's
 * root, so every policy and agent names a place alike. An object that comes
 * to a position (created, looked up, renamed there) gets the position's pins
 * (bw_inodes), and a directory on the way to deeper positions is recorded in
 * bw_pos_dirs so that what appears below it is found in turn.
 */
#define BW_POS_NAME	 256 /* a name (at most 255 bytes), NUL padded */
#define BW_MAX_POSITIONS 16384

struct bw_pos_key {
	__u64 dir; /* the position id of the directory */
	char name[BW_POS_NAME];
};
_Static_assert(sizeof(struct bw_pos_key) == 264, "bw_pos_key size");

struct bw_pos {
	__u64 pos;		      /* this position's id */
	__u64 users[BW_SLOT_WORDS];   /* policy slots with a rule at or below it (bit = slot) */
	__u64 pins[2][BW_SLOT_WORDS]; /* slots that pin what comes here, per BW_CAT_PIN_* */
	__u64 last_dir;		      /* the directory that came here last (in bw_pos_dirs) */
	__u8 dir; /* positions continue below: what comes here is a directory on the way */
	__u8 pad[7];
};
_Static_assert(sizeof(struct bw_pos) == 24 + 3 * 8 * BW_SLOT_WORDS, "bw_pos size");

struct bw_pos_pin_key {
	__u64 pos;
	__u16 policy;
	__u16 cat; /* BW_CAT_PIN_* */
	__u32 pad;
};
_Static_assert(sizeof(struct bw_pos_pin_key) == 16, "bw_pos_pin_key size");

struct bw_pos_pin {
	struct bw_inode_pin pin; /* the values the trie gives the position's path */
	__u64 ino;		 /* the object the pin went to last (0: none yet) */
};
_Static_assert(sizeof(struct bw_pos_pin) == 24, "bw_pos_pin size");

/* bw_pos_dirs: a directory on a position chain (device, inode) -> its position id. */
struct bw_pos_dir_key {
	__u64 ino;
	__u32 dev; /* kernel dev_t: bw_dev_encode() */
	__u32 pad;
};
_Static_assert(sizeof(struct bw_pos_dir_key) == 16, "bw_pos_dir_key size");

/*
 * Network rules: an LPM trie over (policy, operation, protocol, address),
 * every address in IPv6 form (IPv4 as ::ffff:a.b.c.d), so one lookup finds
 * the narrowest prefix for both families and an IPv4-mapped destination
 * meets its IPv4 rules. Its value lists port ranges, most specific first:
 * the key's own (narrowest range first, deny first at equal width), then
 * those inherited from shorter prefixes. The first range holding the port
 * decides.
 */
#define BW_NET_RANGES 16

enum bw_net_op_kind {
	BW_NOP_CONNECT = 1, /* connect(2), and TCP Fast Open and io_uring connects */
	BW_NOP_BIND = 2,
	BW_NOP_SENDMSG = 3, /* a UDP datagram's destination: decided by connect rules */
};

#define BW_NET_KEY_HEAD_BITS 64 /* policy, then op, proto and padding: before the address */
struct bw_net_key {
	__u32 prefixlen; /* BW_NET_KEY_HEAD_BITS + address prefix bits */
	__u32 policy;
	__u8 op;    /* BW_NOP_CONNECT or BW_NOP_BIND */
	__u8 proto; /* IPPROTO_TCP or IPPROTO_UDP */
	__u8 pad[2];
	__u8 addr[16];
};
_Static_assert(sizeof(struct bw_net_key) == 28, "bw_net_key size");

struct bw_port_range {
	__u16 lo, hi;
	__u16 rule;
	__u8 verdict; /* enum bw_verdict */
	__u8 pad;
};
_Static_assert(sizeof(struct bw_port_range) == 8, "bw_port_range size");

struct bw_net_value {
	__u32 n;
	__u32 pad;
	struct bw_port_range r[BW_NET_RANGES];
};
_Static_assert(sizeof(struct bw_net_value) == 136, "bw_net_value size");

/*
 * unix socket rules: exact names, a filesystem path ("/run/app.sock", as the
 * connecting process sees the socket file) or an abstract name written
 * "@name", and subtree rules for every socket file below a directory DIR,
 * kept as written: "DIR/" and two stars (looked up when no exact name
 * decides, the nearest directory first: bw_policy.unix_subtree).
 * connect rules also decide datagrams sent to the socket.
 */
#define BW_UNIX_NAME 108

struct bw_unix_key {
	__u32 policy;
	__u8 op; /* BW_NOP_CONNECT or BW_NOP_BIND */
	__u8 pad[3];
	char name[BW_UNIX_NAME];
};
_Static_assert(sizeof(struct bw_unix_key) == 116, "bw_unix_key size");

struct bw_unix_value {
	__u16 rule;
	__u8 verdict;
	__u8 pad;
};
_Static_assert(sizeof(struct bw_unix_value) == 4, "bw_unix_value size");

/*
 * The place of a unix path rule's socket file: its directory by device and
 * inode, and its last name. A bind there through another name of the
 * directory (a chroot, a bind mount in the sandbox's own namespace) meets
 * the rule of the place; a socket file made there, by anyone, is pinned
 * (BW_CAT_PIN_UNIX). The agent records the places of deny rules at load,
 * in each view it installs the profile for.
 */
struct bw_unix_place_key {
	__u64 ino; /* the directory */
	__u32 dev; /* kernel dev_t: bw_dev_encode() */
	__u16 policy;
	__u8 op; /* BW_NOP_CONNECT or BW_NOP_BIND */
	__u8 pad;
	char name[BW_UNIX_NAME]; /* the last name, NUL padded */
	__u32 tail;		 /* zero: the key's size is a multiple of its ino's */
};
_Static_assert(sizeof(struct bw_unix_place_key) == 128, "bw_unix_place_key size");

/*
 * The object of a network event, in the path bytes of struct bw_event. For
 * BW_OP_SOCKET (a socket no address rule decides) and BW_OP_RECEIVE_SOCKET
 * (a received socket no rule names): family BW_FAM_*, proto the socket type
 * (SOCK_RAW, SOCK_DGRAM...), port the protocol number, addr zero but for
 * BW_FAM_OTHER, whose addr[0] is the AF_* family.
 */
#define BW_FAM_IPV4   4
#define BW_FAM_IPV6   6
#define BW_FAM_PACKET 17  /* AF_PACKET */
#define BW_FAM_UNIX   1	  /* AF_UNIX: a received socket without a peer */
#define BW_FAM_OTHER  255 /* vsock, TIPC, ...: addr[0] says which */

struct bw_net_obj {
	__u8 addr[16]; /* as decided: IPv6 form, IPv4 mapped */
	__u16 port;    /* host order */
	__u8 family;   /* BW_FAM_*: the socket's family */
	__u8 proto;    /* IPPROTO_TCP or IPPROTO_UDP; for BW_OP_SOCKET the socket type */
};
_Static_assert(sizeof(struct bw_net_obj) == 20, "bw_net_obj size");

/*
 * Learn mode sends each distinct (cgroup, operation, object, access) once:
 * bw_learned remembers what was sent (an LRU map: past its capacity an old
 * object may be sent again, which the agent merges). Objects (a, b, c): a
 * file by inode, 0, device (a name being created: its directory's inode,
 * the name's hash, the device); an endpoint or a raw/packet socket by the
 * 16 address bytes, then family << 24 | proto << 16 | port (struct
 * bw_net_obj); a unix name by two 64-bit hashes of its bytes, and its length.
 */
#define BW_MAX_LEARNED 65536

struct bw_learn_key {
	__u64 cgroup;
	__u64 a;
	__u64 b;
	__u32 c;
	__u8 op;
	__u8 access;
	__u16 pad;
	__u32 gen; /* bw_policy.learn_gen: a new session learns afresh */
	__u32 pad2;
};
_Static_assert(sizeof(struct bw_learn_key) == 40, "bw_learn_key size");

/*
 * A flood of refusals (a program retrying in a loop) must not flood the log
 * or crowd out other cgroups' events: deny and audit events are sent at most
 * bw_policy.event_rate a second per cgroup; the rest are counted in
 * bw_counters.throttled, which the agent reports as a `lost` record with the
 * reason "throttled". The refusals themselves are never throttled.
 */
struct bw_throttle {
	__u64 second; /* boot time >> 30, about a second */
	__u32 sent;
	__u32 pad;
};
_Static_assert(sizeof(struct bw_throttle) == 16, "bw_throttle size");

enum bw_event_type {
	BW_EV_DENY = 1,
	BW_EV_AUDIT = 2,
	BW_EV_LEARN = 3,
};

enum bw_op {
	BW_OP_OPEN = 1,
	BW_OP_TRUNCATE,
	BW_OP_CREATE, /* mknod and O_CREAT */
	BW_OP_MKDIR,
	BW_OP_RMDIR,
	BW_OP_UNLINK,
	BW_OP_RENAME_FROM,
	BW_OP_RENAME_TO,
	BW_OP_LINK,
	BW_OP_SYMLINK,
	BW_OP_CHMOD,
	BW_OP_CHOWN,
	BW_OP_UTIMES,
	BW_OP_EXEC,
	BW_OP_CONNECT,
	BW_OP_BIND,
	BW_OP_SENDMSG,
	BW_OP_RECVMSG, /* a receive on a TCP connection decided again (bpf/tcpconn.bpf.h) */
	BW_OP_ACCEPT,  /* an accept on a TCP listener whose bind is decided again */
	BW_OP_SOCKET,  /* creating a raw IP or a packet socket */
	/*
	 * Changes of the view (BW_NS_*): first those whose event names the mount
	 * point or the new root (up to BW_OP_CHROOT), then those without a path.
	 */
	BW_OP_MOUNT,	  /* mount(2): new, bind, move, remount, propagation */
	BW_OP_UMOUNT,	  /* umount(2) */
	BW_OP_MOVE_MOUNT, /* move_mount(2): the target */
	BW_OP_PIVOT_ROOT, /* pivot_root(2): the new root */
	BW_OP_CHROOT,	  /* chroot(2): the new root */
	BW_OP_USERNS,	  /* a new user namespace: no path */
	BW_OP_FSOPEN,	  /* the new mount API, refused at its privilege check: no path */
	BW_OP_FSPICK,
	BW_OP_FSMOUNT,
	BW_OP_OPEN_TREE, /* open_tree(2) with OPEN_TREE_CLONE */
	BW_OP_MOUNT_SETATTR,
	BW_OP_SETNS, /* setns(2) into another mount namespace: no path */
	/* The governed cgroup tree; the path is a cgroup's, below the cgroup2 mount. */
	BW_OP_CGROUP_MIGRATE, /* a task moved into a cgroup (cgroup.procs, cgroup.threads, clone3)
			       */
	BW_OP_CGROUP_MKDIR,   /* a cgroup made below a governed one, over a limit */
	/* Attributes of a file: `w`, the path built without a mount (like utimes) */
	BW_OP_SETXATTR,
	BW_OP_REMOVEXATTR,
	BW_OP_SETACL,	/* a POSIX ACL set or removed */
	BW_OP_SETFLAGS, /* inode flags (chattr): FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR */
	BW_OP_MMAP,	/* a file's code mapped executable (BW_ACC_M) */
	BW_OP_MPROTECT, /* a file mapping made executable */
	/*
	 * Other processes and the agent itself (bpf/guard.bpf.c): the object
	 * is a struct bw_guard_obj.
	 */
	BW_OP_PTRACE,  /* ptrace, and what the kernel checks as it: /proc/PID/mem, environ, fd... */
	BW_OP_SIGNAL,  /* a signal to an agent: kill, tgkill, pidfd_send_signal, SIGIO */
	BW_OP_CONTROL, /* prlimit, setpriority, sched_setscheduler and ioprio_set on an agent */
	BW_OP_BPF,     /* bpf(2), and a BPF map or program opened */
	/* A descriptor received (SCM_RIGHTS, pidfd_getfd): bpf/receive.bpf.c. */
	BW_OP_RECEIVE,	   /* a file, decided as an open: its path */
	BW_OP_RECEIVE_NET, /* a connected socket, by its peer: struct bw_net_obj or a unix name */
	BW_OP_RECEIVE_SOCKET, /* a socket no rule names: struct bw_net_obj as for BW_OP_SOCKET */
	BW_OP_RECEIVE_BPF,    /* a BPF map, program or link: struct bw_guard_obj */
	/*
	 * The host's kernel (BW_RULE_HOST): the path bytes name what was asked
	 * for, a capability's name (CAP_SYS_RAWIO), a module's (net-pf-38) or
	 * a perf event's scope (cpu, kernel, tracepoint).
	 */
	BW_OP_CAPABLE, /* a privilege over the whole host: raw I/O, modules, reboot and kexec */
	BW_OP_MODULE,  /* a kernel module requested (the modprobe helper would run) */
	BW_OP_PERF,    /* a perf event that observes more than the caller */
	BW_OP_MAX,
};

/* Does an event of op name an inet endpoint (struct bw_net_obj), or a unix peer? */
static inline int bw_op_names_peer(unsigned op)
{
	return op == BW_OP_CONNECT || op == BW_OP_BIND || op == BW_OP_SENDMSG ||
	       op == BW_OP_RECVMSG || op == BW_OP_ACCEPT || op == BW_OP_RECEIVE_NET;
}

/* What an operation changes of the view (BW_NS_*), or -1 for any other operation. */
static inline int bw_op_ns(unsigned op)
{
	if (op == BW_OP_CHROOT || op == BW_OP_SETNS)
		return BW_NS_CHROOT;
	if (op == BW_OP_USERNS)
		return BW_NS_USERNS;
	if (op == BW_OP_CGROUP_MIGRATE)
		return BW_NS_CGROUP;
	return op >= BW_OP_MOUNT && op <= BW_OP_SETNS ? BW_NS_MOUNT : -1;
}

/*
 * Decisions that are bpfwarden's own, not a profile rule's, in an event's
 * rule field (a profile's rule ids stay below BW_MAX_RULES). They refuse in
 * enforce mode only: in audit and learn modes what they would refuse is let
 * through with an `audit` event (nothing is learned from them), except the
 * host's limit on made cgroups, which refuses in every mode: the map must
 * not fill up open.
 */
#define BW_RULE_OWN	     0xfff0 /* from here on: bpfwarden's own */
#define BW_RULE_LEAVE_CGROUP 0xffff /* a task moved out of the cgroups of its slot */
#define BW_RULE_CGROUPS_SLOT 0xfffe /* limit: cgroups made by a slot's sandboxes */
#define BW_RULE_CGROUPS_MADE 0xfffd /* limit: cgroups made below governed ones, host-wide */
#define BW_RULE_SELF	     0xfff8 /* the agent, its BPF objects and pins (self-protection) */
#define BW_RULE_PROCESSES    0xfff7 /* a process outside the sandbox, as ptrace reaches it */
/*
 * The host's kernel: a knob that makes the kernel run a program of the
 * sandbox's choosing outside its cgroup (core_pattern, modprobe, binfmt_misc,
 * uevent_helper, release_agent...), a raw view of memory or of the kernel
 * (/dev/mem, /proc/kcore, tracefs, debugfs, system-wide perf events), module
 * loading and requests, and mount changes in the host's mount namespace.
 */
#define BW_RULE_HOST 0xfff6

/* Event flags */
#define BW_EVF_PATH_TOO_LONG 0x1  /* path did not fit the kernel buffer */
#define BW_EVF_INODE_PIN     0x2  /* decided by a pinned inode, not the path */
#define BW_EVF_UNREACHABLE   0x4  /* pseudo file (pipe, socket, memfd): no path */
#define BW_EVF_FS_RELATIVE   0x8  /* path is relative to the file system of `dev` */
#define BW_EVF_UNIX	     0x10 /* a unix socket event: the path bytes are its name */
/*
 * A file reached by a file handle whose dentry has no parent (exportfs): no
 * path, identified by `dev` and `ino`; the agent finds a name for it.
 */
#define BW_EVF_DISCONNECTED 0x20
/*
 * The process's view is not the host's (another mount namespace, another
 * root): after the path and the arguments, a struct bw_real_name and the
 * object's path from its file system's root, by which the agent names the
 * real object as it sees it (a bind mount's source, the file in a chroot).
 */
#define BW_EVF_REAL 0x40
/*
 * The object is the process's own /proc entry, its path /proc/N... with N
 * its PID as its procfs shows it: learn writes it as /proc/self....
 */
#define BW_EVF_OWN_PROC 0x80

struct bw_real_name {
	__u32 dev; /* the object's file system (dev_t, bw_dev_encode()) */
	__u16 len; /* bytes of path that follow */
	__u16 pad;
};
_Static_assert(sizeof(struct bw_real_name) == 8, "bw_real_name size");

#define BW_COMM_LEN 16

/*
 * The object of a guard event (BW_OP_PTRACE, _SIGNAL, _CONTROL, _BPF,
 * _RECEIVE_BPF) in the path bytes of struct bw_event: a process, or a BPF
 * command or object.
 */
#define BW_GOBJ_TASK	  1 /* a process: pid, tid, comm, cgroup_id, agent */
#define BW_GOBJ_BPF_CMD	  2 /* a bpf(2) command: arg */
#define BW_GOBJ_BPF_MAP	  3 /* a map: name */
#define BW_GOBJ_BPF_PROG  4 /* a program: name */
#define BW_GOBJ_BPF_LINK  5 /* a link: its program's name */
#define BW_GOBJ_BPF_OTHER 6 /* BTF, an iterator: name says which */

/* arg of BW_OP_PTRACE: the kernel's PTRACE_MODE_* bits, or PTRACE_TRACEME. */
#define BW_PTRACE_READ	  0x01
#define BW_PTRACE_ATTACH  0x02
#define BW_PTRACE_TRACEME 0x100 /* the target asked to be traced by a governed parent */

/* arg of BW_OP_CONTROL: what was to be changed of the process. */
#define BW_CTL_RLIMIT 1
#define BW_CTL_NICE   2
#define BW_CTL_SCHED  3
#define BW_CTL_IOPRIO 4

struct bw_guard_obj {
	__u64 cgroup_id; /* the target process's cgroup (v2 id) */
	__u32 pid;	 /* the target process (thread group) */
	__u32 tid;	 /* the target thread */
	__u32 arg;	 /* ptrace mode, signal number, BW_CTL_*, bpf command */
	__u8 kind;	 /* BW_GOBJ_* */
	__u8 agent;	 /* the target is an agent process */
	__u8 pad[2];
	char name[BW_COMM_LEN]; /* the target's comm, or the BPF object's name */
};
_Static_assert(sizeof(struct bw_guard_obj) == 40, "bw_guard_obj size");

/*
 * An agent process: its thread group leader's entry in bw_agents, a task
 * storage map (user space writes it with a pidfd as the key). The entry
 * goes with the task.
 */
struct bw_agent {
	__u32 pid;
	__u32 pad;
};
_Static_assert(sizeof(struct bw_agent) == 8, "bw_agent size");

/*
 * An agent's own file, its audit log, by the object (bw_agent_files): no
 * governed process changes it by any name, whatever its profile allows.
 * The value is the agent that keeps it (struct bw_agent); an entry whose
 * agent is gone is dropped by the next agent to start (user/guard.c).
 */
#define BW_MAX_AGENT_FILES 1024

struct bw_agent_file_key {
	__u64 ino;
	__u32 dev; /* kernel dev_t of the super block: bw_dev_encode() */
	__u32 pad;
};
_Static_assert(sizeof(struct bw_agent_file_key) == 16, "bw_agent_file_key size");

/*
 * Fixed head of every event; path bytes (path_len, no NUL) follow it, then
 * for exec the first arguments, each NUL-terminated (args_len bytes).
 */
#define BW_EXEC_ARGS	4   /* arguments recorded */
#define BW_EXEC_ARG_LEN 128 /* bytes of each, NUL included */
struct bw_event {
	__u64 ts_boot_ns;
	__u64 cgroup_id;
	__u32 pid;
	__u32 tid;
	__u32 ppid;
	__u32 uid;
	__u32 gid;
	__u32 policy;
	__u16 rule;
	__u8 type;     /* enum bw_event_type */
	__u8 op;       /* enum bw_op */
	__u8 decision; /* enum bw_verdict: ALLOW or DENY */
	__u8 access;   /* BW_ACC_* requested */
	__u8 flags;    /* BW_EVF_* */
	__u8 mode;     /* enum bw_mode of the governed cgroup when the kernel decided */
	__u16 path_len;
	__u16 args_len; /* exec: NUL-terminated arguments after the path */
	/*
	 * With BW_EVF_FS_RELATIVE or _DISCONNECTED: the object's file system
	 * (dev_t, bw_dev_encode()) and, disconnected, its inode number.
	 * Without them: the acting process's executable when the kernel
	 * decided (its mm's exe_file; 0 for a kernel thread), by which the
	 * agent names it after the process has exited or exec'd another
	 * program (user/events.c, exe_of). In the fields an older agent reads
	 * only with those flags: the record stays the same for both builds
	 * across an upgrade (docs/operations.md).
	 */
	__u32 dev;
	char comm[BW_COMM_LEN];
	__u64 ino;
};
_Static_assert(sizeof(struct bw_event) == 80, "bw_event size");

/*
 * Per-CPU counters, one row per policy slot, counted by bpf/event.bpf.h
 * where every hook's deny verdict meets the mode: each operation a rule or
 * default denies counts once in exactly one of denied, audited, learned or
 * (learn mode, already reported) nothing.
 */
struct bw_counters {
	__u64 lost;	 /* an event the ring buffer could not take */
	__u64 denied;	 /* operations refused (enforce mode; the profile's denies in learn mode) */
	__u64 audited;	 /* operations audit mode let pass that enforce would refuse */
	__u64 learned;	 /* learn events: first sight of an access no rule allows */
	__u64 truncated; /* operations whose path did not fit BW_PATH_BUF (refused unless audit) */
	__u64 throttled; /* deny and audit events held back by the per-cgroup rate */
	__u64 pins_lost; /* pins of objects that appeared after load not written: bw_inodes full */
	__u64 kept; /* allow verdicts kept: files (bpf/dcache.bpf.h), endpoints (bpf/netcache.bpf.h)
		     */
};
_Static_assert(sizeof(struct bw_counters) == 64, "bw_counters size");

/*
 * Verdicts per policy slot, operation, mode and verdict (the daemon's
 * metrics), counted per CPU in bpf/event.bpf.h: one __u64 at
 * BW_OPSTATS_INDEX. `allowed` is 0 for a deny verdict (refused, audited or
 * learned: what the profile says, whatever the mode made of it), 1 for an
 * allow verdict. A per-CPU increment is a few instructions: every governed
 * decision counts, those of the decision cache too.
 */
#define BW_NMODES			     3
#define BW_OPSTATS_OFFSET(op, mode, allowed) (((op)*BW_NMODES + (mode)) * 2 + (allowed))
#define BW_OPSTATS_PER_SLOT		     (BW_OP_MAX * BW_NMODES * 2)
#define BW_OPSTATS_INDEX(policy, op, mode, allowed)                                                \
	((policy)*BW_OPSTATS_PER_SLOT + BW_OPSTATS_OFFSET(op, mode, allowed))
/*
 * Kept for the first BW_OPSTATS_SLOTS slots only (the daemon's profiles
 * take the lowest free slots): per CPU, all 1,024 would take 2.3 MB on each.
 */
#define BW_OPSTATS_SLOTS   64
#define BW_OPSTATS_ENTRIES (BW_OPSTATS_SLOTS * BW_OPSTATS_PER_SLOT)

#endif /* BPFWARDEN_H */
