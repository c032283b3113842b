/*
 * list.h - the one doubly-linked list of the runtime and the transports: a client
 * connection's waiting calls, a server's receiving threads (live, ended, kept for deferred
 * replies), a message endpoint's peers by recency, the udp: reply cache by age, the shm:
 * regions that out-of-line memory may belong to, the out-of-line block cache by age and by
 * size class.
 *
 * The list is intrusive: an object that can be on a list holds a `struct idl__link`, and
 * the list holds its first and last links. Everything is O(1) but the walks, nothing
 * allocates, and nothing locks: whoever owns the list serialises its use. A zeroed list is
 * empty and a zeroed link is on no list, so objects from calloc() need no set-up; a link
 * taken off a list is zeroed again. An object is on at most one list through one link at a
 * time (it may move from one list to another, as a server's sources do).
 *
 * From a link to its object: IDL__LIST_ENTRY(link, type, member), NULL for NULL, so that a
 * walk reads `for (o = IDL__LIST_FIRST(&l, struct t, link); o; o = IDL__LIST_NEXT(o, struct
 * t, link))`.
 */
#ifndef IDL_RUNTIME_LIST_H
#define IDL_RUNTIME_LIST_H

#include <stddef.h>

struct idl__link {
	struct idl__link *next; /* toward the last */
	struct idl__link *prev; /* toward the first */
};

struct idl__list {
	struct idl__link *first;
	struct idl__link *last;
};

static inline int
idl__list_empty(const struct idl__list *l)
{
	return l->first == NULL;
}

/* Whether n is the one link of l. */
static inline int
idl__list_only(const struct idl__list *l, const struct idl__link *n)
{
	return l->first == n && l->last == n;
}

static inline void
idl__list_push_front(struct idl__list *l, struct idl__link *n)
{
	n->prev = NULL;
	n->next = l->first;
	if (l->first != NULL)
		l->first->prev = n;
	else
		l->last = n;
	l->first = n;
}

static inline void
idl__list_push_back(struct idl__list *l, struct idl__link *n)
{
	n->next = NULL;
	n->prev = l->last;
	if (l->last != NULL)
		l->last->next = n;
	else
		l->first = n;
	l->last = n;
}

/* Takes n, which is on l, off it. */
static inline void
idl__list_remove(struct idl__list *l, struct idl__link *n)
{
	if (n->prev != NULL)
		n->prev->next = n->next;
	else
		l->first = n->next;
	if (n->next != NULL)
		n->next->prev = n->prev;
	else
		l->last = n->prev;
	n->next = n->prev = NULL;
}

/* Takes the first link off l and returns it; NULL when l is empty. */
static inline struct idl__link *
idl__list_pop_front(struct idl__list *l)
{
	struct idl__link *n = l->first;

	if (n != NULL)
		idl__list_remove(l, n);
	return n;
}

static inline void *
idl__list_object(struct idl__link *n, size_t offset)
{
	return n != NULL ? (void *)((char *)n - offset) : NULL;
}

/* The object of `type` whose `member` is link n; NULL when n is NULL. */
#define IDL__LIST_ENTRY(n, type, member) ((type *)idl__list_object((n), offsetof(type, member)))
#define IDL__LIST_FIRST(l, type, member) IDL__LIST_ENTRY((l)->first, type, member)
#define IDL__LIST_LAST(l, type, member) IDL__LIST_ENTRY((l)->last, type, member)
/* The object after (before) obj on its list, or NULL. */
#define IDL__LIST_NEXT(obj, type, member) IDL__LIST_ENTRY((obj)->member.next, type, member)
#define IDL__LIST_PREV(obj, type, member) IDL__LIST_ENTRY((obj)->member.prev, type, member)

#endif /* IDL_RUNTIME_LIST_H */
