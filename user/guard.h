/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's own processes, which governed processes may not signal,
 * trace or otherwise reach (bpf/guard.bpf.c): each agent (run, attach,
 * learn, audit; a node daemon too) records itself while it runs.
 */
#ifndef BW_GUARD_H
#define BW_GUARD_H

/*
 * Record this process as an agent in the pinned bw_agents map. 0 when done,
 * or when the self-protection hooks are not loaded (a kernel without BPF
 * LSM: nothing would read the record); else -errno.
 */
int bw_agent_register(void);
/*
 * Remove the record. An agent that dies without calling this leaves nothing
 * behind: the record is the task's own storage and goes with the task.
 */
void bw_agent_unregister(void);

#endif
