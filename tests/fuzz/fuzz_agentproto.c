/* Fuzz target: the ssh-agent protocol as the filtered agent of --ssh-agent reads it, and
 * known_hosts lines (core/net/agentproto, core/net/knownhosts; doc/design.md §4d). The jail
 * writes every byte of the first; the second is the user's file, read as untrusted too.
 * Invariants: no read past the input (copied to a buffer of exactly its size); a frame is whole
 * and within its bound; every string read lies inside the message; a session-bind read has all
 * its fields and nothing after them; a login read is a publickey request with a signature; a
 * known_hosts entry has a key and either patterns or a hash of 20 bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/net/agentproto.h"
#include "core/net/knownhosts.h"
#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inside(struct agent_str s, const uint8_t *p, size_t n)
{
	FUZZ_CHECK(!s.n || (s.p >= p && s.p + s.n <= p + n));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *d = fuzz_dup(data, size);
	struct agent_str body, all = {d, size};
	size_t total;
	int fr = agent_frame(d, size, &body, &total);
	if (fr == 1) {
		FUZZ_CHECK(total <= size && total == body.n + 4 && body.n <= AGENT_FRAME_MAX);
		inside(body, d, size);
	}
	struct agent_str name;
	struct agent_bind b;
	if (agent_parse_extension(all, &name, &b) == 0) {
		inside(name, d, size);
		if (b.ok) {
			FUZZ_CHECK(b.hostkey.n && b.session_id.n && b.signature.n &&
				   b.session_id.n <= 64);
			inside(b.hostkey, d, size);
			inside(b.signature, d, size);
			FUZZ_CHECK(b.signature.p + b.signature.n + 1 == d + size);
		}
	}
	struct agent_sign s;
	if (agent_parse_sign(all, &s) == 0) {
		inside(s.key, d, size);
		inside(s.data, d, size);
		FUZZ_CHECK(s.key.n);
	}
	struct agent_userauth ua;
	if (agent_parse_userauth(all, &ua) == 0) {
		FUZZ_CHECK(ua.session_id.n && (agent_str_eq(ua.method, "publickey") || ua.hostbound));
		inside(ua.key, d, size);
		inside(ua.hostkey, d, size);
	}
	struct agent_str type, rest, alg, bytes;
	if (agent_key_type(all, &type, &rest) == 0)
		FUZZ_CHECK(type.n && type.n <= 128 && rest.p + rest.n == d + size);
	if (agent_parse_signature(all, &alg, &bytes) == 0)
		FUZZ_CHECK(alg.n && bytes.n && bytes.p + bytes.n == d + size);
	char *line = fuzz_cstr(data, size);
	struct kh_entry e;
	int r = kh_parse_line(line, &e);
	FUZZ_CHECK(r >= -1 && r <= 1);
	if (r == 1) {
		FUZZ_CHECK(e.key && e.key_len && e.type[0]);
		FUZZ_CHECK(e.hashed ? e.salt_len > 0 && !e.patterns.n : e.patterns.n > 0);
		(void)kh_entry_names(&e, "github.com", 22);
		kh_entry_free(&e);
	}
	free(line);
	free(d);
	return 0;
}
