/*
 * test_base_strbuf.c - the one string builder (base/strbuf.h): appends across growth,
 * formatting that fits the room left, fills it exactly or needs more, and handing the text
 * over.
 */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "strbuf.h"

static void
test_append(void)
{
	struct strbuf sb = STRBUF_INIT;

	CU_ASSERT_STRING_EQUAL(strbuf_str(&sb), "");
	strbuf_puts(&sb, "ab");
	strbuf_putc(&sb, 'c');
	strbuf_append(&sb, "defgh", 2);
	CU_ASSERT_STRING_EQUAL(strbuf_str(&sb), "abcde");
	CU_ASSERT_EQUAL(sb.len, 5);
	for (int i = 0; i < 100; i++)
		strbuf_puts(&sb, "0123456789");
	CU_ASSERT_EQUAL(sb.len, 1005);
	CU_ASSERT_EQUAL(strlen(strbuf_str(&sb)), 1005);
	CU_ASSERT(memcmp(sb.data + 995, "0123456789", 11) == 0);
	strbuf_reset(&sb);
	CU_ASSERT_STRING_EQUAL(strbuf_str(&sb), "");
	CU_ASSERT(!sb.failed);
	strbuf_fini(&sb);
	CU_ASSERT_PTR_NULL(sb.data);
}

/* Formatting first tries the room the buffer has: the text must come out whole whether it
 * fits, fills the room to the last byte before the NUL, or is longer than the room. */
static void
test_printf(void)
{
	struct strbuf sb = STRBUF_INIT;
	char want[300];

	strbuf_printf(&sb, "%d-%s", 42, "x");
	CU_ASSERT_STRING_EQUAL(strbuf_str(&sb), "42-x");
	/* The first allocation is 64 bytes: 4 used, 59 more fit before the NUL. */
	CU_ASSERT_EQUAL(sb.cap, 64);
	strbuf_printf(&sb, "%059d", 7);
	CU_ASSERT_EQUAL(sb.len, 63);
	CU_ASSERT_EQUAL(sb.cap, 64);
	CU_ASSERT_EQUAL(strbuf_str(&sb)[62], '7');
	strbuf_printf(&sb, "%s", "y");
	CU_ASSERT_EQUAL(sb.len, 64);
	CU_ASSERT(sb.cap > 64);
	CU_ASSERT_STRING_EQUAL(strbuf_str(&sb) + 62, "7y");
	memset(want, 'z', 299);
	want[299] = '\0';
	strbuf_reset(&sb);
	strbuf_puts(&sb, "<");
	strbuf_printf(&sb, "%s>", want);
	CU_ASSERT_EQUAL(sb.len, 301);
	CU_ASSERT_EQUAL(strbuf_str(&sb)[0], '<');
	CU_ASSERT(memcmp(strbuf_str(&sb) + 1, want, 299) == 0);
	CU_ASSERT_STRING_EQUAL(strbuf_str(&sb) + 300, ">");
	strbuf_fini(&sb);
}

static void
test_detach(void)
{
	struct strbuf sb = STRBUF_INIT;
	char *s;

	s = strbuf_detach(&sb);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s, "");
	free(s);
	strbuf_printf(&sb, "%u routines", 3u);
	s = strbuf_detach(&sb);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s, "3 routines");
	CU_ASSERT_PTR_NULL(sb.data);
	CU_ASSERT_EQUAL(sb.len, 0);
	free(s);
}

static CU_TestInfo strbuf_tests[] = {
	{ "append", test_append },
	{ "printf", test_printf },
	{ "detach", test_detach },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_base_strbuf = { "base_strbuf", NULL, NULL, NULL, NULL, strbuf_tests };
