/*
 * zygote.h - the fork server's entry point (server.c), shared by the servers
 * built around it: the ggufkit command's (serve_ggufkit.c) and a leaking test
 * program's (leaky.c).
 */
#ifndef GGUFKIT_ZYGOTE_H
#define GGUFKIT_ZYGOTE_H

/* Serves requests on the Unix socket argv[1] for the binary argv[2] (its
 * clients name the binary they want; another is refused), running cmd_main
 * in a child per request. Returns only on a usage or socket error (non-zero). */
int zygote_serve(int argc, char **argv, int (*cmd_main)(int, char **));

#endif
