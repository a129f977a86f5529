/* llrule: one rule of the Landlock backend's ruleset (doc/design.md §4c), as a value: a path and
 * the right granted beneath it. The ruleset is built from the plan (core/backend/landlock/
 * llplan.h) and applied by core/confine/landlock.h (landlock_apply_list); this type is all the
 * two share, so neither needs the other. Pure. */
#pragma once

enum llp_right {
	LLP_LIST,   /* list a directory (READ_DIR): on the way to an exception */
	LLP_READ,   /* read and execute beneath */
	LLP_WRITE,  /* read, execute and every write right beneath */
	LLP_DEVICE, /* a device (or /dev/pts): read and write it, create nothing */
};

struct llp_rule {
	char *path;
	enum llp_right right;
};
