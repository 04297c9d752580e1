#!/bin/sh
# install of a requirement that leaves torch open, end to end on the
# loopback index in PyTorch's layout (its wheels built for this machine's
# CPython): `mlsetup install torch torchvision` on a simulated V100 with
# driver 550 chooses 9.0.0+cu126 from the cu126 index, pip resolves the
# companions from that index too, the environment holds that build, and its
# lock and report say where it came from and why; every other simulated
# machine of the layout (GTX 1080 + 535, RTX 5090 + 570 and + 595, the V100
# + RTX 5090 pair, no GPU) installs the build make_torch_layout.py says it
# should get. Nothing runs torch (the
# fixture wheels hold no Python code): --no-verify.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"

have_syspy || test_skip_all "$SYSPY_MISSING"
install_setup
TORCH_LAYOUT_PYTHON=$PYTAG torch_layout tl

site() {
	echo "$1/lib/python$PYXY/site-packages"
}

test_expect_success 'V100 + 550: install torch torchvision gets the +cu126 build and its companion' '
	with_gpus v100.json inst --python "$SYSPY" --target "$TRASH/e1" --no-verify --index-url "$tl_url" \
		--torch-index-url "$tl_torch_url" torch torchvision >out 2>err &&
	grep -q "9.0.0+cu126" "$(site "$TRASH/e1")/torch/version.py" &&
	test -d "$(site "$TRASH/e1")/torchvision-0.90.0+cu126.dist-info" &&
	grep -q "${tl_torch_url}cu126/" "$TRASH/e1/pylock.toml" &&
	json "$TRASH/e1/mlsetup-report.json" "d[\"plan\"][\"torch_choice\"][\"version\"]" >v &&
	expect_eq "9.0.0+cu126" "$(cat v)" &&
	grep -q "newest build that runs here" err &&
	test_must_fail grep -q "cannot tell whether its CUDA code runs" err
'

test_expect_success 'RTX 5090 + 595: the default index'"'"'s 9.0.0, no variant index in the lock' '
	with_gpus rtx5090-595.json inst --python "$SYSPY" --target "$TRASH/e2" --no-verify --index-url "$tl_url" \
		--torch-index-url "$tl_torch_url" torch >out 2>err &&
	grep -q "__version__ = .9.0.0.$" "$(site "$TRASH/e2")/torch/version.py" &&
	test_must_fail grep -q "/whl/" "$TRASH/e2/pylock.toml"
'

# installed_torch GPUS DIR: installs a loose torch into DIR on those GPUs
# ("-": this machine's own, which has none here), prints the torch version
# the environment holds.
installed_torch() {
	if [ "$1" = - ]; then
		inst --python "$SYSPY" --target "$2" --no-verify --index-url "$tl_url" \
			--torch-index-url "$tl_torch_url" torch >"$2.out" 2>"$2.err"
	else
		with_gpus "$1" inst --python "$SYSPY" --target "$2" --no-verify --index-url "$tl_url" \
			--torch-index-url "$tl_torch_url" torch >"$2.out" 2>"$2.err"
	fi &&
		sed -n "s/^__version__ = .\(.*\).$/\1/p" "$(site "$2")/torch/version.py"
}

test_expect_success 'GTX 1080 + 535: the +cu126 build (sm_60 SASS runs on 6.1)' '
	expect_eq "9.0.0+cu126" "$(installed_torch gtx1080-535.json "$TRASH/e4")" &&
	grep -q "${tl_torch_url}cu126/" "$TRASH/e4/pylock.toml"
'

test_expect_success 'RTX 5090 + 570: the default index'"'"'s 8.5.0 (9.0.0 needs a driver for CUDA 13)' '
	expect_eq "8.5.0" "$(installed_torch rtx5090-570.json "$TRASH/e5")" &&
	json "$TRASH/e5/mlsetup-report.json" "[r[\"reason\"] for r in d[\"plan\"][\"torch_choice\"][\"rejected\"] if r[\"version\"] == \"9.0.0\"][0]" >why &&
	grep -q "needs a driver for CUDA 13" why
'

test_expect_success 'V100 + RTX 5090: 8.5.0, the one build with code for both' '
	expect_eq "8.5.0" "$(installed_torch v100-rtx5090-595.json "$TRASH/e6")"
'

test_expect_success 'no NVIDIA GPU: the cpu build from the cpu index' '
	expect_eq "9.0.0+cpu" "$(installed_torch - "$TRASH/e7")" &&
	grep -q "${tl_torch_url}cpu/" "$TRASH/e7/pylock.toml"
'

test_expect_success 'a GPU nothing runs on stops before anything is fetched, exit 6, nothing written' '
	expect_exit 6 with_gpus k80.json inst --python "$SYSPY" --target "$TRASH/e3" --no-verify \
		--index-url "$tl_url" --torch-index-url "$tl_torch_url" torch 2>err &&
	grep -q "no torch build on offer runs on this machine" err &&
	test ! -e "$TRASH/e3"
'

test_done
