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

struct bw_maps;

/*
 * Keep the regular file open at fd (the audit log) out of every governed
 * process's reach for changes, by any name (bw_agent_files), until
 * bw_agent_unregister. Drops the entries of agents that are gone first.
 * 0 when done, when fd is not a regular file, or when the file hooks are
 * not loaded; else -errno.
 */
int bw_agent_file_keep(struct bw_maps *m, int fd);

#endif
