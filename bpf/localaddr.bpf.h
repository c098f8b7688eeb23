/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Is a destination an address of the local host? Rules about the local host
 * (`localhost`, 127.0.0.0/8, ::1) must cover every address that reaches it,
 * so a destination that is one of the host's own is decided a second time,
 * as the loopback address (bw_net_local in netrules.bpf.h). The answer
 * comes from the kernel's own address lists of the calling task's network
 * namespace, read at each decision: it is current as addresses come and go,
 * with nothing for the agent to watch.
 *
 * Local here, as in the kernel's local routing table: every IPv4 address of
 * every interface, the whole prefix of one on a loopback interface
 * (127.0.0.1/8 makes 127/8 local), the interfaces' broadcast addresses and
 * 255.255.255.255 (a datagram to them reaches local listeners of the port);
 * every IPv6 address of every interface. Not covered: routes of type local
 * added without an address (`ip route add local ...`, which needs
 * CAP_NET_ADMIN) and multicast groups (docs/enforcement.md).
 *
 * The walk is bounded (BW_LOCAL_STEPS devices and addresses); past it the
 * answer is "local": the loopback rules then decide too, and deny wins.
 *
 * Its state lives in a per-CPU map value, not on the stack: the 6.1
 * verifier checks a bpf_loop callback once, with the caller's stack as it
 * is before the first iteration (no address yet), and removes the branches
 * that state makes look dead, the address comparisons among them. What a
 * map value holds, it does not assume.
 */
#ifndef BW_LOCALADDR_BPF_H
#define BW_LOCALADDR_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#define BW_LOCAL_STEPS	4096
#define BW_IFF_LOOPBACK 0x8

struct bw_local_walk {
	struct list_head *head;	    /* &net->dev_base_head */
	struct list_head *dev;	    /* the device's dev_list */
	void *ifa;		    /* the address: in_ifaddr, or inet6_ifaddr's if_list */
	struct list_head *ifa_head; /* IPv6: &inet6_dev->addr_list */
	__u32 a[4];		    /* the destination, IPv6 form */
	bool v6;
	bool loopback; /* the device is a loopback one */
	bool local;
	__u8 done;
};

/* The next device: its first address, or none. */
static __always_inline void bw_local_next_dev(struct bw_local_walk *w)
{
	struct list_head *cur = w->dev, *next;
	struct net_device *dev;

	next = BPF_CORE_READ(cur, next);
	if (next == w->head) {
		w->done = 1;
		return;
	}
	w->dev = next;
	dev = (void *)next - bpf_core_field_offset(struct net_device, dev_list);
	w->ifa = NULL;
	if (w->v6) {
		struct inet6_dev *idev = BPF_CORE_READ(dev, ip6_ptr);

		if (!idev)
			return;
		w->ifa_head = &idev->addr_list;
		w->ifa = BPF_CORE_READ(idev, addr_list.next);
		if (w->ifa == w->ifa_head)
			w->ifa = NULL;
	} else {
		struct in_device *in = BPF_CORE_READ(dev, ip_ptr);

		w->loopback = BPF_CORE_READ(dev, flags) & BW_IFF_LOOPBACK;
		if (in)
			w->ifa = BPF_CORE_READ(in, ifa_list);
	}
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bw_local_walk);
} bw_local_walks SEC(".maps");

/* bpf_loop's context must be on the stack: it points to the map value. */
struct bw_local_ctx {
	struct bw_local_walk *w;
};

static long bw_local_step(__u32 i, struct bw_local_ctx *c)
{
	struct bw_local_walk *w = c->w;

	if (!w->ifa) {
		bw_local_next_dev(w);
		return w->done & 1;
	}
	if (w->v6) {
		struct list_head *pos = w->ifa;
		struct inet6_ifaddr *ifa =
		    (void *)pos - bpf_core_field_offset(struct inet6_ifaddr, if_list);
		__u32 b[4];

		bpf_probe_read_kernel(b, sizeof(b), &ifa->addr);
		if (b[0] == w->a[0] && b[1] == w->a[1] && b[2] == w->a[2] && b[3] == w->a[3]) {
			w->local = true;
			return 1;
		}
		w->ifa = BPF_CORE_READ(pos, next);
		if (w->ifa == w->ifa_head)
			w->ifa = NULL;
	} else {
		struct in_ifaddr *ifa = w->ifa;
		__u32 local = BPF_CORE_READ(ifa, ifa_local), mask = BPF_CORE_READ(ifa, ifa_mask);
		__u32 bcast = BPF_CORE_READ(ifa, ifa_broadcast), d = w->a[3];

		if (d == local || (w->loopback && (d & mask) == (local & mask)) ||
		    (bcast && d == bcast)) {
			w->local = true;
			return 1;
		}
		w->ifa = BPF_CORE_READ(ifa, ifa_next);
	}
	return 0;
}

/* a: the destination in IPv6 form (IPv4 mapped), as the rules see it. */
static __always_inline bool bw_dest_local(const __u8 *addr)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct bw_local_ctx c;
	struct bw_local_walk *w;
	struct net *net;
	__u32 zero = 0;
	long n;

	w = bpf_map_lookup_elem(&bw_local_walks, &zero);
	if (!w)
		return true;
	__builtin_memset(w, 0, sizeof(*w));
	__builtin_memcpy(w->a, addr, sizeof(w->a));
	w->v6 = !(w->a[0] == 0 && w->a[1] == 0 && w->a[2] == bpf_htonl(0xffff));
	if (!w->v6 && w->a[3] == 0xffffffff)
		return true; /* the limited broadcast reaches every local listener */
	net = BPF_CORE_READ(task, nsproxy, net_ns);
	if (!net)
		return true;
	w->head = &net->dev_base_head;
	w->dev = w->head;
	c.w = w;
	n = bpf_loop(BW_LOCAL_STEPS, bw_local_step, &c, 0);
	return w->local || (!w->done && n >= BW_LOCAL_STEPS) || n < 0;
}

#endif /* BW_LOCALADDR_BPF_H */
