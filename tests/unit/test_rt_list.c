/*
 * test_rt_list.c - the intrusive list (runtime/core/list.h) that the runtime's and the
 * transports' lists share: order at both ends, removal anywhere, the object from its link.
 */
#include <stddef.h>

#include <CUnit/CUnit.h>

#include "core/list.h"

struct item {
	int value;
	struct idl__link link;
};

/* The values from first to last, and from last to first, as digits: 123 for 1, 2, 3. */
static int
walk(struct idl__list *l, int backwards)
{
	int digits = 0;

	if (!backwards) {
		for (struct item *i = IDL__LIST_FIRST(l, struct item, link); i != NULL;
		     i = IDL__LIST_NEXT(i, struct item, link))
			digits = digits * 10 + i->value;
	} else {
		for (struct item *i = IDL__LIST_LAST(l, struct item, link); i != NULL;
		     i = IDL__LIST_PREV(i, struct item, link))
			digits = digits * 10 + i->value;
	}
	return digits;
}

static void
test_ends(void)
{
	struct idl__list l = { 0 };
	struct item a = { 1, { 0 } }, b = { 2, { 0 } }, c = { 3, { 0 } };

	CU_ASSERT(idl__list_empty(&l));
	CU_ASSERT_PTR_NULL(IDL__LIST_FIRST(&l, struct item, link));
	idl__list_push_back(&l, &b.link);
	CU_ASSERT(idl__list_only(&l, &b.link));
	idl__list_push_front(&l, &a.link);
	idl__list_push_back(&l, &c.link);
	CU_ASSERT(!idl__list_only(&l, &b.link));
	CU_ASSERT_EQUAL(walk(&l, 0), 123);
	CU_ASSERT_EQUAL(walk(&l, 1), 321);
	CU_ASSERT_PTR_EQUAL(IDL__LIST_ENTRY(l.first, struct item, link), &a);
	CU_ASSERT_PTR_EQUAL(IDL__LIST_LAST(&l, struct item, link), &c);
}

static void
test_remove(void)
{
	struct idl__list l = { 0 }, other = { 0 };
	struct item it[4] = { { 1, { 0 } }, { 2, { 0 } }, { 3, { 0 } }, { 4, { 0 } } };

	for (int i = 0; i < 4; i++)
		idl__list_push_back(&l, &it[i].link);
	idl__list_remove(&l, &it[1].link); /* the middle */
	CU_ASSERT_EQUAL(walk(&l, 0), 134);
	CU_ASSERT_PTR_NULL(it[1].link.next);
	CU_ASSERT_PTR_NULL(it[1].link.prev);
	idl__list_remove(&l, &it[3].link); /* the last */
	CU_ASSERT_EQUAL(walk(&l, 1), 31);
	idl__list_remove(&l, &it[0].link); /* the first */
	CU_ASSERT(idl__list_only(&l, &it[2].link));
	/* A link taken off one list goes on another. */
	idl__list_push_front(&other, &it[0].link);
	idl__list_push_front(&other, &it[1].link);
	CU_ASSERT_EQUAL(walk(&other, 0), 21);
	CU_ASSERT_PTR_EQUAL(idl__list_pop_front(&other), &it[1].link);
	CU_ASSERT_PTR_EQUAL(idl__list_pop_front(&other), &it[0].link);
	CU_ASSERT_PTR_NULL(idl__list_pop_front(&other));
	CU_ASSERT(idl__list_empty(&other));
	CU_ASSERT_PTR_NULL(other.last);
	idl__list_remove(&l, &it[2].link);
	CU_ASSERT(idl__list_empty(&l));
	CU_ASSERT_PTR_NULL(l.last);
}

static CU_TestInfo list_tests[] = {
	{ "ends", test_ends },
	{ "remove", test_remove },
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo idl_suite_rt_list = { "rt_list", NULL, NULL, NULL, NULL, list_tests };
