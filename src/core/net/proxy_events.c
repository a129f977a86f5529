/* proxy_events.c: the proxy's event queue and its writer thread (doc/design.md §4). The loop
 * appends under a mutex held for a copy; the writer takes the whole batch and calls the sink
 * outside the lock, at least once a second while there are events, and once more at stop. A
 * full queue drops the event and counts it: the relay never waits for the sink. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/net/proxy_internal.h"
#include "util/xalloc.h"

#define PX_EVENTS_MAX 4096   /* queued and not yet delivered */
#define PX_EVENTS_WAKE 256   /* wake the writer early at this many */

static void *writer(void *arg)
{
	struct px_events *q = arg;
	struct net_event *batch = NULL;
	size_t bcap = 0;
	for (;;) {
		(void)pthread_mutex_lock(&q->mu);
		if (!q->stop && q->n < PX_EVENTS_WAKE) {
			struct timespec ts;
			(void)clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += 1;
			(void)pthread_cond_timedwait(&q->cv, &q->mu, &ts);
		}
		bool stop = q->stop;
		/* swap the buffers: the loop appends to the empty one while the sink runs */
		struct net_event *v = q->v;
		size_t n = q->n, cap = q->cap;
		q->v = batch;
		q->cap = bcap;
		q->n = 0;
		batch = v;
		bcap = cap;
		(void)pthread_mutex_unlock(&q->mu);
		if (n && q->sink)
			q->sink(q->arg, batch, n);
		if (stop)
			break;
	}
	free(batch);
	return NULL;
}

int px_events_start(struct px_events *q, net_event_sink sink, void *arg, struct err *e)
{
	memset(q, 0, sizeof *q);
	q->sink = sink;
	q->arg = arg;
	pthread_condattr_t ca;
	if (pthread_condattr_init(&ca) != 0 ||
	    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
	    pthread_cond_init(&q->cv, &ca) != 0)
		return err_set(e, EAGAIN, "", "proxy: cannot create the event queue's condition");
	(void)pthread_condattr_destroy(&ca);
	(void)pthread_mutex_init(&q->mu, NULL);
	int rc = pthread_create(&q->thr, NULL, writer, q);
	if (rc != 0) {
		(void)pthread_cond_destroy(&q->cv);
		(void)pthread_mutex_destroy(&q->mu);
		return err_set(e, rc, "", "proxy: cannot start the event writer thread");
	}
	q->started = true;
	return 0;
}

void px_events_push(struct px_events *q, const struct net_event *ev)
{
	(void)pthread_mutex_lock(&q->mu);
	if (q->n >= PX_EVENTS_MAX) {
		q->dropped++;
	} else {
		if (q->n == q->cap) {
			q->cap = q->cap ? q->cap * 2 : 64;
			q->v = xrealloc(q->v, q->cap * sizeof *q->v);
		}
		q->v[q->n++] = *ev;
		if (q->n == PX_EVENTS_WAKE)
			(void)pthread_cond_signal(&q->cv);
	}
	(void)pthread_mutex_unlock(&q->mu);
}

void px_events_stop(struct px_events *q)
{
	if (!q->started)
		return;
	(void)pthread_mutex_lock(&q->mu);
	q->stop = true;
	(void)pthread_cond_signal(&q->cv);
	(void)pthread_mutex_unlock(&q->mu);
	(void)pthread_join(q->thr, NULL);
	free(q->v);
	q->v = NULL;
	q->n = q->cap = 0;
	(void)pthread_cond_destroy(&q->cv);
	(void)pthread_mutex_destroy(&q->mu);
	q->started = false;
}
