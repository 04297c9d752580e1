#!/bin/sh
# packaging/cloud-init.yaml: the documented cloud-init example is valid
# cloud-config, and the bootstrap script it writes is valid sh and runs the
# installer the README describes.
. "$(dirname "$0")/lib.sh"

python3 -c 'import yaml' 2>/dev/null || test_skip_all "needs python3's yaml module"
cfg=$top/packaging/cloud-init.yaml

test_expect_success 'it is cloud-config YAML that writes a script and runs it' '
	expect_eq "#cloud-config" "$(head -n 1 "$cfg")" &&
	python3 - "$cfg" >script.sh <<-PY &&
	import sys, yaml
	d = yaml.safe_load(open(sys.argv[1]))
	f = d["write_files"][0]
	assert f["permissions"] == "0755"
	assert any(f["path"] in " ".join(c) for c in d["runcmd"]), d["runcmd"]
	sys.stdout.write(f["content"])
	PY
	sh -n script.sh &&
	grep -q "install.sh" script.sh && grep -q -- "--require-gpu" script.sh
'

test_expect_success 'the bootstrap script branches on the documented exit codes' '
	python3 -c "import sys, yaml; sys.stdout.write(yaml.safe_load(open(sys.argv[1]))[\"write_files\"][0][\"content\"])" "$cfg" >script.sh &&
	for code in 0 3 4 5 6; do grep -q "^ *$code)" script.sh || exit 1; done
'

test_done
