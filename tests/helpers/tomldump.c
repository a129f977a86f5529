/* tomldump FILE: parse FILE with core/config/toml and print its tree as JSON (exit 0), or the
 * error as "FILE:LINE:COL: what" on stderr (exit 1). For the differential test 90-toml.t. */
#include <stdio.h>
#include <stdlib.h>

#include "../unit/tomljson.h"
#include "core/config/toml.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: tomldump FILE\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	struct toml_value t;
	struct err e = {0};
	if (toml_parse(buf, n, argv[1], &t, &e) < 0) {
		fprintf(stderr, "%s: %s\n", e.path, e.what);
		return 1;
	}
	tomljson(stdout, &t);
	putchar('\n');
	toml_free(&t);
	return 0;
}
