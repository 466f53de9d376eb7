#!/usr/bin/env bash
# Runs a fleet sweep (or a tune: any retrysim fleet arguments) on Slurm: a
# job array of SHARDS tasks, task I running shard I/SHARDS of the sweep
# (shards.sbatch: --shard index/N reads I from $SLURM_ARRAY_TASK_ID), then a
# job that depends on the whole array (--dependency=afterok) and merges the
# partial results (merge.sbatch) into the one-machine bytes.
#
#   SHARDS=4 deploy/slurm/sweep.sh [-w] RESULTS ARGS...
#
#   RESULTS   a folder every node sees (a shared file system): the shards'
#             partials go to RESULTS/shards/, the merged sweep to
#             RESULTS/merged.json (--json --shard 0/1: retrysim-plot draws
#             it, retrysim fleet merge [--json] reads it) and
#             RESULTS/merged.txt (the table and its legend), the jobs' logs
#             to RESULTS/log/
#   ARGS      retrysim fleet's arguments, e.g. --seeds 1-20 fleets/*.yaml
#             (paths as the nodes see them)
#   -w        wait until the merge job ends (sbatch --wait); its exit status
#   SHARDS    the number of array tasks (default 4)
#   RETRYSIM  the retrysim binary the jobs run (default: retrysim on $PATH),
#             at the same path on every node
#
# It prints the array's job id and the merge's. A failed shard cancels the
# merge (afterok); rerun one shard with the same SHARDS as
#   sbatch --array=I --export=ALL,SHARDS=4,RESULTS=...,RETRYSIM=... deploy/slurm/shards.sbatch ARGS...
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
wait=()
if [ "${1:-}" = -w ]; then
	wait=(--wait)
	shift
fi
if [ $# -lt 1 ]; then
	echo "usage: SHARDS=N $0 [-w] RESULTS ARGS..." >&2
	exit 2
fi
shards=${SHARDS:-4}
case $shards in
'' | *[!0-9]* | 0*) echo "$0: SHARDS=$shards: expected a number from 1" >&2; exit 2 ;;
esac
bin=$(command -v "${RETRYSIM:-retrysim}") || { echo "$0: ${RETRYSIM:-retrysim} not found: go install ./cmd/retrysim, or set RETRYSIM" >&2; exit 2; }
mkdir -p "$1/shards" "$1/log"
results=$(cd "$1" && pwd)
shift
if compgen -G "$results/shards/*.json" >/dev/null; then
	echo "$0: $results/shards/ already holds partial results (of another sweep?): give an empty RESULTS" >&2
	exit 2
fi
export SHARDS=$shards RESULTS=$results RETRYSIM=$bin
array=$(sbatch --parsable --array=0-$((shards - 1)) --output="$results/log/shard-%a.out" \
	"$here/shards.sbatch" "$@")
array=${array%%;*}
echo "shards: job $array"
merge=$(sbatch --parsable "${wait[@]}" --dependency=afterok:"$array" --kill-on-invalid-dep=yes \
	--output="$results/log/merge.out" "$here/merge.sbatch") || true
merge=${merge%%;*}
[ -n "$merge" ] || { echo "$0: the merge job was not submitted" >&2; exit 1; }
echo "merge: job $merge"
if [ ${#wait[@]} -gt 0 ]; then
	# sbatch --wait returns 0 for a job cancelled before it ran (a shard
	# failed): the state says.
	state=$(scontrol -o show job "$merge" | grep -o 'JobState=[A-Z_]*' || true)
	if [ "$state" != JobState=COMPLETED ]; then
		echo "$0: the merge job $merge ended ${state:-unknown}; the shards:" >&2
		scontrol -o show job "$array" |
			sed -E 's/.*ArrayTaskId=([0-9]+).*JobState=([A-Z_]+).*ExitCode=([0-9:]+).*/  task \1: \2, exit \3/' >&2 || true
		echo "(logs in $results/log/)" >&2
		exit 1
	fi
fi
