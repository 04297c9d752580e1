#!/bin/sh
# detect's SetupAPI fallback on Windows (src/detect/os_windows.c,
# ml_probe_pci_windows): with no NVIDIA driver (no nvml.dll / nvcuda.dll
# in System32), mlsetup.exe lists the display adapters
# (GUID_DEVCLASS_DISPLAY), takes the PCI ids from their hardware ids and
# names an NVIDIA GPU from the built-in table, as the Linux PCI scan does
# (t0120). Under wine, in a prefix of its own (build/wineprefix-t0933),
# with fake adapters written into the registry.
#
# What wine 8 needs to list a device, found by experiment: a key
# HKLM\System\CurrentControlSet\Enum\PCI\<device>\<instance> whose
# ClassGUID (REG_SZ, in braces, any case) is the display class. wine's
# setupapi ignores DIGCF_PRESENT for device lists: Phantom=1, ConfigFlags=1
# (disabled), DEVPKEY_Device_IsPresent false or Control\Linked=0 still list
# the device; no ClassGUID, another class, no braces or REG_EXPAND_SZ do
# not. Two traps: (1) when a wineserver starts, wine rebuilds its display
# devices and deletes every Enum\PCI key whose ClassGUID is exactly
# "{4D36E968-E325-11CE-BFC1-08002BE10318}" that its display driver did not
# report, and (2) each SetupDiGetClassDevs rewrites the ClassGUID of the
# devices it lists in that upper-case form. So the fakes are written again
# before every run (`win`), in lower case, which that clean-up leaves
# alone should a new wineserver start between the writes and the run.
#
# Compute-only GPUs (PCI class 0x0302, 3D controller: H100, A100) are no
# display adapters: without NVIDIA's driver Windows leaves them under
# "Other devices" ({4d36e97e-...}) or without a class, so detect also
# lists every device of the PCI enumerator (SetupDiGetClassDevs(NULL,
# "PCI", NULL, DIGCF_ALLCLASSES | DIGCF_PRESENT)) and keeps NVIDIA ones of
# class 0x0300 or 0x0302 by their CompatibleIDs ("PCI\VEN_10DE&CC_030200").
# wine 8 lists such a device for that call as for a display-class one: it
# needs a ClassGUID too, of any class. A device without a ClassGUID, as
# Windows may leave a driverless one, cannot be shown under wine: it is
# left out even with DIGCF_ALLCLASSES (wine's setupapi skips Enum keys
# without a ClassGUID in braces), so no block here has one.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/winelib.sh"

# wine's null display driver: it reports only "Wine Adapter" (PCI id
# 0000:0000), never a GPU of the machine running the test.
unset DISPLAY WAYLAND_DISPLAY
wine_prefix wineprefix-t0933

ENUM='HKLM\System\CurrentControlSet\Enum\PCI'
RTX5090='PCI\VEN_10DE&DEV_2B85&SUBSYS_205710DE&REV_A1'
RTX3090='PCI\VEN_10DE&DEV_2204&SUBSYS_147D10DE&REV_A1'
UNKNOWN='pci\ven_10de&dev_fffe&subsys_00000000&rev_a1'
RADEON='PCI\VEN_1002&DEV_744C&SUBSYS_0E3B1002&REV_C8'
HDAUDIO='PCI\VEN_10DE&DEV_22E8&SUBSYS_205710DE&REV_A1'
H100='PCI\VEN_10DE&DEV_2330&SUBSYS_16C110DE&REV_A1'
DISPLAY_CLASS='{4d36e968-e325-11ce-bfc1-08002be10318}'
MEDIA_CLASS='{4d36e96c-e325-11ce-bfc1-08002be10318}'
OTHER_CLASS='{4d36e97e-e325-11ce-bfc1-08002be10318}'
BUS1='PCI bus 1, device 0, function 0'
BUS2='PCI bus 2, device 0, function 0'

# adapter HWID [LOCATION [SERVICE [CLASS [CC]]]]: a PCI device with
# hardware id HWID (and HWID's first two parts, as Windows lists them), the
# location string Windows' PCI driver writes, the driver service (Windows
# binds its Basic Display driver, BasicDisplay, to a GPU without its
# vendor's), the device class, a display adapter unless CLASS says
# otherwise, and the compatible ids Windows 10 gives a device of PCI class
# code CC (030200: base class, subclass, programming interface), none
# without CC.
adapter() {
	k="$ENUM\\${1#*\\}\\4&1f3b2c&0&0008"
	ven=$(printf '%s' "$1" | cut -d'&' -f1)
	reg_add "$k" /v HardwareID /t REG_MULTI_SZ /f \
		/d "$1\\0$(printf '%s' "$1" | cut -d'&' -f1-2)" &&
	reg_add "$k" /v ClassGUID /t REG_SZ /d "${4:-$DISPLAY_CLASS}" /f &&
	{ [ -z "${5:-}" ] || reg_add "$k" /v CompatibleIDs /t REG_MULTI_SZ /f /d \
		"$ven&CC_$5\\0$ven&CC_${5%??}\\0$ven\\0PCI\\CC_$5\\0PCI\\CC_${5%??}"; } &&
	{ [ -z "${2:-}" ] || reg_add "$k" /v LocationInformation /t REG_SZ /d "$2" /f; } &&
	{ [ -z "${3:-}" ] || reg_add "$k" /v Service /t REG_SZ /d "$3" /f; }
}

# reg_add ARGS...: `wine reg add ARGS`, tried up to three times, the last
# failure's message shown. Test 8 failed twice in about twenty runs
# without saying which command; writing the fake adapters was the one
# step that could fail silently, so it is retried and says why.
reg_add() {
	for try in 1 2 3; do
		wine reg add "$@" >/dev/null 2>"$TRASH/reg.err" && return 0
		sleep 1
	done
	echo "wine reg add $*: failed 3 times:" >&2
	cat "$TRASH/reg.err" >&2
	return 1
}

# no_adapters: removes every fake adapter of this file.
no_adapters() {
	for h in "$RTX5090" "$RTX3090" "$UNKNOWN" "$RADEON" "$HDAUDIO" "$H100"; do
		wine reg delete "$ENUM\\${h#*\\}" /f >/dev/null 2>&1
	done
	return 0
}

# win ARGS...: writes the devices of $ADAPTERS (lines "HWID|LOCATION|
# SERVICE|CLASS|CC", the arguments of `adapter`) and no other fake, then runs
# mlsetup.exe ARGS; stdout without CRs in out.json, stderr in err.
ADAPTERS=""
win() {
	no_adapters
	printf '%s\n' "$ADAPTERS" | while IFS='|' read -r hw loc svc cls cc; do
		[ -z "$hw" ] || adapter "$hw" "$loc" "$svc" "$cls" "$cc" || exit 1
	done || { echo "win: the fake adapters could not be written" >&2 && return 1; }
	wine "$EXE" "$@" >out.raw 2>err
	rc=$?
	tr -d '\r' <out.raw >out.json
	# a failure says why (wine's own messages included), for the log
	[ $rc -eq 0 ] || { echo "win $*: exit $rc" && cat err; } >&2
	return $rc
}

# pci_detail: the pci probe's detail of out.json.
pci_detail() {
	json out.json "[p[\"detail\"] for p in d[\"probes\"] if p[\"source\"] == \"pci\"][0]"
}

# gpu0 KEY: the first GPU's KEY in out.json.
gpu0() {
	json out.json "d[\"gpus\"][0][\"$1\"]"
}

# adapters_seen: how many display adapters the pci probe counted.
adapters_seen() {
	pci_detail | sed -n 's/^[0-9]* NVIDIA display devices* among \([0-9]*\) adapters*.*/\1/p'
}

# The advice t0120 checks on Linux, with the Windows minimum for CUDA 12.8
# (manifests/drivers.json).
ADVICE="RTX 5090 (Blackwell, sm_120) found, no NVIDIA driver loaded: install driver 570.65 or newer"

test_expect_success 'no NVIDIA adapter: no GPU; the pci probe counted wine'"'"'s own adapters' '
	win detect --json &&
	expect_eq windows "$(json out.json "d[\"os\"][\"name\"]")" &&
	expect_eq "[]" "$(json out.json "d[\"gpus\"]")" &&
	pci_detail | grep -q "^0 NVIDIA display devices among [1-9]" &&
	adapters_seen >"$TRASH/wine-adapters" && test -s "$TRASH/wine-adapters"
'

ADAPTERS="$RTX5090|$BUS1|BasicDisplay"
test_expect_success 'RTX 5090 without its driver: named from the PCI id table, source pci' '
	win detect --json &&
	expect_eq 1 "$(json out.json "len(d[\"gpus\"])")" &&
	expect_eq "NVIDIA GeForce RTX 5090" "$(gpu0 name)" &&
	expect_eq 12.0 "$(gpu0 compute_capability)" &&
	expect_eq sm_120 "$(gpu0 sm)" &&
	expect_eq Blackwell "$(gpu0 architecture)" &&
	expect_eq 0x2b85 "$(gpu0 pci_device_id)" &&
	expect_eq 0000:01:00.0 "$(gpu0 pci_bus_id)" &&
	expect_eq pci "$(gpu0 source)" &&
	expect_eq null "$(gpu0 driver_model)" &&
	expect_eq null "$(json out.json "d[\"driver\"][\"version\"]")" &&
	pci_detail >detail &&
	grep -q "^1 NVIDIA display device among $(($(cat wine-adapters) + 1)) adapters; " detail &&
	grep -q "0000:01:00.0 10de:2b85 NVIDIA GeForce RTX 5090, driver service BasicDisplay" detail &&
	json out.json "d[\"advice\"][0]" | grep -qF "$ADVICE" &&
	win detect &&
	grep -qF "$ADVICE" out.json
'

test_expect_success 'plan --offline --json: the Blackwell manifest, with the no-driver warning' '
	win plan --offline --json &&
	expect_eq requirements_blackwell.txt "$(json out.json "d[\"manifest\"][\"name\"]")" &&
	expect_eq windows/requirements_blackwell.txt \
		"$(json out.json "d[\"manifest\"][\"embedded_as\"]")" &&
	expect_eq null "$(json out.json "d[\"machine\"][\"driver\"]")" &&
	expect_eq sm_120 "$(json out.json "d[\"machine\"][\"gpus\"][0][\"sm\"]")" &&
	expect_eq false "$(json out.json "d[\"gpu_checks_skipped\"]")" &&
	expect_eq "[\"no NVIDIA driver loaded: CUDA 12.8 builds need driver 570.65 or newer, the minimum for CUDA 12.8 (toolkit release notes, table 3)\"]" \
		"$(json out.json "d[\"warnings\"]")" &&
	expect_eq warn "$(json out.json "[r[\"verdict\"] for r in d[\"reasons\"]
		if r[\"manifest\"] == \"requirements_blackwell.txt\" and r[\"rule\"] == \"driver\"][0]")"
'

ADAPTERS="$RADEON|$BUS1|BasicDisplay"
test_expect_success 'an AMD adapter (VEN_1002) is listed but is not an NVIDIA GPU' '
	win detect --json &&
	expect_eq "[]" "$(json out.json "d[\"gpus\"]")" &&
	expect_eq "$(($(cat wine-adapters) + 1))" "$(adapters_seen)" &&
	pci_detail | grep -q "^0 NVIDIA display devices among" &&
	expect_eq "[]" "$(json out.json "d[\"advice\"]")"
'

ADAPTERS="$UNKNOWN||"
test_expect_success 'an id not in the table, lower case, no location: listed, its sm unknown' '
	win detect --json &&
	expect_eq 1 "$(json out.json "len(d[\"gpus\"])")" &&
	expect_eq 0xfffe "$(gpu0 pci_device_id)" &&
	expect_eq "" "$(gpu0 sm)" &&
	expect_eq "" "$(gpu0 pci_bus_id)" &&
	pci_detail |
		grep -q "(unknown slot) 10de:fffe (not in mlsetup.s PCI id table), driver service none" &&
	json out.json "d[\"advice\"][0]" |
		grep -q "PCI id 10de:fffe at an unknown bus is not in mlsetup.s table"
'

ADAPTERS="$RTX5090|$BUS2|BasicDisplay
$HDAUDIO|PCI bus 2, device 0, function 1|HDAudBus|$MEDIA_CLASS
$RADEON|PCI bus 3, device 0, function 0|BasicDisplay
$RTX3090|$BUS1|"
test_expect_success 'two NVIDIA GPUs, the audio function of one, an AMD GPU: two GPUs, by bus' '
	win detect --json &&
	expect_eq 2 "$(json out.json "len(d[\"gpus\"])")" &&
	expect_eq "0000:01:00.0 sm_86 0000:02:00.0 sm_120" \
		"$(json out.json "\" \".join(g[\"pci_bus_id\"] + \" \" + g[\"sm\"] for g in d[\"gpus\"])")" &&
	pci_detail | grep -q "^2 NVIDIA display devices among $(($(cat wine-adapters) + 3)) adapters" &&
	json out.json "d[\"advice\"][0]" | grep -qF "$ADVICE"
'

OUTSIDE1=", and 1 NVIDIA display controller outside the display class"
H100_NOTE="0000:01:00.0 10de:2330 NVIDIA H100 80GB HBM3, PCI class 0302, not a display adapter,"
H100_NOTE="$H100_NOTE driver service none"
H100_ADVICE="NVIDIA H100 80GB HBM3 (Hopper, sm_90) found, no NVIDIA driver loaded: install driver"
ADAPTERS="$H100|$BUS1||$OTHER_CLASS|030200"
test_expect_success 'an H100 (3D controller) under Other devices, no driver: found, source pci' '
	win detect --json &&
	expect_eq 1 "$(json out.json "len(d[\"gpus\"])")" &&
	expect_eq "NVIDIA H100 80GB HBM3" "$(gpu0 name)" &&
	expect_eq sm_90 "$(gpu0 sm)" &&
	expect_eq Hopper "$(gpu0 architecture)" &&
	expect_eq 0x2330 "$(gpu0 pci_device_id)" &&
	expect_eq 0000:01:00.0 "$(gpu0 pci_bus_id)" &&
	expect_eq pci "$(gpu0 source)" &&
	pci_detail >detail &&
	grep -qx "0 NVIDIA display devices among [0-9]* adapters*$OUTSIDE1; $H100_NOTE" detail &&
	json out.json "d[\"advice\"][0]" | grep -qF "$H100_ADVICE"
'

ADAPTERS="$HDAUDIO|PCI bus 1, device 0, function 1|HDAudBus|$OTHER_CLASS|040300
$RTX3090|$BUS2||$OTHER_CLASS|
$RADEON|PCI bus 3, device 0, function 0||$OTHER_CLASS|030200"
test_expect_success 'Other devices: NVIDIA audio (0403), no class code, AMD 3D: no GPU' '
	win detect --json &&
	{ expect_eq "[]" "$(json out.json "d[\"gpus\"]")" || { cat out.json >&2 && false; }; } &&
	pci_detail >detail &&
	{ grep -qx "0 NVIDIA display devices among [0-9]* adapters*" detail ||
		{ cat detail >&2 && false; }; }
'

ADAPTERS="$UNKNOWN|||$DISPLAY_CLASS|030000
$H100|$BUS2||$OTHER_CLASS|030200
$HDAUDIO|PCI bus 2, device 0, function 1|HDAudBus|$OTHER_CLASS|040300
$RTX3090|PCI bus 3, device 0, function 0||$OTHER_CLASS|030000"
test_expect_success 'a display adapter with its class code, an H100, its audio, a VGA: each once' '
	win detect --json &&
	expect_eq 3 "$(json out.json "len(d[\"gpus\"])")" &&
	expect_eq "  0000:02:00.0 sm_90 0000:03:00.0 sm_86" "$(json out.json \
		"\" \".join(g[\"pci_bus_id\"] + \" \" + g[\"sm\"] for g in d[\"gpus\"])")" &&
	pci_detail >detail &&
	grep -q "^1 NVIDIA display device among [0-9]* adapters, and 2 NVIDIA" detail &&
	grep -q " controllers outside the display class; (unknown slot) 10de:fffe " detail &&
	grep -q "; 0000:02:00.0 10de:2330 NVIDIA H100 80GB HBM3, PCI class 0302, not" detail &&
	grep -q "; 0000:03:00.0 10de:2204 NVIDIA GeForce RTX 3090, PCI class 0300, not" detail &&
	! grep -q 22e8 detail
'

ADAPTERS=""
no_adapters
test_done
