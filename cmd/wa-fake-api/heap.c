/*
 * heap.c: the min-heap of heap.h, for timers: answers held back by the
 * fake API, webhook statuses and retries waiting for their time.
 */
#include <stdlib.h>

#include "core/err.h"
#include "heap.h"

static int
before(const struct wa_heap_item *a, const struct wa_heap_item *b)
{
	return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

void
wa_heap_push(struct wa_heap *h, struct wa_heap_item *it)
{
	size_t i, up;

	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 64;
		h->v = wa_realloc(h->v, h->cap * sizeof *h->v);
	}
	it->seq = h->seq++;
	for (i = h->n++; i > 0; i = up) {
		up = (i - 1) / 2;
		if (!before(it, h->v[up]))
			break;
		h->v[i] = h->v[up];
	}
	h->v[i] = it;
}

struct wa_heap_item *
wa_heap_top(const struct wa_heap *h)
{
	return h->n > 0 ? h->v[0] : NULL;
}

struct wa_heap_item *
wa_heap_pop(struct wa_heap *h)
{
	struct wa_heap_item *top, *last;
	size_t i, c;

	if (h->n == 0)
		return NULL;
	top = h->v[0];
	last = h->v[--h->n];
	for (i = 0; (c = 2 * i + 1) < h->n; i = c) {
		if (c + 1 < h->n && before(h->v[c + 1], h->v[c]))
			c++;
		if (!before(h->v[c], last))
			break;
		h->v[i] = h->v[c];
	}
	if (h->n > 0)
		h->v[i] = last;
	return top;
}

void
wa_heap_free(struct wa_heap *h)
{
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}
