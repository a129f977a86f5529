/* osb_sync: the workspace to a sandbox and its changes back (doc/design.md §4b).
 *
 * Up: the files git would keep (`git ls-files -co --exclude-standard`, so .gitignore is
 * honoured; every file but .git/ when the workspace is not a repository), at most sync_max bytes,
 * as one tar archive made by tar(1) and uploaded in one request, unpacked by tar in the sandbox.
 * A manifest keeps each regular file's size, mtime and SHA-256 as uploaded.
 *
 * Back: the sandbox lists its files with their SHA-256; only those new or changed there come
 * back. The listing is the sandbox's to forge: it is read by osb_listing_parse (every name
 * checked whole, core/backend/remote/osb_names.h). Never written back: protected paths
 * (osb_protected, or in a directory with a HEAD here or there), symlinks, refused names, a file
 * also changed here during the run (a conflict, reported). Everything is downloaded into a staging
 * directory first and checked; only then are the files moved into place, each through directories
 * opened without following a symlink, so a failure applies nothing and nothing lands outside the
 * workspace. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/backend/remote/osb_client.h"
#include "util/err.h"
#include "util/strv.h"

struct osb_file {
	char *rel;
	uint64_t size;
	int64_t mtime_ns;
	mode_t mode;
	uint8_t sha[32];
	bool symlink;
};

struct osb_manifest {
	struct osb_file *v;
	size_t n;
	uint64_t bytes;
};

void osb_manifest_free(struct osb_manifest *m);

/* List the workspace and write the archive to archive (a path of ours). -1 with e when the
 * workspace is larger than max (what, size, and the hint: .gitignore or sync_max). */
int osb_pack(const char *ws, uint64_t max, const char *archive, struct osb_manifest *m,
	     struct err *e) WUR;

/* Upload the archive to the sandbox and unpack it in workdir. */
int osb_push(struct osb_client *c, const char *archive, const char *workdir, struct err *e) WUR;

/* What came back and what did not, for the report. */
struct osb_pull_report {
	struct strv written;    /* rel paths written into the workspace */
	struct strv protected_; /* rel paths changed in the sandbox, protected (or pointed at by a
				 * refused name): not written, under any spelling */
	struct strv conflicts;  /* rel paths changed both here and there: not written */
	struct strv skipped;    /* "REL: why" (symlinks, refused names shown escaped, deletions) */
};
void osb_pull_report_free(struct osb_pull_report *r);

/* Bring the sandbox's changes back into ws (see above). */
int osb_pull(struct osb_client *c, const char *ws, const char *workdir,
	     const struct osb_manifest *m, uint64_t max, struct osb_pull_report *r,
	     struct err *e) WUR;
