/* Shared by the benchmarks: a monotonic clock in ms, the median of samples, a listener on
 * the host's loopback and a connection to it. */
#pragma once
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static inline double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Sorts v. */
static inline double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A TCP listener on 127.0.0.1, on a port the kernel picks (*port), or -1. */
static inline int bench_listen_lo(uint16_t *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof sa;
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 4096) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

/* A TCP connection to 127.0.0.1:port with TCP_NODELAY, or -1. */
static inline int bench_dial_lo(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	int one = 1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}
