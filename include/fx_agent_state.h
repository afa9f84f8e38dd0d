/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's state as /proc shows it, for `fxprof list` (no attach, no signal): the drain
 * thread's OS name (comm, /proc/PID/task/TID/comm; the Java thread's name stays "fxagent
 * drain"). The drain thread renames itself at its first pass after each start and stop
 * (agent/model/drain.c): PR_SET_NAME names only the calling thread. A process that maps the
 * agent with no thread of either name has not started it (loaded only). Both fit comm's 15
 * bytes. */
#ifndef FX_AGENT_STATE_H
#define FX_AGENT_STATE_H

#define FX_STATE_COMM_SAMPLING "fxagent running"
#define FX_STATE_COMM_STOPPED  "fxagent stopped"

#endif
