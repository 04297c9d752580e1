/*
 * test_out.c - specs for the front end's text helpers in src/core/out.c:
 * word wrapping of long messages (warnings, errors, hints) to a terminal's
 * width with a continuation indent, and the terminal width ($COLUMNS,
 * else the terminal's own, else 80).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "mlsetup/out.h"

/* ml_wrap into a buffer big enough for any case here. */
static const char *wrap(const char *text, int width, int used, int indent)
{
	static char buf[1024];
	size_t n = ml_wrap(buf, sizeof(buf), text, width, used, indent);
	assert_int_equal(n, strlen(buf));
	return buf;
}

static void test_short_text_is_unchanged(void **state)
{
	(void)state;
	assert_string_equal(wrap("no manifest fits", 80, 9, 9), "no manifest fits");
	assert_string_equal(wrap("", 80, 0, 0), "");
	assert_string_equal(wrap("exactly twenty chars", 20, 0, 0), "exactly twenty chars");
}

static void test_breaks_at_word_boundaries_with_the_indent(void **state)
{
	(void)state;
	/* "hint: " is 6 columns; lines of at most 40, continuations under the text. */
	assert_string_equal(wrap("give --target DIR of an environment, or --python PATH", 40, 6, 6),
	                    "give --target DIR of an\n"
	                    "      environment, or --python PATH");
	assert_string_equal(wrap("one two three four five six", 10, 0, 2), "one two\n"
	                                                                   "  three\n"
	                                                                   "  four\n"
	                                                                   "  five six");
}

static void test_no_line_is_wider_than_the_width(void **state)
{
	(void)state;
	const char *text = "the NVIDIA driver 535.54 is older than 550.54, the minimum of "
	                   "CUDA 12.4 that manifest requirements.txt needs; update the driver or "
	                   "install with --manifest requirements_cu118.txt";
	for (int width = 12; width <= 100; width++) {
		const char *w = wrap(text, width, 9, 9);
		int col = 9;
		for (const char *p = w; *p; p++) {
			col = *p == '\n' ? 0 : col + 1;
			if (col > width)
				fail_msg("width %d: a line is longer: %s", width, w);
		}
		/* Only spaces became breaks: the words are all there, in order. */
		char a[1024], b[1024];
		size_t n = 0;
		for (const char *p = text; *p; p++)
			if (*p != ' ')
				a[n++] = *p;
		a[n] = '\0';
		n = 0;
		for (const char *p = w; *p; p++)
			if (*p != ' ' && *p != '\n')
				b[n++] = *p;
		b[n] = '\0';
		assert_string_equal(a, b);
	}
}

static void test_a_word_longer_than_a_line_is_cut(void **state)
{
	(void)state;
	assert_string_equal(wrap("at /tmp/a/very/long/path/name here", 12, 0, 2), "at\n"
	                                                                          "  /tmp/a/ver\n"
	                                                                          "  y/long/pat\n"
	                                                                          "  h/name\n"
	                                                                          "  here");
}

static void test_newlines_start_indented_lines_and_spaces_at_breaks_go(void **state)
{
	(void)state;
	assert_string_equal(wrap("first line\nsecond", 80, 7, 7), "first line\n"
	                                                          "       second");
	assert_string_equal(wrap("aaaa    bbbb", 6, 0, 0), "aaaa\nbbbb");
	assert_string_equal(wrap("trailing   ", 80, 0, 0), "trailing");
}

static void test_columns_count_code_points_not_bytes(void **state)
{
	(void)state;
	/* "größe" is 5 columns, 7 bytes: it fits a 11-column line after "über ". */
	assert_string_equal(wrap("über größe x", 11, 0, 0), "über größe\nx");
}

static void test_a_small_buffer_gets_a_cut_result_and_the_full_length(void **state)
{
	(void)state;
	char small[8];
	size_t n = ml_wrap(small, sizeof(small), "one two three four", 9, 0, 2);
	assert_int_equal(n, strlen("one two\n  three\n  four"));
	assert_string_equal(small, "one two");
	assert_int_equal(ml_wrap(NULL, 0, "one two three four", 9, 0, 2), n);
}

static void test_width_comes_from_columns_then_the_terminal_then_80(void **state)
{
	(void)state;
	int fd = open("/dev/null", O_WRONLY); /* not a terminal */
	assert_true(fd >= 0);
	setenv("COLUMNS", "123", 1);
	assert_int_equal(ml_term_width(fd), 123);
	setenv("COLUMNS", "12", 1); /* too narrow to believe */
	assert_int_equal(ml_term_width(fd), 80);
	setenv("COLUMNS", "wide", 1);
	assert_int_equal(ml_term_width(fd), 80);
	unsetenv("COLUMNS");
	assert_int_equal(ml_term_width(fd), 80);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_short_text_is_unchanged),
	        cmocka_unit_test(test_breaks_at_word_boundaries_with_the_indent),
	        cmocka_unit_test(test_no_line_is_wider_than_the_width),
	        cmocka_unit_test(test_a_word_longer_than_a_line_is_cut),
	        cmocka_unit_test(test_newlines_start_indented_lines_and_spaces_at_breaks_go),
	        cmocka_unit_test(test_columns_count_code_points_not_bytes),
	        cmocka_unit_test(test_a_small_buffer_gets_a_cut_result_and_the_full_length),
	        cmocka_unit_test(test_width_comes_from_columns_then_the_terminal_then_80),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
