/*
 * gpu_tables.c - the facts detect and plan look up rather than compute:
 * compute capability -> architecture name, compute capability -> precision
 * features and recommended dtype, the "12.0" / "sm_120" spellings, and the
 * comparison of driver versions. Each is one table; the functions only
 * walk them. Every driver number (minimum per CUDA toolkit and per
 * architecture, driver branch -> CUDA) is data in manifests/drivers.json,
 * read by drivers.c.
 *
 * Source: NVIDIA CUDA GPU compute capability list (docs/gpu-truth.md).
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* --- compute capability -> architecture ---------------------------------- */

#define ANY_MINOR (-1)

static const struct {
	int major, minor; /* minor ANY_MINOR: every minor of that major */
	const char *name;
} cc_archs[] = {
        {3, ANY_MINOR, "Kepler"},
        {5, ANY_MINOR, "Maxwell"},
        {6, ANY_MINOR, "Pascal"},
        {7, 0, "Volta"},
        {7, 2, "Volta"}, /* Jetson Xavier */
        {7, 5, "Turing"},
        {8, 0, "Ampere"},
        {8, 6, "Ampere"},
        {8, 7, "Ampere"}, /* Jetson Orin */
        {8, 9, "Ada"},
        {9, 0, "Hopper"},
        {10, ANY_MINOR, "Blackwell"}, /* B200, GB200 (10.0); B300, GB300 (10.3) */
        {11, ANY_MINOR, "Blackwell"}, /* Jetson Thor */
        {12, ANY_MINOR, "Blackwell"}, /* RTX 50xx, RTX PRO (12.0); GB10 (12.1) */
};

const char *ml_cc_architecture(int major, int minor)
{
	if (major < 0 || minor < 0)
		return "";
	for (size_t i = 0; i < sizeof cc_archs / sizeof cc_archs[0]; i++) {
		if (cc_archs[i].major != major)
			continue;
		if (cc_archs[i].minor == ANY_MINOR || cc_archs[i].minor == minor)
			return cc_archs[i].name;
	}
	return "";
}

/* --- compute capability -> precision ------------------------------------ */

/* Each feature holds from its compute capability on; "dtype:" rules name
 * the recommended training dtype, the rule with the highest compute
 * capability a GPU meets winning. */
static const ml_precision_rule precision_rules[] = {
        {"bf16", 8, 0,
         "bfloat16 tensor cores from Ampere: NVIDIA A100 Tensor Core GPU Architecture "
         "whitepaper; CUDA C++ Programming Guide, bfloat16 arithmetic (cuda_bf16.h) needs "
         "compute capability 8.0; docs/nvidia-and-python-facts.md"},
        {"tf32", 8, 0,
         "TF32 tensor cores from Ampere: NVIDIA A100 Tensor Core GPU Architecture whitepaper; "
         "NVIDIA Ampere GPU Architecture Tuning Guide; docs/nvidia-and-python-facts.md"},
        {"fp8", 8, 9,
         "FP8 (E4M3, E5M2) tensor cores from Ada (8.9) and Hopper (9.0): NVIDIA Ada GPU "
         "Architecture whitepaper; NVIDIA H100 Tensor Core GPU Architecture whitepaper; "
         "NVIDIA Hopper Tuning Guide; docs/nvidia-and-python-facts.md"},
        {"fp4", 10, 0,
         "FP4 tensor cores from Blackwell (10.0 data center, 12.0 consumer): NVIDIA Blackwell "
         "Tuning Guide; NVIDIA Blackwell architecture technical brief; "
         "docs/nvidia-and-python-facts.md"},
        {"flash_attention_2", 8, 0,
         "FlashAttention 2 README (Dao-AILab/flash-attention), requirements: \"Ampere, Ada, "
         "or Hopper GPUs\", i.e. sm_80 and newer; docs/nvidia-and-python-facts.md"},
        {"dtype:float32", 0, 0,
         "no tensor cores before Volta (7.0): train in float32; docs/nvidia-and-python-facts.md"},
        {"dtype:float16", 7, 0,
         "Volta and Turing (7.x) have fp16 tensor cores and no bf16: float16 with loss "
         "scaling; docs/nvidia-and-python-facts.md"},
        {"dtype:bfloat16", 8, 0,
         "bf16 from Ampere (8.0): fp32's exponent range, no loss scaling; "
         "docs/nvidia-and-python-facts.md"},
};

#define N_PRECISION_RULES (sizeof precision_rules / sizeof precision_rules[0])

size_t ml_precision_rules(const ml_precision_rule **out)
{
	if (out)
		*out = precision_rules;
	return N_PRECISION_RULES;
}

void ml_gpu_precision(ml_precision *out, int major, int minor)
{
	*out = (ml_precision){0};
	if (major < 0 || minor < 0)
		return;
	out->known = true;
	const ml_precision_rule *dtype = NULL;
	for (size_t i = 0; i < N_PRECISION_RULES; i++) {
		const ml_precision_rule *r = &precision_rules[i];
		if (major < r->major || (major == r->major && minor < r->minor))
			continue;
		if (strncmp(r->feature, "dtype:", 6) == 0) {
			if (!dtype || r->major > dtype->major ||
			    (r->major == dtype->major && r->minor > dtype->minor))
				dtype = r;
		} else if (strcmp(r->feature, "bf16") == 0)
			out->bf16 = true;
		else if (strcmp(r->feature, "tf32") == 0)
			out->tf32 = true;
		else if (strcmp(r->feature, "fp8") == 0)
			out->fp8 = true;
		else if (strcmp(r->feature, "fp4") == 0)
			out->fp4 = true;
		else if (strcmp(r->feature, "flash_attention_2") == 0)
			out->flash_attention_2 = true;
	}
	out->recommended_dtype = dtype ? dtype->feature + 6 : NULL;
}

/* --- spellings ----------------------------------------------------------- */

void ml_cc_format(char *dst, size_t dstsz, int major, int minor)
{
	if (!dst || dstsz == 0)
		return;
	if (major < 0 || minor < 0)
		dst[0] = '\0';
	else
		snprintf(dst, dstsz, "%d.%d", major, minor);
}

void ml_cc_sm(char *dst, size_t dstsz, int major, int minor)
{
	if (!dst || dstsz == 0)
		return;
	if (major < 0 || minor < 0)
		dst[0] = '\0';
	else
		snprintf(dst, dstsz, "sm_%d%d", major, minor);
}

/* --- driver versions ----------------------------------------------------- */

/* Components larger than this are clamped; no driver version comes near. */
#define COMPONENT_MAX 999999999UL

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Reads one dot-separated component at *p: its leading decimal digits (0 when
 * there are none, clamped at COMPONENT_MAX); the rest of the component up to
 * the next '.' is ignored. Leaves *p after the '.', or at the terminating
 * NUL. */
static unsigned long next_component(const char **p)
{
	const char *s = *p;
	unsigned long v = 0;

	while (is_digit(*s)) {
		unsigned long d = (unsigned long)(*s - '0');

		v = v > (COMPONENT_MAX - d) / 10 ? COMPONENT_MAX : v * 10 + d;
		s++;
	}
	while (*s && *s != '.')
		s++;
	if (*s == '.')
		s++;
	*p = s;
	return v;
}

static const char *skip_space(const char *s)
{
	while (is_space(*s))
		s++;
	return s;
}

int ml_driver_version_cmp(const char *a, const char *b)
{
	const char *pa = skip_space(a ? a : "");
	const char *pb = skip_space(b ? b : "");

	while (*pa || *pb) {
		unsigned long ca = next_component(&pa);
		unsigned long cb = next_component(&pb);

		if (ca != cb)
			return ca < cb ? -1 : 1;
	}
	return 0;
}
