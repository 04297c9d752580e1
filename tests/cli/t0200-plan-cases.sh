#!/bin/sh
# Manifest selection, table-driven: every line of plan-cases.txt runs
# `mlsetup plan --json` on simulated GPUs and checks the exit code, the
# chosen manifest and a phrase of the explanation.
. "$(dirname "$0")/lib.sh"
E="$SYSROOTS/empty"
cases="$(dirname "$0")/plan-cases.txt"
# A user's manifest the cases name as ./torch-2.15.0.txt: torch 2.15.0 (a
# CUDA 13.2 build in mlsetup's torch-build table), pinned by its cp312 hash.
printf 'torch==2.15.0 --hash=sha256:%s\n' \
	6d8c86f4e33a9f12a58149bd9b0d64351632b8eb44479be8ff85e5389932dd79 >"$TRASH/torch-2.15.0.txt"

run_case() { # gpus args exit manifest phrase
	gpus=$1 args=$2 want_exit=$3 want_manifest=$4 phrase=$5
	[ "$args" = "-" ] && args=""
	if [ "$gpus" = "-" ]; then
		set -- "$MLSETUP" plan --json --sysroot "$E" --python 3.12 $args
	else
		set -- with_gpus "$gpus" "$MLSETUP" plan --json --sysroot "$E" --python 3.12 $args
	fi
	"$@" >j 2>err
	got=$?
	[ "$got" -eq "$want_exit" ] || { echo "exit $got, want $want_exit"; cat err; return 1; }
	if [ "$want_manifest" != "-" ]; then
		expect_eq "$want_manifest" "$(json j "d[\"manifest\"][\"name\"]")" || return 1
	else
		expect_eq None "$(json j "d[\"manifest\"][\"name\"] or \"None\"")" || return 1
		grep -q "hint: " err || { echo "no remedy printed"; cat err; return 1; }
	fi
	grep -qF -- "$phrase" j || { echo "missing phrase: $phrase"; cat j; return 1; }
}

while IFS='|' read -r gpus args code manifest phrase; do
	case "$gpus" in "#"* | "") continue ;; esac
	c_gpus=$(echo $gpus) c_args=$(echo $args) c_code=$(echo $code)
	c_manifest=$(echo $manifest) c_phrase=$(echo "$phrase" | sed 's/^ *//; s/ *$//')
	test_expect_success "plan: $c_gpus $c_args -> exit $c_code $c_manifest" \
		'run_case "$c_gpus" "$c_args" "$c_code" "$c_manifest" "$c_phrase" </dev/null'
done <"$cases"

test_expect_success 'plan on this machine needs no network and prints the selection' '
	"$MLSETUP" plan --json --offline >j &&
	expect_eq mlsetup.plan/1 "$(json j "d[\"schema\"]")" &&
	test -n "$(json j "d[\"manifest\"][\"name\"]")" &&
	test "$(json j "len(d[\"reasons\"])")" -ge 1 &&
	# every object names each key once (a repeated key hides a value)
	python3 -c "import json, sys
def once(pairs):
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), keys
    return dict(pairs)
d = json.load(open(sys.argv[1]), object_pairs_hook=once)
assert d[\"python\"][\"source\"] == \"managed\", d[\"python\"]" j
'
test_expect_success 'plan names an exact wheel and size for every package' '
	with_gpus rtx5090.json "$MLSETUP" plan --json --sysroot "$E" --python 3.12 >j &&
	expect_eq 0 "$(json j "sum(1 for f in d[\"files\"] if not f[\"filename\"] or not f[\"size\"])")" &&
	json j "[f[\"filename\"] for f in d[\"files\"] if f[\"name\"] == \"torch\"][0]" | grep -q "^torch-2.8.0-cp312-cp312-manylinux" &&
	test "$(json j "d[\"sizes\"][\"total_bytes\"]")" -gt 1000000000
'
test_expect_success 'human plan output shows rules, manifest and files' '
	with_gpus rtx3090-535.json "$MLSETUP" plan --sysroot "$E" --python 3.12 >out &&
	grep -q "^rules" out && grep -q "^manifest  requirements.txt" out &&
	grep -q "torch-2.6.0-cp312" out && grep -q "warning:.*minor-version" out
'
test_expect_success 'an unknown --manifest name is an error naming it' '
	expect_exit 1 "$MLSETUP" plan --sysroot "$E" --manifest nosuch 2>err &&
	grep -q "no manifest named .nosuch." err
'
test_expect_success 'a manifest file with an unpinned line is refused with file and line' '
	printf "# mlsetup: python = 3.12\nnumpy>=1.0 --hash=sha256:%064d\n" 0 >bad.txt &&
	expect_exit 1 "$MLSETUP" plan --sysroot "$E" --manifest ./bad.txt 2>err &&
	grep -q "bad.txt.* line 2" err
'
test_done
