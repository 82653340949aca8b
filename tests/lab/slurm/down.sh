#!/usr/bin/env bash
# down.sh: stop everything up.sh started under DIR, by PID only (never by process name), so a
# lab in another directory running at the same time is left alone. See README.md.
#
# Usage: down.sh DIR [--purge]
#   --purge  also delete what up.sh made under DIR (cluster state, logs, keys, munge key, the
#            clusters' ports), so the next up.sh starts clean. DIR itself and files up.sh did
#            not make stay.
#
# Found, in this order, and with all their descendants (live ssh sessions, job processes):
#   * the pid files DIR/<cluster>/run/*.pid (slurmctld, slurmd's, login sshd), each checked to
#     still be this lab's process (marker in its environment or DIR in its command line);
#   * processes whose environment has ORCH_LAB_DIR=DIR: up.sh exports it to every daemon and the
#     login nodes SetEnv it into every session, so whatever was started over ssh carries it;
#   * processes working in DIR/<cluster>/log or DIR/<cluster>/node/<node>[/spool]: slurmctld,
#     slurmd and every slurmstepd (which overwrites its environment with its process title);
#   * job processes: SLURM_JOB_ID set and SLURM_CONF=DIR/<cluster>/etc/slurm.conf, even orphaned;
# but never this script or its ancestors (it may run inside a login-node session). Then munged.
# slurmstepd, srun, salloc and sattach get KILL at once (they ignore TERM or wait for a controller
# that is going away); the rest TERM, then KILL after 5 s. With --purge everything gets KILL at
# once: the state it would save is deleted anyway.
# Idempotent. Exit status 0 when nothing of the lab is left running. LAB_DEBUG=1 says what it kills.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$HERE/lib.sh"

DIR=""; PURGE=0
for a in "$@"; do
  case $a in
    --purge) PURGE=1 ;;
    -*) echo "usage: down.sh DIR [--purge]" >&2; exit 2 ;;
    *) [[ -z $DIR ]] || { echo "usage: down.sh DIR [--purge]" >&2; exit 2; }; DIR=$a ;;
  esac
done
[[ -n $DIR ]] || { echo "usage: down.sh DIR [--purge]" >&2; exit 2; }
[[ -d $DIR ]] || exit 0
if (( EUID != 0 )); then
  command -v sudo > /dev/null || lab_fail "the lab runs as root: run down.sh as root" "" 2
  exec sudo -n -E "$0" "$@"
fi
LAB_DIR=$(lab_abs_dir "$DIR")
[[ $LAB_DIR != / ]] || lab_fail "refusing to treat / as a lab directory" "" 2

dbg() { [[ -n ${LAB_DEBUG:-} ]] && echo "[down.sh] ${SECONDS}s: $*" >&2; return 0; }

self_and_ancestors() {
  local p=$BASHPID line rest
  local -a f
  echo "$$"
  while [[ -n $p && $p != 0 ]]; do
    echo "$p"
    { read -r line < "/proc/$p/stat"; } 2>/dev/null || break
    rest=${line##*) }
    read -ra f <<< "$rest"
    p=${f[1]}
  done
}

marked() {   # processes with the lab marker, and job processes of the lab's clusters
  local f p re
  grep -lzxF -e "ORCH_LAB_DIR=$LAB_DIR" /proc/[0-9]*/environ 2>/dev/null
  # shellcheck disable=SC2016
  re=$(printf '%s' "$LAB_DIR" | sed 's/[][\.*^$()+?{}|]/\\&/g')
  grep -lzE -e "^SLURM_CONF=$re/[^/]+/etc/slurm\.conf\$" /proc/[0-9]*/environ 2>/dev/null \
    | while read -r f; do grep -qz '^SLURM_JOB_ID=' "$f" 2>/dev/null && echo "$f"; done
}

working_in_lab() {   # slurmctld (DIR/<c>/log), slurmd and slurmstepd (DIR/<c>/node/<n>)
  lab_cwds | awk -v d="$LAB_DIR/" '
    { rel = substr($0, index($0, " ") + 1) }
    substr(rel, 1, length(d)) == d {
      rel = substr(rel, length(d) + 1)
      if (rel ~ /^[^\/]+\/log$/ || rel ~ /^[^\/]+\/node\/[^\/]+(\/spool)?$/) print $1 }'
}

munged_pid() { lab_pid_of "$LAB_DIR/munge/munged.pid"; }

collect() {   # every process of the lab but munged, this script and its ancestors
  local pf p
  local -a base=()
  for pf in "$LAB_DIR"/*/run/*.pid; do
    p=$(lab_pid_of "$pf") && base+=("$p")
  done
  while read -r p; do
    p=${p#/proc/}; p=${p%/environ}
    [[ $p =~ ^[0-9]+$ ]] && base+=("$p")
  done < <(marked; working_in_lab)
  (( ${#base[@]} )) || return 0
  { printf '%s\n' "${base[@]}"; lab_descendants "${base[@]}"; } | sort -un \
    | grep -vxF -f <(self_and_ancestors; munged_pid; echo 1) \
    | while read -r p; do lab_live "$p" && echo "$p"; done
}

kill_at_once() {   # slurmstepd / srun / salloc / sattach
  local c=""
  { IFS= read -r -d '' c < "/proc/$1/cmdline"; } 2>/dev/null
  c=${c%%:*}          # slurmstepd's title is "slurmstepd: [JOB.STEP]"
  c=${c##*/}
  [[ $c == slurmstepd || $c == srun || $c == salloc || $c == sattach ]]
}

stop() {   # stop the given PIDs: see the header for which signal when
  local -a all=("$@") term=() now=()
  local p
  (( ${#all[@]} )) || return 0
  for p in "${all[@]}"; do
    if (( PURGE )) || kill_at_once "$p"; then now+=("$p"); else term+=("$p"); fi
  done
  dbg "KILL ${now[*]:-}; TERM ${term[*]:-}"
  (( ${#now[@]} )) && lab_kill KILL "${now[@]}"
  (( ${#term[@]} )) && lab_kill TERM "${term[@]}"
  lab_wait_gone 5 "${all[@]}" && return 0
  dbg "still alive after TERM, KILL: $(for p in "${all[@]}"; do lab_live "$p" && echo -n "$p "; done)"
  lab_kill KILL "${all[@]}"
  lab_wait_gone 3 "${all[@]}"
}

for pass in 1 2 3; do   # again for anything that appeared meanwhile (a slurmstepd mid-fork)
  mapfile -t pids < <(collect)
  (( ${#pids[@]} )) || break
  dbg "pass $pass: ${pids[*]}"
  stop "${pids[@]}"
done
if p=$(munged_pid); then stop "$p"; fi

rm -f "$LAB_DIR"/*/run/*.pid "$LAB_DIR/munge/munged.pid" "$LAB_DIR/munge/munge.socket" \
      "$LAB_DIR/munge/munge.socket.lock"

mapfile -t left < <(collect; munged_pid)
if (( ${#left[@]} )); then
  echo "[down.sh] still alive in $LAB_DIR:" >&2
  for p in "${left[@]}"; do echo "  $p $(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null)" >&2; done
  exit 1
fi

if (( PURGE )); then
  for f in "$LAB_DIR"/*/cluster.env; do [[ -e $f ]] && rm -rf "${f%/cluster.env}"; done
  rm -rf "$LAB_DIR/munge" "$LAB_DIR/ssh"
fi
exit 0
