/*
 * os_info.c - the machine probe: operating system, distribution
 * (/etc/os-release), kernel, CPU architecture, libc kind and version, WSL,
 * containers, CPU model and cores, memory, free disk at the target. Files
 * are read under opts->root so fixture trees and captured bundles work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <sys/utsname.h>
#endif
#include <unistd.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include "internal.h"

#define SMALL_FILE (64 * 1024)

#ifndef _WIN32
/* Reads a small file under root; NULL when missing or unreadable. */
static char *slurp(const char *root, const char *path)
{
	char *text = NULL;
	if (ml_os_read_file(&text, NULL, root, path, SMALL_FILE, NULL) != 0)
		return NULL;
	return text;
}

static bool exists(const char *root, const char *path)
{
	char full[4096];
	return ml_os_rooted(full, sizeof(full), root, path) == 0 && access(full, F_OK) == 0;
}

/* Copies the value of KEY=VALUE (optionally quoted) from os-release text. */
static void os_release_value(char *dst, size_t dstsz, const char *text, const char *key)
{
	size_t klen = strlen(key);
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (len > klen && strncmp(line, key, klen) == 0 && line[klen] == '=') {
			const char *v = line + klen + 1;
			size_t vlen = len - klen - 1;
			if (vlen >= 2 && (v[0] == '"' || v[0] == '\'') && v[vlen - 1] == v[0]) {
				v++;
				vlen -= 2;
			}
			if (vlen >= dstsz)
				vlen = dstsz - 1;
			memcpy(dst, v, vlen);
			dst[vlen] = '\0';
			return;
		}
		line = nl ? nl + 1 : NULL;
	}
}

/* Value after "key<spaces>:" on the first matching line of /proc-style text. */
static bool colon_value(char *dst, size_t dstsz, const char *text, const char *key)
{
	size_t klen = strlen(key);
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (len > klen && strncmp(line, key, klen) == 0) {
			const char *c = memchr(line + klen, ':', len - klen);
			bool only_space = c != NULL;
			for (const char *p = line + klen; c && p < c; p++)
				if (*p != ' ' && *p != '\t')
					only_space = false;
			if (only_space) {
				size_t vlen = len - (size_t)(c + 1 - line);
				char tmp[512];
				if (vlen >= sizeof(tmp))
					vlen = sizeof(tmp) - 1;
				memcpy(tmp, c + 1, vlen);
				tmp[vlen] = '\0';
				ml_strlcpy(dst, ml_strtrim(tmp), dstsz);
				return true;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

static void detect_distro(ml_machine *m, const char *root)
{
	char *text = slurp(root, "/etc/os-release");
	if (!text)
		text = slurp(root, "/usr/lib/os-release");
	if (!text)
		return;
	os_release_value(m->os.distro_id, sizeof(m->os.distro_id), text, "ID");
	os_release_value(m->os.distro_version, sizeof(m->os.distro_version), text, "VERSION_ID");
	os_release_value(m->os.distro_pretty, sizeof(m->os.distro_pretty), text, "PRETTY_NAME");
	free(text);
}

static void detect_kernel_arch(ml_machine *m, const char *root)
{
	struct utsname u;
	bool have_uname = uname(&u) == 0;
	char *rel = slurp(root, "/proc/sys/kernel/osrelease");
	if (rel)
		ml_strlcpy(m->os.kernel, ml_strtrim(rel), sizeof(m->os.kernel));
	else if (have_uname)
		ml_strlcpy(m->os.kernel, u.release, sizeof(m->os.kernel));
	free(rel);
	const char *arch = have_uname ? u.machine : "";
	if (strcmp(arch, "arm64") == 0)
		arch = "aarch64";
	else if (strcmp(arch, "amd64") == 0)
		arch = "x86_64";
	ml_strlcpy(m->os.arch, arch, sizeof(m->os.arch));
}

static void detect_libc(ml_machine *m)
{
#ifdef __GLIBC__
	ml_strlcpy(m->os.libc_kind, "glibc", sizeof(m->os.libc_kind));
	ml_strlcpy(m->os.libc_version, gnu_get_libc_version(), sizeof(m->os.libc_version));
#else
	/* musl prints "musl libc (x86_64)\nVersion 1.2.4" from its loader. */
	const char *argv[] = {"ldd", "--version", NULL};
	char *text = NULL;
	int status;
	if (ml_os_run_capture(&text, &status, argv, SMALL_FILE, 5, NULL) == 0) {
		if (strstr(text, "musl")) {
			ml_strlcpy(m->os.libc_kind, "musl", sizeof(m->os.libc_kind));
			colon_value(m->os.libc_version, sizeof(m->os.libc_version), text,
			            "Version");
			const char *v = strstr(text, "Version ");
			if (v)
				sscanf(v + 8, "%15s", m->os.libc_version);
		}
		free(text);
	}
#endif
}

static void detect_wsl_container(ml_machine *m, const char *root)
{
	char *ver = slurp(root, "/proc/version");
	m->os.wsl = exists(root, "/dev/dxg") || exists(root, "/usr/lib/wsl/lib") ||
	            (ver &&
	             (strstr(ver, "microsoft") || strstr(ver, "Microsoft") || strstr(ver, "WSL")));
	free(ver);

	const char *kind = NULL;
	if (exists(root, "/.dockerenv"))
		kind = "docker";
	else if (exists(root, "/run/.containerenv"))
		kind = "podman";
	else if (getenv("KUBERNETES_SERVICE_HOST") && (!root || strcmp(root, "/") == 0))
		kind = "kubernetes";
	if (!kind) {
		char *cg = slurp(root, "/proc/1/cgroup");
		if (cg) {
			if (strstr(cg, "kubepods"))
				kind = "kubernetes";
			else if (strstr(cg, "docker"))
				kind = "docker";
			else if (strstr(cg, "lxc"))
				kind = "lxc";
			free(cg);
		}
	}
	if (!kind) {
		char *env = NULL;
		size_t len = 0;
		if (ml_os_read_file(&env, &len, root, "/proc/1/environ", SMALL_FILE, NULL) == 0) {
			for (size_t i = 0; i < len; i += strlen(env + i) + 1)
				if (ml_startswith(env + i, "container=")) {
					kind = strcmp(env + i + 10, "lxc") == 0 ? "lxc"
					                                        : "systemd-nspawn";
					break;
				}
			free(env);
		}
	}
	m->os.container = kind != NULL;
	ml_strlcpy(m->os.container_kind, kind ? kind : "", sizeof(m->os.container_kind));
}

static void detect_cpu_memory(ml_machine *m, const char *root)
{
	char *cpu = slurp(root, "/proc/cpuinfo");
	int cores = 0;
	if (cpu) {
		if (!colon_value(m->cpu_model, sizeof(m->cpu_model), cpu, "model name"))
			if (!colon_value(m->cpu_model, sizeof(m->cpu_model), cpu, "Hardware"))
				colon_value(m->cpu_model, sizeof(m->cpu_model), cpu, "Model");
		for (const char *p = cpu; (p = strstr(p, "processor")) != NULL; p += 9)
			if (p == cpu || p[-1] == '\n')
				cores++;
		free(cpu);
	}
	m->cpu_cores = cores > 0 ? cores : ml_os_cpu_count();

	char *mem = slurp(root, "/proc/meminfo");
	char val[64] = "";
	if (mem && colon_value(val, sizeof(val), mem, "MemTotal"))
		m->memory_mib = strtoull(val, NULL, 10) / 1024; /* value is in kB */
	free(mem);
}

#endif /* !_WIN32 */

int ml_probe_os(ml_machine *m, const ml_detect_opts *o)
{
#ifdef _WIN32
	return ml_probe_os_windows(m, o);
#else
#if defined(__linux__)
	ml_strlcpy(m->os.name, "linux", sizeof(m->os.name));
#elif defined(__APPLE__)
	ml_strlcpy(m->os.name, "darwin", sizeof(m->os.name));
#elif defined(_WIN32)
	ml_strlcpy(m->os.name, "windows", sizeof(m->os.name));
#endif
	detect_distro(m, o->root);
	detect_kernel_arch(m, o->root);
	detect_libc(m);
	detect_wsl_container(m, o->root);
	detect_cpu_memory(m, o->root);
	ml_strlcpy(m->target_dir, o->target_dir ? o->target_dir : ".", sizeof(m->target_dir));
	ml_os_disk_free_mib(&m->disk_free_mib, m->target_dir, NULL);
	return 0;
#endif
}
