# lib.sh: what up.sh, down.sh and ctl.sh share. Sourced, never run.
# shellcheck shell=bash disable=SC1090,SC1091,SC2034
#
# Processes are only ever found by PID: from pid files, from the marker ORCH_LAB_DIR=<lab dir>
# in their environment, from their working directory, or as descendants of those. Liveness is
# read from /proc (a zombie counts as dead: some container inits reap orphans only every second
# or two, and `kill -0` succeeds on a zombie). Nothing here needs procps.

export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH   # slurmctld, slurmd, munged, sshd live in sbin
SSHD=/usr/sbin/sshd   # sshd re-executes itself, so it must be started by its absolute path

lab_log() { echo "[lab] $*" >&2; }

# lab_fail MESSAGE [LOG_FILE] [EXIT_CODE]: the message, the last lines of the log, then exit.
lab_fail() {
  echo "[lab] error: $1" >&2
  if [[ -n ${2:-} && -s $2 ]]; then
    echo "[lab] ---- last lines of $2 ----" >&2
    tail -n 25 "$2" >&2
    echo "[lab] ----" >&2
  fi
  exit "${3:-1}"
}

# The lab directory as an absolute path without a trailing slash (it must exist).
lab_abs_dir() { (cd "$1" && pwd -P); }

# lab_live PID: the process exists and is not a zombie.
lab_live() {
  local st
  [[ $1 =~ ^[0-9]+$ ]] || return 1
  { read -r st < "/proc/$1/stat"; } 2>/dev/null || return 1
  st=${st##*) }
  [[ ${st:0:1} != Z ]]
}

# lab_ours PID: the process belongs to the lab in $LAB_DIR: it carries the marker in its
# environment, or its command line names a path under the lab (sshd and slurmstepd overwrite
# their environment with their process title, but keep the config path in it).
lab_ours() {
  grep -qzxF -e "ORCH_LAB_DIR=$LAB_DIR" "/proc/$1/environ" 2>/dev/null && return 0
  tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null | grep -qF -e "$LAB_DIR/"
}

# lab_pid_of FILE: prints the PID in a pid file if that process lives and is the lab's.
# A stale pid file whose number now belongs to someone else is ignored.
lab_pid_of() {
  local p
  { read -r p < "$1"; } 2>/dev/null || return 1
  [[ $p =~ ^[0-9]+$ ]] && lab_live "$p" && lab_ours "$p" && echo "$p"
}

# lab_descendants PID...: every descendant of the given processes, from one read of /proc.
lab_descendants() {
  (( $# )) || return 0
  # /proc/PID/stat: "PID (COMM) STATE PPID ..."; COMM may hold spaces and parentheses.
  cat /proc/[0-9]*/stat 2>/dev/null | awk -v roots="$*" '
    { s = $0; sub(/.*\) /, "", s); split(s, f, " "); kids[f[2]] = kids[f[2]] " " $1 }
    END { n = split(roots, q, " ")
          while (n > 0) { p = q[n--]; m = split(kids[p], k, " ")
            for (i = 1; i <= m; i++) if (!(k[i] in seen)) { seen[k[i]] = 1; print k[i]; q[++n] = k[i] } } }'
}

# lab_cwds: "PID DIR" for every process, DIR its working directory (" (deleted)" cut off).
lab_cwds() {
  find /proc/[0-9]*/cwd -maxdepth 0 -printf '%H %l\n' 2>/dev/null \
    | sed -e 's#^/proc/\([0-9]*\)/cwd #\1 #' -e 's/ (deleted)$//'
}

# lab_cwd_pids DIR: processes whose working directory is DIR.
lab_cwd_pids() { lab_cwds | awk -v d="$1" 'substr($0, index($0, " ") + 1) == d { print $1 }'; }

# lab_kill SIGNAL PID...: signals the live ones; ignores the rest.
lab_kill() {
  local sig=$1 p
  shift
  for p in "$@"; do lab_live "$p" && kill "-$sig" "$p" 2>/dev/null; done
  return 0
}

# lab_wait_gone SECONDS PID...: polls until none lives; 1 if some still do at the deadline.
lab_wait_gone() {
  local tries=$(($1 * 20)) p left
  shift
  while :; do
    left=0
    for p in "$@"; do lab_live "$p" && { left=1; break; }; done
    (( left )) || return 0
    (( tries-- > 0 )) || return 1
    sleep 0.05
  done
}

# lab_port_open PORT: something accepts connections on 127.0.0.1:PORT.
lab_port_open() { (exec 3<> "/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# lab_load_cluster NAME: sets C (cluster dir), CONF and the persisted cluster.env variables
# (LAB_INDEX, LAB_SSH_PORT, LAB_CTLD_PORT, LAB_NODE_NAMES, ...). Fails when the cluster is unknown.
lab_load_cluster() {
  C=$LAB_DIR/$1
  CONF=$C/etc/slurm.conf
  [[ -r $C/cluster.env ]] || lab_fail "no cluster '$1' under $LAB_DIR (up.sh $LAB_DIR $1 makes it)"
  # shellcheck disable=SC1091
  source "$C/cluster.env"
}

# The environment every daemon of cluster NAME starts with: the lab marker that down.sh looks
# for, and the cluster's slurm.conf.
lab_daemon_env() {
  export ORCH_LAB_DIR=$LAB_DIR ORCH_LAB_CLUSTER=$1 SLURM_CONF=$LAB_DIR/$1/etc/slurm.conf
}

# lab_log_size FILE: its size in bytes (0 when missing): where a daemon's new log lines start.
lab_log_size() { stat -c %s "$1" 2>/dev/null || echo 0; }

# lab_await_log WHAT LOG OFFSET READY PIDFILE PORT: waits until the daemon that was just started
# (appending to LOG from OFFSET on) is ready: the shell command READY succeeds. Fails with the log
# when the daemon logs that its port is taken (exit 75), when it died, or after 15 s.
lab_await_log() {
  local what=$1 log=$2 off=$3 ready=$4 pidfile=$5 port=$6 i new
  for (( i = 0; i < 150; i++ )); do
    new=$(tail -c "+$((off + 1))" "$log" 2>/dev/null || true)
    [[ $new == *'Address already in use'* ]] && lab_fail "$what: port $port is already in use" "$log" 75
    [[ $new == *'fatal:'* ]] && lab_fail "$what failed" "$log"
    eval "$ready" && return 0
    if (( i > 10 )) && ! lab_pid_of "$pidfile" > /dev/null; then lab_fail "$what exited" "$log"; fi
    sleep 0.1
  done
  lab_fail "$what did not come up within 15 s" "$log"
}

# lab_spawn_slurmd NAME NODE: starts the node's slurmd (it daemonizes) without waiting; prints
# the offset for lab_await_slurmd. Exit code 75 when its port is taken.
lab_spawn_slurmd() {
  local name=$1 node=$2 nd=$LAB_DIR/$1/node/$2 port off
  port=$(lab_node_port "$name" "$node") || exit 1
  mkdir -p "$nd/spool"
  lab_port_open "$port" && lab_fail "slurmd of $node: port $port is already in use" "" 75
  off=$(lab_log_size "$nd/slurmd.log")
  ( lab_daemon_env "$name"; cd "$nd" && exec slurmd -f "$SLURM_CONF" -N "$node" ) \
    < /dev/null >> "$nd/slurmd.out" 2>&1 || lab_fail "slurmd of $node did not start" "$nd/slurmd.out"
  echo "$off"
}

# lab_await_slurmd NAME NODE OFFSET: waits until that slurmd is up (see lab_await_log).
lab_await_slurmd() {
  local port
  port=$(lab_node_port "$1" "$2") || exit 1
  lab_await_log "slurmd of node $2" "$LAB_DIR/$1/node/$2/slurmd.log" "$3" \
                "tail -c +$(($3 + 1)) '$LAB_DIR/$1/node/$2/slurmd.log' | grep -q 'slurmd started on'" \
                "$LAB_DIR/$1/run/slurmd-$2.pid" "$port"
}

# lab_start_slurmd NAME NODE: both.
lab_start_slurmd() {
  local off
  off=$(lab_spawn_slurmd "$1" "$2") || exit $?
  lab_await_slurmd "$1" "$2" "$off"
}

# lab_node_port NAME NODE: the node's slurmd port (its index in LAB_NODE_NAMES).
lab_node_port() {
  local k=0 n
  ( source "$LAB_DIR/$1/cluster.env"
    for n in ${LAB_NODE_NAMES//,/ }; do
      [[ $n == "$2" ]] && { echo $((LAB_CTLD_PORT + 1 + k)); exit 0; }
      k=$((k + 1))
    done
    exit 1 ) || lab_fail "cluster $1 has no node '$2'"
}

# lab_start_sshd NAME: starts the cluster's login sshd; waits until it accepts connections.
lab_start_sshd() {
  local name=$1 c=$LAB_DIR/$1 port i
  port=$(source "$c/cluster.env" && echo "$LAB_SSH_PORT")
  mkdir -p /run/sshd && chmod 755 /run/sshd   # sshd's compiled-in privilege-separation dir
  lab_port_open "$port" && lab_fail "ssh port $port of cluster $name is already in use" "" 75
  if ! ( lab_daemon_env "$name"; exec "$SSHD" -f "$c/etc/sshd_config" -E "$c/log/sshd.log" ) \
       < /dev/null >> "$c/log/sshd.out" 2>&1; then
    if tail -n 5 "$c/log/sshd.log" 2>/dev/null | grep -q 'Address already in use'; then
      lab_fail "ssh port $port of cluster $name is already in use" "$c/log/sshd.log" 75
    fi
    lab_fail "sshd of cluster $name did not start" "$c/log/sshd.log"
  fi
  for (( i = 0; i < 200; i++ )); do   # up to 10 s
    lab_port_open "$port" && return 0
    sleep 0.05
  done
  lab_fail "sshd of cluster $name does not accept connections on port $port" "$c/log/sshd.log"
}

# lab_stop_sshd NAME: stops the login sshd (the listener, by its pid file) and every session
# it serves, as when a login node dies. Connections are refused afterwards.
lab_stop_sshd() {
  local c=$LAB_DIR/$1 pid
  local -a all
  pid=$(lab_pid_of "$c/run/sshd.pid") || { rm -f "$c/run/sshd.pid"; return 0; }
  mapfile -t all < <(echo "$pid"; lab_descendants "$pid")
  lab_kill TERM "${all[@]}"
  lab_wait_gone 3 "${all[@]}" || { lab_kill KILL "${all[@]}"; lab_wait_gone 3 "${all[@]}"; }
  rm -f "$c/run/sshd.pid"
}

# lab_host_key NAME: makes the cluster's sshd host key if it has none.
lab_host_key() {
  local k=$LAB_DIR/$1/ssh/ssh_host_ed25519_key
  mkdir -p "${k%/*}" && chmod 700 "${k%/*}"
  [[ -s $k && -s $k.pub ]] && return 0
  rm -f "$k" "$k.pub"
  ssh-keygen -q -t ed25519 -N '' -C "orch-lab-$1-host" -f "$k" || lab_fail "ssh-keygen failed"
}

# lab_fingerprint NAME: SHA256:... of the cluster's current host key.
lab_fingerprint() {
  ssh-keygen -l -E sha256 -f "$LAB_DIR/$1/ssh/ssh_host_ed25519_key.pub" | awk '{ print $2 }'
}

# lab_cpus: the CPUs this process may run on, one number per line ("0-1,4" -> 0 1 4).
lab_cpus() {
  local list part
  list=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
  for part in ${list//,/ }; do
    if [[ $part == *-* ]]; then seq "${part%-*}" "${part#*-}"; else echo "$part"; fi
  done
}

# lab_start_hog NAME SECONDS COUNT: COUNT busy loops (at our niceness) for at most SECONDS, in the
# background; the pid of the shell that holds them goes to NAME/run/hog.pid. Loop i is pinned
# to the i-th allowed CPU (round robin), so every CPU always has one: unpinned, the load
# balancer leaves a CPU to a low-weight task alone for 100 ms and more at times. Each loop is a
# session of its own, so with autogroup scheduling each competes like a separate program, and
# has its own `timeout`, which setsid puts out of reach of the holder's. They carry the lab
# marker: down.sh finds them by it and by the pid file.
lab_start_hog() {
  local c=$LAB_DIR/$1 pid cpus
  cpus=$(lab_cpus | tr '\n' ' ')
  # shellcheck disable=SC2016  # $1..$3 are the inner bash's
  ( lab_daemon_env "$1"
    exec timeout -s KILL "$2" bash -c '
      read -ra cpus <<< "$3"
      for (( i = 0; i < $2; i++ )); do
        setsid taskset -c "${cpus[i % ${#cpus[@]}]}" timeout -s KILL "$1" \
          bash -c "while :; do :; done" &
      done
      wait' hog "$2" "$3" "$cpus" ) < /dev/null > /dev/null 2>&1 &
  pid=$!
  echo "$pid" > "$c/run/hog.pid"
}

# lab_stop_hog NAME: stops the cluster's hog, if one runs: its holder and every loop under it.
lab_stop_hog() {
  local c=$LAB_DIR/$1 pid
  local -a all
  pid=$(lab_pid_of "$c/run/hog.pid") || { rm -f "$c/run/hog.pid"; return 0; }
  mapfile -t all < <(echo "$pid"; lab_descendants "$pid")
  lab_kill KILL "${all[@]}"
  lab_wait_gone 3 "${all[@]}"
  rm -f "$c/run/hog.pid"
}
