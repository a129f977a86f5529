/* jsonmerge: which changes an agent made to its private copy of a config file flow back to the
 * host file (doc/design.md §3b: "given to the jail as a private copy from which only safe keys are
 * merged back"). Pure: three JSON texts in, one out; no file I/O.
 *
 * The rule is an allowlist: a key the agent changed in the jail comes back only when it is named
 * here with its JSON type; everything else the jail changed (MCP servers, trust, permissions,
 * hooks, anything unknown) stays behind and is listed as dropped. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"
#include "util/strv.h"

/* The largest file merged: anything bigger is refused whole (claude's file is kilobytes). */
#define JM_MAX_BYTES (16u * 1024 * 1024)

enum jm_type { JM_ANY_SCALAR, JM_BOOL, JM_NUMBER, JM_STRING, JM_OBJECT, JM_ARRAY };

struct jm_key {
	const char *name;
	enum jm_type type;
};

struct jm_rules {
	const struct jm_key *top;      /* allowed top-level keys, ended by {NULL} */
	const char *map;               /* a top-level object of objects ("projects"), or NULL */
	const struct jm_key *map_keys; /* allowed keys inside each entry of it, ended by {NULL} */
	bool whole_map;                /* the document itself is that object of objects (top and
					* map unused) */
	bool refuse_bang;              /* a string starting with '!' is refused (a command) */
};

/* The allowlists, established from the real CLIs (doc/agents.md): claude's ~/.claude.json and
 * pi's auth.json. */
extern const struct jm_rules jm_claude_json;
extern const struct jm_rules jm_pi_auth;

/* Merge into `host` (the host file as it is now) what the jail changed between `base` (the copy
 * as given to the jail) and `jail` (the copy after the run), for allowed keys only. A key is
 * changed when its value differs from base (or it appeared, or it was removed: then it is
 * removed on the host too). Returns 1 with *out (a JSON text, caller frees) when something was
 * merged, 0 when no allowed key changed (*out NULL), -1 with e filled (naming `what_path`) when
 * an input is too big, not JSON, or not an object: then nothing is merged. `dropped` (may be
 * NULL) gets the keys the jail changed that did not come back ("mcpServers",
 * "projects[/w].allowedTools"). */
int jsonmerge(const struct jm_rules *r, const char *base, size_t nbase, const char *jail,
	      size_t njail, const char *host, size_t nhost, const char *what_path, char **out,
	      struct strv *dropped, struct err *e) WUR;
