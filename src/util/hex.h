/* hex: bytes as lowercase hex digits and back (digests in names, strings JSON cannot hold). */
#pragma once
#include <stddef.h>

/* The n bytes at data as 2n lowercase hex digits, NUL-terminated: out holds 2n + 1. */
void hex_encode(const void *data, size_t n, char *out);

/* What hex_encode wrote of a string, as a new string; NULL when hex is not an even number of
 * lowercase hex digits or holds a NUL byte (00: no C string has one). */
char *hex_decode_str(const char *hex);
