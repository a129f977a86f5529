/* Fuzz target: the messages between agentjail and agentjail-tls (core/net/inspectmsg,
 * doc/design.md §4d). agentjail-tls parses what the jail sends, so a message from it is read
 * as hostile too. Invariants: any bytes decode or are refused without a read past their end
 * (the input is copied to a buffer of exactly its size); what decodes encodes again to a
 * message that decodes to the same values; a decoded event's texts hold no control byte. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/net/inspectmsg.h"
#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void no_controls(const char *s)
{
	for (; *s; s++)
		FUZZ_CHECK((unsigned char)*s >= 0x20 && *s != 0x7f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *d = fuzz_dup(data, size);
	struct net_event ev, ev2;
	struct imsg m = {0};
	if (im_event_decode(d, size, &ev) == 0) {
		no_controls(ev.host);
		no_controls(ev.rule);
		no_controls(ev.error);
		im_event_encode(&ev, &m);
		FUZZ_CHECK(im_event_decode(m.b.p, m.b.len, &ev2) == 0);
		FUZZ_CHECK(!memcmp(&ev, &ev2, sizeof ev));
	}
	struct im_tunnel t, t2;
	if (im_tunnel_decode(d, size, &t) == 0) {
		FUZZ_CHECK(t.host[0] && t.port && t.held_len <= size);
		im_tunnel_encode(&t, &m);
		FUZZ_CHECK(im_tunnel_decode(m.b.p, m.b.len, &t2) == 0);
		FUZZ_CHECK(t2.id == t.id && !strcmp(t2.host, t.host) && t2.port == t.port &&
			   t2.held_len == t.held_len && (!t.held_len || !memcmp(t2.held, t.held, t.held_len)));
	}
	struct im_config c, c2;
	struct err e = {0};
	if (im_config_decode(d, size, &c, &e) == 0) {
		FUZZ_CHECK(c.ca_dir);
		im_config_encode(&c, &m);
		FUZZ_CHECK(im_config_decode(m.b.p, m.b.len, &c2, &e) == 0);
		FUZZ_CHECK(c2.secrets.n == c.secrets.n && !strcmp(c2.ca_dir, c.ca_dir));
		for (size_t i = 0; i < c.secrets.n; i++)
			FUZZ_CHECK(c2.vlen[i] == c.vlen[i] && !memcmp(c2.values[i], c.values[i], c.vlen[i]));
		im_config_free(&c2);
		im_config_free(&c);
	}
	im_wipe(&m);
	free(d);
	return 0;
}
