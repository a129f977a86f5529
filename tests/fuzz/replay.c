/* Replay main for libFuzzer targets: runs every file under the target's corpus directory,
 * AJ_FUZZ_CORPUS or else tests/fuzz/corpus/NAME under AJ_SRC for the binary fuzz_NAME (one
 * directory per target), then a fixed number of deterministic pseudo-random inputs. Prints
 * TAP. Built without -fsanitize=fuzzer, so `make check` runs it. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t run_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[4096 + 256];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		static uint8_t buf[1 << 16];
		size_t len = fread(buf, 1, sizeof buf, f);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, len);
		n++;
	}
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	char dir[4096];
	const char *c = getenv("AJ_FUZZ_CORPUS");
	const char *src = getenv("AJ_SRC");
	const char *name = argc > 0 && argv[0] ? strrchr(argv[0], '/') : NULL;
	name = name ? name + 1 : argc > 0 && argv[0] ? argv[0] : "";
	if (!strncmp(name, "fuzz_", 5))
		name += 5;
	snprintf(dir, sizeof dir, "%s", c ? c : "");
	if (!c)
		snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/%s", src ? src : ".", name);
	printf("1..2\n");
	size_t n = run_dir(dir);
	/* a target without its corpus would replay nothing and still pass: not here */
	printf("%s 1 - replayed %zu corpus files from %s\n", n ? "ok" : "not ok", n, dir);
	/* deterministic random inputs biased towards the interesting bytes */
	static const char alphabet[] = "/.~[]\"\\=#;\n \t:abcXYZ_-";
	uint32_t seed = 12345;
	for (int i = 0; i < 20000; i++) {
		uint8_t buf[256];
		seed = seed * 1664525u + 1013904223u;
		size_t len = (seed >> 8) % sizeof buf;
		for (size_t k = 0; k < len; k++) {
			seed = seed * 1664525u + 1013904223u;
			buf[k] = (seed >> 24) % 4 ? (uint8_t)alphabet[(seed >> 8) % (sizeof alphabet - 1)]
						   : (uint8_t)(seed >> 16);
		}
		LLVMFuzzerTestOneInput(buf, len);
	}
	printf("ok 2 - 20000 generated inputs\n");
	return 0;
}
