#!/bin/sh
# Projects: `plan/install --project DIR|GIT_URL` choose among the project's
# requirements files the first whose torch build runs on every GPU here
# and whose CUDA build the driver can start. The torch-like fixture wheels
# on the loopback index carry nvcc-built fatbins (sm_75..sm_90 SASS only,
# and sm_120 SASS) and are not in the table of known torch builds, so the
# choice comes from auditing the wheels themselves. Git projects come over
# file:// and git's smart HTTP on loopback, at a commit, tag or branch
# (the commit recorded); checkouts are reused when clean and at REV and
# never overwritten otherwise; bad URLs and REVs are errors naming them.
. "$(dirname "$0")/lib.sh"
. "$top/tests/mirror/testlib.sh"
. "$(dirname "$0")/installlib.sh"
. "$(dirname "$0")/projectlib.sh"

project_require
project_setup
# branch blackwell-only: C2, requirements.txt removed
git -C "$R" checkout -qb blackwell-only && git -C "$R" rm -q requirements.txt &&
	git -C "$R" commit -qm two && git -C "$R" checkout -q main ||
	exit 1
C2=$(git -C "$R" rev-parse blackwell-only)
git_http_start "$TRASH/repos"

pl() {
	"$MLSETUP" plan --sysroot "$SYSROOTS/empty" --cache-dir "$TRASH/cache" \
		--python-pins "$TRASH/pins.json" --python "$SYSPY" "$@"
}
chosen() { json "$1" 'd["manifest"]["name"]'; }

test_expect_success 'an RTX 5090 gets requirements_blackwell.txt, from the audited wheels' '
	with_gpus rtx5090.json pl --project "$P" --json >out.json 2>err &&
	expect_eq requirements_blackwell.txt "$(chosen out.json)" &&
	expect_eq 2 "$(json out.json "len(d[\"candidates\"])")" &&
	expect_eq "requirements.txt requirements_blackwell.txt" \
		"$(json out.json "\" \".join(c[\"name\"] for c in d[\"candidates\"])")" &&
	expect_eq "[false, true]" "$(json out.json "[c[\"chosen\"] for c in d[\"candidates\"]]")" &&
	expect_eq "audit audit" "$(json out.json "\" \".join(c[\"torch\"][\"source\"] for c in d[\"candidates\"])")" &&
	expect_eq "$T26" "$(json out.json "d[\"candidates\"][0][\"torch\"][\"sha256\"]")" &&
	expect_eq "$T28" "$(json out.json "d[\"candidates\"][1][\"torch\"][\"sha256\"]")" &&
	expect_eq "[\"sm_120\"]" "$(json out.json "d[\"candidates\"][1][\"torch\"][\"sass\"]")" &&
	expect_eq 12.4 "$(json out.json "d[\"candidates\"][0][\"torch\"][\"cuda\"]")" &&
	json out.json "d[\"candidates\"][0][\"reason\"]" >why &&
	grep -q "requirements.txt: torch 2.6.0 has no sm_120 code (SASS sm_75.sm_90, no PTX)" why &&
	expect_eq false "$(json out.json "d[\"manifest\"][\"overridden\"]")" &&
	expect_eq "$P" "$(json out.json "d[\"project\"][\"url\"]")" &&
	expect_eq "$P/.venv" "$(json out.json "d[\"target\"]")"
'
test_expect_success 'an RTX 3090 gets requirements.txt; the Blackwell file is not needed' '
	with_gpus rtx3090-550.json pl --project "$P" --json >out.json 2>err &&
	expect_eq requirements.txt "$(chosen out.json)" &&
	expect_eq "[true, false]" "$(json out.json "[c[\"chosen\"] for c in d[\"candidates\"]]")" &&
	json out.json "d[\"candidates\"][1][\"reason\"]" | grep -q "not considered" &&
	expect_eq null "$(json out.json "d[\"candidates\"][1][\"torch\"]")"
'
test_expect_success '--offline: the table of known builds (by the pinned version) and the cache only' '
	with_gpus rtx5090.json pl --offline --project "$P" --json >out.json 2>err &&
	expect_eq requirements_blackwell.txt "$(chosen out.json)" &&
	expect_eq "table table" "$(json out.json "\" \".join(c[\"torch\"][\"source\"] for c in d[\"candidates\"])")" &&
	json out.json "d[\"candidates\"][0][\"reason\"]" | grep -q "requirements.txt: torch 2.6.0 has no sm_120 code (SASS sm_50.sm_90a, no PTX)"
'
# A bundle's install is offline with its wheels on a local --find-links:
# hashed candidates whose torch builds no table knows are audited from there.
test_expect_success '--offline: hashed candidates are audited from a local --find-links' '
	wheel_manifest h26.txt "torch-2.6.0-$PYTAG-$PYTAG-linux_x86_64.whl" purepkg-1.0-py3-none-any.whl &&
	wheel_manifest h28.txt "torch-2.8.0-$PYTAG-$PYTAG-linux_x86_64.whl" purepkg-1.0-py3-none-any.whl &&
	with_gpus rtx5090.json pl --offline --cache-dir "$TRASH/cache-offline" \
		--find-links "$TRASH/web/files" --manifest h26.txt --manifest h28.txt --json >out.json 2>err &&
	expect_eq h28.txt "$(chosen out.json)" &&
	expect_eq "audit audit" "$(json out.json "\" \".join(c[\"torch\"][\"source\"] for c in d[\"candidates\"])")"
'
test_expect_success 'plan shows each candidate and why, for people' '
	with_gpus rtx5090.json pl --project "$P" >out 2>err &&
	grep -q "^candidates" out &&
	grep -q "^  - requirements.txt: torch 2.6.0 has no sm_120 code" out &&
	grep -q "^  \* requirements_blackwell.txt: torch 2.8.0 runs on every GPU here" out &&
	grep -q "^manifest  .*requirements_blackwell.txt" out
'
test_expect_success 'with no GPU the first candidate is taken, GPU checks skipped' '
	pl --project "$P" --json >out.json 2>err &&
	expect_eq requirements.txt "$(chosen out.json)" &&
	expect_eq true "$(json out.json "d[\"gpu_checks_skipped\"]")"
'
test_expect_success 'no candidate fits: exit 6, every candidate named' '
	printf -- "--index-url %s\ntorch==2.6.0\n" "$web_url" >old.txt &&
	expect_exit 6 with_gpus rtx5090.json pl --project "$P" --manifest old.txt \
		--manifest "$P/requirements.txt" >out 2>err &&
	grep -q "no candidate of the project fits: old.txt: torch 2.6.0 has no sm_120 code" err &&
	grep -q "requirements.txt: torch 2.6.0 has no sm_120 code" err
'
test_expect_success 'a candidate pip cannot resolve is passed over, naming why' '
	printf -- "--index-url %s\ntorch==9.9.9\n" "$web_url" >nosuch.txt &&
	with_gpus rtx5090.json pl --manifest nosuch.txt --manifest "$P/requirements_blackwell.txt" \
		--json >out.json 2>err &&
	expect_eq requirements_blackwell.txt "$(chosen out.json)" &&
	json out.json "d[\"candidates\"][0][\"reason\"]" >why &&
	grep -q "nosuch.txt: torch.s build is not known (it cannot be resolved: .*torch==9.9.9.*): passed over" why
'
test_expect_success 'without an interpreter to resolve with, the first candidate is a fallback, said' '
	with_gpus rtx5090.json "$MLSETUP" plan --sysroot "$SYSROOTS/empty" --cache-dir "$TRASH/cache" \
		--python-pins "$TRASH/pins.json" --project "$P" --json >out.json 2>err &&
	expect_eq requirements.txt "$(chosen out.json)" &&
	json out.json "d[\"candidates\"][0][\"reason\"]" >why &&
	grep -q "give --python PATH" why &&
	grep -q "taken: no candidate is known to run here, and nothing rules this one out" why &&
	expect_eq null "$(json out.json "d[\"candidates\"][0][\"torch\"]")"
'
test_expect_success 'repeated --manifest: the candidates in the order given' '
	with_gpus rtx5090.json pl --manifest "$P/requirements_blackwell.txt" \
		--manifest "$P/requirements.txt" --json >out.json 2>err &&
	expect_eq requirements_blackwell.txt "$(chosen out.json)" &&
	expect_eq true "$(json out.json "d[\"candidates\"][0][\"chosen\"]")" &&
	expect_eq null "$(json out.json "d.get(\"project\")")"
'
test_expect_success '[tool.mlsetup] manifests in pyproject.toml name the candidates' '
	cp -r "$P" pp && printf "[project]\nname = \"t\"\n\n[tool.mlsetup]\nmanifests = [\"requirements_blackwell.txt\", \"requirements.txt\"]\n" >pp/pyproject.toml &&
	with_gpus rtx3090-550.json pl --project pp --json >out.json 2>err &&
	expect_eq "requirements_blackwell.txt requirements.txt" \
		"$(json out.json "\" \".join(c[\"name\"] for c in d[\"candidates\"])")" &&
	expect_eq requirements.txt "$(chosen out.json)" &&
	printf "[tool.mlsetup]\nmanifests = [\"nope.txt\"]\n" >pp/pyproject.toml &&
	expect_exit 1 pl --project pp >out 2>err &&
	grep -q "pyproject.toml. line 2: manifest .nope.txt. of \[tool.mlsetup\] does not exist" err
'
test_expect_success 'a project where no file requires torch: requirements.txt, no GPU checks' '
	mkdir np && printf -- "--index-url %s\npurepkg==1.0\n" "$web_url" >np/requirements.txt &&
	printf -- "--index-url %s\npurepkg==1.0\n" "$web_url" >np/requirements-dev.txt &&
	with_gpus rtx5090.json pl --project np --json >out.json 2>err &&
	expect_eq requirements.txt "$(chosen out.json)" &&
	expect_eq 1 "$(json out.json "len(d[\"candidates\"])")" &&
	expect_eq true "$(json out.json "d[\"gpu_checks_skipped\"]")" &&
	json out.json "d[\"candidates\"][0][\"reason\"]" | grep -q "requires no torch: the GPU checks do not apply"
'
test_expect_success 'a file:// git URL at a commit: the same choice, the commit recorded' '
	with_gpus rtx5090.json pl --project "file://$R@$C1" --json >out.json 2>err &&
	expect_eq requirements_blackwell.txt "$(chosen out.json)" &&
	expect_eq "$C1" "$(json out.json "d[\"project\"][\"commit\"]")" &&
	expect_eq "$C1" "$(json out.json "d[\"project\"][\"rev\"]")" &&
	expect_eq "file://$R" "$(json out.json "d[\"project\"][\"url\"]")" &&
	case "$(json out.json "d[\"project\"][\"path\"]")" in "$TRASH/cache/projects/"*) ;; *) exit 1 ;; esac &&
	with_gpus rtx3090-550.json pl --project "git+file://$R@v1" --json >out.json 2>err &&
	expect_eq requirements.txt "$(chosen out.json)" &&
	expect_eq "$C1" "$(json out.json "d[\"project\"][\"commit\"]")" &&
	expect_eq thesis/.venv "$(json out.json "d[\"target\"]")" &&
	mkdir g && cd g && with_gpus rtx3090-550.json pl --project "file://$R@v1" >../out 2>../err &&
	test -z "$(ls -A)"
'
test_expect_success 'a branch is resolved to its commit' '
	with_gpus rtx5090.json pl --project "file://$R@blackwell-only" --json >out.json 2>err &&
	expect_eq "$C2" "$(json out.json "d[\"project\"][\"commit\"]")" &&
	expect_eq requirements_blackwell.txt "$(chosen out.json)" &&
	expect_eq 1 "$(json out.json "len(d[\"candidates\"])")" &&
	expect_exit 6 with_gpus rtx3090-550.json pl --project "file://$R@blackwell-only" >out 2>err &&
	grep -q "no candidate of the project fits: requirements_blackwell.txt: torch 2.8.0 has no sm_86 code (SASS sm_120, no PTX)" err
'
test_expect_success 'over git smart HTTP on loopback, at a tag' '
	with_gpus rtx5090.json pl --project "git+http://127.0.0.1:$GITPORT/thesis.git@v1" --json >out.json 2>err &&
	expect_eq requirements_blackwell.txt "$(chosen out.json)" &&
	expect_eq "$C1" "$(json out.json "d[\"project\"][\"commit\"]")" &&
	expect_eq "http://127.0.0.1:$GITPORT/thesis.git" "$(json out.json "d[\"project\"][\"url\"]")"
'
test_expect_success 'credentials in the URL work and are never shown' '
	with_gpus rtx3090-550.json pl --project "http://tester:s3cret-token@127.0.0.1:$GITPORT/private/thesis.git@$C1" \
		--json >out.json 2>err &&
	expect_eq requirements.txt "$(chosen out.json)" &&
	! grep -r s3cret out.json err "$TRASH/cache/projects" &&
	expect_exit 4 pl --cache-dir "$TRASH/cache-fresh" \
		--project "http://tester:wrong-token@127.0.0.1:$GITPORT/private/thesis.git" >out 2>err &&
	grep -q "cannot clone .http://127.0.0.1:$GITPORT/private/thesis.git" err &&
	! grep -q wrong-token out err
'
test_expect_success 'bad URLs and REVs are errors naming the problem' '
	expect_exit 2 pl --project "file://$R@no-such-rev" >out 2>err &&
	grep -q "REV .no-such-rev. names no commit, tag or branch of .file://$R." err &&
	expect_exit 2 pl --project "ftp://127.0.0.1/x.git" >out 2>err &&
	grep -q "project URL scheme .ftp. is not supported" err &&
	expect_exit 2 pl --project "file://$R@" >out 2>err &&
	grep -q "has an empty REV" err &&
	expect_exit 2 pl --project "https://127.0.0.1" >out 2>err &&
	grep -q "names no repository path" err &&
	expect_exit 4 pl --project "file://$TRASH/no-such-repo.git" >out 2>err &&
	grep -q "cannot clone .file://$TRASH/no-such-repo.git." err &&
	expect_exit 1 pl --project "$TRASH/no-such-dir" >out 2>err &&
	grep -q "project .$TRASH/no-such-dir. is not a directory" err
'
test_expect_success 'install --project: checkout, environment inside it, commit in pylock.toml' '
	mkdir w && cd w &&
	inst --python "$SYSPY" --project "file://$R@v1" >out 2>err &&
	test -f thesis/requirements.txt &&
	expect_eq "$C1" "$(git -C thesis rev-parse HEAD)" &&
	"$TRASH/w/thesis/.venv/bin/python" -c "import torch, purepkg; print(torch.__file__)" &&
	grep -q "^commit = \"$C1\"" thesis/.venv/pylock.toml &&
	grep -q "$T26" thesis/.venv/pylock.toml &&
	rep=thesis/.venv/mlsetup-report.json &&
	expect_eq "file://$R" "$(json "$rep" "d[\"project\"][\"url\"]")" &&
	expect_eq "$C1" "$(json "$rep" "d[\"project\"][\"commit\"]")" &&
	expect_eq v1 "$(json "$rep" "d[\"project\"][\"rev\"]")" &&
	inst --python "$SYSPY" --project "file://$R@$C1" >out 2>err &&
	grep -q "^project   file://$R @ $C1, commit $C1 in thesis (the checkout there reused" out &&
	grep -q "^  \\* requirements.txt: torch 2.6.0 runs on this machine (no NVIDIA GPU)" out
'
test_expect_success 'an existing checkout is never overwritten: changed, elsewhere, or not one' '
	mkdir w2 && cd w2 &&
	inst --python "$SYSPY" --project "file://$R@v1" --checkout co --no-verify >out 2>err &&
	echo local-change >>co/README.md &&
	expect_exit 1 inst --python "$SYSPY" --project "file://$R@v1" --checkout co >out 2>err &&
	grep -q "co. exists and it has changes to tracked files: not overwritten" err &&
	grep -q local-change co/README.md &&
	git -C co checkout -q README.md &&
	expect_exit 1 inst --python "$SYSPY" --project "file://$R@blackwell-only" --checkout co >out 2>err &&
	grep -q "co. exists and it is at commit $C1, not at .blackwell-only." err &&
	test -f co/requirements.txt &&
	mkdir other && echo mine >other/notes.txt &&
	expect_exit 1 inst --python "$SYSPY" --project "file://$R" --checkout other >out 2>err &&
	grep -q "other. exists and it is not a git checkout: not overwritten" err &&
	expect_eq mine "$(cat other/notes.txt)"
'
test_done
