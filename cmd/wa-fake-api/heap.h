/*
 * heap.h: a binary min-heap of items ordered by a due time, first in
 * first out among equal times. Callers embed struct wa_heap_item at the
 * start of their own structure.
 */
#ifndef WA_FAKE_HEAP_H
#define WA_FAKE_HEAP_H

#include <stddef.h>
#include <stdint.h>

struct wa_heap_item {
	int64_t		due;	/* the key: smallest comes out first */
	uint64_t	seq;	/* set by wa_heap_push, breaks ties */
};

struct wa_heap {
	struct wa_heap_item **v;
	size_t		 n;
	size_t		 cap;
	uint64_t	 seq;
};

void wa_heap_push(struct wa_heap *h, struct wa_heap_item *it);
struct wa_heap_item *wa_heap_top(const struct wa_heap *h);
struct wa_heap_item *wa_heap_pop(struct wa_heap *h);
void wa_heap_free(struct wa_heap *h);

#endif
