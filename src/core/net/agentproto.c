/* agentproto: the ssh-agent protocol, strictly (agentproto.h). */
#include "core/net/agentproto.h"

#include <string.h>

const uint8_t agent_failure[5] = {0, 0, 0, 1, AGENT_FAILURE};
const uint8_t agent_success[5] = {0, 0, 0, 1, AGENT_SUCCESS};

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int agent_frame(const uint8_t *buf, size_t len, struct agent_str *body, size_t *total)
{
	if (len < 4)
		return 0;
	uint32_t n = be32(buf);
	if (n == 0 || n > AGENT_FRAME_MAX)
		return -1;
	if (len - 4 < n)
		return 0;
	body->p = buf + 4;
	body->n = n;
	*total = 4 + (size_t)n;
	return 1;
}

bool agent_get_u8(struct agent_str b, size_t *off, uint8_t *out)
{
	if (*off >= b.n)
		return false;
	*out = b.p[(*off)++];
	return true;
}

bool agent_get_u32(struct agent_str b, size_t *off, uint32_t *out)
{
	if (b.n - *off < 4 || *off > b.n)
		return false;
	*out = be32(b.p + *off);
	*off += 4;
	return true;
}

bool agent_get_str(struct agent_str b, size_t *off, struct agent_str *out)
{
	uint32_t n;
	if (!agent_get_u32(b, off, &n) || n > b.n - *off)
		return false;
	out->p = b.p + *off;
	out->n = n;
	*off += n;
	return true;
}

bool agent_str_eq(struct agent_str s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n == n && !memcmp(s.p, lit, n);
}

bool agent_str_same(struct agent_str a, struct agent_str b)
{
	return a.n == b.n && (!a.n || !memcmp(a.p, b.p, a.n));
}

int agent_parse_sign(struct agent_str body, struct agent_sign *out)
{
	memset(out, 0, sizeof *out);
	size_t off = 0;
	uint8_t type;
	if (!agent_get_u8(body, &off, &type) || type != AGENTC_SIGN_REQUEST ||
	    !agent_get_str(body, &off, &out->key) || !agent_get_str(body, &off, &out->data) ||
	    !agent_get_u32(body, &off, &out->flags) || off != body.n || !out->key.n)
		return -1;
	return 0;
}

int agent_parse_extension(struct agent_str body, struct agent_str *name, struct agent_bind *bind)
{
	memset(bind, 0, sizeof *bind);
	size_t off = 0;
	uint8_t type;
	if (!agent_get_u8(body, &off, &type) || type != AGENTC_EXTENSION ||
	    !agent_get_str(body, &off, name))
		return -1;
	if (!agent_str_eq(*name, "session-bind@openssh.com"))
		return 0; /* another extension: its contents are not read */
	uint8_t fwd;
	if (!agent_get_str(body, &off, &bind->hostkey) ||
	    !agent_get_str(body, &off, &bind->session_id) ||
	    !agent_get_str(body, &off, &bind->signature) || !agent_get_u8(body, &off, &fwd) ||
	    fwd > 1 || off != body.n || !bind->hostkey.n || !bind->session_id.n ||
	    bind->session_id.n > 64 || !bind->signature.n)
		return -1;
	bind->forwarding = fwd;
	bind->ok = true;
	return 0;
}

int agent_parse_userauth(struct agent_str data, struct agent_userauth *out)
{
	memset(out, 0, sizeof *out);
	size_t off = 0;
	uint8_t msg, with_sig;
	if (!agent_get_str(data, &off, &out->session_id) || !out->session_id.n ||
	    !agent_get_u8(data, &off, &msg) || msg != 50 /* SSH_MSG_USERAUTH_REQUEST */ ||
	    !agent_get_str(data, &off, &out->user) || !agent_get_str(data, &off, &out->service) ||
	    !agent_get_str(data, &off, &out->method))
		return -1;
	out->hostbound = agent_str_eq(out->method, "publickey-hostbound-v00@openssh.com");
	if (!out->hostbound && !agent_str_eq(out->method, "publickey"))
		return -1;
	if (!agent_get_u8(data, &off, &with_sig) || with_sig != 1 ||
	    !agent_get_str(data, &off, &out->alg) || !agent_get_str(data, &off, &out->key))
		return -1;
	if (out->hostbound && !agent_get_str(data, &off, &out->hostkey))
		return -1;
	return off == data.n ? 0 : -1;
}

int agent_key_type(struct agent_str key, struct agent_str *type, struct agent_str *rest)
{
	size_t off = 0;
	if (!agent_get_str(key, &off, type) || !type->n || type->n > 128)
		return -1;
	rest->p = key.p + off;
	rest->n = key.n - off;
	for (size_t i = 0; i < type->n; i++)
		if (type->p[i] <= 0x20 || type->p[i] >= 0x7f)
			return -1;
	return 0;
}

int agent_parse_signature(struct agent_str sig, struct agent_str *alg, struct agent_str *bytes)
{
	size_t off = 0;
	if (!agent_get_str(sig, &off, alg) || !alg->n || !agent_get_str(sig, &off, bytes) ||
	    !bytes->n || off != sig.n)
		return -1;
	return 0;
}

const char *agent_msg_name(int type)
{
	switch (type) {
	case AGENTC_ADD_IDENTITY:
	case AGENTC_ADD_ID_CONSTRAINED:
		return "adding a key";
	case AGENTC_REMOVE_IDENTITY:
		return "removing a key";
	case AGENTC_REMOVE_ALL_IDENTITIES:
		return "removing every key";
	case AGENTC_ADD_SMARTCARD_KEY:
	case AGENTC_ADD_SMARTCARD_KEY_CONSTRAINED:
	case AGENTC_REMOVE_SMARTCARD_KEY:
		return "a smartcard's keys";
	case AGENTC_LOCK:
		return "locking the agent";
	case AGENTC_UNLOCK:
		return "unlocking the agent";
	case AGENTC_EXTENSION:
		return "an extension";
	default:
		return "an unknown message";
	}
}
