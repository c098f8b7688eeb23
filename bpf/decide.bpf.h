/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One decision procedure for file and exec rules: the path's most specific
 * rule from the category's trie, the pins of the category for other names of
 * the same object, the category default; then the mode says whether to
 * refuse (EACCES), audit, learn or let it pass (bw_deny_outcome), and the
 * event goes out.
 *
 * For governed processes every internal failure fails closed (-EACCES).
 */
#ifndef BW_DECIDE_BPF_H
#define BW_DECIDE_BPF_H

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "path.bpf.h"
#include "pins.bpf.h"
#include "event.bpf.h"
#include "kernel.bpf.h"
#include "dcache.bpf.h"
#include "host.bpf.h"

#ifdef BW_WITH_EXEC_ARGS
static __always_inline __u32 bw_exec_args(struct bw_scratch *s, __u32 path_len);
#else
/* Only exec events carry arguments. */
static __always_inline __u32 bw_exec_args(struct bw_scratch *s, __u32 path_len)
{
	return 0;
}
#endif

/*
 * Which slot of a rule's value an access reads: file rules keep `r` and `w`;
 * exec rules keep running (x) in `r` and mapping executable (m) in `w`.
 */
#define BW_SLOT_R (BW_ACC_R | BW_ACC_X)
#define BW_SLOT_W (BW_ACC_W | BW_ACC_M)

struct bw_decision {
	__u8 verdict;
	__u8 flags;
	__u16 rule;
};

/* Apply one requested access: the rule's verdict, else the category default. */
static __always_inline void bw_decide_access(struct bw_decision *d, __u8 verdict, __u16 rule,
					     __u8 default_verdict)
{
	if (verdict == BW_V_NONE) {
		verdict = default_verdict;
		rule = 0;
	}
	if (verdict == BW_V_DENY && d->verdict != BW_V_DENY) {
		d->verdict = BW_V_DENY;
		d->rule = rule;
	} else if (d->verdict == BW_V_NONE) {
		d->verdict = verdict;
		d->rule = rule;
	}
}

/*
 * Is the object the agent's pin directory (a directory named "bpfwarden" at
 * the root of a BPF file system: /sys/fs/bpf/bpfwarden), or in it? Its pins
 * hold every program and map of the enforcement: no governed process reaches
 * them, whatever its profile allows (self-protection). Followed through
 * d_parent, so a bind mount of the directory or of a pin leads here too.
 */
#define BW_BPF_FS_MAGIC	 0xcafe4a11
#define BW_PIN_DIR_NAME	 "bpfwarden"
#define BW_PIN_DIR_DEPTH 8

static __always_inline bool bw_in_pin_dir(struct dentry *dentry, const struct bw_objtype *t)
{
	struct dentry *d = dentry, *parent;
	char name[sizeof(BW_PIN_DIR_NAME)];
	int i;

	if (t->fs_magic != BW_BPF_FS_MAGIC)
		return false;
	for (i = 0; i < BW_PIN_DIR_DEPTH; i++) {
		parent = BPF_CORE_READ(d, d_parent);
		if (parent == d)
			return false; /* the file system's root */
		if (BPF_CORE_READ(parent, d_parent) == parent) {
			/* d is at the root: is it the pin directory? */
			if (BPF_CORE_READ(d, d_name.len) != sizeof(name) - 1)
				return false;
			bpf_probe_read_kernel(name, sizeof(name), BPF_CORE_READ(d, d_name.name));
			return bw_bytes_eq(name, BW_PIN_DIR_NAME, sizeof(name));
		}
		d = parent;
	}
	return false;
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BW_MAX_AGENT_FILES);
	__type(key, struct bw_agent_file_key);
	__type(value, struct bw_agent);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_agent_files SEC(".maps");

/*
 * Is a change of the object one of an agent's own files (its audit log)?
 * Told by device and inode, so a hard link, a bind mount or the file
 * renamed is the same file. Reads pay nothing; a write pays the pin
 * bitmap's test, where the agent sets its files' bits, before the lookup.
 */
static __always_inline bool bw_agent_file(struct dentry *dentry, const struct bw_objtype *t,
					  __u8 access)
{
	struct bw_agent_file_key k = {};

	if (!(access & BW_SLOT_W) || t->ifmt != S_IFREG)
		return false;
	k.ino = BPF_CORE_READ(dentry, d_inode, i_ino);
	if (!bw_maybe_pinned(k.ino))
		return false;
	k.dev = t->dev;
	return bpf_map_lookup_elem(&bw_agent_files, &k) != NULL;
}

/* The pins' verdict for each requested access (NONE where no pin says). */
static __always_inline void bw_decide_pins(struct bw_decision *d, const struct bw_pin_walk *pw,
					   __u8 access, __u8 default_verdict)
{
	__u8 v;
	__u16 rule;

	if (access & BW_SLOT_R) {
		bw_pin_pick(pw, BW_ACC_R, &v, &rule);
		bw_decide_access(d, v, rule, default_verdict);
	}
	if (access & BW_SLOT_W) {
		bw_pin_pick(pw, BW_ACC_W, &v, &rule);
		bw_decide_access(d, v, rule, default_verdict);
	}
}

struct bw_slash_scan {
	struct bw_scratch *s;
	__u32 from; /* first byte of the path to look at */
	__u32 len;  /* of the path */
	bool found;
};

/*
 * Byte from + i of the path. The position comes from bpf_loop's index, not a
 * counter kept in the context: 6.12's verifier walks a callback again for
 * every new context it sees, and a counter there is a new one each byte.
 */
static long bw_slash_step(__u32 i, struct bw_slash_scan *c)
{
	__u32 at = c->from + i;

	if (at >= c->len)
		return 1;
	/* The path runs from key.path on into key_tail; len < BW_PATH_BUF. */
	if (c->s->key.path[at & BW_BUF_MASK] == '/') {
		c->found = true;
		return 1;
	}
	return 0;
}

/*
 * The trie found r for the path at s->key.path: when r is a name prefix
 * (DIR/NAME*) and the path goes on below a name of DIR, r does not decide
 * it, and neither does any key longer than DIR/ (the lookup would have
 * found it), so the path is looked up again as far as DIR/. The compiler
 * stores a key for DIR/ beside every name prefix (user/compile.c), so that
 * second lookup finds it, never another name prefix: one more lookup at most.
 */
static __always_inline struct bw_path_rule *bw_past_name_prefix(struct bw_scratch *s, void *rules,
								struct bw_path_rule *r, __u32 len)
{
	struct bw_slash_scan c = {.s = s, .len = len};
	__u32 bits;

	if (!r || !r->name_at)
		return r;
	c.from = r->name_at;
	bpf_loop(BW_PATH_BUF, bw_slash_step, &c, 0);
	if (!c.found)
		return r;
	bits = s->key.prefixlen;
	s->key.prefixlen = BW_PATH_KEY_HEAD_BITS + (__u32)r->name_at * 8;
	r = bpf_map_lookup_elem(rules, &s->key);
	s->key.prefixlen = bits;
	return r;
}

/*
 * A process's own /proc entries: when the path (len bytes at s->key.path) is
 * /proc/N or below it on a procfs and the entry is the current process's
 * (or its thread's, through /proc/thread-self), fill s->self_key with the
 * same path as /proc/self (as far as a key holds) and say so. Rules on
 * /proc/self then decide it where they are more specific than the path's
 * own rules (BW_PATH_SELF), whatever its PID. The entry is told by its
 * inode's struct pid, not by N: in a PID namespace N is the namespace's.
 */
static __always_inline bool bw_own_proc_key(struct bw_scratch *s, struct dentry *dentry,
					    const struct bw_objtype *t, __u32 len)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct inode *inode;
	struct pid *pid;
	__u32 n = 0, at, rest;
	int i;

	if (len < 7 || t->fs_magic != BW_PROC_MAGIC || !bw_bytes_eq(s->key.path, "/proc/", 6))
		return false;
	inode = BPF_CORE_READ(dentry, d_inode);
	if (!inode)
		return false;
	pid = bw_proc_pid(inode);
	if (!pid || (pid != BPF_CORE_READ(task, group_leader, thread_pid) &&
		     pid != BPF_CORE_READ(task, thread_pid)))
		return false;
	for (i = 0; i < 10; i++) {
		char c = s->key.path[6 + i];

		if (c < '0' || c > '9')
			break;
		n++;
	}
	at = 6 + n;
	if (!n || at > len || (at < len && s->key.path[at & 31] != '/'))
		return false;
	rest = len - at;
	if (rest > BW_KEY_PATH_MAX - 11)
		rest = BW_KEY_PATH_MAX - 11;
	/* The verifier must see the bound on the register passed, not on a copy. */
	barrier_var(rest);
	rest &= 0xff;
	__builtin_memcpy(s->self_key.path, "/proc/self", 10);
	if (rest && bpf_probe_read_kernel(s->self_key.path + 10, rest, s->key.path + (at & 31)))
		return false;
	s->self_key.path[(10 + rest) & 0xff] = '\0';
	s->self_key.policy = s->key.policy;
	s->self_key.prefixlen = bw_path_key_bits(10 + rest);
	return true;
}

/*
 * Decide an access to the object whose path (len bytes) is at s->key.path,
 * with the rules in `tries` (the category's tries, one per slot: the
 * process's slot's is looked up only when a path is matched) and the pins
 * of `cat`.
 * has_mnt is false for attribute changes, whose hook names no mount, and for
 * objects without a path in the task's view (bpf/path.bpf.h): then the pins
 * alone decide, else the default. Exec decisions use the `r` slot of the
 * values for running a file and the `w` slot for mapping it executable
 * (BW_SLOT_*).
 * Returns 0 or -EACCES; an event is sent for every refusal or audit.
 * *keep (when not NULL) says what of the decision the decision cache may
 * keep (bpf/dcache.bpf.h): BW_DC_ALLOW when the policy itself allowed the
 * access by the object's path in the task's view, BW_DC_LEARNED when learn
 * mode let it through as a learned access, else BW_DC_NONE.
 */
static __always_inline int bw_decide(struct bw_scratch *s, __u64 cgid, struct bw_cgroup *cg,
				     void *tries, __u8 cat, struct dentry *dentry,
				     const struct bw_objtype *t, bool has_mnt, __u32 len,
				     __u32 flags, __u8 op, __u8 access, __u8 *keep)
{
	__u8 default_verdict;
	struct bw_pin_walk pw = {};
	struct bw_decision d = {};
	struct bw_learn_key obj = {};
	struct bw_path_rule *r;
	struct bw_policy *pol;
	struct bw_outcome o;
	struct inode *inode;
	__u32 policy = cg->policy, size, real;
	__u8 self;
	void *rules;

	pol = bw_policy_of(cg);
	if (!pol)
		return -EACCES;
	default_verdict = cat == BW_CAT_PIN_EXEC ? pol->default_exec : pol->default_file;
	/*
	 * An overlay's layer file: the overlay's own file was decided by its
	 * path in the task's view, so the layer's pins may only add a denial
	 * (a container's image under a default deny is not refused for being
	 * stored elsewhere on the host).
	 */
	if (flags & BW_DF_LAYER)
		default_verdict = BW_V_ALLOW;
	len &= BW_BUF_MASK;

	if (bw_in_pin_dir(dentry, t) || bw_agent_file(dentry, t, access)) {
		d.verdict = BW_V_DENY;
		d.rule = BW_RULE_SELF;
		goto deny;
	}
	if (bw_host_object(dentry, t, access)) {
		d.verdict = BW_V_DENY;
		d.rule = BW_RULE_HOST;
		goto deny;
	}
	if (bw_cmdline_outside(dentry, t, policy)) {
		d.verdict = BW_V_DENY;
		d.rule = BW_RULE_PROCESSES;
		goto deny;
	}
	if ((flags & BW_EVF_UNREACHABLE) && cat == BW_CAT_PIN_EXEC) {
		/*
		 * A memfd or other file without a path runs, or is mapped
		 * executable, only if the profile says so.
		 */
		d.verdict = pol->exec_memfd ? BW_V_ALLOW : BW_V_DENY;
		d.rule = pol->exec_memfd_rule;
	} else if (flags & BW_EVF_UNREACHABLE) {
		/* Pseudo files are outside path rules; only a pin can deny them. */
		d.verdict = BW_V_ALLOW;
	} else if (flags & BW_EVF_DISCONNECTED) {
		/*
		 * No parent to climb to a denied directory: only the object's own
		 * pin can allow it where a deny rule may hold it, i.e. under a
		 * default deny or on a file system holding deny pins.
		 */
		if (default_verdict == BW_V_ALLOW && bw_fs_has_pins(pol, t->dev))
			default_verdict = BW_V_DENY;
	} else if (flags & BW_EVF_PATH_TOO_LONG) {
		d.verdict = BW_V_DENY;
	} else if (has_mnt) {
		/*
		 * Bytes past the path are never compared: prefixlen stops at its
		 * end, or at BW_KEY_PATH_MAX for a path longer than any rule, where
		 * only subtree keys can match.
		 */
		rules = bw_trie_of(tries, policy);
		if (!rules)
			return -EACCES;
		s->key.policy = policy;
		if (len < BW_KEY_PATH_MAX)
			s->key.path[len] = '\0';
		s->key.prefixlen = bw_path_key_bits(len);
		r = bpf_map_lookup_elem(rules, &s->key);
		r = bw_past_name_prefix(s, rules, r, len);
		/* Learn mode looks too: what it records is written as /proc/self. */
		self = pol->proc_self & (cat == BW_CAT_PIN_EXEC ? BW_SELF_EXEC : BW_SELF_FILE);
		if ((self || cg->mode == BW_MODE_LEARN) && bw_own_proc_key(s, dentry, t, len)) {
			struct bw_path_rule *own =
			    self ? bpf_map_lookup_elem(rules, &s->self_key) : NULL;

			flags |= BW_EVF_OWN_PROC;
			if (own && (own->flags & BW_PATH_SELF))
				r = own;
		}
		if (access & BW_SLOT_R)
			bw_decide_access(&d, r ? r->verdict_r : BW_V_NONE, r ? r->rule_r : 0,
					 default_verdict);
		if (access & BW_SLOT_W)
			bw_decide_access(&d, r ? r->verdict_w : BW_V_NONE, r ? r->rule_w : 0,
					 default_verdict);
	}
	if (!has_mnt) {
		/* No path to match: the nearest pin decides, else the default. */
		bw_pins_walk(&pw, dentry, policy, cat, true, true);
		bw_decide_pins(&d, &pw, access, default_verdict);
	} else if ((cat == BW_CAT_PIN_EXEC ? pol->has_exec_pins : pol->has_pins) &&
		   d.verdict != BW_V_DENY &&
		   !(flags & BW_EVF_UNREACHABLE && cat == BW_CAT_PIN_EXEC) &&
		   bw_fs_has_pins(pol, t->dev)) {
		/* The same object by another name decides as its rule's path would. */
		struct bw_decision pd = {};

		bw_pins_walk(&pw, dentry, policy, cat, false, false);
		bw_decide_pins(&pd, &pw, access, BW_V_NONE);
		if (pd.verdict == BW_V_DENY) {
			d = pd;
			flags |= BW_EVF_INODE_PIN;
		}
	}
	if (d.verdict != BW_V_DENY) {
		bw_opstat(policy, op, cg->mode, 1);
		if (keep && !(flags & ~BW_DF_EXEC))
			*keep = BW_DC_ALLOW;
		return 0;
	}
deny:
	/*
	 * Learn identity: read with probes, not loads: a name being created
	 * has no inode, and a plain load through a NULL from a trusted
	 * pointer oopses.
	 */
	inode = BPF_CORE_READ(dentry, d_inode);
	obj.c = t->dev;
	if (inode) {
		obj.a = BPF_CORE_READ(inode, i_ino);
	} else {
		/* A name about to be created: its directory and the name. */
		obj.a = BPF_CORE_READ(dentry, d_parent, d_inode, i_ino);
		obj.b = BPF_CORE_READ(dentry, d_name.hash);
	}
	o = bw_deny_outcome(cgid, cg, pol, d.rule, op, access, flags, &obj);
	if (keep && o.learned && !(flags & ~BW_DF_EXEC))
		*keep = BW_DC_LEARNED;
	if (o.type) {
		bw_event_head(&s->ev, cgid, policy, o, flags & BW_DF_EXEC ? BW_OP_EXEC : op, access,
			      d.rule, flags & 0xff);
		if (flags & (BW_EVF_FS_RELATIVE | BW_EVF_DISCONNECTED))
			s->ev.dev = t->dev;
		if (flags & BW_EVF_DISCONNECTED)
			s->ev.ino = BPF_CORE_READ(dentry, d_inode, i_ino);
		if (flags & (BW_EVF_UNREACHABLE | BW_EVF_PATH_TOO_LONG | BW_EVF_DISCONNECTED))
			len = 0;
		bpf_probe_read_kernel(s->evpath, len, s->key.path);
		s->ev.path_len = len;
		s->ev.args_len = op == BW_OP_EXEC ? bw_exec_args(s, len) : 0;
		/* Arguments may run past evpath into the key, which is no longer needed. */
		size = (len + s->ev.args_len) & (2 * BW_PATH_BUF - 1);
		if (len && !(flags & (BW_EVF_FS_RELATIVE | BW_EVF_DISCONNECTED))) {
			real = bw_real_name_add(s, dentry, size);
			if (real)
				s->ev.flags |= BW_EVF_REAL;
			size += real;
		}
		bw_event_send(policy, &s->ev, sizeof(s->ev) + (size & (4 * BW_PATH_BUF - 1)));
	}
	return bw_lsm_ret(o, -EACCES);
}

/*
 * The decision on an open file (file_open, bprm_check), named by the
 * kernel's d_path, or by identity when it has no path in the task's view
 * (bw_path_of_file). The caller has found the process governed (cgid, cg).
 */
static __always_inline int bw_decide_file(__u64 cgid, struct bw_cgroup *cg, struct file *file,
					  void *rules, __u8 cat, __u8 op, __u8 access, __u8 *keep)
{
	__u32 zero = 0, flags = 0, len;
	struct bw_objtype t;
	struct bw_scratch *s;
	struct dentry *obj;
	bool has_mnt;

	s = bpf_map_lookup_elem(&bw_scratch, &zero);
	if (!s)
		return -EACCES;
	len = bw_path_of_file(s, file, &flags, &obj);
	if (op == BW_OP_OPEN && (file->f_flags & __FMODE_EXEC))
		flags |= BW_DF_EXEC;
	has_mnt = !(flags & (BW_EVF_FS_RELATIVE | BW_EVF_DISCONNECTED));
	/*
	 * f_inode is the object's inode whichever dentry names it (an overlay's
	 * layer file included), and plain loads from it cost no helper call.
	 */
	t.fs_magic = file->f_inode->i_sb->s_magic;
	t.dev = file->f_inode->i_sb->s_dev;
	t.ifmt = file->f_inode->i_mode & S_IFMT;
	/* With a path, the file's own dentry: its climb reads with plain loads. */
	if (has_mnt)
		return bw_decide(s, cgid, cg, rules, cat, file->f_path.dentry, &t, true, len, flags,
				 op, access, keep);
	return bw_decide(s, cgid, cg, rules, cat, obj, &t, false, len, flags, op, access, keep);
}

/*
 * The decision on an object named as (mount, dentry) by a hook that may not
 * call bpf_d_path, its path walked by us; no mount for attribute changes.
 * Kept apart from bw_decide_file: merged, the compiler shares one call whose
 * NULL dentry the 6.1 verifier follows into the pin walk.
 */
static __always_inline int bw_decide_walked(__u64 cgid, struct bw_cgroup *cg, void *rules, __u8 cat,
					    struct vfsmount *mnt, struct dentry *dentry, __u8 op,
					    __u8 access)
{
	__u32 zero = 0, flags = 0, len;
	struct bw_objtype t;
	struct bw_scratch *s;

	s = bpf_map_lookup_elem(&bw_scratch, &zero);
	if (!s)
		return -EACCES;
	/* A mount outside the task's namespace names nothing in its view. */
	if (mnt && bw_mnt_foreign(mnt))
		mnt = NULL;
	len = bw_path_build(s, mnt, dentry, &flags);
	bw_objtype_read(&t, dentry);
	return bw_decide(s, cgid, cg, rules, cat, dentry, &t, mnt != NULL, len, flags, op, access,
			 NULL);
}

/* A file rule's object named by a path hook. */
static __always_inline int bw_decide_path(__u64 cgid, struct bw_cgroup *cg, struct vfsmount *mnt,
					  struct dentry *dentry, __u8 op, __u8 access)
{
	return bw_decide_walked(cgid, cg, &bw_file_rules, BW_CAT_PIN_FILE, mnt, dentry, op, access);
}

#endif /* BW_DECIDE_BPF_H */
