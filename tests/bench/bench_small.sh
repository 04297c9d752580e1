#!/bin/sh
# bench_small.sh [RUNS] - mlsetup vs pip vs uv on many small pure-Python
# wheels: the per-file and per-wheel costs (thousands of small files to
# unzip, hash, write and record) rather than the bytes of a few large
# wheels (bench_install.sh).
#
# The corpus is generated here, deterministically, with Python's zipfile:
# WHEELS wheels (default 200) of FILES files each (default 30: modules of
# 1-8 KiB of Python, a subpackage, text data files, py.typed), every fourth
# with a console script; real PEP 427 layout (METADATA, WHEEL, top_level.txt,
# entry_points.txt, RECORD with sha256 and size rows). It is served from the
# loopback test index (tests/mirror/server.py) and installed from a
# hash-pinned manifest with the commands and flags of bench_install.sh
# (--require-hashes --no-deps, mlsetup --no-verify) onto the same
# interpreter: cold (empty caches, new target), warm (caches populated, new
# target), no-op (the same target again), RUNS runs each (default 3), the
# tools' order rotating every run; wall, CPU and peak RSS from
# /usr/bin/time, medians and ratios. After every install the environment
# is checked: every package file present (bytecode aside), one .dist-info
# per wheel, generated modules importable with the right contents, console
# scripts that run; the table of what each tool left is printed too.
#
#   RUNS=N             as the argument
#   WHEELS=N FILES=N   corpus size (WHEELS=40 RUNS=1 makes a quick check)
#   OUT=FILE           where the tables go (default tests/bench/results-small.md)
#   W=DIR UV=PATH PY=PATH MLSETUP=PATH
#   FRESH_FS=1         each tool's runs on a new ext4 file system (root and
#                      loop devices; lib.sh's bench_fs says why)
#
# Not part of make check. Needs build/mlsetup, /usr/bin/time, python3 and
# uv (UV=path, else installed from the package index into $W/uvtool).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/bench/lib.sh"
RUNS=${1:-${RUNS:-3}}
WHEELS=${WHEELS:-200}
FILES=${FILES:-30}
W=${W:-${TMPDIR:-/tmp}/mlsetup-bench-small}
OUTMD=${OUT:-$top/tests/bench/results-small.md}
[ "$FILES" -ge 8 ] || {
	echo "FILES must be at least 8" >&2
	exit 2
}
mkdir -p "$W"
bench_uv # before the settings are cleared: from pip's configured index
bench_hermetic
bench_on_exit() { rm -rf "$W/cache-mlsetup" "$W/cache-uv" "$W/cache-pip" "$W"/env-*; }

# 1. The corpus, its manifest and what a correct environment holds.
pyv=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
rm -rf "$W/corpus"
python3 - "$W" "$WHEELS" "$FILES" "$pyv" "linux-$(uname -m)" <<'PY'
import base64, hashlib, json, os, random, sys, zipfile
w, nwheels, nfiles, pyv, plat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
corpus = os.path.join(w, "corpus")
os.makedirs(corpus)
WORDS = ("index wheel record hash archive member inflate extract link cache manifest "
         "package module import version metadata entry point script console tag "
         "platform interpreter environment target verify report stage fetch plan "
         "resolve pinned digest stream buffer thread worker queue file directory").split()

def text(rng, size, py):
    """About size bytes of Python source (py) or prose, made by rng."""
    out, n, i = [], 0, 0
    while n < size:
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14)))
        if py:
            s = ('def f_%d(x, y=%d):\n    """%s."""\n    # %s\n    return x * %d + y\n\n\n'
                 % (i, rng.randint(0, 99), words.capitalize(), words[::-1], rng.randint(1, 9)))
        else:
            s = words + ".\n"
        out.append(s)
        n += len(s)
        i += 1
    return "".join(out)

def value(path):
    return hashlib.sha256(path.encode()).hexdigest()[:16]

def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()

checks, scripts, total_files, total_bytes, lines, filelines = [], [], 0, 0, [], []
for i in range(nwheels):
    rng = random.Random(i)
    project, pkg, version = "bench-small-%03d" % i, "bench_small_%03d" % i, "1.%d.%d" % (i % 7, i)
    dist = "%s-%s.dist-info" % (pkg, version)
    members = {}
    members[pkg + "/__init__.py"] = '"""%s: generated for mlsetup\'s small-wheel benchmark."""\n__version__ = "%s"\nVALUE = "%s"\n' % (pkg, version, value(pkg))
    members[pkg + "/py.typed"] = ""
    members[pkg + "/sub/__init__.py"] = 'VALUE = "%s"\n' % value(pkg + ".sub")
    has_script = i % 4 == 0
    if has_script:
        members[pkg + "/cli.py"] = 'import sys\n\n\ndef main():\n    print("%s", " ".join(sys.argv[1:]))\n    return 0\n' % project
        scripts.append([project, project])
    rest = nfiles - len(members)
    ndata = max(1, rest // 6)
    nsub = max(1, rest // 6)
    for k in range(rest - ndata - nsub):
        name = "%s/mod_%02d.py" % (pkg, k)
        mod = name[:-3].replace("/", ".")
        members[name] = '"""%s."""\nVALUE = "%s"\n\n\n%s' % (mod, value(mod), text(rng, rng.randint(1024, 8192), True))
    for k in range(nsub):
        name = "%s/sub/util_%02d.py" % (pkg, k)
        mod = name[:-3].replace("/", ".")
        members[name] = 'VALUE = "%s"\n\n\n%s' % (value(mod), text(rng, rng.randint(1024, 8192), True))
    for k in range(ndata):
        members["%s/data/words_%02d.txt" % (pkg, k)] = text(rng, rng.randint(1024, 8192), False)
    if i in (0, nwheels // 2, nwheels - 1):
        checks += [[pkg, value(pkg)], [pkg + ".sub", value(pkg + ".sub")],
                   [pkg + ".mod_00", value(pkg + ".mod_00")], [pkg + ".sub.util_00", value(pkg + ".sub.util_00")]]
    total_files += len(members)
    meta = {
        dist + "/METADATA": "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: small generated wheel %d of %d\nRequires-Python: >=3.8\n\n%s" % (project, version, i, nwheels, text(rng, 512, False)),
        dist + "/WHEEL": "Wheel-Version: 1.0\nGenerator: mlsetup-bench-small\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        dist + "/top_level.txt": pkg + "\n",
    }
    if has_script:
        meta[dist + "/entry_points.txt"] = "[console_scripts]\n%s = %s.cli:main\n" % (project, pkg)
    members.update(meta)
    data = {k: v.encode() for k, v in members.items()}
    record = "".join("%s,%s,%d\n" % (k, record_hash(v), len(v)) for k, v in data.items()) + dist + "/RECORD,,\n"
    data[dist + "/RECORD"] = record.encode()
    fn = "%s-%s-py3-none-any.whl" % (pkg, version)
    path = os.path.join(corpus, fn)
    with zipfile.ZipFile(path, "w") as z:
        for k, v in data.items():
            zi = zipfile.ZipInfo(k, date_time=(2020, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = 0o100644 << 16
            z.writestr(zi, v)
    blob = open(path, "rb").read()
    sha = hashlib.sha256(blob).hexdigest()
    lines.append("%s==%s \\\n    --hash=sha256:%s" % (project, version, sha))
    filelines.append("# mlsetup-file: %s %d %s" % (sha, len(blob), fn))
    total_bytes += sum(len(v) for v in data.values())
with open(os.path.join(w, "small.txt"), "w") as f:
    f.write("# Generated by tests/bench/bench_small.sh: %d small pure-Python wheels.\n" % nwheels)
    f.write("# mlsetup: python = %s\n# mlsetup: platforms = %s\n\n" % (pyv, plat))
    f.write("\n".join(lines + filelines) + "\n")
json.dump({"wheels": nwheels, "package_files": total_files, "checks": checks, "scripts": scripts},
          open(os.path.join(w, "expect.json"), "w"))
zipped = sum(os.path.getsize(os.path.join(corpus, f)) for f in os.listdir(corpus))
open(os.path.join(w, "corpus.txt"), "w").write(
    "%d wheels, %d package files + %d in .dist-info, %.1f MiB unpacked, %.1f MiB of wheels, %d console scripts"
    % (nwheels, total_files, nwheels * 4 + len(scripts), total_bytes / 2**20, zipped / 2**20, len(scripts)))
PY
echo "corpus: $(cat "$W/corpus.txt")"
bench_serve "$W/root" "$W/corpus"

# check TOOL ENV: the environment holds what the corpus says (package files
# counted without bytecode), imports and runs; appends a line to $W/checks.
check() {
	"$2/bin/python" -B - "$W/expect.json" "$2" "$1" >>"$W/checks" <<'PY' || {
import importlib, json, os, subprocess, sys, sysconfig
exp, env, tool = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
sp = sysconfig.get_paths()["purelib"]
files = dist = dist_files = pyc = 0
for d in os.listdir(sp):
    if not d.startswith("bench_small_"):
        continue
    if d.endswith(".dist-info"):
        dist += 1
        dist_files += len(os.listdir(os.path.join(sp, d)))
        continue
    for root, dirs, names in os.walk(os.path.join(sp, d)):
        if os.path.basename(root) == "__pycache__":
            pyc += len(names)
        else:
            files += len(names)
bad = []
if files != exp["package_files"]:
    bad.append("%d package files, expected %d" % (files, exp["package_files"]))
if dist != exp["wheels"]:
    bad.append("%d .dist-info, expected %d" % (dist, exp["wheels"]))
for mod, value in exp["checks"]:
    try:
        got = getattr(importlib.import_module(mod), "VALUE", None)
    except Exception as e:
        got = "import failed: %s" % e
    if got != value:
        bad.append("%s.VALUE is %r" % (mod, got))
present = [s for s, _ in exp["scripts"] if os.access(os.path.join(env, "bin", s), os.X_OK)]
if len(present) != len(exp["scripts"]):
    bad.append("%d of %d console scripts" % (len(present), len(exp["scripts"])))
for s, project in exp["scripts"][:1] + exp["scripts"][-1:]:
    out = subprocess.run([os.path.join(env, "bin", s), "ok"], capture_output=True, text=True).stdout
    if out != project + " ok\n":
        bad.append("%s printed %r" % (s, out))
print(tool, files, dist, dist_files, pyc, len(present), "ok" if not bad else "BAD:" + "; ".join(bad))
sys.exit(1 if bad else 0)
PY
		echo "$1: the environment $2 is not what the corpus holds:" >&2
		tail -1 "$W/checks" >&2
		exit 1
	}
}

# 2. The runs, as in bench_install.sh.
TIMES="$W/times" STAGES="$W/stages"
: >"$TIMES"
: >"$STAGES"
: >"$W/checks"
ROUND=1
while [ $ROUND -le "$RUNS" ]; do
	for tool in $(bench_order $ROUND mlsetup uv pip); do
		bench_fs
		rm -rf "$FS/cache-$tool" "$FS/env-$tool" "$FS/env-$tool-2"
		bench_run "$tool" cold "$W/small.txt" "$FS/env-$tool"
		bench_run "$tool" warm "$W/small.txt" "$FS/env-$tool-2"
		bench_run "$tool" noop "$W/small.txt" "$FS/env-$tool-2"
		check "$tool" "$FS/env-$tool"
		check "$tool" "$FS/env-$tool-2"
		rm -rf "$FS/cache-$tool" "$FS/env-$tool" "$FS/env-$tool-2"
	done
	ROUND=$((ROUND + 1))
done

{
	echo "## install: mlsetup vs pip vs uv, many small wheels (medians of $RUNS runs, one session)"
	echo
	echo "Corpus: $(cat "$W/corpus.txt") (WHEELS=$WHEELS FILES=$FILES)."
	echo
	bench_table "$TIMES" small
	echo
	echo "mlsetup by stage (cold, medians):"
	echo
	bench_stage_table "$STAGES"
	echo
	echo "What each tool left in the environment (first check of each; all $(wc -l <"$W/checks") checks passed):"
	echo
	echo "| tool | package files | .dist-info dirs | files in .dist-info | bytecode files | console scripts |"
	echo "|---|---|---|---|---|---|"
	for tool in mlsetup uv pip; do
		awk -v t=$tool '$1 == t { printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6; exit }' "$W/checks"
	done
	echo
	bench_facts
} >"$OUTMD"
cat "$OUTMD"
