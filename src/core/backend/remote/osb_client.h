/* osb_client: an OpenSandbox service over HTTP (libcurl, JSON with jansson) — doc/design.md §4b.
 *
 * The lifecycle server (create, status, endpoint, delete) with the API key in the
 * OPEN-SANDBOX-API-KEY header, and the sandbox's execd (ping, command stream, interrupt, upload,
 * download) at the endpoint the server hands out, with the headers map it hands out. The key is
 * held in memory only: it is never put in an error, a URL or a log. */
#pragma once
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/backend/remote/osb_plan.h"
#include "core/backend/remote/osb_stream.h"
#include "util/err.h"

struct osb_client;

/* api_key may be NULL (a service without a key). */
int osb_client_new(const struct osb_settings *s, const char *api_key, struct osb_client **out,
		   struct err *e) WUR;
void osb_client_free(struct osb_client *c);

/* Set while a call runs: a signal handler sets *stop to make the call return at once (-1,
 * errnum EINTR). */
void osb_client_stop_flag(struct osb_client *c, volatile sig_atomic_t *stop);

/* How long a command stream or a download may stay silent before it counts as dead (default
 * 30 s; execd pings every ~3 s). */
void osb_client_silence(struct osb_client *c, long seconds);

/* POST /v1/sandboxes: the new sandbox's id (malloc'd). */
int osb_create(struct osb_client *c, const char *body, char **id, struct err *e) WUR;
/* Poll until Running (then look up execd's endpoint and ping it), at most timeout_ms. progress
 * (may be NULL) is called with the state at each poll. A Failed or Terminated sandbox, or the
 * time running out, is an error. */
typedef void (*osb_progress_fn)(void *arg, const char *state, long elapsed_ms);
int osb_wait_ready(struct osb_client *c, const char *id, long timeout_ms, osb_progress_fn progress,
		   void *arg, struct err *e) WUR;
/* DELETE /v1/sandboxes/ID (a 404 counts as deleted). Not stopped by the stop flag. */
int osb_delete(struct osb_client *c, const char *id, struct err *e) WUR;
/* GET /v1/sandboxes/ID: 1 if it exists, 0 if 404. */
int osb_exists(struct osb_client *c, const char *id, struct err *e) WUR;
/* The service answers and accepts the key: GET /v1/sandboxes/<an id that does not exist> must
 * be a JSON 404 (401 is a refused key). */
int osb_check_service(struct osb_client *c, struct err *e) WUR;

/* POST {execd}/files/upload: one local file to an absolute sandbox path, with mode. */
int osb_upload(struct osb_client *c, const char *sandbox_path, const char *local, unsigned mode,
	       struct err *e) WUR;
/* GET {execd}/files/download into fd, at most max bytes. -1 with errnum ENOENT on 404. */
int osb_download(struct osb_client *c, const char *sandbox_path, int fd, uint64_t max,
		 struct err *e) WUR;

/* POST {execd}/command in cwd; fn sees every event as it arrives. *cmd_id (malloc'd, may stay
 * NULL) is the command's id from the init event, for osb_interrupt. 0 once an end event came
 * (its exit status in *status, *why from osb_exit_status); -1 with e if the stream broke or
 * stopped (the stop flag: errnum EINTR). */
int osb_command(struct osb_client *c, const char *command, const char *cwd, osb_event_fn fn,
		void *arg, char **cmd_id, int *status, char **why, struct err *e) WUR;
/* DELETE {execd}/command?id=ID. Not stopped by the stop flag. */
int osb_interrupt(struct osb_client *c, const char *cmd_id, struct err *e) WUR;
