/* local: what both local backends (the bwrap jail, the Landlock backend) do around a jail
 * (backend.h, doc/design.md §2a): agentjail hardened, the session id made, the jail prepared
 * with its errors and notes said, or the command run without one (danger-full-access). */
#include <stdio.h>
#include <stdlib.h>

#include "core/backend/backend.h"
#include "core/backend/report.h"
#include "core/jail/self.h"
#include "util/strbuf.h"
#include "util/uuid.h"

static int run_unjailed(struct run_request *req, const struct backend_io *io)
{
	io->warn(io->arg, "danger-full-access: running WITHOUT a sandbox (the command sees and can "
			  "change everything you can)");
	if (req->dry_run) {
		struct strbuf b = STRBUF_INIT;
		sb_add(&b, "# no jail: danger-full-access runs the command directly\n");
		for (size_t i = 0; i < req->cmd.n; i++)
			sb_addf(&b, "%s%s", i ? " " : "", req->cmd.v[i]);
		sb_add(&b, "\n");
		io->text(io->arg, sb_str(&b));
		sb_free(&b);
		return 0;
	}
	struct err e = {0};
	io->started(io->arg, NULL, NULL);
	int sig = 0, term = 0;
	int st = launch_unjailed(strv_data(&req->cmd), &sig, &term, &e);
	if (e.what[0])
		io->error(io->arg, &e);
	io->ended(io->arg, st, sig, term);
	req->interrupted = term != 0;
	io->end(io->arg, st, sig, term != 0, 0);
	return st;
}

/* backend_prepare, with what the backend starts beside the plan (jail_prep's ahead) */
static int prepare(struct run_request *req, struct jail *j, const struct backend_io *io,
		   void (*ahead)(struct jail *j, const struct policy *pol))
{
	struct err e = {0};
	struct jail_prep o = {.make_caches = !req->dry_run, .sec = io->sec, .ahead = ahead};
	enum jail_stage st = jail_prepare(req, &o, j, &e);
	if (st == JAIL_READY) {
		for (size_t i = 0; i < j->home_moved.n; i++)
			report_warn(io,
				    "persisted home: %s, out of the way of this jail's mount point (an "
				    "earlier jail left it there; bwrap would have followed it)",
				    j->home_moved.v[i]);
		for (size_t i = 0; i < req->pol.hide.n; i++)
			if (hf_type(&j->hf, req->pol.hide.v[i]) == HF_MISSING)
				report_warn(io,
					    "--hide path does not exist: %s (nothing to hide there; "
					    "check the path)",
					    req->pol.hide.v[i]);
		return 0;
	}
	io->error(io->arg, &e);
	return st == JAIL_NO_FACTS || st == JAIL_NO_HOME ? EXIT_JAIL : EXIT_USAGE;
}

int backend_prepare(struct run_request *req, struct jail *j, const struct backend_io *io)
{
	return prepare(req, j, io, NULL);
}

int backend_local_run(const struct backend *b, struct run_request *req,
		      const struct backend_io *io)
{
	struct err e = {0};
	if (launch_harden_self(req->pol.fs != FS_DANGER_FULL, &e) < 0) {
		io->error(io->arg, &e);
		return EXIT_JAIL;
	}
	if (!req->session_id && !(req->session_id = uuid_v4_new(&e))) {
		io->error(io->arg, &e);
		return EXIT_JAIL;
	}
	int rc = io->secrets_prepare ? io->secrets_prepare(io->arg) : 0;
	if (rc)
		return rc;
	if (req->pol.fs == FS_DANGER_FULL)
		return run_unjailed(req, io);
	if (b->policy_check && b->policy_check(&req->pol, &e) < 0) {
		io->error(io->arg, &e);
		return EXIT_USAGE;
	}
	do { /* once more when the host changed a masked file under bwrap (BACKEND_AGAIN) */
		struct jail j;
		rc = prepare(req, &j, io, req->dry_run ? NULL : b->ahead);
		if (rc == 0)
			rc = req->dry_run ? b->dry_run(req, &j, io) : b->launch(req, &j, io);
		jail_free(&j);
	} while (rc == BACKEND_AGAIN);
	return rc;
}
