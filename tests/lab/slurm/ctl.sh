#!/usr/bin/env bash
# ctl.sh: fault injection for a lab made by up.sh. Everything by PID, like down.sh.
#
# Usage: ctl.sh DIR CLUSTER ACTION [ARG...]
#   kill-node NODE          a node crash: SIGKILL the node's slurmd, every slurmstepd it started
#                           and their job processes (slurmstepd survives its slurmd, so killing
#                           only slurmd is not a crash). Slurm marks the node not responding after
#                           ~SlurmdTimeout and DOWN (its jobs requeued or NODE_FAIL) after ~15 s.
#   restart-node NODE       start the node's slurmd again (no-op when it runs); with
#                           ReturnToService=1 a node that was DOWN for not responding returns.
#   set-node-down NODE WHY  scontrol update state=down (an admin's DOWN: it stays until resumed)
#   resume-node NODE        scontrol update state=resume
#   stop-login              stop the cluster's login sshd and its sessions: connections refused
#   start-login             start it again (no-op when it runs)
#   pause-login             SIGSTOP the login sshd and its sessions: a login node that hangs
#                           (connections are accepted by the kernel, then nothing answers)
#   resume-login            SIGCONT them
#   change-host-key         a new host key for the login node, sshd restarted; the lab's
#                           known_hosts is NOT updated, so strict clients refuse the new key.
#                           Prints the new fingerprint (SHA256:...).
#   fingerprint             prints the login node's current host-key fingerprint
#   renice-node NODE N      a slow node: niceness N (-20..19) for the node's slurmd, what it
#                           runs now and (through the lab's TaskProlog) the scheduler autogroup
#                           of every task it starts later, so under CPU contention (see hog)
#                           that node's jobs get little CPU. N=0 undoes it.
#   hog SECONDS [N]         N busy loops (default: nproc) at ctl.sh's niceness for SECONDS, in the
#                           background, pinned round robin to the CPUs, each its own session;
#                           pid file run/hog.pid, so down.sh stops them too. A new hog replaces
#                           the cluster's previous one.
#   stop-hog                stop the cluster's hog now (no-op when none runs)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$HERE/lib.sh"

usage() { sed -n '4,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
(( $# >= 3 )) || usage
if (( EUID != 0 )); then
  command -v sudo > /dev/null || lab_fail "the lab runs as root: run ctl.sh as root" "" 2
  exec sudo -n -E "$0" "$@"
fi
[[ -d $1 ]] || lab_fail "no lab directory $1" "" 2
LAB_DIR=$(lab_abs_dir "$1")
NAME=$2
ACTION=$3
shift 3
lab_load_cluster "$NAME"

need_node() {
  [[ -n ${1:-} ]] || usage
  [[ ,$LAB_NODE_NAMES, == *",$1,"* ]] || lab_fail "cluster $NAME has no node '$1' (it has $LAB_NODE_NAMES)" "" 2
}

case $ACTION in
  kill-node)
    need_node "${1:-}"
    node=$1
    # The node's slurmd and its slurmstepd's all work in the node's directory.
    # (slurmstepd's environment and command line are its process title: its working directory,
    # inherited from slurmd, is what names it.)
    mapfile -t roots < <(lab_pid_of "$C/run/slurmd-$node.pid"
                         lab_cwd_pids "$C/node/$node"; lab_cwd_pids "$C/node/$node/spool")
    if (( ${#roots[@]} )); then
      mapfile -t all < <(printf '%s\n' "${roots[@]}"; lab_descendants "${roots[@]}")
      lab_kill KILL "${all[@]}"
      lab_wait_gone 5 "${all[@]}" || lab_fail "node $node: processes survived SIGKILL: ${all[*]}"
    fi
    rm -f "$C/run/slurmd-$node.pid"
    ;;
  restart-node)
    need_node "${1:-}"
    lab_pid_of "$C/run/slurmd-$1.pid" > /dev/null || lab_start_slurmd "$NAME" "$1"
    ;;
  set-node-down)
    need_node "${1:-}"
    SLURM_CONF=$CONF scontrol update "nodename=$1" state=down "reason=${2:-lab}"
    ;;
  resume-node)
    need_node "${1:-}"
    SLURM_CONF=$CONF scontrol update "nodename=$1" state=resume
    ;;
  stop-login)
    lab_stop_sshd "$NAME"
    ;;
  start-login)
    lab_pid_of "$C/run/sshd.pid" > /dev/null || lab_start_sshd "$NAME"
    ;;
  pause-login | resume-login)
    pid=$(lab_pid_of "$C/run/sshd.pid") || lab_fail "the login sshd of $NAME does not run"
    mapfile -t all < <(echo "$pid"; lab_descendants "$pid")
    lab_kill "$([[ $ACTION == pause-login ]] && echo STOP || echo CONT)" "${all[@]}"
    ;;
  change-host-key)
    key=$C/ssh/ssh_host_ed25519_key
    rm -f "$key" "$key.pub"
    lab_host_key "$NAME"
    lab_stop_sshd "$NAME"
    lab_start_sshd "$NAME"
    lab_fingerprint "$NAME"
    ;;
  fingerprint)
    lab_fingerprint "$NAME"
    ;;
  renice-node)
    need_node "${1:-}"
    if ! [[ ${2:-} =~ ^-?[0-9]+$ ]] || (( $2 < -20 || $2 > 19 )); then usage; fi
    pid=$(lab_pid_of "$C/run/slurmd-$1.pid") || lab_fail "node $1: its slurmd does not run"
    # The nice value of the slurmd and of what it runs now (slurmstepd's, their tasks), which
    # later steps inherit...
    mapfile -t all < <(echo "$pid"; lab_descendants "$pid"
                       lab_cwd_pids "$C/node/$1"; lab_cwd_pids "$C/node/$1/spool")
    renice -n "$2" -p "${all[@]}" > /dev/null
    # ...and, since the kernel shares CPU time between sessions (autogroups) before processes
    # and every step is a session of its own, the autogroup of each step: the running ones
    # here, later ones through the TaskProlog, which reads node/<node>/nice (see up.sh).
    for p in "${all[@]}"; do echo "$2" > "/proc/$p/autogroup" 2> /dev/null || :; done
    if (( $2 == 0 )); then rm -f "$C/node/$1/nice"; else echo "$2" > "$C/node/$1/nice"; fi
    ;;
  hog)
    if ! [[ ${1:-} =~ ^[0-9]+$ ]] || (( $1 == 0 )); then usage; fi
    count=${2:-$(nproc)}
    if ! [[ $count =~ ^[0-9]+$ ]] || (( count == 0 || count > 256 )); then usage; fi
    lab_stop_hog "$NAME"
    lab_start_hog "$NAME" "$1" "$count"
    ;;
  stop-hog)
    lab_stop_hog "$NAME"
    ;;
  *)
    usage
    ;;
esac
