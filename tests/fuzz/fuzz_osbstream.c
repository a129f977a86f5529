/* Fuzz target: the OpenSandbox command stream (core/backend/remote/osb_stream.h) is read from a
 * remote service. Whatever arrives, and however it is cut into reads, the parser must not crash,
 * leak or read out of bounds, and must see the same events as when the input comes in one piece. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend/remote/osb_stream.h"
#include "util/strbuf.h"

#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_ev(void *arg, const struct osb_event *ev)
{
	struct strbuf *b = arg;
	FUZZ_CHECK(ev->type_name);
	sb_addf(b, "%d:%s:%s:%s:%s;", ev->type, ev->type_name, ev->text ? ev->text : "-",
		ev->ename ? ev->ename : "-", ev->evalue ? ev->evalue : "-");
	if (ev->type == OSB_EV_COMPLETE || ev->type == OSB_EV_ERROR) {
		char *why = NULL;
		int st = osb_exit_status(ev, &why);
		FUZZ_CHECK(st >= 0 && st <= 255);
		FUZZ_CHECK(!why || st == 127 || st == 137);
		free(why);
	}
	return 0;
}

static char *run(const uint8_t *data, size_t size, size_t step)
{
	struct osb_stream st;
	osb_stream_init(&st);
	struct strbuf b = STRBUF_INIT;
	struct err e = {0};
	int rc = 0;
	for (size_t off = 0; off < size && rc == 0;) {
		size_t k = step && size - off > step ? step : size - off;
		char *piece = fuzz_dup(data + off, k);
		rc = osb_stream_feed(&st, piece, k, on_ev, &b, &e);
		free(piece);
		off += k;
	}
	if (rc == 0)
		rc = osb_stream_finish(&st, on_ev, &b, &e);
	sb_addf(&b, "rc=%d", rc);
	osb_stream_free(&st);
	return sb_steal(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *whole = run(data, size, 0);
	size_t step = size ? (size_t)data[0] % 7 + 1 : 1;
	char *cut = run(data, size, step);
	FUZZ_CHECK(!strcmp(whole, cut));
	free(whole);
	free(cut);
	return 0;
}
