#!/bin/sh
# A requirements file that leaves torch open gets the torch build that runs
# on this machine's GPUs (src/plan/torch_plan.c): the plan lists torch on
# the run's index and on each backend's index under --torch-index-url (the
# loopback index in PyTorch's layout, tests/fixtures/make_torch_layout.py,
# whose builds no table knows: each is audited when its turn comes) and
# shows the choice in plan --json's torch_choice, with the builds passed
# over and why. The machines are the layout's: what each should get is
# written beside its builds there.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"

torch_layout web
mkdir -p "$TRASH/proj"
printf 'torch\n' >"$TRASH/proj/requirements.txt"

# plan_for GPUS [OPTION...]: plan --json of proj's file on those GPUs
# ("-" for none), against the layout, into out.json.
plan_for() {
	g=$1
	shift
	if [ "$g" = - ]; then
		"$MLSETUP" plan --json --python 3.12 --manifest proj/requirements.txt \
			--cache-dir "$TRASH/cache" --index-url "${web_url}" --torch-index-url "$web_torch_url" "$@" >out.json 2>err
	else
		with_gpus "$g" "$MLSETUP" plan --json --python 3.12 --manifest proj/requirements.txt \
			--cache-dir "$TRASH/cache" --index-url "${web_url}" --torch-index-url "$web_torch_url" "$@" >out.json 2>err
	fi
}

choice() {
	json out.json "d[\"torch_choice\"][\"$1\"]"
}

test_expect_success 'V100 + 550: 9.0.0+cu126 from its backend index; 9.0.0 passed over for sm_70' '
	plan_for v100.json &&
	expect_eq "9.0.0+cu126" "$(choice version)" &&
	expect_eq cu126 "$(choice backend)" &&
	expect_eq "${web_torch_url}cu126/" "$(choice index_url)" &&
	expect_eq "9.0.0 default" "$(json out.json "\" \".join([d[\"torch_choice\"][\"rejected\"][0][k] for k in (\"version\", \"index\")])")" &&
	json out.json "d[\"torch_choice\"][\"rejected\"][0][\"reason\"]" >why &&
	grep -q "sm_70" why &&
	expect_eq true "$(choice minor_version_compat)" &&
	expect_eq "9.0.0+cu126" "$(json out.json "d[\"manifest\"][\"torch\"]")" &&
	expect_eq "12.6" "$(json out.json "d[\"manifest\"][\"cuda\"]")" &&
	json out.json "d[\"reasons\"]" >reasons &&
	grep -q "SASS sm_70 runs on 7.0" reasons &&
	test_must_fail grep -q "cannot tell" reasons err
'

test_expect_success 'GTX 1080 + 535: 9.0.0+cu126 (sm_60 SASS runs on 6.1), each build audited once' '
	with_gpus gtx1080-535.json "$MLSETUP" plan --python 3.12 --manifest proj/requirements.txt \
		--cache-dir "$TRASH/cache-gtx" --index-url "${web_url}" \
		--torch-index-url "$web_torch_url" >human 2>&1 &&
	grep -q "auditing torch-9.0.0-cp312" human &&
	grep -q "^torch     torch 9.0.0+cu126 from ${web_torch_url}cu126/: newest build that runs here" human &&
	grep -q "auditing torch-9.0.0+cu126-cp312" human &&
	test_must_fail grep -q "auditing torch-8.5.0" human &&
	plan_for gtx1080-535.json &&
	expect_eq "9.0.0+cu126" "$(choice version)" &&
	choice reason >why &&
	grep -q "SASS sm_60 runs on 6.1" why
'

test_expect_success 'RTX 5090 + 570: 8.5.0 of the default index (9.0.0 needs CUDA 13'"'"'s driver)' '
	plan_for rtx5090-570.json &&
	expect_eq "8.5.0" "$(choice version)" &&
	json out.json "[r[\"reason\"] for r in d[\"torch_choice\"][\"rejected\"] if r[\"version\"] == \"9.0.0\"][0]" >why &&
	grep -q "a CUDA 13.0 build needs a driver for CUDA 13" why
'

test_expect_success 'RTX 5090 + 595: the default index'"'"'s newest, nothing passed over' '
	plan_for rtx5090-595.json &&
	expect_eq "9.0.0" "$(choice version)" &&
	expect_eq "[]" "$(json out.json "d[\"torch_choice\"][\"rejected\"]")"
'

test_expect_success 'V100 + RTX 5090: 8.5.0, the one build with code for both' '
	plan_for v100-rtx5090-595.json &&
	expect_eq "8.5.0" "$(choice version)"
'

test_expect_success 'Windows, RTX 5090 + 572 (CUDA 12.8): the +cu128 Windows build, never the CPU-only default' '
	with_gpus win-rtx5090-572.json "$MLSETUP" plan --json --platform windows-x86_64 \
		--python 3.12 --manifest proj/requirements.txt --cache-dir "$TRASH/cache" \
		--index-url "${web_url}" --torch-index-url "$web_torch_url" >out.json 2>err &&
	expect_eq "9.0.0+cu128" "$(choice version)" &&
	json out.json "[r[\"reason\"] for r in d[\"torch_choice\"][\"rejected\"] if r[\"version\"] == \"9.0.0\"][0]" >why &&
	grep -q "CPU-only build" why &&
	json out.json "[r[\"reason\"] for r in d[\"torch_choice\"][\"rejected\"] if r[\"version\"] == \"9.0.0+cu130\"][0]" >why &&
	grep -q "needs a driver for CUDA 13" why
'

test_expect_success 'no NVIDIA GPU: the cpu build' '
	plan_for - &&
	expect_eq "9.0.0+cpu" "$(choice version)" &&
	expect_eq cpu "$(choice backend)"
'

test_expect_success 'a named backend is taken; one that cannot run here stops the plan and says why' '
	plan_for rtx5090-595.json --torch-backend cu130 &&
	expect_eq "9.0.0 cu130" "$(choice version) $(choice backend)" &&
	expect_exit 6 plan_for rtx5090-595.json --torch-backend cu126 &&
	grep -q "no code for NVIDIA GeForce RTX 5090 (sm_120)" err
'

test_expect_success '--torch-index-url none: only the run'"'"'s own index (V100 + 550: 8.5.0, by minor-version compatibility)' '
	plan_for v100.json --torch-index-url none &&
	expect_eq "8.5.0" "$(choice version)" &&
	expect_eq true "$(choice minor_version_compat)" &&
	expect_exit 6 plan_for k80.json --torch-index-url none &&
	grep -q "no torch build on offer runs on this machine" err
'

test_expect_success 'MLSETUP_TORCH_INDEX_URL names the variant indexes when the option does not' '
	MLSETUP_TORCH_INDEX_URL="$web_torch_url" with_gpus v100.json "$MLSETUP" plan --json \
		--python 3.12 --manifest proj/requirements.txt --cache-dir "$TRASH/cache" \
		--index-url "${web_url}" >out.json 2>err &&
	expect_eq "9.0.0+cu126" "$(choice version)"
'

test_expect_success '--gpu and --driver: a login node without GPUs plans for its compute nodes' '
	plan_for - --gpu sm_70 --driver 550.54.15 &&
	expect_eq "9.0.0+cu126" "$(choice version)" &&
	expect_eq "sm_70" "$(json out.json "d[\"machine\"][\"gpus\"][0][\"sm\"]")" &&
	plan_for - --gpu 7.0,12.0 --driver 595.45.04 &&
	expect_eq "8.5.0" "$(choice version)" &&
	plan_for v100.json --gpu none &&
	expect_eq "9.0.0+cpu" "$(choice version)" &&
	expect_exit 2 plan_for - --gpu sm_7x &&
	grep -q "compute capabilities" err &&
	expect_exit 2 plan_for - --driver 5x0
'

test_expect_success 'requirements as arguments: plan torch chooses as for a file' '
	with_gpus v100.json "$MLSETUP" plan --json --python 3.12 --cache-dir "$TRASH/cache" \
		--index-url "${web_url}" --torch-index-url "$web_torch_url" torch >out.json 2>err &&
	expect_eq "9.0.0+cu126" "$(choice version)" &&
	with_gpus v100.json "$MLSETUP" plan --json --python 3.12 --cache-dir "$TRASH/cache" \
		--index-url "${web_url}" --torch-index-url "$web_torch_url" "torch<9" >out.json 2>err &&
	expect_eq "8.5.0" "$(choice version)" &&
	expect_exit 2 "$MLSETUP" plan --manifest proj/requirements.txt torch 2>err &&
	grep -q "cannot be combined with --manifest" err &&
	expect_exit 2 "$MLSETUP" plan "torch[" 2>err &&
	grep -q "is not a requirement" err &&
	test_must_fail ls "${TMPDIR:-/tmp}"/mlsetup-args.* 2>/dev/null
'

test_expect_success 'a bad --torch-backend is a usage error; lock, download and bundle refuse the torch options' '
	expect_exit 2 "$MLSETUP" lock proj/requirements.txt -o x.txt --torch-backend cu126 2>err &&
	grep -q "mlsetup lock. chooses no torch build" err &&
	expect_exit 2 "$MLSETUP" download --manifest proj/requirements.txt -d d --torch-index-url none &&
	expect_exit 2 "$MLSETUP" bundle --manifest requirements.txt -o b --torch-backend cpu &&
	expect_exit 2 "$MLSETUP" plan --manifest proj/requirements.txt --torch-backend cuda &&
	true
'

test_expect_success 'a file that pins torch by hash or local label is not chosen for' '
	printf "torch==9.0.0+cu126\n" >proj/pinned.txt &&
	with_gpus v100.json "$MLSETUP" plan --json --python 3.12 --manifest proj/pinned.txt \
		--index-url "${web_url}" --torch-index-url "$web_torch_url" >out.json 2>err &&
	expect_eq false "$(json out.json "\"torch_choice\" in d")"
'

test_done
