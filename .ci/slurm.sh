#!/usr/bin/env bash
# A real single-node SLURM cluster on 127.0.0.1 for CI: `slurm.sh start` installs Debian's slurm-wlm,
# slurmdbd, munge and MariaDB if absent and starts the daemons by hand (no systemd); `slurm.sh stop` stops
# them by PID file. State lives under $SLURM_CI_ROOT (default /tmp/medheb-slurm). Needs root.
set -euo pipefail
ROOT=${SLURM_CI_ROOT:-/tmp/medheb-slurm}
HOST=$(hostname -s)

log() { echo "[slurm-ci] $*"; }

install() {
  if command -v slurmctld >/dev/null && command -v slurmdbd >/dev/null && command -v mariadbd >/dev/null; then
    return
  fi
  log "installing slurm-wlm, slurmdbd, munge, mariadb-server"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm slurmdbd munge mariadb-server >/dev/null
}

diagnose() {  # what the daemons said, for a start that did not come up
  sinfo -N -l 2>&1 || true
  scontrol show node 2>&1 | grep -E "NodeName|State|Reason" || true
  for daemon in slurmctld slurmd slurmdbd; do
    log "last lines of $ROOT/log/$daemon.log"
    tail -n 15 "$ROOT/log/$daemon.log" 2>/dev/null || true
  done
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local limit=$1 what=$2
  shift 2
  for _ in $(seq "$limit"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  log "timed out waiting for $what"
  return 1
}

start() {
  install
  if [ -f "$ROOT/run/slurmctld.pid" ] && kill -0 "$(cat "$ROOT/run/slurmctld.pid")" 2>/dev/null &&
    scontrol ping 2>/dev/null | grep -q UP; then
    log "already running: $(sinfo -h -o '%P %a %D %T')"
    return
  fi
  stop_daemons  # whatever a killed run left behind
  # A fresh cluster at every start: an earlier run killed mid-test leaves its jobs in the controller's saved
  # state and in accounting; recovered as running, they hold the node, which then never shows idle.
  rm -rf "$ROOT"/run "$ROOT"/state "$ROOT"/mysql
  mkdir -p "$ROOT"/{run,log,state/ctld,state/d,mysql}
  # munge
  if [ ! -f /etc/munge/munge.key ]; then
    mkdir -p /etc/munge
    if command -v mungekey >/dev/null; then mungekey --create --keyfile=/etc/munge/munge.key; else
      dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none; fi
  fi
  chown -R munge:munge /etc/munge /var/lib/munge /var/log/munge 2>/dev/null || true
  mkdir -p /run/munge && chown munge:munge /run/munge
  chmod 400 /etc/munge/munge.key
  runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid
  log "munged started"
  # MariaDB for slurmdbd (accounting: the executor plugin polls job states with sacct)
  if [ ! -d "$ROOT/mysql/mysql" ]; then
    mariadb-install-db --user=root --datadir="$ROOT/mysql" --auth-root-authentication-method=socket >/dev/null
  fi
  mariadbd --no-defaults --user=root --datadir="$ROOT/mysql" --socket="$ROOT/run/mysqld.sock" \
    --pid-file="$ROOT/run/mysqld.pid" --bind-address=127.0.0.1 --port=3306 >"$ROOT/log/mysqld.log" 2>&1 &
  wait_for 60 "MariaDB" mariadb --socket="$ROOT/run/mysqld.sock" -e "select 1"
  mariadb --socket="$ROOT/run/mysqld.sock" <<SQL
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurmci';
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurmci';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
SQL
  log "MariaDB started"
  mkdir -p /etc/slurm
  cat >/etc/slurm/slurmdbd.conf <<CONF
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=6819
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=3306
StorageUser=slurm
StoragePass=slurmci
StorageLoc=slurm_acct_db
LogFile=$ROOT/log/slurmdbd.log
PidFile=$ROOT/run/slurmdbd.pid
CONF
  chmod 600 /etc/slurm/slurmdbd.conf
  local cpus mem
  cpus=$(nproc)
  mem=$(( $(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo) - 2048 ))
  cat >/etc/slurm/slurm.conf <<CONF
ClusterName=ci
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=6819
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
ReturnToService=2
EnforcePartLimits=ALL
MinJobAge=3600
KillWait=5
SlurmctldPidFile=$ROOT/run/slurmctld.pid
SlurmdPidFile=$ROOT/run/slurmd.pid
StateSaveLocation=$ROOT/state/ctld
SlurmdSpoolDir=$ROOT/state/d
SlurmctldLogFile=$ROOT/log/slurmctld.log
SlurmdLogFile=$ROOT/log/slurmd.log
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
  slurmdbd
  wait_for 60 "slurmdbd" sacctmgr -n list cluster
  sacctmgr -i add cluster ci >/dev/null 2>&1 || true
  slurmctld
  slurmd
  if ! wait_for 120 "an idle node" bash -c "sinfo -h -o %T | grep -q idle"; then
    diagnose
    return 1
  fi
  sacctmgr -i add account medheb Description=ci Organization=ci >/dev/null 2>&1 || true
  sacctmgr -i add user root Account=medheb >/dev/null 2>&1 || true
  log "cluster up: $(sinfo -h -o '%P %a %D %T %c CPUs %m MB')"
}

stop_pid() {
  local file=$1
  [ -f "$file" ] || return 0
  local pid
  pid=$(cat "$file")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$file"
}

stop_daemons() {
  stop_pid "$ROOT/run/slurmd.pid"
  stop_pid "$ROOT/run/slurmctld.pid"
  stop_pid "$ROOT/run/slurmdbd.pid"
  stop_pid "$ROOT/run/mysqld.pid"
  stop_pid /run/munge/munged.pid
  pkill -KILL -x slurmstepd 2>/dev/null || true  # job steps of a killed slurmd
}

stop() {
  scancel --user=root 2>/dev/null || true
  stop_daemons
  log "daemons stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
