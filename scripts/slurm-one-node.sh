#!/usr/bin/env bash
# Starts a real one-node Slurm cluster on this machine (Debian, no systemd), for the
# slurm_* tests and for trying `thorbook book submit --slurm` by hand: installs munge
# and slurm-wlm's daemons if missing, writes /etc/slurm/slurm.conf for this host and
# starts munged, slurmctld and slurmd. Idempotent: a running cluster is left alone.
# Needs root. Exits non-zero (saying why) when the cluster cannot be started.
#
#   scripts/slurm-one-node.sh [CPUS]   # CPUS: how many CPUs slurmd offers (default: the machine's)
set -euo pipefail

if sinfo -h -N -o %T 2>/dev/null | grep -qE 'idle|mixed|alloc'; then
    echo "slurm: already running ($(sinfo -h -N -o '%N %T %c CPUs'))"
    exit 0
fi
[ "$(id -u)" = 0 ] || { echo "slurm-one-node: needs root" >&2; exit 1; }

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq munge slurm-client slurmctld slurmd >/dev/null
fi

host=$(hostname -s)
# munge: the package makes the key; the daemon needs its run directory.
[ -f /etc/munge/munge.key ] || /usr/sbin/mungekey --create >/dev/null 2>&1 || true
install -d -o munge -g munge /run/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged </dev/null >/dev/null 2>&1
    for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
fi
munge -n | unmunge >/dev/null || { echo "slurm-one-node: munge does not work" >&2; exit 1; }

install -d -o slurm -g slurm /run/slurm /var/log/slurm /var/lib/slurm/slurmctld /var/lib/slurm/slurmd
node=$(slurmd -C | head -1)
cpus=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$node")
mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$node")
offer=${1:-$cpus}
cat > /etc/slurm/slurm.conf <<CONF
# Written by thorbook's scripts/slurm-one-node.sh: a one-node cluster on $host.
ClusterName=onenode
SlurmctldHost=$host(127.0.0.1)
AuthType=auth/munge
CredType=cred/munge
SlurmUser=slurm
SlurmdUser=root
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,bf_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MaxArraySize=10001
MinJobAge=300
KillWait=5
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=/var/log/slurm/jobcomp.log
SlurmdParameters=config_overrides
NodeName=$host NodeAddr=127.0.0.1 CPUs=$offer Boards=1 SocketsPerBoard=1 CoresPerSocket=$offer ThreadsPerCore=1 RealMemory=$((mem * 95 / 100)) State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF

# Daemons must not inherit this script's descriptors (a caller waiting on our output
# would hang).
pgrep -x slurmctld >/dev/null || /usr/sbin/slurmctld </dev/null >/dev/null 2>&1
pgrep -x slurmd >/dev/null || /usr/sbin/slurmd </dev/null >/dev/null 2>&1
for _ in $(seq 100); do
    if sinfo -h -N -o %T 2>/dev/null | grep -qE 'idle|mixed|alloc'; then
        echo "slurm: one node up ($(sinfo -h -N -o '%N %T %c CPUs'))"
        exit 0
    fi
    scontrol update nodename="$host" state=resume >/dev/null 2>&1 || true
    sleep 0.2
done
echo "slurm-one-node: the node did not become idle; see /var/log/slurm/*.log" >&2
exit 1
