/*
 * os_windows.c - the Windows side of the machine probe and of the PCI
 * probe: Windows version (RtlGetVersion, and the registry's ProductName /
 * DisplayVersion), CPU (the registry's ProcessorNameString), memory
 * (GlobalMemoryStatusEx), free disk; and, when no NVIDIA driver answered,
 * the display adapters' PCI ids from SetupAPI (GUID_DEVCLASS_DISPLAY,
 * SPDRP_HARDWAREID "PCI\VEN_10DE&DEV_xxxx...") and those of NVIDIA PCI
 * display controllers of another class (an H100 under Other devices),
 * matched against the built-in table, as ml_probe_pci() does with /sys on
 * Linux. Compiled into every build; empty except on Windows.
 */
#include "internal.h"

#ifdef _WIN32

#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <setupapi.h>

/* Registry string value under HKLM into dst (UTF-8); false when missing. */
static bool reg_string(char *dst, size_t dstsz, const wchar_t *key, const wchar_t *name)
{
	wchar_t w[256];
	DWORD sz = sizeof w;
	if (RegGetValueW(HKEY_LOCAL_MACHINE, key, name, RRF_RT_REG_SZ, NULL, w, &sz) !=
	    ERROR_SUCCESS)
		return false;
	w[sizeof w / sizeof w[0] - 1] = 0;
	char *u = ml_win_utf8(w);
	if (!u)
		return false;
	ml_strlcpy(dst, ml_strtrim(u), dstsz);
	free(u);
	return dst[0] != '\0';
}

typedef LONG(WINAPI *rtl_get_version_fn)(OSVERSIONINFOW *);

static const wchar_t CURRENT_VERSION[] = L"SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion";

int ml_probe_os_windows(ml_machine *m, const ml_detect_opts *o)
{
	ml_strlcpy(m->os.name, "windows", sizeof(m->os.name));
	ml_strlcpy(m->os.distro_id, "windows", sizeof(m->os.distro_id));

	/* GetVersionEx lies to programs without a manifest; RtlGetVersion
	 * does not. */
	OSVERSIONINFOW vi;
	memset(&vi, 0, sizeof vi);
	vi.dwOSVersionInfoSize = sizeof vi;
	HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
	rtl_get_version_fn rtl =
	        ntdll ? (rtl_get_version_fn)(void (*)(void))GetProcAddress(ntdll, "RtlGetVersion")
	              : NULL;
	if (rtl && rtl(&vi) == 0)
		snprintf(m->os.kernel, sizeof(m->os.kernel), "%lu.%lu.%lu",
		         (unsigned long)vi.dwMajorVersion, (unsigned long)vi.dwMinorVersion,
		         (unsigned long)vi.dwBuildNumber);

	/* "22H2" (DisplayVersion, Windows 10 20H2 and later), else the older
	 * ReleaseId, else the build number. */
	char product[96] = "", display[32] = "";
	reg_string(product, sizeof product, CURRENT_VERSION, L"ProductName");
	if (!reg_string(display, sizeof display, CURRENT_VERSION, L"DisplayVersion"))
		reg_string(display, sizeof display, CURRENT_VERSION, L"ReleaseId");
	/* Windows 11 still says "Windows 10" in ProductName; the build tells. */
	if (vi.dwMajorVersion == 10 && vi.dwBuildNumber >= 22000 &&
	    strncmp(product, "Windows 10", 10) == 0)
		memcpy(product, "Windows 11", 10);
	if (display[0])
		ml_strlcpy(m->os.distro_version, display, sizeof(m->os.distro_version));
	else if (vi.dwBuildNumber)
		snprintf(m->os.distro_version, sizeof(m->os.distro_version), "%lu",
		         (unsigned long)vi.dwBuildNumber);
	snprintf(m->os.distro_pretty, sizeof(m->os.distro_pretty), "%s%s%s",
	         product[0] ? product : "Windows", display[0] ? " " : "", display);

	SYSTEM_INFO si;
	GetNativeSystemInfo(&si);
	const char *arch = si.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_AMD64   ? "x86_64"
	                   : si.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_ARM64 ? "aarch64"
	                   : si.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_INTEL ? "x86"
	                                                                               : "";
	ml_strlcpy(m->os.arch, arch, sizeof(m->os.arch));

	reg_string(m->cpu_model, sizeof(m->cpu_model),
	           L"HARDWARE\\DESCRIPTION\\System\\CentralProcessor\\0", L"ProcessorNameString");
	m->cpu_cores = ml_os_cpu_count();
	MEMORYSTATUSEX ms;
	memset(&ms, 0, sizeof ms);
	ms.dwLength = sizeof ms;
	if (GlobalMemoryStatusEx(&ms))
		m->memory_mib = ms.ullTotalPhys / (1024 * 1024);

	ml_strlcpy(m->target_dir, o->target_dir ? o->target_dir : ".", sizeof(m->target_dir));
	ml_os_disk_free_mib(&m->disk_free_mib, m->target_dir, NULL);
	return 0;
}

/* {4d36e968-e325-11ce-bfc1-08002be10318}: the display adapter class. */
static const GUID DISPLAY_CLASS = {
        0x4d36e968, 0xe325, 0x11ce, {0xbf, 0xc1, 0x08, 0x00, 0x2b, 0xe1, 0x03, 0x18}};

/* A device registry property as UTF-8 (the first string of a multi-string). */
static bool dev_property(char *dst, size_t dstsz, HDEVINFO set, SP_DEVINFO_DATA *dev, DWORD prop)
{
	wchar_t w[512];
	memset(w, 0, sizeof w);
	if (!SetupDiGetDeviceRegistryPropertyW(set, dev, prop, NULL, (BYTE *)w, sizeof w - 4,
	                                       NULL))
		return false;
	char *u = ml_win_utf8(w);
	if (!u)
		return false;
	ml_strlcpy(dst, u, dstsz);
	free(u);
	return true;
}

/* The value of a hex digit, -1 for another character. */
static int hex_digit(wchar_t c)
{
	return c >= '0' && c <= '9'                     ? c - '0'
	       : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
	                                                : -1;
}

/* The PCI base class and subclass of a device (0x0302 for a 3D
 * controller), -1 when its compatible ids do not say. Windows' PCI bus
 * driver lists them as "PCI\VEN_10DE&CC_030200", "PCI\VEN_10DE&CC_0302",
 * "PCI\VEN_10DE", "PCI\CC_030200", "PCI\CC_0302&DT_0001"...: "CC_" then
 * base class, subclass and programming interface, two hex digits each
 * ("Identifiers for PCI Devices", Windows driver docs). The property is a
 * REG_MULTI_SZ: strings one after another, an empty one last. */
static int pci_class(HDEVINFO set, SP_DEVINFO_DATA *dev)
{
	wchar_t w[1024];
	memset(w, 0, sizeof w);
	if (!SetupDiGetDeviceRegistryPropertyW(set, dev, SPDRP_COMPATIBLEIDS, NULL, (BYTE *)w,
	                                       sizeof w - 4, NULL))
		return -1;
	for (const wchar_t *s = w; *s; s += wcslen(s) + 1)
		for (const wchar_t *c = s + 1; c[0] && c[1] && c[2]; c++) {
			if ((c[-1] != '\\' && c[-1] != '&') || (c[0] | 0x20) != 'c' ||
			    (c[1] | 0x20) != 'c' || c[2] != '_')
				continue;
			int cls = 0;
			for (int k = 3; k < 7 && cls >= 0; k++)
				cls = hex_digit(c[k]) < 0 ? -1 : cls << 4 | hex_digit(c[k]);
			if (cls >= 0)
				return cls;
		}
	return -1;
}

/* The device id of an NVIDIA PCI device from its first hardware id,
 * "PCI\VEN_10DE&DEV_2B85&SUBSYS_...&REV_A1"; false for another vendor. */
static bool nvidia_device(unsigned *devid, HDEVINFO set, SP_DEVINFO_DATA *dev)
{
	char hwid[512] = "";
	unsigned vendor = 0;
	if (!dev_property(hwid, sizeof hwid, set, dev, SPDRP_HARDWAREID))
		return false;
	for (char *c = hwid; *c; c++)
		*c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
	return strncmp(hwid, "PCI\\VEN_", 8) == 0 &&
	       sscanf(hwid + 8, "%4x&DEV_%4x", &vendor, devid) == 2 && vendor == 0x10de;
}

/* Records the NVIDIA device dev (device id devid) as a GPU and says so in
 * note; cls is its PCI class when it is not a display adapter, else -1.
 * Returns 0 or ML_ENOMEM. */
static int add_gpu(ml_machine *m, HDEVINFO set, SP_DEVINFO_DATA *dev, unsigned devid, int cls,
                   ml_buf *note)
{
	char loc[256] = "", service[64] = "", bus[32] = "", what[64] = "";
	/* "PCI bus 1, device 0, function 0" -> "0000:01:00.0" */
	unsigned b = 0, d = 0, f = 0;
	if (dev_property(loc, sizeof loc, set, dev, SPDRP_LOCATION_INFORMATION) &&
	    sscanf(loc, "PCI bus %u, device %u, function %u", &b, &d, &f) == 3)
		snprintf(bus, sizeof bus, "0000:%02x:%02x.%x", b & 0xff, d & 0x1f, f & 7);
	dev_property(service, sizeof service, set, dev, SPDRP_SERVICE);
	ml_gpu *g = ml_machine_gpu(m, bus[0] ? bus : NULL, (int)m->n_gpus, "pci");
	if (!g)
		return ML_ENOMEM;
	if (!g->pci_device_id)
		g->pci_device_id = devid;
	const ml_pci_gpu *known = ml_pci_lookup((uint16_t)devid);
	if (cls >= 0)
		snprintf(what, sizeof what, ", PCI class %04x, not a display adapter",
		         (unsigned)cls);
	ml_buf_printf(note, "; %s 10de:%04x %s%s, driver service %s",
	              bus[0] ? bus : "(unknown slot)", devid,
	              known ? known->name : "(not in mlsetup's PCI id table)", what,
	              service[0] ? service : "none");
	return 0;
}

int ml_probe_pci_windows(ml_machine *m, const ml_detect_opts *o)
{
	(void)o;
	HDEVINFO set = SetupDiGetClassDevsW(&DISPLAY_CLASS, NULL, NULL, DIGCF_PRESENT);
	if (set == INVALID_HANDLE_VALUE)
		return ml_machine_probe(m, "pci", ML_PROBE_FAILED,
		                        "cannot list display adapters (SetupAPI error %lu)",
		                        (unsigned long)GetLastError());
	ml_buf note = ML_BUF_INIT;
	int rc = 0, found = 0, adapters = 0, others = 0;
	SP_DEVINFO_DATA dev;
	unsigned devid = 0;
	for (DWORD i = 0; !rc; i++) {
		memset(&dev, 0, sizeof dev);
		dev.cbSize = sizeof dev;
		if (!SetupDiEnumDeviceInfo(set, i, &dev))
			break;
		adapters++;
		if (nvidia_device(&devid, set, &dev) &&
		    !(rc = add_gpu(m, set, &dev, devid, -1, &note)))
			found++;
	}
	SetupDiDestroyDeviceInfoList(set);
	if (rc)
		goto out;

	/* Compute-only GPUs (PCI class 0x0302, 3D controller: H100, A100, L40S
	 * in TCC mode) are no display adapters: without NVIDIA's driver Windows
	 * leaves them under "Other devices" ({4d36e97e-e325-11ce-bfc1-
	 * 08002be10318}) or without a class. So every device the PCI bus
	 * driver enumerated ("PCI" as SetupDiGetClassDevs' enumerator, with
	 * DIGCF_ALLCLASSES), keeping the NVIDIA ones of another class whose
	 * class code is 0x0300 (VGA) or 0x0302 (3D), as the Linux scan
	 * (pci.c) does: never the HD Audio function (0x0403) of a card. */
	set = SetupDiGetClassDevsW(NULL, L"PCI", NULL, DIGCF_ALLCLASSES | DIGCF_PRESENT);
	if (set == INVALID_HANDLE_VALUE)
		ml_buf_printf(&note, "; cannot list the other PCI devices (SetupAPI error %lu)",
		              (unsigned long)GetLastError());
	for (DWORD i = 0; set != INVALID_HANDLE_VALUE && !rc; i++) {
		memset(&dev, 0, sizeof dev);
		dev.cbSize = sizeof dev;
		if (!SetupDiEnumDeviceInfo(set, i, &dev))
			break;
		/* A display adapter was looked at above. */
		if (IsEqualGUID(&dev.ClassGuid, &DISPLAY_CLASS) ||
		    !nvidia_device(&devid, set, &dev))
			continue;
		int cls = pci_class(set, &dev);
		if ((cls == 0x0300 || cls == 0x0302) &&
		    !(rc = add_gpu(m, set, &dev, devid, cls, &note)))
			others++;
	}
	if (set != INVALID_HANDLE_VALUE)
		SetupDiDestroyDeviceInfoList(set);
out:
	if (!rc) {
		char more[96] = "";
		if (others)
			snprintf(more, sizeof more,
			         ", and %d NVIDIA display controller%s outside the display class",
			         others, others == 1 ? "" : "s");
		rc = ml_machine_probe(m, "pci", found + others ? ML_PROBE_OK : ML_PROBE_FAILED,
		                      "%d NVIDIA display device%s among %d adapter%s%s%s", found,
		                      found == 1 ? "" : "s", adapters, adapters == 1 ? "" : "s",
		                      more, ml_buf_cstr(&note));
	}
	ml_buf_release(&note);
	return rc;
}

#else
/* ISO C wants at least one declaration in a translation unit. */
typedef int ml_os_windows_unused;
#endif
