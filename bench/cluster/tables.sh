# bench/cluster/tables.sh -- sourced by the paper-table scripts
# (laplace_table1.sh, fft_table2.sh): one job with its result line kept,
# and the places a table runs in -- this machine's shared memory, and the
# namespace cluster of tests/cluster-net/run at each link rate, where the
# script runs again inside with --inner net:RATE.
#
# The caller sets ME (its name, for messages), NET (tests/cluster-net/run)
# and out (the --out directory or empty), and defines run_place PLACE
# (shm, or net:RATE): its jobs, through tables_one_job.

# tables_one_job REGEX TAGS -- COMMAND...: runs it; its first line matching
# REGEX (grep -E), with TAGS in front, goes to $out/raw; a job without
# that line or with a failed verification is FAILED (its output shown)
# and returns 1.
tables_one_job() {
	local regex=$1 tags=$2 f rc line
	shift 3
	f=$(mktemp "$out/job.XXXXXX")
	"$@" >"$f" 2>&1 </dev/null
	rc=$?
	line=$(grep -m1 -E "$regex" "$f")
	if ((rc != 0)) || [[ -z $line ]] || ! grep -q '^verification: ok' "$f"; then
		echo "FAILED ($rc): $tags: $*" >&2
		tail -15 "$f" | sed 's/^/    /' >&2
		rm -f "$f"
		return 1
	fi
	rm -f "$f"
	echo "$tags $line" >>"$out/raw"
}

# tables_run WHERE RATES MAXRANKS REQUIRE_NET -- COMMAND... BUILD_DIR: makes
# $out (a temporary directory removed at exit when none was given; then
# tables_keep is empty) with stats/ and an empty raw; then for each place
# of WHERE (shm and/or net): run_place shm, or for each rate of RATES
# COMMAND... --inner net:RATE --out $out BUILD_DIR in the namespace cluster of
# MAXRANKS hosts (none below 2).  Where namespaces cannot be made: exit 77
# with REQUIRE_NET, else a note in tables_notes.  tables_status: 1 when a
# job failed.  Exits 2 on a bad place.
tables_run() {
	local where=$1 rates=$2 maxranks=$3 require_net=$4 w r why
	shift 5
	local build_dir=${*: -1} cmd=("${@:1:$#-1}")
	tables_keep=$out
	if [[ -z $out ]]; then
		out=$(mktemp -d "${TMPDIR:-/tmp}/pagehome-$ME.XXXXXX")
		trap 'rm -rf -- "$out"' EXIT
	fi
	mkdir -p "$out/stats" || exit 2
	out=$(cd -- "$out" && pwd -P)
	: >"$out/raw"
	tables_status=0
	tables_notes=()
	for w in ${where//,/ }; do
		case $w in
		shm)
			echo "shared memory:" >&2
			run_place shm || tables_status=1
			;;
		net)
			if ! why=$("$NET" --check 2>&1); then
				if [[ -n $require_net ]]; then
					echo "$ME: SKIP: the namespace cluster cannot be made here: ${why##*SKIP: }" >&2
					exit 77
				fi
				tables_notes+=("namespace cluster not run: ${why##*SKIP: }")
				continue
			fi
			((maxranks >= 2)) || continue
			for r in ${rates//,/ }; do
				echo "namespace cluster, $maxranks hosts, rate $r:" >&2
				"$NET" --hosts "$maxranks" --rate "$r" --timeout "${NET_TIMEOUT:-7200}" -- \
					"${cmd[@]}" --inner "net:$r" --out "$out" "$build_dir" || tables_status=1
			done
			;;
		*) echo "$ME: --where takes shm and net (got '$w')" >&2; exit 2 ;;
		esac
	done
}
