/*
 * slots.c - a budget of threads shared by everything one caller runs at
 * once (mle_slots, internal.h): the wheel pool's workers (pool.c) hold a
 * slot each while they work, and the extraction of a large wheel (unzip.c)
 * borrows free slots for helper threads, so the threads running never
 * exceed the budget. Below both: it uses nothing of the env stage's.
 */
#include <pthread.h>

#include "internal.h"

int mle_slots_init(mle_slots *s, int free)
{
	s->free = free > 0 ? free : 0;
	return pthread_mutex_init(&s->mu, NULL) == 0 ? 0 : ML_EFAIL;
}

void mle_slots_release(mle_slots *s)
{
	pthread_mutex_destroy(&s->mu);
}

int mle_slots_take(mle_slots *s, int want)
{
	pthread_mutex_lock(&s->mu);
	int got = want < s->free ? want : s->free;
	if (got < 0)
		got = 0;
	s->free -= got;
	pthread_mutex_unlock(&s->mu);
	return got;
}

void mle_slots_give(mle_slots *s, int n)
{
	pthread_mutex_lock(&s->mu);
	s->free += n;
	pthread_mutex_unlock(&s->mu);
}
