/*
 * entry.c - the rules one archive entry's name must pass, before anything
 * is created for it: ml_entry_check() (the portable rules: no absolute
 * paths, "..", control characters, invalid UTF-8, links that leave the
 * tree), ml_entry_windows_check() (the names Windows cannot create as
 * named: device names, trailing dots and spaces, ':'), and mle_printable(),
 * which writes a hostile name safely into a message. Pure functions: the
 * archive readers (extract.c, unzip.c, zipscan.c) and the wheel installer
 * (wheel.c) use them; they use nothing of theirs. Contracts in internal.h.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

/* --- the pure entry checker ---------------------------------------------------- */

/* The length of the UTF-8 sequence (RFC 3629) at s (n bytes left) and its
 * code point, or 0 when the bytes there are not one. */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *out)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp, min;
	if (c < 0x80) {
		*out = c;
		return 1;
	}
	if ((c & 0xe0) == 0xc0)
		len = 2, cp = c & 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		len = 3, cp = c & 0x0f, min = 0x800;
	else if ((c & 0xf8) == 0xf0)
		len = 4, cp = c & 0x07, min = 0x10000;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[k] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*out = cp;
	return len;
}

/* True for the code points a name must not put on a terminal as they
 * are: C0 and C1 controls, DEL, and the bidirectional formatting
 * characters (Unicode UAX #9: LRM, RLM, ALM, the embeddings, overrides and
 * isolates), which can make a name read as another. */
static bool unshowable(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c || cp == 0x200e ||
	       cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

void mle_printable(char *dst, size_t sz, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t j = 0;
	if (!sz)
		return;
	for (size_t i = 0; i < n;) {
		uint32_t cp = 0;
		size_t k = utf8_seq(u + i, n - i, &cp);
		char esc[16];
		size_t el;
		if (k == 0) {
			el = (size_t)snprintf(esc, sizeof esc, "\\x%02x", u[i]);
			k = 1;
		} else if (unshowable(cp)) {
			el = (size_t)snprintf(esc, sizeof esc, cp < 0x80 ? "\\x%02x" : "\\u%04X",
			                      (unsigned)cp);
		} else {
			el = 0;
		}
		size_t need = el ? el : k;
		if (j + need + 4 > sz) { /* room for "..." and the NUL */
			if (j + 4 <= sz) {
				memcpy(dst + j, "...", 3);
				j += 3;
			}
			break;
		}
		memcpy(dst + j, el ? esc : (const char *)u + i, need);
		j += need;
		i += k;
	}
	dst[j < sz ? j : sz - 1] = '\0';
}

/* RFC 3629 UTF-8: no overlong forms, surrogates or values past U+10FFFF. */
static bool utf8_valid(const unsigned char *s, size_t n)
{
	uint32_t cp;
	for (size_t i = 0, k; i < n; i += k)
		if (!(k = utf8_seq(s + i, n - i, &cp)))
			return false;
	return true;
}

static int refuse_entry(ml_err *err, const char *name, size_t n, const char *why)
{
	char shown[512];
	mle_printable(shown, sizeof shown, name, n);
	return ml_err_set(err, ML_EINTEGRITY, "entry '%s' refused: %s", shown, why);
}

/* Byte-level rules shared by names and link targets. Returns a reason or
 * NULL. */
static const char *bad_bytes(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == 0)
			return "contains a NUL byte";
		if (c < 0x20 || c == 0x7f)
			return "contains a control character";
		if (c == '\\')
			return "contains a backslash (a Windows path)";
	}
	if (!utf8_valid((const unsigned char *)s, n))
		return "is not valid UTF-8";
	if (n && s[0] == '/')
		return "is an absolute path";
	if (n >= 2 && ((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z') && s[1] == ':')
		return "starts with a drive letter";
	return NULL;
}

int ml_entry_check(char *out, size_t out_sz, const char *name, size_t name_len, ml_entry_type type,
                   const char *link, size_t link_len, unsigned flags, ml_err *err)
{
	if (!name || name_len == 0)
		return refuse_entry(err, "", 0, "empty name");
	const char *why = bad_bytes(name, name_len);
	if (why)
		return refuse_entry(err, name, name_len, why);
	if (name_len >= ML_PATH_MAX)
		return refuse_entry(err, name, 64, "name too long");

	/* Normalize: drop leading "./" and trailing "/". */
	const char *p = name;
	size_t n = name_len;
	while (n >= 2 && p[0] == '.' && p[1] == '/') {
		p += 2;
		n -= 2;
		while (n && p[0] == '/') {
			p++;
			n--;
		}
	}
	if (n == 1 && p[0] == '.')
		n = 0;
	bool trailing = false;
	while (n && p[n - 1] == '/') {
		n--;
		trailing = true;
	}
	if (trailing && type != ML_ENTRY_DIR)
		return refuse_entry(err, name, name_len,
		                    "a name ending in '/' that is not a directory");
	if (n == 0 && type != ML_ENTRY_DIR)
		return refuse_entry(err, name, name_len, "empty name");
	if (n >= 2 && ((p[0] | 0x20) >= 'a' && (p[0] | 0x20) <= 'z') && p[1] == ':')
		return refuse_entry(err, name, name_len, "starts with a drive letter");

	size_t depth = 0; /* components of the parent directory */
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && p[j] != '/')
			j++;
		size_t c = j - i;
		if (c == 0)
			return refuse_entry(err, name, name_len, "empty path component");
		if (c == 1 && p[i] == '.')
			return refuse_entry(err, name, name_len, "'.' path component");
		if (c == 2 && p[i] == '.' && p[i + 1] == '.')
			return refuse_entry(err, name, name_len, "'..' path component");
		if (c > 255)
			return refuse_entry(err, name, name_len,
			                    "path component longer than 255 bytes");
		if (j < n)
			depth++;
		i = j + 1;
	}

	switch (type) {
	case ML_ENTRY_FILE:
	case ML_ENTRY_DIR:
		break;
	case ML_ENTRY_OTHER:
		return refuse_entry(err, name, name_len, "device file, FIFO or socket");
	case ML_ENTRY_SYMLINK:
	case ML_ENTRY_HARDLINK:
		if (!(flags & ML_ENTRY_ALLOW_LINKS))
			return refuse_entry(err, name, name_len,
			                    type == ML_ENTRY_SYMLINK
			                            ? "symbolic link (wheels never need links)"
			                            : "hard link (wheels never need links)");
		if (!link || link_len == 0)
			return refuse_entry(err, name, name_len, "link without a target");
		if (type == ML_ENTRY_HARDLINK) {
			ml_err sub = ML_ERR_INIT;
			if (ml_entry_check(NULL, 0, link, link_len, ML_ENTRY_FILE, NULL, 0, 0,
			                   &sub) != 0)
				return refuse_entry(err, name, name_len,
				                    "hard link to a path that is refused itself");
			break;
		}
		if ((why = bad_bytes(link, link_len))) {
			char r[128];
			snprintf(r, sizeof r, "symbolic link whose target %s", why);
			return refuse_entry(err, name, name_len, r);
		}
		/* Lexical walk from the link's directory: ".." may not climb
		 * past the root. Chains are resolved after extraction. */
		for (size_t i = 0; i < link_len;) {
			size_t j = i;
			while (j < link_len && link[j] != '/')
				j++;
			size_t c = j - i;
			if (c == 2 && link[i] == '.' && link[i + 1] == '.') {
				if (depth == 0)
					return refuse_entry(err, name, name_len,
					                    "symbolic link that leaves the tree");
				depth--;
			} else if (c > 255) {
				return refuse_entry(err, name, name_len,
				                    "symbolic link target component too long");
			} else if (c != 0 && !(c == 1 && link[i] == '.')) {
				depth++;
			}
			i = j + 1;
		}
		break;
	default:
		return refuse_entry(err, name, name_len, "unknown entry type");
	}
	if (out) {
		if (n >= out_sz)
			return ml_err_set(err, ML_EFAIL, "entry name does not fit");
		memcpy(out, p, n);
		out[n] = '\0';
	}
	return 0;
}

/* --- Windows name rules ----------------------------------------------------------- */

/* The DOS device names Win32 opens in every directory, whatever the
 * extension ("CON.py", "nul.tar.gz" and "CON .txt" open CON): CON, PRN,
 * AUX, NUL, COM1-COM9 and LPT1-LPT9, and COM/LPT with the ISO 8859-1
 * superscript digits U+00B9, U+00B2, U+00B3, which Windows reads as digits
 * (Microsoft, "Naming Files, Paths, and Namespaces", Naming Conventions).
 * COM0 and LPT0 are not reserved: that page listed them for a while and
 * was corrected (Windows creates files under those names; Go and CPython
 * do not reserve them). CONIN$ and CONOUT$ are the console's input and
 * output (CreateFile, "Consoles"); CPython's ntpath.isreserved() reserves
 * them too. */
static const char *windows_device(const char *comp, size_t n)
{
	static const char *const fixed[] = {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"};
	size_t base = 0;
	while (base < n && comp[base] != '.')
		base++;
	while (base && comp[base - 1] == ' ')
		base--;
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		if (strlen(fixed[i]) == base && strncasecmp(comp, fixed[i], base) == 0)
			return fixed[i];
	static const char *const numbered[] = {
	        "COM1", "COM2", "COM3", "COM4",        "COM5",        "COM6",
	        "COM7", "COM8", "COM9", "COM\xc2\xb9", "COM\xc2\xb2", "COM\xc2\xb3",
	        "LPT1", "LPT2", "LPT3", "LPT4",        "LPT5",        "LPT6",
	        "LPT7", "LPT8", "LPT9", "LPT\xc2\xb9", "LPT\xc2\xb2", "LPT\xc2\xb3"};
	for (size_t i = 0; i < sizeof numbered / sizeof numbered[0]; i++)
		if (strlen(numbered[i]) == base && strncasecmp(comp, numbered[i], base) == 0)
			return numbered[i];
	return NULL;
}

int ml_entry_windows_check(const char *name, size_t name_len, const char *noun, ml_err *err)
{
	char shown[400], comp[300], why[800];
	const char *what = noun ? noun : "entry";
	mle_printable(shown, sizeof shown, name, name_len);
	if (name_len == 0)
		return ml_err_set(err, ML_EINTEGRITY, "%s '' refused on Windows: empty name", what);
	for (size_t i = 0; i <= name_len;) {
		size_t j = i;
		while (j < name_len && name[j] != '/')
			j++;
		const char *c = name + i;
		size_t n = j - i;
		mle_printable(comp, sizeof comp, c, n);
		why[0] = '\0';
		for (size_t k = 0; k < n && !why[0]; k++) {
			unsigned char ch = (unsigned char)c[k];
			if (ch == ':')
				snprintf(why, sizeof why,
				         "'%s' has a ':', which Windows reads as an NTFS alternate "
				         "data stream (or a drive)",
				         comp);
			else if (ch < 0x20 || ch == 0x7f || strchr("<>\"|?*\\", ch))
				snprintf(
				        why, sizeof why,
				        "'%s' has a character Windows does not allow in file names "
				        "(control characters and < > \" | ? * \\)",
				        comp);
		}
		if (!why[0] && (n == 0 || c[n - 1] == '.' || c[n - 1] == ' '))
			snprintf(why, sizeof why,
			         n ? "'%s' ends in a %s, which Windows drops from file names (it "
			             "would be another file's name)"
			           : "'%s' is an empty path component%s",
			         comp, n ? (c[n - 1] == '.' ? "dot" : "space") : "");
		const char *dev = why[0] ? NULL : windows_device(c, n);
		if (dev) {
			char d[32];
			mle_printable(d, sizeof d, dev, strlen(dev));
			snprintf(why, sizeof why,
			         "'%s' is the device %s (reserved in every directory, "
			         "with any extension)",
			         comp, d);
		}
		if (why[0])
			return ml_err_set(err, ML_EINTEGRITY, "%s '%s' refused on Windows: %s",
			                  what, shown, why);
		i = j + 1;
	}
	return 0;
}
