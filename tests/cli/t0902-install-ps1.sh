#!/bin/sh
# install.ps1 (packaging/install.ps1), checked without PowerShell: it is
# not run here (no PowerShell on the machines this suite runs on; what
# running it would show is listed in docs/install.md). Checked: the release URL
# is stamped into its one line as stamp-install-sh.sh does for install.sh,
# bad URLs are refused; the script names the files dist/ serves and the
# Windows places it installs to; all its code is inside functions called
# from the last line with the marker it checks; it never exits the user's
# session. With pwsh installed, PowerShell's own parser reads it too.
. "$(dirname "$0")/lib.sh"
PS1="$top/packaging/install.ps1"
STAMP="$top/packaging/release/stamp-install-ps1.sh"

test_expect_success 'stamping writes the release URL into its one line, and nothing else' '
	sh "$STAMP" https://example.invalid/mlsetup/v1 <"$PS1" >stamped.ps1 &&
	expect_exit 1 diff "$PS1" stamped.ps1 >d &&
	expect_eq 2 "$(grep -c "^[<>]" d)" &&
	grep -q "^> 	\$release = .https://example.invalid/mlsetup/v1.$" d &&
	sh "$STAMP" "" <"$PS1" | cmp - "$PS1"
'
test_expect_success 'stamping refuses URLs with quotes or other schemes, and scripts without the line' '
	expect_exit 1 sh "$STAMP" "https://x/a'\''b" <"$PS1" >/dev/null 2>err &&
	grep -q "holds characters" err &&
	expect_exit 1 sh "$STAMP" "ftp://x/" <"$PS1" >/dev/null 2>err &&
	grep -q "not an http" err &&
	echo "Write-Host hi" | expect_exit 1 sh "$STAMP" https://x/ >/dev/null 2>err &&
	grep -q "no release URL line" err
'
test_expect_success 'it downloads what dist/ serves and installs where Windows users expect' '
	grep -q "'\''x86_64-windows-gnu'\''" "$PS1" &&
	grep -q "\"mlsetup-\$target.exe\"" "$PS1" &&
	grep -q "mlsetup-x86_64-windows-gnu.exe and SHA256SUMS" "$PS1" &&
	grep -q "\"\$url/SHA256SUMS\"" "$PS1" && grep -q "\"\$url/\$name\"" "$PS1" &&
	grep -q "\$env:MLSETUP_DOWNLOAD_URL" "$PS1" && grep -q "\$env:MLSETUP_INSTALL_DIR" "$PS1" &&
	grep -q "Join-Path \$env:LOCALAPPDATA '\''mlsetup.bin'\''" "$PS1" &&
	grep -q "Get-FileHash -LiteralPath \$tmpFile -Algorithm SHA256" "$PS1" &&
	grep -q "SetEnvironmentVariable('\''Path'\'', .*'\''User'\'')" "$PS1" &&
	grep -q "& \$exe @pass" "$PS1" &&
	grep -q "install.ps1" "$top/packaging/release/dist.sh"
'
test_expect_success 'all code is in functions; the last line calls it with the marker it checks' '
	expect_eq "Install-Mlsetup \$args '\''mlsetup-install-ps1-complete'\''" "$(tail -n 1 "$PS1")" &&
	grep -q "cne '\''mlsetup-install-ps1-complete'\''" "$PS1" &&
	sed "\$d" "$PS1" | grep -v "^#" | grep -v "^\$" | grep -v "^	" | grep -v "^}\$" >top &&
	! grep -v "^function " top
'
test_expect_success 'it throws instead of exiting, except as a file passing on mlsetup'\''s code' '
	grep -v "^[[:space:]]*#" "$PS1" | grep "\bexit\b" >exits &&
	expect_eq 1 "$(wc -l <exits | tr -d " ")" &&
	grep -q "if (\$PSCommandPath) { exit \$LASTEXITCODE }" exits
'
test_expect_success 'braces and parentheses balance (a cheap stand-in for a parse)' '
	expect_eq "$(tr -cd "{" <"$PS1" | wc -c)" "$(tr -cd "}" <"$PS1" | wc -c)" &&
	expect_eq "$(tr -cd "(" <"$PS1" | wc -c)" "$(tr -cd ")" <"$PS1" | wc -c)"
'
command -v pwsh >/dev/null 2>&1 || test_skip "pwsh (PowerShell) is not installed"
test_expect_success 'PowerShell parses it without errors' '
	pwsh -NoProfile -NonInteractive -Command "\$e = \$null; [void][System.Management.Automation.Language.Parser]::ParseFile('\''$PS1'\'', [ref]\$null, [ref]\$e); if (\$e.Count) { \$e; exit 1 }"
'
test_done
