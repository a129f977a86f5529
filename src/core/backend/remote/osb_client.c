/* osb_client: an OpenSandbox service over HTTP (osb_client.h). */
#include "core/backend/remote/osb_client.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define CONNECT_TIMEOUT_S 10L
#define CALL_TIMEOUT_S 120L
#define STREAM_SILENCE_S 30L /* execd pings every ~3 s: this long without a byte is a dead link */
#define BODY_MAX (4u << 20)

struct osb_client {
	const struct osb_settings *s;
	char *key_header;   /* "OPEN-SANDBOX-API-KEY: …", or NULL */
	char *execd;        /* "http://HOST:PORT/PREFIX" of execd, once known */
	struct curl_slist *execd_headers;
	volatile sig_atomic_t *stop;
	long silence_s;     /* a stream or download silent this long is dead */
};

static volatile sig_atomic_t never;

int osb_client_new(const struct osb_settings *s, const char *api_key, struct osb_client **out,
		   struct err *e)
{
	static bool inited;
	if (!inited) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return err_set(e, 0, "", "cannot initialize libcurl");
		inited = true;
	}
	struct osb_client *c = xcalloc(1, sizeof *c);
	c->s = s;
	c->stop = &never;
	c->silence_s = STREAM_SILENCE_S;
	if (api_key && *api_key) {
		if (strpbrk(api_key, "\r\n")) {
			free(c);
			return err_set(e, 0, s->api_key_env, "the API key in this variable has a "
							     "line break");
		}
		c->key_header = xasprintf("OPEN-SANDBOX-API-KEY: %s", api_key);
	}
	*out = c;
	return 0;
}

void osb_client_free(struct osb_client *c)
{
	if (!c)
		return;
	if (c->key_header) {
		explicit_bzero(c->key_header, strlen(c->key_header));
		free(c->key_header);
	}
	free(c->execd);
	curl_slist_free_all(c->execd_headers);
	free(c);
}

void osb_client_stop_flag(struct osb_client *c, volatile sig_atomic_t *stop)
{
	c->stop = stop ? stop : &never;
}

void osb_client_silence(struct osb_client *c, long seconds)
{
	c->silence_s = seconds > 0 ? seconds : STREAM_SILENCE_S;
}

/* ---- one request ---- */

struct req {
	struct osb_client *c;
	struct strbuf body; /* the response (not for streams) */
	bool too_big;
	int fd;             /* download: the body goes here */
	uint64_t max, got;
	struct osb_stream *stream;
	osb_event_fn fn;
	void *arg;
	struct err *fn_err;
	int fn_rc;
	bool stoppable;
};

static size_t on_body(char *p, size_t sz, size_t n, void *arg)
{
	struct req *r = arg;
	size_t len = sz * n;
	if (r->stream) {
		int rc = osb_stream_feed(r->stream, p, len, r->fn, r->arg, r->fn_err);
		if (rc < 0) {
			r->fn_rc = rc;
			return 0;
		}
		return len;
	}
	if (r->fd >= 0) {
		if (r->got + len > r->max) {
			r->too_big = true;
			return 0;
		}
		for (size_t off = 0; off < len;) {
			ssize_t w = write(r->fd, p + off, len - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return 0;
			off += (size_t)w;
		}
		r->got += len;
		return len;
	}
	if (r->body.len + len > BODY_MAX) {
		r->too_big = true;
		return 0;
	}
	sb_addn(&r->body, p, len);
	return len;
}

static int on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c2, curl_off_t d)
{
	(void)a, (void)b, (void)c2, (void)d;
	struct req *r = arg;
	return r->stoppable && *r->c->stop ? 1 : 0;
}

/* A URL without its query, for messages. */
static char *url_shown(const char *url)
{
	const char *q = strchr(url, '?');
	return q ? xstrndup(url, (size_t)(q - url)) : xstrdup(url);
}

/* The service's {code, message} of an error answer, or the start of the body. */
static void http_error(struct err *e, long code, const char *method, const char *url,
		       struct strbuf *body)
{
	_cleanup_free_ char *shown = url_shown(url);
	json_t *o = json_loadb(sb_str(body), body->len, 0, NULL);
	const char *ec = json_string_value(json_object_get(o, "code"));
	const char *msg = json_string_value(json_object_get(o, "message"));
	if (ec || msg)
		err_set(e, 0, shown, "%s: the service answered %ld %s%s%s", method, code,
			ec ? ec : "", ec && msg ? ": " : "", msg ? msg : "");
	else
		err_set(e, 0, shown, "%s: the service answered %ld: %.120s", method, code,
			sb_str(body));
	if (code == 401 || code == 403)
		err_hint(e, "check the API key in the variable [opensandbox] api_key_env names");
	json_decref(o);
}

enum target { LIFECYCLE, EXECD };

/* One call. *code gets the HTTP status (0 if none came). -1 with e only when no answer came;
 * an HTTP error status is for the caller to judge. */
static int perform(struct req *r, enum target t, const char *method, const char *url,
		   const char *json_body, curl_mime *mime, long *code, bool stream, struct err *e)
{
	CURL *h = curl_easy_init();
	if (!h)
		return err_set(e, ENOMEM, "", "cannot start an HTTP request (libcurl)");
	struct curl_slist *hd = NULL;
	if (t == LIFECYCLE && r->c->key_header)
		hd = curl_slist_append(hd, r->c->key_header);
	if (t == EXECD)
		for (struct curl_slist *s = r->c->execd_headers; s; s = s->next)
			hd = curl_slist_append(hd, s->data);
	if (json_body)
		hd = curl_slist_append(hd, "Content-Type: application/json");
	hd = curl_slist_append(hd, "Expect:");
	char errbuf[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L); /* the key is never sent elsewhere */
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, r);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "agentjail");
	if (stream) {
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, r->c->silence_s);
	} else if (r->fd < 0) {
		curl_easy_setopt(h, CURLOPT_TIMEOUT, CALL_TIMEOUT_S);
	} else {
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, r->c->silence_s);
	}
	if (json_body)
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, json_body);
	if (mime)
		curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
	CURLcode rc = curl_easy_perform(h);
	*code = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, code);
	curl_easy_cleanup(h);
	curl_slist_free_all(hd);
	if (rc == CURLE_OK)
		return 0;
	_cleanup_free_ char *shown = url_shown(url);
	if (rc == CURLE_ABORTED_BY_CALLBACK && *r->c->stop)
		return err_set(e, EINTR, shown, "%s: interrupted", method);
	if (rc == CURLE_WRITE_ERROR && r->fn_rc < 0)
		return -1; /* the stream parser's error is in e already */
	if (rc == CURLE_WRITE_ERROR && r->too_big)
		return err_set(e, EFBIG, shown, "%s: the answer is larger than allowed", method);
	if (rc == CURLE_OPERATION_TIMEDOUT && stream)
		return err_set(e, ETIMEDOUT, shown,
			       "%s: the service sent nothing (not even a ping) for %ld s", method,
			       r->c->silence_s),
		       err_hint(e, "the service or the network to it is stalled"), -1;
	err_set(e, 0, shown, "%s: %s", method, errbuf[0] ? errbuf : curl_easy_strerror(rc));
	if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST)
		err_hint(e, "is the OpenSandbox server running at [opensandbox] url?");
	return -1;
}

/* A JSON call: the parsed answer in *out when 2xx (NULL if empty). -1 with e otherwise. */
static int call_json(struct osb_client *c, enum target t, const char *method, const char *url,
		     const char *body, bool stoppable, long *code, json_t **out, struct err *e)
{
	struct req r = {.c = c, .fd = -1, .stoppable = stoppable};
	int rc = perform(&r, t, method, url, body, NULL, code, false, e);
	if (rc == 0 && (*code < 200 || *code > 299)) {
		http_error(e, *code, method, url, &r.body);
		rc = -1;
	}
	if (rc == 0 && out) {
		*out = r.body.len ? json_loadb(sb_str(&r.body), r.body.len, 0, NULL) : NULL;
		if (r.body.len && !*out) {
			_cleanup_free_ char *shown = url_shown(url);
			rc = err_set(e, 0, shown, "%s: the service's answer is not JSON", method);
		}
	}
	sb_free(&r.body);
	return rc;
}

/* ---- lifecycle ---- */

int osb_create(struct osb_client *c, const char *body, char **id, struct err *e)
{
	_cleanup_free_ char *url = osb_api_url(c->s, "/sandboxes");
	long code;
	json_t *o = NULL;
	if (call_json(c, LIFECYCLE, "POST", url, body, true, &code, &o, e) < 0)
		return -1;
	const char *s = json_string_value(json_object_get(o, "id"));
	if (!s || !osb_id_ok(s)) {
		json_decref(o);
		err_set(e, 0, url, "POST: the service's answer has no usable sandbox id (letters, "
				   "digits, . _ -, at most 128)");
		err_hint(e, "a sandbox may have been made all the same: look for it on the service");
		return -1;
	}
	*id = xstrdup(s);
	json_decref(o);
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* GET …/endpoints/44772: execd's base URL and its headers map. */
static int endpoint(struct osb_client *c, const char *id, struct err *e)
{
	_cleanup_free_ char *path = xasprintf("/sandboxes/%s/endpoints/44772", id);
	_cleanup_free_ char *url = osb_api_url(c->s, path);
	long code;
	json_t *o = NULL;
	if (call_json(c, LIFECYCLE, "GET", url, NULL, true, &code, &o, e) < 0)
		return -1;
	const char *ep = json_string_value(json_object_get(o, "endpoint"));
	if (!ep || !*ep || strpbrk(ep, " \r\n?#@")) {
		json_decref(o);
		return err_set(e, 0, url, "GET: the service's answer has no usable endpoint");
	}
	free(c->execd);
	/* no scheme: the lifecycle URL's, as the SDKs do */
	bool tls = !strncmp(c->s->url, "https://", 8);
	size_t l = strlen(ep);
	while (l && ep[l - 1] == '/')
		l--;
	c->execd = xasprintf("%s://%.*s", tls ? "https" : "http", (int)l, ep);
	curl_slist_free_all(c->execd_headers);
	c->execd_headers = NULL;
	json_t *hs = json_object_get(o, "headers");
	const char *k;
	json_t *v;
	json_object_foreach(hs, k, v) {
		const char *vs = json_string_value(v);
		if (!vs || strpbrk(k, ":\r\n ") || strpbrk(vs, "\r\n"))
			continue;
		_cleanup_free_ char *line = xasprintf("%s: %s", k, vs);
		c->execd_headers = curl_slist_append(c->execd_headers, line);
	}
	json_decref(o);
	return 0;
}

int osb_wait_ready(struct osb_client *c, const char *id, long timeout_ms, osb_progress_fn progress,
		   void *arg, struct err *e)
{
	_cleanup_free_ char *path = xasprintf("/sandboxes/%s", id);
	_cleanup_free_ char *url = osb_api_url(c->s, path);
	long t0 = now_ms(), nap = 100;
	_cleanup_free_ char *state = NULL;
	for (;;) {
		long code;
		json_t *o = NULL;
		if (call_json(c, LIFECYCLE, "GET", url, NULL, true, &code, &o, e) < 0)
			return -1;
		json_t *st = json_object_get(o, "status");
		free(state);
		state = xstrdup(json_string_value(json_object_get(st, "state")) ?: "?");
		const char *msg = json_string_value(json_object_get(st, "message"));
		_cleanup_free_ char *why = msg ? xstrdup(msg) : NULL;
		json_decref(o);
		if (progress)
			progress(arg, state, now_ms() - t0);
		if (!strcmp(state, "Running"))
			break;
		if (!strcmp(state, "Failed") || !strcmp(state, "Terminated") ||
		    !strcmp(state, "Stopping"))
			return err_set(e, 0, id, "the sandbox is %s%s%s", state, why ? ": " : "",
				       why ? why : "");
		if (*c->stop)
			return err_set(e, EINTR, id, "waiting for the sandbox: interrupted");
		if (now_ms() - t0 > timeout_ms)
			return err_set(e, ETIMEDOUT, id,
				       "the sandbox was still %s after %ld s", state, timeout_ms / 1000),
			       err_hint(e, "the service may be pulling the image or short of "
					   "capacity; try again, or check it with `agentjail doctor`"),
			       -1;
		nap_ms(nap);
		nap = nap < 1000 ? nap * 2 : 1000;
	}
	if (endpoint(c, id, e) < 0)
		return -1;
	/* execd may need a moment after Running */
	_cleanup_free_ char *ping = xasprintf("%s/ping", c->execd);
	for (;;) {
		long code;
		struct err pe = {0};
		if (call_json(c, EXECD, "GET", ping, NULL, true, &code, NULL, &pe) == 0)
			return 0;
		if (*c->stop)
			return err_set(e, EINTR, id, "waiting for the sandbox: interrupted");
		if (now_ms() - t0 > timeout_ms) {
			*e = pe;
			err_wrap(e, "the sandbox's execd did not answer within %ld s",
				 timeout_ms / 1000);
			return -1;
		}
		nap_ms(200);
	}
}

/* METHOD /v1/sandboxes/ID, not stopped by the stop flag: 1 for a 2xx answer, 0 for 404 (no such
 * sandbox), -1 with e otherwise. */
static int on_sandbox(struct osb_client *c, const char *method, const char *id, struct err *e)
{
	_cleanup_free_ char *path = xasprintf("/sandboxes/%s", id);
	_cleanup_free_ char *url = osb_api_url(c->s, path);
	struct req r = {.c = c, .fd = -1};
	long code;
	int rc = perform(&r, LIFECYCLE, method, url, NULL, NULL, &code, false, e);
	if (rc == 0)
		rc = code == 404 ? 0 : code >= 200 && code <= 299 ? 1 : -1;
	if (rc < 0 && code)
		http_error(e, code, method, url, &r.body);
	sb_free(&r.body);
	return rc;
}

int osb_delete(struct osb_client *c, const char *id, struct err *e)
{
	return on_sandbox(c, "DELETE", id, e) < 0 ? -1 : 0; /* a 404 counts as deleted */
}

int osb_exists(struct osb_client *c, const char *id, struct err *e)
{
	return on_sandbox(c, "GET", id, e);
}

int osb_check_service(struct osb_client *c, struct err *e)
{
	int rc = osb_exists(c, "agentjail-doctor-probe", e);
	if (rc < 0)
		return -1;
	return 0;
}

/* ---- execd ---- */

static int need_execd(struct osb_client *c, struct err *e)
{
	return c->execd ? 0 : err_set(e, 0, "", "no sandbox endpoint yet (internal error)");
}

int osb_upload(struct osb_client *c, const char *sandbox_path, const char *local, unsigned mode,
	       struct err *e)
{
	if (need_execd(c, e) < 0)
		return -1;
	_cleanup_free_ char *url = xasprintf("%s/files/upload", c->execd);
	CURL *h = curl_easy_init(); /* only as the mime factory */
	if (!h)
		return err_set(e, ENOMEM, "", "cannot start an HTTP request (libcurl)");
	curl_mime *m = curl_mime_init(h);
	json_t *meta = json_pack("{s:s, s:I}", "path", sandbox_path,
				 /* execd reads the decimal digits as octal: 0644 is sent as 644 */
				 "mode", (json_int_t)((mode >> 6 & 7) * 100 + (mode >> 3 & 7) * 10 +
						      (mode & 7)));
	_cleanup_free_ char *mj = json_dumps(meta, JSON_COMPACT);
	json_decref(meta);
	curl_mimepart *p = curl_mime_addpart(m);
	curl_mime_name(p, "metadata");
	curl_mime_filename(p, "metadata"); /* execd requires filename= on this part */
	curl_mime_type(p, "application/json");
	curl_mime_data(p, mj, CURL_ZERO_TERMINATED);
	p = curl_mime_addpart(m);
	curl_mime_name(p, "file");
	curl_mime_type(p, "application/octet-stream");
	int rc = 0;
	if (curl_mime_filedata(p, local) != CURLE_OK)
		rc = err_set(e, errno, local, "cannot read the file to upload");
	curl_mime_filename(p, path_basename(sandbox_path));
	struct req r = {.c = c, .fd = -1, .stoppable = true};
	long code = 0;
	if (rc == 0)
		rc = perform(&r, EXECD, "POST", url, NULL, m, &code, false, e);
	if (rc == 0 && (code < 200 || code > 299)) {
		http_error(e, code, "upload", url, &r.body);
		rc = -1;
	}
	sb_free(&r.body);
	curl_mime_free(m);
	curl_easy_cleanup(h);
	return rc;
}

int osb_download(struct osb_client *c, const char *sandbox_path, int fd, uint64_t max,
		 struct err *e)
{
	if (need_execd(c, e) < 0)
		return -1;
	CURL *h = curl_easy_init();
	if (!h)
		return err_set(e, ENOMEM, "", "cannot start an HTTP request (libcurl)");
	char *q = curl_easy_escape(h, sandbox_path, 0);
	curl_easy_cleanup(h);
	_cleanup_free_ char *url = xasprintf("%s/files/download?path=%s", c->execd, q);
	curl_free(q);
	struct req r = {.c = c, .fd = fd, .max = max, .stoppable = true};
	long code;
	/* an error answer is small JSON: read it into the body, not the file */
	int rc = perform(&r, EXECD, "GET", url, NULL, NULL, &code, false, e);
	if (rc == 0 && code == 404)
		return err_set(e, ENOENT, sandbox_path, "not in the sandbox (404)");
	if (rc == 0 && (code < 200 || code > 299))
		return err_set(e, 0, sandbox_path, "download: the service answered %ld", code);
	return rc;
}

struct cmd_ctx {
	osb_event_fn fn;
	void *arg;
	char **cmd_id;
	struct osb_event end;
	bool ended;
	int status;
	char **why;
};

static int on_cmd_event(void *arg, const struct osb_event *ev)
{
	struct cmd_ctx *x = arg;
	/* an id that could not go into a URL as it is is not kept: no interrupt by it then, the
	 * sandbox's delete still ends the command */
	if (ev->type == OSB_EV_INIT && ev->text && !*x->cmd_id && osb_id_ok(ev->text))
		*x->cmd_id = xstrdup(ev->text);
	if ((ev->type == OSB_EV_COMPLETE || ev->type == OSB_EV_ERROR) && !x->ended) {
		x->ended = true;
		x->status = osb_exit_status(ev, x->why);
	}
	return x->fn ? x->fn(x->arg, ev) : 0;
}

int osb_command(struct osb_client *c, const char *command, const char *cwd, osb_event_fn fn,
		void *arg, char **cmd_id, int *status, char **why, struct err *e)
{
	if (need_execd(c, e) < 0)
		return -1;
	_cleanup_free_ char *url = xasprintf("%s/command", c->execd);
	json_t *o = json_pack("{s:s, s:s}", "command", command, "cwd", cwd);
	_cleanup_free_ char *body = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	struct osb_stream st;
	osb_stream_init(&st);
	*why = NULL;
	struct cmd_ctx x = {.fn = fn, .arg = arg, .cmd_id = cmd_id, .why = why};
	struct req r = {.c = c, .fd = -1, .stream = &st, .fn = on_cmd_event, .arg = &x,
			.fn_err = e, .stoppable = true};
	long code;
	int rc = perform(&r, EXECD, "POST", url, body, NULL, &code, true, e);
	if (rc == 0 && (code < 200 || code > 299)) {
		osb_stream_free(&st);
		/* the body went to the parser: no {code, message} to show */
		return err_set(e, 0, url, "command: the service answered %ld", code);
	}
	if (rc == 0)
		rc = osb_stream_finish(&st, on_cmd_event, &x, e);
	osb_stream_free(&st);
	if (x.ended) {
		*status = x.status;
		return 0; /* the connection may drop after the end event */
	}
	if (rc == 0 || (e->errnum != EINTR && e->errnum != ETIMEDOUT)) {
		char was[sizeof e->what];
		snprintf(was, sizeof was, "%s", rc == 0 ? "" : e->what);
		err_set(e, ECONNRESET, url, "the service closed the command stream before the "
					    "command ended%s%s%s",
			was[0] ? " (" : "", was, was[0] ? ")" : "");
		err_hint(e, "the command may still run there; its sandbox is deleted");
	}
	return -1;
}

int osb_interrupt(struct osb_client *c, const char *cmd_id, struct err *e)
{
	if (need_execd(c, e) < 0)
		return -1;
	_cleanup_free_ char *url = xasprintf("%s/command?id=%s", c->execd, cmd_id);
	long code;
	return call_json(c, EXECD, "DELETE", url, NULL, false, &code, NULL, e);
}
