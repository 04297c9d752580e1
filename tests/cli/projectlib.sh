# projectlib.sh - setup shared by the tests of users' projects (t0750
# plan/install --project, t0911 bundle --project): pip that resolves and
# git, both hermetic; torch-like wheels on the loopback index whose
# libtorch_cuda.so are nvcc-built fatbins (not in the table of known torch
# builds, so what they run on comes from auditing them); the thesis-like
# project as a directory and as a git repository (served with
# git_http_start "$TRASH/repos", tests/mirror/testlib.sh). Source after
# installlib.sh, then:
#
#   project_require     # skips the file without pip >= 22.2 or git
#   project_setup       # the index, the wheels, $P and $R

# project_require: skips every test of the file (visibly) unless the test
# CPython's pip resolves (>= 22.2: --dry-run --report) and git is here.
project_require() {
	have_syspy || test_skip_all "$SYSPY_MISSING"
	"$SYSPY" -c 'import sys
from pip import __version__ as v
sys.exit(tuple(int(x) for x in v.split(".")[:2]) < (22, 2))' 2>/dev/null ||
		test_skip_all "the test CPython $SYSPY has no pip >= 22.2 (its pip resolves)"
	command -v git >/dev/null || test_skip_all "git is missing (packaging/deps.sh installs it)"
}

# Hermetic pip (no cache, no questions) and git (no system or user
# configuration, a fixed identity, no credentials from the caller).
PIP_NO_CACHE_DIR=1 PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_NO_CACHE_DIR PIP_NO_INPUT PIP_DISABLE_PIP_VERSION_CHECK
GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org
GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org HOME="$TRASH"
export GIT_CONFIG_NOSYSTEM GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL HOME
unset MLSETUP_GIT_USERNAME MLSETUP_GIT_PASSWORD MLSETUP_GIT_TOKEN

# torch_wheel VERSION CUDA FATBIN: a torch-like wheel on the index whose
# libtorch_cuda.so is the fatbin fixture FATBIN (nvcc-built code).
torch_wheel() {
	src="$TRASH/torchsrc-$1"
	mkdir -p "$src/torch/lib"
	: >"$src/torch/__init__.py"
	printf "__version__ = '%s'\ncuda = '%s'\nhip = None\n" "$1" "$2" >"$src/torch/version.py"
	cp "$FIXTURES/fatbin/$3" "$src/torch/lib/libtorch_cuda.so"
	wheel_from_dir torch "$1" "$PYTAG-$PYTAG-linux_x86_64" "$src" "$TRASH/web/files"
}

# project_setup: install_setup (the index "web", the fixture wheels, the
# interpreter archive and pins), two torch wheels (T26, T28: their sha256),
# the thesis-like project P (requirements.txt for Ampere/Ada,
# requirements_blackwell.txt beside it with -r requirements-common.txt, a
# README; none pins hashes) and the same project as the git repository R
# under $TRASH/repos, at commit C1, tagged v1, on branch main.
project_setup() {
	install_setup
	torch_wheel 2.6.0 12.4 sass_only.so # SASS sm_75 sm_80 sm_86 sm_90, no PTX
	torch_wheel 2.8.0 12.8 sm120.so     # SASS sm_120
	T26=$(sha256sum "$TRASH/web/files/torch-2.6.0-$PYTAG-$PYTAG-linux_x86_64.whl" | cut -d" " -f1)
	T28=$(sha256sum "$TRASH/web/files/torch-2.8.0-$PYTAG-$PYTAG-linux_x86_64.whl" | cut -d" " -f1)
	P="$TRASH/thesis"
	mkdir -p "$P"
	printf -- "--index-url %s\ntorch==2.6.0\npurepkg==1.0\n" "$web_url" >"$P/requirements.txt"
	printf -- "-r requirements-common.txt\ntorch==2.8.0\n" >"$P/requirements_blackwell.txt"
	printf -- "--index-url %s\npurepkg==1.0\n" "$web_url" >"$P/requirements-common.txt"
	echo "# thesis" >"$P/README.md"
	R="$TRASH/repos/thesis.git"
	mkdir -p "$TRASH/repos"
	git init -q -b main "$R" && cp "$P"/* "$R/" &&
		git -C "$R" add -A && git -C "$R" commit -qm one && git -C "$R" tag v1 &&
		git -C "$R" config http.receivepack false ||
		exit 1
	C1=$(git -C "$R" rev-parse v1)
}
