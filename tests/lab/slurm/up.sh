#!/usr/bin/env bash
# up.sh: bring up real Slurm clusters on this machine, each with its own sshd "login node" on
# 127.0.0.1, for tests of code that drives Slurm over SSH. See README.md next to this file.
#
# Usage: up.sh DIR NAME...
#   DIR   the lab directory (created if missing; the only place written apart from apt packages
#         and sshd's privilege-separation directory /run/sshd). Stop it with down.sh DIR.
#   NAME  one cluster per name: lowercase letters and digits, starting with a letter.
#
# Environment knobs (all optional):
#   LAB_SSH_PORT_BASE     login-node ssh port of the first cluster (default 2222; cluster i: base+i)
#   LAB_SLURM_PORT_BASE   first Slurm port (default 17800): cluster i's slurmctld listens on
#                         base+10i, its nodes' slurmd's on base+10i+1 ... base+10i+NODES
#   LAB_NODES             compute nodes per cluster, 1..8 (default 1): one slurmd each
#   LAB_CPUS              CPUs advertised per node (default 16; not real)
#   LAB_GPUS              fake GPUs per node, GRES gpu (default 8; 0 = none)
#   LAB_MEM_MB            memory advertised per node in MB (default 64000; not real)
#   LAB_SLURMD_TIMEOUT    Slurm's SlurmdTimeout (default 4: a dead node is DOWN after ~15 s)
#   LAB_REQUEUE_DELAY     seconds before a requeued job may start again (default 10)
#   LAB_READY_TIMEOUT     seconds to wait for nodes and login nodes (default 60)
#   LAB_SPANK_PLUGINS     SPANK plugins every cluster loads (plugstack.conf), one "PATH ARG..."
#                         per line, each loaded as `optional` (testkit/pyxis_standin records its
#                         options under DIR/<cluster>/log/containers: ARG record_dir=@RECORDS@)
#
# Idempotent: a daemon whose pid file names a live process of this lab is left alone; configs are
# rewritten. A cluster keeps the ports and node count it was first made with (down.sh --purge
# forgets them).
#
# Output on stdout, one line per cluster once it is ready (everything else goes to stderr):
#   CLUSTER name=N host=127.0.0.1 ssh_port=P user=root key=K known_hosts=F
#           host_key_fingerprint=SHA256:... slurm_conf=F storage_root=D nodes=N1,N2,...
# Exit status: 0 ready; 2 usage; 75 a port is taken (pick other bases and retry); 1 otherwise.
# shellcheck disable=SC1090
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$HERE/lib.sh"

usage() { echo "usage: up.sh DIR NAME..." >&2; exit 2; }
(( $# >= 2 )) || usage

if (( EUID != 0 )); then
  # slurmd launches jobs as root, sshd logs in as root: the lab runs as root.
  command -v sudo > /dev/null || lab_fail "the lab runs as root: run up.sh as root" "" 2
  exec sudo -n -E "$0" "$@"
fi

[[ $1 =~ ^[^[:space:]]+$ ]] || lab_fail "the lab directory must not contain spaces: '$1'" "" 2
mkdir -p "$1" || lab_fail "cannot create $1" "" 2
LAB_DIR=$(lab_abs_dir "$1")
shift
NAMES=("$@")
declare -A seen=()
for n in "${NAMES[@]}"; do
  [[ $n =~ ^[a-z][a-z0-9]{0,30}$ && $n != munge && $n != ssh ]] \
    || lab_fail "bad cluster name '$n': lowercase letters and digits, starting with a letter" "" 2
  [[ -z ${seen[$n]:-} ]] || lab_fail "cluster '$n' named twice" "" 2
  seen[$n]=1
done

SSH_BASE=${LAB_SSH_PORT_BASE:-2222}
PORT_BASE=${LAB_SLURM_PORT_BASE:-17800}
NODES=${LAB_NODES:-1}
CPUS=${LAB_CPUS:-16}
GPUS=${LAB_GPUS:-8}
MEM=${LAB_MEM_MB:-64000}
SLURMD_TIMEOUT=${LAB_SLURMD_TIMEOUT:-4}
REQUEUE_DELAY=${LAB_REQUEUE_DELAY:-10}
READY_TIMEOUT=${LAB_READY_TIMEOUT:-60}
for v in SSH_BASE PORT_BASE NODES CPUS GPUS MEM SLURMD_TIMEOUT REQUEUE_DELAY READY_TIMEOUT; do
  [[ ${!v} =~ ^[0-9]+$ ]] || lab_fail "$v must be a number, not '${!v}'" "" 2
done
(( NODES >= 1 && NODES <= 8 )) || lab_fail "LAB_NODES must be 1..8" "" 2
(( GPUS <= 64 )) || lab_fail "LAB_GPUS must be 0..64" "" 2
(( SSH_BASE >= 1024 && SSH_BASE + 100 < 65536 && PORT_BASE >= 1024 && PORT_BASE + 1000 < 65536 )) \
  || lab_fail "port bases must leave room below 65536 and be >= 1024" "" 2

# ------------------------------------------------------------------ packages (only what is missing)
install_packages() {
  local -a need=()
  command -v slurmctld  > /dev/null || need+=(slurmctld)
  command -v slurmd     > /dev/null || need+=(slurmd)
  command -v sbatch     > /dev/null || need+=(slurm-client)
  command -v munged     > /dev/null || need+=(munge)
  [[ -x $SSHD ]]                    || need+=(openssh-server)
  command -v ssh-keygen > /dev/null || need+=(openssh-client)
  command -v rsync      > /dev/null || need+=(rsync)
  (( ${#need[@]} )) || return 0
  command -v apt-get > /dev/null || lab_fail "missing ${need[*]} and no apt-get to install them"
  lab_log "installing: ${need[*]}"
  # Debian's hook that keeps the packages' init scripts from starting system-wide daemons (munge,
  # sshd on :22, slurmctld/slurmd on 6817/6818); only made (and removed) when the machine has none.
  local made_policy=0 rc=0
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d
    made_policy=1
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  local -a apt=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends)
  if ! "${apt[@]}" "${need[@]}" >&2; then
    apt-get update -q >&2 && "${apt[@]}" "${need[@]}" >&2 || rc=$?
  fi
  if (( made_policy )); then rm -f /usr/sbin/policy-rc.d; trap - EXIT; fi
  (( rc == 0 )) || lab_fail "apt-get could not install ${need[*]}"
}
# Labs started in parallel (ctest -j) must not run apt-get at the same time.
exec 9> /tmp/.orch-lab-packages.lock
flock 9
install_packages
flock -u 9
exec 9>&-

HOST=$(uname -n)
HOST=${HOST%%.*}   # slurmctld only runs where SlurmctldHost names this host; NodeHostname likewise

chmod 755 "$LAB_DIR"
export ORCH_LAB_DIR=$LAB_DIR   # the marker down.sh finds every daemon (and ssh session) by

# ------------------------------------------------------------------ munge: one munged for the lab
M=$LAB_DIR/munge
mkdir -p "$M" && chmod 755 "$M"   # munged refuses a socket whose directory is not world-executable
if [[ ! -s $M/munge.key ]]; then
  mungekey -c -b 1024 -k "$M/munge.key" > /dev/null 2>&1 \
    || dd if=/dev/urandom of="$M/munge.key" bs=128 count=1 status=none
fi
chmod 600 "$M/munge.key"
if ! lab_pid_of "$M/munged.pid" > /dev/null; then
  rm -f "$M/munge.socket" "$M/munge.socket.lock"
  munged --force --socket="$M/munge.socket" --key-file="$M/munge.key" --log-file="$M/munged.log" \
         --pid-file="$M/munged.pid" --seed-file="$M/munged.seed" < /dev/null >> "$M/munged.out" 2>&1 \
    || lab_fail "munged did not start" "$M/munged.log"
  for (( i = 0; i < 100; i++ )); do [[ -S $M/munge.socket ]] && break; sleep 0.05; done
  [[ -S $M/munge.socket ]] || lab_fail "munged made no socket" "$M/munged.log"
fi

# ------------------------------------------------------------------ the lab's client key
S=$LAB_DIR/ssh
mkdir -p "$S" && chmod 700 "$S"
if [[ ! -s $S/id_ed25519 || ! -s $S/id_ed25519.pub ]]; then
  rm -f "$S/id_ed25519" "$S/id_ed25519.pub"
  ssh-keygen -q -t ed25519 -N '' -C orch-lab-client -f "$S/id_ed25519" || lab_fail "ssh-keygen failed"
fi
cp "$S/id_ed25519.pub" "$S/authorized_keys" && chmod 600 "$S/authorized_keys"

# OpenSSH 9.8 and later penalise sources that fail often (tests do, on purpose): not here.
SSHD_EXTRA=""
ssh_version=$(ssh -V 2>&1 | sed -n 's/^OpenSSH_\([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
if [[ -n $ssh_version ]] && read -r major minor <<< "$ssh_version" \
   && (( major > 9 || (major == 9 && minor >= 8) )); then
  SSHD_EXTRA="PerSourcePenalties no"
fi

# ------------------------------------------------------------------ the clusters
next_index() {   # the first index no cluster under the lab uses
  local f idx max=-1
  for f in "$LAB_DIR"/*/cluster.env; do
    [[ -e $f ]] || continue
    idx=$(source "$f" && echo "$LAB_INDEX")
    (( idx > max )) && max=$idx
  done
  echo $((max + 1))
}

for NAME in "${NAMES[@]}"; do
  C=$LAB_DIR/$NAME
  CONF=$C/etc/slurm.conf
  mkdir -p "$C"/{etc,state,log,run,dev,storage,node,home}
  if [[ ! -s $C/cluster.env ]]; then   # ports and nodes are fixed when a cluster is first made
    idx=$(next_index)
    nodes=""
    for (( k = 1; k <= NODES; k++ )); do nodes+="${nodes:+,}$NAME-n$k"; done
    cat > "$C/cluster.env.new" << EOF
LAB_INDEX=$idx
LAB_SSH_PORT=$((SSH_BASE + idx))
LAB_CTLD_PORT=$((PORT_BASE + 10 * idx))
LAB_NODES=$NODES
LAB_NODE_NAMES=$nodes
EOF
    mv "$C/cluster.env.new" "$C/cluster.env"
  fi
  lab_load_cluster "$NAME"
  (( LAB_NODES == NODES )) || lab_log "cluster $NAME keeps its $LAB_NODES node(s) (down.sh --purge to change)"
  first_port=$((LAB_CTLD_PORT + 1)); last_port=$((LAB_CTLD_PORT + LAB_NODES))
  if (( LAB_NODES == 1 )); then node_list=$NAME-n1; port_list=$first_port
  else node_list="$NAME-n[1-$LAB_NODES]"; port_list="$first_port-$last_port"; fi

  gres_node=""; gres_types=""
  : > "$C/etc/gres.conf.new"
  if (( GPUS > 0 )); then
    # Fake GPUs: Slurm wants character devices, so they are symlinks to the null device. Jobs
    # get CUDA_VISIBLE_DEVICES / SLURM_JOB_GPUS from the trailing numbers.
    for (( g = 0; g < GPUS; g++ )); do ln -sfn /dev/null "$C/dev/nvidia$g"; done
    gres_node="Gres=gpu:$GPUS"; gres_types="GresTypes=gpu"
    echo "NodeName=$node_list Name=gpu File=$C/dev/nvidia[0-$((GPUS - 1))]" > "$C/etc/gres.conf.new"
  fi
  cat > "$CONF.new" << EOF
# Generated by tests/lab/slurm/up.sh: cluster $NAME of the lab in $LAB_DIR.
ClusterName=$NAME
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$LAB_CTLD_PORT
SlurmdPort=$first_port
# Bind to 127.0.0.1 (NodeAddr / SlurmctldHost's address), not to every address.
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$M/munge.socket,cred_expire=$REQUEUE_DELAY
CredType=cred/munge
StateSaveLocation=$C/state
SlurmctldPidFile=$C/run/slurmctld.pid
SlurmctldLogFile=$C/log/slurmctld.log
SlurmctldDebug=info
# Per node: its slurmd (and every slurmstepd it starts) works in $C/node/<node>.
SlurmdSpoolDir=$C/node/%n/spool
SlurmdLogFile=$C/node/%n/slurmd.log
SlurmdPidFile=$C/run/slurmd-%n.pid
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1024
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
# A node made slow by ctl.sh renice-node gets its niceness into each task's scheduler
# autogroup here (etc/task_prolog.sh); on the other nodes it does nothing.
TaskProlog=$C/etc/task_prolog.sh
# SPANK plugins (LAB_SPANK_PLUGINS): srun reads it for each step, so it may change while the lab runs.
PlugStackConfig=$C/etc/plugstack.conf
JobCompType=jobcomp/filetxt
JobCompLoc=$C/log/jobcomp.txt
MpiDefault=none
MailProg=/bin/true
ReturnToService=1
SlurmdTimeout=$SLURMD_TIMEOUT
SlurmctldTimeout=30
MessageTimeout=5
KillWait=5
MinJobAge=600
SchedulerParameters=sched_interval=2,bf_interval=5
$gres_types
NodeName=$node_list NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$port_list CPUs=$CPUS RealMemory=$MEM $gres_node State=UNKNOWN
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  if [[ -e $CONF ]] && ! cmp -s "$CONF.new" "$CONF" && lab_pid_of "$C/run/slurmctld.pid" > /dev/null; then
    lab_log "slurm.conf of $NAME changed while it runs: down.sh $LAB_DIR, then up.sh, to apply it"
  fi
  mv "$CONF.new" "$CONF"
  mv "$C/etc/gres.conf.new" "$C/etc/gres.conf"
  mkdir -p "$C/log/containers"
  : > "$C/etc/plugstack.conf.new"
  while IFS= read -r plugin; do
    [[ -n $plugin ]] && echo "optional ${plugin//@RECORDS@/$C/log/containers}" >> "$C/etc/plugstack.conf.new"
  done <<< "${LAB_SPANK_PLUGINS:-}"
  mv "$C/etc/plugstack.conf.new" "$C/etc/plugstack.conf"
  printf 'export SLURM_CONF=%s\n' "$CONF" > "$C/env.sh"
  # With the kernel's autogroup scheduling (sched_autogroup_enabled=1) CPU time is shared between
  # sessions first, and slurmstepd starts a session per step: a task's own nice value then only
  # counts against its own session. So a slow node's niceness (node/<node>/nice, written by
  # `ctl.sh renice-node`) goes to the autogroup of each task, which its TaskProlog shares.
  cat > "$C/etc/task_prolog.sh.new" << EOF
#!/bin/sh
# TaskProlog of cluster $NAME, written by tests/lab/slurm/up.sh (see ctl.sh renice-node).
f=$C/node/\${SLURMD_NODENAME:-none}/nice
if [ -r "\$f" ] && read -r n < "\$f"; then
  echo "\$n" > /proc/self/autogroup 2> /dev/null || :
fi
exit 0
EOF
  chmod 755 "$C/etc/task_prolog.sh.new"
  mv "$C/etc/task_prolog.sh.new" "$C/etc/task_prolog.sh"

  lab_host_key "$NAME"
  cat > "$C/etc/sshd_config.new" << EOF
# Generated by tests/lab/slurm/up.sh: the login node of cluster $NAME.
ListenAddress 127.0.0.1:$LAB_SSH_PORT
HostKey $C/ssh/ssh_host_ed25519_key
PidFile $C/run/sshd.pid
AuthorizedKeysFile $S/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
PrintLastLog no
X11Forwarding no
MaxSessions 64
MaxStartups 64:30:128
SetEnv SLURM_CONF=$CONF ORCH_LAB_DIR=$LAB_DIR ORCH_LAB_CLUSTER=$NAME HOME=$C/home
Subsystem sftp internal-sftp
$SSHD_EXTRA
EOF
  if ! cmp -s "$C/etc/sshd_config.new" "$C/etc/sshd_config"; then
    mv "$C/etc/sshd_config.new" "$C/etc/sshd_config"
    # a running sshd re-executes itself with the new config on SIGHUP
    if pid=$(lab_pid_of "$C/run/sshd.pid"); then kill -HUP "$pid"; fi
  else
    rm -f "$C/etc/sshd_config.new"
  fi

done

# Daemons: every cluster's slurmctld, then every slurmd, then every login sshd; each batch is
# started first and waited for afterwards (a slurmctld takes about a second to come up).
declare -A ctld_off=() slurmd_off=()
for NAME in "${NAMES[@]}"; do
  lab_load_cluster "$NAME"
  lab_pid_of "$C/run/slurmctld.pid" > /dev/null && continue
  lab_port_open "$LAB_CTLD_PORT" && lab_fail "slurmctld of $NAME: port $LAB_CTLD_PORT is already in use" "" 75
  ctld_off[$NAME]=$(lab_log_size "$C/log/slurmctld.log")
  ( lab_daemon_env "$NAME"; cd "$C/log" && exec slurmctld -i -f "$CONF" ) \
    < /dev/null >> "$C/log/slurmctld.out" 2>&1 || lab_fail "slurmctld of $NAME did not start" "$C/log/slurmctld.out"
done
# Up = it answers `scontrol ping` (over its port, authenticated with this lab's munge key, so
# it is this lab's slurmctld); it logs "Running as primary controller" before it binds its port.
for NAME in "${!ctld_off[@]}"; do
  lab_load_cluster "$NAME"
  lab_await_log "slurmctld of $NAME" "$C/log/slurmctld.log" "${ctld_off[$NAME]}" \
                "SLURM_CONF=$CONF scontrol ping | grep -q 'is UP'" "$C/run/slurmctld.pid" "$LAB_CTLD_PORT"
done
for NAME in "${NAMES[@]}"; do
  lab_load_cluster "$NAME"
  for node in ${LAB_NODE_NAMES//,/ }; do
    lab_pid_of "$C/run/slurmd-$node.pid" > /dev/null && continue
    slurmd_off[$NAME/$node]=$(lab_spawn_slurmd "$NAME" "$node") || exit $?
  done
done
for key in "${!slurmd_off[@]}"; do
  lab_await_slurmd "${key%%/*}" "${key#*/}" "${slurmd_off[$key]}"
done
for NAME in "${NAMES[@]}"; do
  lab_pid_of "$LAB_DIR/$NAME/run/sshd.pid" > /dev/null || lab_start_sshd "$NAME"
done

# known_hosts: every cluster of the lab (also those not named this time), as they are now.
: > "$S/known_hosts.new"
for f in "$LAB_DIR"/*/cluster.env; do
  [[ -e $f ]] || continue
  c=${f%/cluster.env}
  port=$(source "$f" && echo "$LAB_SSH_PORT")
  [[ -s $c/ssh/ssh_host_ed25519_key.pub ]] || continue
  echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$c/ssh/ssh_host_ed25519_key.pub")" >> "$S/known_hosts.new"
done
mv "$S/known_hosts.new" "$S/known_hosts"
chmod 644 "$S/known_hosts"
if [[ -n ${SUDO_UID:-} ]]; then   # started through sudo: the caller must be able to use the key
  chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$S" "$S/id_ed25519" "$S/id_ed25519.pub" "$S/known_hosts"
fi

# ------------------------------------------------------------------ wait until ready, then report
deadline=$((SECONDS + READY_TIMEOUT))
# Each login node must answer with its key and put sessions on its cluster: checked for all
# clusters at once (a fresh ssh connection takes 0.3-1 s).
check_login() {
  local port conf got
  port=$(source "$LAB_DIR/$1/cluster.env" && echo "$LAB_SSH_PORT")
  conf=$LAB_DIR/$1/etc/slurm.conf
  while :; do
    got=$(ssh -F /dev/null -i "$S/id_ed25519" -o IdentitiesOnly=yes -o BatchMode=yes \
              -o StrictHostKeyChecking=yes -o "UserKnownHostsFile=$S/known_hosts" \
              -o ConnectTimeout=10 -p "$port" root@127.0.0.1 'echo "$SLURM_CONF"' 2>&1 < /dev/null) \
      && [[ $got == "$conf" ]] && return 0
    (( SECONDS < deadline )) || { echo "$got"; return 1; }
    sleep 0.2
  done
}
declare -A login_check=()
for NAME in "${NAMES[@]}"; do
  check_login "$NAME" > "$LAB_DIR/$NAME/log/login-check.txt" 2>&1 &
  login_check[$NAME]=$!
done
for NAME in "${NAMES[@]}"; do
  lab_load_cluster "$NAME"
  # Every node answers (a state without the not-responding '*', and known).
  until states=$(SLURM_CONF=$CONF sinfo -h -N -o '%N=%T' 2> /dev/null) && [[ -n $states ]] \
        && ! grep -qE '\*|=unknown' <<< "$states"; do
    lab_pid_of "$C/run/slurmctld.pid" > /dev/null || lab_fail "slurmctld of $NAME exited" "$C/log/slurmctld.log"
    (( SECONDS < deadline )) || lab_fail "cluster $NAME not ready after ${READY_TIMEOUT}s (nodes: ${states//$'\n'/ })" \
                                         "$C/log/slurmctld.log"
    sleep 0.1
  done
  wait "${login_check[$NAME]}" \
    || lab_fail "login node of $NAME not usable: $(cat "$C/log/login-check.txt")" "$C/log/sshd.log"
  echo "CLUSTER name=$NAME host=127.0.0.1 ssh_port=$LAB_SSH_PORT user=root key=$S/id_ed25519" \
       "known_hosts=$S/known_hosts host_key_fingerprint=$(lab_fingerprint "$NAME") slurm_conf=$CONF" \
       "storage_root=$C/storage nodes=$LAB_NODE_NAMES"
done
