#!/usr/bin/env bash
# A real Slurm run of a tiled build on this one machine, checked byte for byte against the
# local runner (`orogen build --tiles`).
#
# Starts a single-node Slurm cluster from Debian's packages (munge, slurmctld, slurmd; the
# script installs them with apt when missing, so run it as root or with sudo), writes a plan
# with `orogen plan`, submits it with the plan's own `slurm/submit.sh` (a coarse job, a job
# array with one task per tile, a stitch job, chained with --dependency=afterok), waits, and
# compares every file the manifest lists (and the manifest) with a local tiled build.
#
# Usage: scripts/slurm-local.sh [GRAPH] [SIZE] [TILES]   (default graphs/olsen2004.json 2048 4x4)
# Needs target/release/orogen (cargo build --release -p orogen). Leaves the daemons running;
# `scripts/slurm-local.sh --stop` stops them.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

if [ "${1:-}" = "--stop" ]; then
  $SUDO pkill -x slurmd || true
  $SUDO pkill -x slurmctld || true
  $SUDO pkill -x munged || true
  exit 0
fi

graph=${1:-graphs/olsen2004.json}
size=${2:-2048}
tiles=${3:-4x4}
orogen="$root/target/release/orogen"
[ -x "$orogen" ] || { echo "build it first: cargo build --release -p orogen" >&2; exit 1; }

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
fi

host=$(hostname -s)
cpus=$(nproc)
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 9 / 10 ))

# munge: the authentication Slurm's daemons and clients share.
if ! pgrep -x munged >/dev/null; then
  if [ ! -s /etc/munge/munge.key ]; then
    $SUDO sh -c 'dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null'
  fi
  $SUDO chown munge:munge /etc/munge/munge.key 2>/dev/null || true
  $SUDO chmod 400 /etc/munge/munge.key
  $SUDO mkdir -p /run/munge /var/log/munge /var/lib/munge
  $SUDO chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
  if command -v runuser >/dev/null && [ "$(id -u)" = 0 ]; then
    runuser -u munge -- /usr/sbin/munged 2>/dev/null || /usr/sbin/munged --force
  else
    $SUDO /usr/sbin/munged --force
  fi
fi

# One node, one partition; processes tracked without cgroups (containers often lack them; no
# cgroup.conf: Slurm 22.05's autodetection is enough for slurmd to start), no accounting database.
$SUDO mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
$SUDO tee /etc/slurm/slurm.conf >/dev/null <<EOF
ClusterName=orogen-local
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

if ! pgrep -x slurmctld >/dev/null; then $SUDO slurmctld; fi
if ! pgrep -x slurmd >/dev/null; then $SUDO slurmd; fi
for _ in $(seq 60); do
  if sinfo -h -o '%t' 2>/dev/null | grep -qE 'idle|mix|alloc'; then break; fi
  sleep 1
done
sinfo

work=$(mktemp -d /tmp/orogen-slurm.XXXXXX)
plan="$work/plan"
local_out="$work/local"
common=("$root/$graph" --size "$size" --tiles "$tiles" --stitch r16)

echo "== local runner: orogen build --tiles"
t0=$(date +%s.%N)
"$orogen" build "${common[@]}" -o "$local_out" 2>"$work/local.log"
t1=$(date +%s.%N)

echo "== Slurm: orogen plan, then slurm/submit.sh"
"$orogen" plan "${common[@]}" -o "$plan"
t2=$(date +%s.%N)
# Each task on one core, so the tiles of the array run side by side.
stitch=$(OROGEN="$orogen" "$plan/slurm/submit.sh" --cpus-per-task=1)
echo "submitted; stitch job $stitch"
while squeue -h -j "$stitch" 2>/dev/null | grep -q .; do sleep 1; done
t3=$(date +%s.%N)
squeue || true
if [ ! -s "$plan/manifest.json" ]; then
  echo "FAILED: the stitch job wrote no manifest; logs:" >&2
  tail -n 20 "$plan"/slurm/*.log >&2 || true
  exit 1
fi

echo "== compare every listed file"
files=$(python3 -c 'import json,sys; print("\n".join(f["file"] for f in json.load(open(sys.argv[1]))["files"]))' "$plan/manifest.json")
n=0
for f in $files manifest.json; do
  cmp -s "$plan/$f" "$local_out/$f" || { echo "DIFFERS: $f" >&2; exit 1; }
  n=$((n + 1))
done
arrays=$(find "$plan/slurm" -name 'array-*.log' | wc -l)
printf 'identical: %d files (%s at %s², %s tiles; %d array task logs)\n' "$n" "$graph" "$size" "$tiles" "$arrays"
printf 'local runner: %.1f s; Slurm (submit to stitch done, %s CPUs): %.1f s\n' \
  "$(echo "$t1 - $t0" | bc)" "$cpus" "$(echo "$t3 - $t2" | bc)"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
rm -rf "$work"
