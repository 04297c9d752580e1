#!/bin/sh
# run.sh - the main job on real packages (make e2e; not part of make check).
# Needs the public package index reachable through pip's configuration and
# about 30 GB of disk. Installs the real torch 2.6.0 + CUDA 12.4 stack with
# --python /usr/bin/python3.11 (this kind of machine cannot reach the
# interpreter release host), verifies it, audits it for sm_120, sm_90 and
# sm_86, installs the real torch 2.8.0 + CUDA 12.8 stack and audits it for
# sm_120, cross-checks every library of both stacks against cuobjdump
# (crosscheck.py; cuobjdump from the nvidia-cuda-cuobjdump wheel, fetched
# with pip), and shows a tampered copy of a real wheel refused with the
# environment untouched. Transcripts go to tests/e2e/*.txt, the cross-check
# tables to tests/e2e/crosscheck-*.md. First, in every mode, it asks the
# index whether manifests/torch-builds.json lacks a torch build
# (make_torch_builds.py --check, no download) and warns if so.
#
# Usage: sh tests/e2e/run.sh [WORKDIR [audit|thesis|today|choice]]
#   audit: only the audit and cross-check steps, on the environments an
#   earlier full run left in WORKDIR (installing what is missing)
#   thesis: only the thesis-like project (tests/e2e/thesis): plan --project
#   with simulated RTX 3090, RTX 5090 and H100 GPUs, then install --project
#   today: only today's stack (torch 2.15.0 project on a simulated RTX 5090
#   with driver 595), installed and audited for every GPU class
#   choice: only a project that leaves torch open (`torch` and numpy):
#   planned on a simulated RTX 5090 + 595 and V100 + 550, installed on the
#   V100 (PyTorch's own indexes out of reach: the default index's builds)
#   and audited for it
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
M="$top/build/mlsetup"
W=${1:-${TMPDIR:-/tmp}/mlsetup-e2e}
OUT="$top/tests/e2e"
PY=${E2E_PYTHON:-/usr/bin/python3.11}
mkdir -p "$W"
export MLSETUP_CACHE_DIR="$W/cache"

# step NAME CMD...: runs CMD, writing what was run, its output, exit code
# and time to tests/e2e/NAME.txt (https hosts are masked).
step() {
	name=$1
	shift
	f="$OUT/$name.txt"
	{
		echo "\$ $*"
		echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm), $(nproc) cores"
	} >"$f"
	t0=$(date +%s.%N)
	"$@" >>"$f" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	printf '# exit %d after %.1f s\n' "$rc" "$(echo "$t1 - $t0" | bc)" >>"$f"
	sed -i -E 's#https://[^/ ]*#https://<host>#g' "$f"
	echo "$name: exit $rc"
	return $rc
}

[ "${2:-}" = audit ] && ONLY_AUDIT=1 || ONLY_AUDIT=
versions="$OUT/versions${ONLY_AUDIT:+-audit}.txt"
"$M" --version >"$versions"
"$PY" --version >>"$versions" 2>&1
# Is manifests/torch-builds.json current? A warning, not a failure: `make
# torch-builds` brings it up to date.
step torch-builds-check python3 "$top/manifests/make_torch_builds.py" --check \
	-o "$top/manifests/torch-builds.json" ||
	echo "WARNING: manifests/torch-builds.json lacks torch builds the index serves" \
		"(tests/e2e/torch-builds-check.txt); run make torch-builds"
# crosscheck N DIR TITLE: every library of the wheels in $W/DIR against
# cuobjdump, the table into tests/e2e/crosscheck-torchN.md.
crosscheck() {
	python3 "$top/tests/e2e/crosscheck.py" --mlsetup "$M" \
		--cuobjdump "$W/cuobjdump/nvidia/cu13/bin/cuobjdump" --title "$3" \
		--out "$OUT/crosscheck-torch$1.md" "$W/$2"/*.whl
}
# audits: the static audit of both stacks, the cases issue 11 names, and the
# cross-check of every library against cuobjdump.
audits() {
	[ -d "$W/env" ] || step install-requirements "$M" install --manifest requirements.txt \
		--python "$PY" --target "$W/env" --no-progress --smoke-size 512
	step audit-sm120 "$M" audit --arch sm_120 "$W/env"
	step audit-sm90 "$M" audit --arch sm_90 "$W/env"
	step audit-sm86 "$M" audit --arch sm_86 "$W/env"
	[ -d "$W/env28" ] || step install-blackwell "$M" install --manifest \
		requirements_blackwell.txt --python "$PY" --target "$W/env28" --no-progress --no-verify
	step audit-torch28-env-sm120 "$M" audit --arch sm_120 "$W/env28"
	# The wheels of both stacks, read in place (cached by the installs).
	[ -d "$W/bw" ] || "$M" download -r requirements_blackwell.txt -d "$W/bw" --python 3.11 \
		--no-progress >/dev/null
	[ -d "$W/w26" ] || "$M" download -r requirements.txt -d "$W/w26" --python 3.11 \
		--no-progress >/dev/null
	# NCCL 2.21.5: its compute_90 PTX is relocatable (__nv_relfatbin), so
	# nothing runs on sm_120; cuFFT 11.2.1.3's libcufftw holds only a
	# kernel-less sm_52 cubin: unverified, exit 0.
	step audit-nccl sh -c "'$M' audit --json --arch sm_120 '$W'/w26/nvidia_nccl_cu12-2.21.5-*.whl >'$W/nccl.json'; rc=\$?; python3 '$top/tests/e2e/audit_fields.py' '$W/nccl.json'; exit \$rc"
	step audit-cufftw sh -c "'$M' audit --json --arch sm_86 --arch sm_90 '$W'/w26/nvidia_cufft_cu12-11.2.1.3-*.whl >'$W/cufft.json'; rc=\$?; python3 '$top/tests/e2e/audit_fields.py' '$W/cufft.json'; exit \$rc"
	# cuobjdump, the independent oracle, from its wheel on the package index.
	if [ ! -x "$W/cuobjdump/nvidia/cu13/bin/cuobjdump" ]; then
		rm -rf "$W/cuobjdump" && mkdir -p "$W/cuobjdump" &&
			pip download --no-deps --only-binary :all: --python-version 3.11 \
				--platform manylinux2014_x86_64 -d "$W/cuobjdump" nvidia-cuda-cuobjdump \
				>/dev/null &&
			python3 -m zipfile -e "$W"/cuobjdump/nvidia_cuda_cuobjdump-*.whl "$W/cuobjdump" &&
			chmod +x "$W/cuobjdump/nvidia/cu13/bin/cuobjdump"
	fi
	crosscheck 26 w26 "torch 2.6.0 + CUDA 12.4 stack (manifests/requirements.txt)"
	crosscheck 28 bw "torch 2.8.0 + CUDA 12.8 stack (manifests/requirements_blackwell.txt)"
}
# thesis: the thesis-like project (tests/e2e/thesis, made a git repository
# here) planned with simulated RTX 3090, RTX 5090 and H100 GPUs - each must
# pick the right requirements file, checked below - then installed from
# the real package index with `install --project` (about 3 GB).
thesis() {
	rm -rf "$W/thesis-repo" "$W/thesis-work" && mkdir -p "$W/thesis-work" &&
		cp -r "$top/tests/e2e/thesis" "$W/thesis-repo" &&
		git -C "$W/thesis-repo" init -q -b main &&
		git -C "$W/thesis-repo" add -A &&
		git -C "$W/thesis-repo" -c user.name=e2e -c user.email=e2e@localhost \
			commit -qm "thesis fixture" || return 1
	commit=$(git -C "$W/thesis-repo" rev-parse HEAD)
	for g in rtx3090-550:requirements.txt rtx5090:requirements_blackwell.txt \
		h100-570:requirements.txt; do
		gpu=${g%%:*} want=${g#*:}
		j="$W/thesis-plan-$gpu.json"
		step "thesis-plan-$gpu" env LD_LIBRARY_PATH="$top/build/shims" \
			MLSETUP_FAKE_NVIDIA="$top/tests/fixtures/gpus/$gpu.json" \
			sh -c "'$M' plan --project 'file://$W/thesis-repo@$commit' --python '$PY' \
				--json >'$j'; rc=\$?; python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for c in d[\"candidates\"]:
    print(\"*\" if c[\"chosen\"] else \"-\", c[\"reason\"])
print(\"manifest:\", d[\"manifest\"][\"name\"], \"project:\", d[\"project\"])' '$j'; exit \$rc"
		got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifest"]["name"])' \
			"$j" 2>/dev/null)
		if [ "$got" = "$want" ]; then
			echo "thesis on $gpu: $got, as expected" | tee -a "$OUT/thesis-plan-$gpu.txt"
		else
			echo "thesis on $gpu: got '$got', expected $want" | tee -a "$OUT/thesis-plan-$gpu.txt"
		fi
	done
	(cd "$W/thesis-work" && step thesis-install "$M" install \
		--project "file://$W/thesis-repo@$commit" --python "$PY" --no-progress --smoke-size 512)
}
# today: the stack most new users install today - a project whose
# requirements.txt says torch==2.15.0 (CUDA 13.2, cuDNN 9.26) and numpy -
# installed with `install --project` on a simulated RTX 5090 with driver
# 595.45.04, then the environment audited for every GPU class torch builds
# for (exit 0 each) and for sm_70 (exit 5, naming libtorch_cuda.so).
today() {
	rm -rf "$W/today-project" "$W/today-env" && mkdir -p "$W/today-project" &&
		printf 'torch==2.15.0\nnumpy\n' >"$W/today-project/requirements.txt" || return 1
	step today-install env LD_LIBRARY_PATH="$top/build/shims" \
		MLSETUP_FAKE_NVIDIA="$top/tests/fixtures/gpus/rtx5090-595.json" \
		"$M" install --project "$W/today-project" --python "$PY" --target "$W/today-env" \
		--no-progress --smoke-size 512
	for sm in sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_103 sm_120 sm_121 sm_70; do
		step "today-audit-$sm" "$M" audit --arch "$sm" "$W/today-env"
	done
	f="$OUT/today-audit-sm_70.txt"
	grep -q "torch/lib/libtorch_cuda.so' cannot run on sm_70" "$f" &&
		echo "sm_70: exit 5 naming libtorch_cuda.so, as expected" | tee -a "$f"
}
# choice: a project whose requirements.txt leaves torch open. The plan
# chooses the build for the simulated GPUs among the package index's builds
# (PyTorch's own indexes cannot be reached from here: said once): the
# newest torch on an RTX 5090 with driver 595, and on a V100 with driver
# 550 torch 2.10.0, the last default build with sm_70 code (CUDA 12.8,
# under minor-version compatibility), installed and audited.
choice() {
	rm -rf "$W/choice-project" "$W/choice-env" && mkdir -p "$W/choice-project" &&
		printf 'torch\nnumpy\n' >"$W/choice-project/requirements.txt" || return 1
	for g in rtx5090-595 v100; do
		step "choice-plan-$g" env LD_LIBRARY_PATH="$top/build/shims" \
			MLSETUP_FAKE_NVIDIA="$top/tests/fixtures/gpus/$g.json" \
			"$M" plan --manifest "$W/choice-project/requirements.txt" --python "$PY"
		LD_LIBRARY_PATH="$top/build/shims" MLSETUP_FAKE_NVIDIA="$top/tests/fixtures/gpus/$g.json" \
			"$M" plan --json --manifest "$W/choice-project/requirements.txt" --python "$PY" \
			>"$W/choice-plan-$g.json" 2>/dev/null
		python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["torch_choice"]
print("torch_choice:", c["version"], c["backend"], "runs" if c["runs"] else "DOES NOT RUN",
      "(minor-version compatibility)" if c["minor_version_compat"] else "")
for r in c["rejected"]:
    print("  rejected", r["version"], "(" + r["index"] + "):", r["reason"])' \
			"$W/choice-plan-$g.json" | tee -a "$OUT/choice-plan-$g.txt"
	done
	step choice-install env LD_LIBRARY_PATH="$top/build/shims" \
		MLSETUP_FAKE_NVIDIA="$top/tests/fixtures/gpus/v100.json" \
		"$M" install --project "$W/choice-project" --python "$PY" --target "$W/choice-env" \
		--no-progress --no-verify
	step choice-audit-sm_70 "$M" audit --arch sm_70 --driver 550.54.14 "$W/choice-env"
	"$W/choice-env/bin/python" -c 'import torch; print("installed torch", torch.__version__, "CUDA", torch.version.cuda)' |
		tee -a "$OUT/choice-audit-sm_70.txt"
}
if [ "${2:-}" = choice ]; then
	choice
	exit 0
fi
if [ "${2:-}" = thesis ]; then
	thesis
	exit 0
fi
if [ "${2:-}" = today ]; then
	today
	exit 0
fi
if [ -n "$ONLY_AUDIT" ]; then
	audits
	exit 0
fi
rm -rf "$W/env"
step install-requirements "$M" install --manifest requirements.txt --python "$PY" \
	--target "$W/env" --no-progress --smoke-size 512
step imports "$W/env/bin/python" -c 'import torch, transformers, datasets, accelerate; print(torch.__version__, torch.version.cuda, transformers.__version__, datasets.__version__, accelerate.__version__)'
step verify "$M" verify --target "$W/env" --smoke-size 512
step report sh -c "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({k: d[k] for k in (\"status\", \"stages\", \"counters\")}, indent=1)); print(len(d[\"installed\"]), \"wheels\")' '$W/env/mlsetup-report.json'; du -sh --apparent-size '$W/env' '$W/cache'"

# Warm: a second environment from the same manifest.
rm -rf "$W/env2"
step install-warm "$M" install --manifest requirements.txt --python "$PY" \
	--target "$W/env2" --no-progress --no-verify

# The real torch 2.8.0 wheel (CUDA 12.8) has sm_120; audit it in place.
rm -rf "$W/bw"
step download-blackwell-torch sh -c "grep -v '^torch==\\|^torchvision\\|^torchaudio' /dev/null; '$M' download -r requirements_blackwell.txt -d '$W/bw' --python 3.11 --no-progress"
step audit-torch28-sm120 sh -c "'$M' audit --arch sm_120 --arch sm_90 '$W'/bw/torch-2.8.0-*.whl"
rm -rf "$W/env28" "$W/w26"
audits

# A tampered copy of one real wheel, served from a loopback index, is
# refused; the environment stays byte-identical.
rm -rf "$W/tamper" && mkdir -p "$W/tamper/files"
idna=$(ls "$W"/bw/idna-*.whl | head -1)
cp "$idna" "$W/tamper/files/"
python3 "$top/tests/mirror/server.py" --root "$W/tamper" --port-file "$W/tamper/port" 2>/dev/null &
srv=$!
while [ ! -s "$W/tamper/port" ]; do sleep 0.1; done
port=$(cat "$W/tamper/port")
tree_sum() {
	python3 - "$1" <<'PY'
import hashlib, os, sys
h = hashlib.sha256()
for d, dirs, files in sorted(os.walk(sys.argv[1])):
    dirs.sort()
    for f in sorted(files):
        p = os.path.join(d, f)
        h.update(p.encode())
        if not os.path.islink(p):
            h.update(open(p, "rb").read())
print(h.hexdigest())
PY
}
sum_before=$(tree_sum "$W/env")
python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[len(b)//2]^=1; open(p,'wb').write(b)" "$W/tamper/files/$(basename "$idna")"
# A manifest pinning only that wheel, with its real hashes from requirements.txt.
python3 - "$top/manifests/requirements.txt" "$(basename "$idna")" "$W/tamper/m.txt" <<'PY'
import re, sys
text, wheel, out = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
block = re.search(r"^idna==\S+(?: \\\n    --hash=sha256:[0-9a-f]{64})+", text, re.M).group(0)
files = [l for l in text.splitlines() if l.startswith("# mlsetup-file:") and l.endswith(" " + wheel)]
open(out, "w").write("# mlsetup: python = 3.11\n# mlsetup: platforms = linux-x86_64\n" + block + "\n" + "\n".join(files) + "\n")
PY
rm -rf "$W/cache-tamper"
step tampered-wheel "$M" install --manifest "$W/tamper/m.txt" --index-url "http://127.0.0.1:$port/simple/" \
	--python "$PY" --target "$W/env" --no-progress --cache-dir "$W/cache-tamper"
sum_after=$(tree_sum "$W/env")
kill $srv
if [ "$sum_before" = "$sum_after" ]; then
	echo "environment byte-identical after the refused install" >>"$OUT/tampered-wheel.txt"
else
	echo "ENVIRONMENT CHANGED after the refused install" >>"$OUT/tampered-wheel.txt"
fi
tail -1 "$OUT/tampered-wheel.txt"

# The thesis-like project: planned for three GPUs, then installed.
thesis
# Today's stack, then a project that leaves torch open.
today
choice
