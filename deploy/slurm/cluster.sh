#!/usr/bin/env bash
# A throwaway one-node Slurm cluster, for trying deploy/slurm/ (and for its
# test): munged, slurmctld and slurmd as root, every file of theirs (key,
# slurm.conf, state, spool, logs, sockets) in one folder.
#
#   deploy/slurm/cluster.sh start DIR   # prints the SLURM_CONF to export
#   export SLURM_CONF=DIR/slurm.conf    # sbatch, squeue, scontrol use it
#   deploy/slurm/cluster.sh stop DIR    # cancels the jobs, stops all three: nothing is left running
#
# Needs root and Debian's slurm-wlm and munge (apt-get install -y slurm-wlm
# munge). The ports are SLURMCTLD_PORT and SLURMD_PORT (default: 16817 and
# 16818, off Slurm's own 6817/6818). Jobs run as the user who submits them.
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)

# stop_pid FILE: ends the daemon whose pid FILE holds, waiting up to 10 s
# before SIGKILL.
stop_pid() {
	local pid
	[ -s "$1" ] || return 0
	pid=$(cat "$1")
	if kill "$pid" 2>/dev/null; then
		for _ in $(seq 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$1"
}

case $cmd in
start)
	if [ "$(id -u)" != 0 ]; then
		echo "$0: run as root (slurmd starts jobs as their user)" >&2
		exit 1
	fi
	for exe in munged slurmctld slurmd; do
		command -v "$exe" >/dev/null || { echo "$0: $exe not found: apt-get install -y slurm-wlm munge" >&2; exit 1; }
	done
	mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
	chmod 755 "$dir/munge" # the socket: every user submits through it
	dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
	chmod 400 "$dir/munge/munge.key"
	munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
		--pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed"
	node=$(hostname -s)
	cat >"$dir/slurm.conf" <<CONF
ClusterName=throwaway
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=${SLURMCTLD_PORT:-16817}
SlurmdPort=${SLURMD_PORT:-16818}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
DependencyParameters=kill_invalid_depend
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=local Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
	export SLURM_CONF=$dir/slurm.conf
	slurmctld -i
	slurmd
	# Ready when the node takes jobs (10 s at most).
	for _ in $(seq 100); do
		if sinfo -h -o %t 2>/dev/null | grep -qx idle; then
			echo "SLURM_CONF=$SLURM_CONF"
			exit 0
		fi
		sleep 0.1
	done
	echo "$0: the node is not idle after 10 s: $(sinfo -h -o '%t %E' 2>&1); see $dir/log" >&2
	"$0" stop "$dir"
	exit 1
	;;
stop)
	# Jobs still running first (their slurmstepd would outlive slurmd):
	# cancelled, then waited for, 10 s at most.
	if [ -s "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
		export SLURM_CONF=$dir/slurm.conf
		scancel --quiet --full $(squeue -h -o %A 2>/dev/null | sort -u) 2>/dev/null || true
		for _ in $(seq 100); do
			[ -z "$(squeue -h -o %A 2>/dev/null)" ] && break
			sleep 0.1
		done
	fi
	stop_pid "$dir/slurmd.pid"
	stop_pid "$dir/slurmctld.pid"
	stop_pid "$dir/munge/munged.pid"
	;;
*)
	usage
	;;
esac
