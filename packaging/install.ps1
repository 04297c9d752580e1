# install.ps1 - installs the mlsetup release binary on Windows; the
# PowerShell counterpart of install.sh, step by step.
#
#   irm URL/install.ps1 | iex
#   & ([scriptblock]::Create((irm URL/install.ps1))) install --require-gpu
#       (install, then run mlsetup ARGS; `irm | iex` passes no arguments)
#
# Environment:
#   MLSETUP_DOWNLOAD_URL  where mlsetup-x86_64-windows-gnu.exe and SHA256SUMS
#                         are (default: the release this script came with,
#                         if it names one)
#   MLSETUP_INSTALL_DIR   where mlsetup.exe goes (default:
#                         %LOCALAPPDATA%\mlsetup\bin, added to the user PATH)
#
# Windows on x86_64 (64-bit). The binary's sha256 is checked against
# SHA256SUMS (Get-FileHash), which catches corrupted and truncated
# downloads; it does not prove who published them (that would need signed
# checksums). Nothing is installed unless the check passes: the binary goes
# to a temporary file in the install directory and is renamed into place.
#
# Every line of code is inside a function, and the only command is the call
# on the last line, which ends in a marker that Install-Mlsetup checks: a
# download cut short anywhere defines some functions, or fails to parse,
# and runs nothing. Errors are thrown, never `exit`: under `irm | iex` an
# exit would close the user's PowerShell window.

function Get-MlReleaseUrl {
	# written by `make release RELEASE_URL=...` (packaging/release/
	# stamp-install-ps1.sh); empty: MLSETUP_DOWNLOAD_URL is required
	$release = ''
	return $release
}

function Write-MlSay([string]$Text) {
	[Console]::Error.WriteLine("mlsetup-install: $Text")
}

function Stop-Ml([string]$Text) {
	throw "mlsetup-install: error: $Text"
}

# The release binary for this machine, or a refusal.
function Get-MlTarget {
	$onWindows = ($env:OS -eq 'Windows_NT')
	if ($null -ne (Get-Variable -Name IsWindows -ErrorAction SilentlyContinue)) {
		$onWindows = $IsWindows
	}
	if (-not $onWindows) {
		Stop-Ml "this is install.ps1, for Windows: on Linux use install.sh (curl -LsSf URL/install.sh | sh)"
	}
	# A 32-bit PowerShell on 64-bit Windows says x86 here and AMD64 in
	# PROCESSOR_ARCHITEW6432.
	$cpu = $env:PROCESSOR_ARCHITEW6432
	if (-not $cpu) { $cpu = $env:PROCESSOR_ARCHITECTURE }
	switch ($cpu) {
		'AMD64' { return 'x86_64-windows-gnu' }
		'ARM64' { Stop-Ml "Windows on ARM64 is not supported: the release binary is for x86_64 Windows" }
		'x86' { Stop-Ml "32-bit Windows is not supported: the release binary is for 64-bit x86_64 Windows" }
		default { Stop-Ml "unsupported CPU '$cpu': the release binary is for x86_64 Windows" }
	}
}

# Get-MlDownload URL FILE
function Get-MlDownload([string]$Url, [string]$File) {
	$tries = 0
	while ($true) {
		try {
			Invoke-WebRequest -Uri $Url -OutFile $File -UseBasicParsing -ErrorAction Stop
			return
		} catch {
			$tries++
			if ($tries -ge 4) { Stop-Ml "cannot download ${Url}: $($_.Exception.Message)" }
			Start-Sleep -Seconds $tries
		}
	}
}

# The sha256 SHA256SUMS lists for Name ("HASH  NAME" or "HASH *NAME"), or ''.
function Get-MlWantedHash([string]$Sums, [string]$Name) {
	foreach ($line in (Get-Content -LiteralPath $Sums)) {
		$f = $line.Trim() -split '\s+', 2
		if ($f.Count -eq 2 -and ($f[1] -ceq $Name -or $f[1] -ceq "*$Name")) {
			$h = $f[0].ToLowerInvariant()
			if ($h -match '^[0-9a-f]{64}$') { return $h }
			return ''
		}
	}
	return ''
}

# Adds Dir to the user's PATH (the registry, for new sessions) and to this
# session's; says what it did.
function Add-MlUserPath([string]$Dir) {
	$user = [Environment]::GetEnvironmentVariable('Path', 'User')
	$parts = @()
	if ($user) { $parts = $user -split ';' | Where-Object { $_ -ne '' } }
	if ($parts -notcontains $Dir) {
		[Environment]::SetEnvironmentVariable('Path', (@($parts) + $Dir) -join ';', 'User')
		Write-MlSay "added $Dir to your user PATH (new terminals see it)"
	}
	if (($env:Path -split ';') -notcontains $Dir) {
		$env:Path = "$Dir;$env:Path"
	}
}

# Install-Mlsetup ARGS MARKER: ARGS (an array, passed as one argument so
# that PowerShell binds none of them) go to mlsetup after installing.
function Install-Mlsetup {
	# The last argument is the marker the script's last line adds; without
	# it the script was cut short.
	if ($args.Count -ne 2 -or $args[1] -cne 'mlsetup-install-ps1-complete') {
		Stop-Ml "this copy of install.ps1 is incomplete (cut short while downloading?); download it again"
	}
	$pass = @($args[0] | Where-Object { $null -ne $_ })

	$ErrorActionPreference = 'Stop'
	$ProgressPreference = 'SilentlyContinue' # Invoke-WebRequest's progress bar is slow
	# Windows PowerShell 5.1 may default to TLS 1.0; releases need 1.2.
	try {
		[Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12
	} catch { }

	$url = $env:MLSETUP_DOWNLOAD_URL
	if (-not $url) { $url = Get-MlReleaseUrl }
	if (-not $url) {
		Stop-Ml "MLSETUP_DOWNLOAD_URL is not set and this install.ps1 names no release: set it to the URL that holds mlsetup-x86_64-windows-gnu.exe and SHA256SUMS"
	}
	$url = $url.TrimEnd('/')
	$dir = $env:MLSETUP_INSTALL_DIR
	if (-not $dir) {
		if (-not $env:LOCALAPPDATA) {
			Stop-Ml "LOCALAPPDATA is not set: set MLSETUP_INSTALL_DIR to the directory to install mlsetup into"
		}
		$dir = Join-Path $env:LOCALAPPDATA 'mlsetup\bin'
	}

	$target = Get-MlTarget
	$name = "mlsetup-$target.exe"

	try {
		New-Item -ItemType Directory -Force -Path $dir | Out-Null
	} catch {
		Stop-Ml "cannot create the install directory ${dir}: $($_.Exception.Message)"
	}
	$tmpDir = Join-Path ([IO.Path]::GetTempPath()) ("mlsetup-install." + [IO.Path]::GetRandomFileName())
	$tmpFile = Join-Path $dir (".mlsetup." + [IO.Path]::GetRandomFileName() + ".exe")
	try {
		try {
			New-Item -ItemType Directory -Path $tmpDir | Out-Null
		} catch {
			Stop-Ml "cannot create a temporary directory in $([IO.Path]::GetTempPath())"
		}
		try {
			[IO.File]::WriteAllBytes($tmpFile, [byte[]]@())
		} catch {
			Stop-Ml "cannot write to the install directory ${dir}: choose another with MLSETUP_INSTALL_DIR"
		}

		Write-MlSay "downloading $name from $url"
		$sums = Join-Path $tmpDir 'SHA256SUMS'
		Get-MlDownload "$url/SHA256SUMS" $sums
		$want = Get-MlWantedHash $sums $name
		if (-not $want) { Stop-Ml "$url/SHA256SUMS has no sha256 for $name" }
		Get-MlDownload "$url/$name" $tmpFile
		$got = (Get-FileHash -LiteralPath $tmpFile -Algorithm SHA256).Hash.ToLowerInvariant()
		if ($got -ne $want) {
			Stop-Ml "$name does not match SHA256SUMS (sha256 $got, expected $want): a corrupted or truncated download; nothing was installed"
		}
		# in a try: Windows PowerShell 5.1 turns a native command's stderr
		# into errors under ErrorActionPreference Stop
		$runs = $false
		try {
			& $tmpFile --version *> $null
			$runs = ($LASTEXITCODE -eq 0)
		} catch { }
		if (-not $runs) {
			Stop-Ml "the downloaded $name does not run on this system; nothing was installed"
		}
		$exe = Join-Path $dir 'mlsetup.exe'
		try {
			Move-Item -LiteralPath $tmpFile -Destination $exe -Force
		} catch {
			Stop-Ml "cannot move mlsetup.exe into $dir (is mlsetup running?): $($_.Exception.Message)"
		}
	} finally {
		Remove-Item -LiteralPath $tmpFile -Force -ErrorAction SilentlyContinue
		Remove-Item -LiteralPath $tmpDir -Recurse -Force -ErrorAction SilentlyContinue
	}
	$version = ''
	try { $version = (& $exe --version 2>$null | Select-Object -First 1) } catch { }
	Write-MlSay "installed $exe ($version)"
	Add-MlUserPath $dir
	if ($pass.Count -gt 0) {
		& $exe @pass
		$global:LASTEXITCODE = $LASTEXITCODE
		# run as a file (powershell -File install.ps1 ARGS), mlsetup's exit
		# code is the script's, as install.sh's exec gives it; under iex
		# there is no script to leave, only the user's session
		if ($PSCommandPath) { exit $LASTEXITCODE }
	}
}

Install-Mlsetup $args 'mlsetup-install-ps1-complete'
