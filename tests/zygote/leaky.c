/*
 * leaky.c - zygote_leaky: the fork server around a test program, for the
 * zygote's own tests. Its command "leak" loses an allocation (the leak check
 * at the child's exit must report it), "exit N" exits N, "hold" reports its pid
 * on stdout and sleeps (for the kill tests). Usage: zygote_leaky SOCKET ANYPATH
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zygote.h"

static int leaky_main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "leak") == 0) {
        volatile char *lost = malloc(1000);
        lost[0] = 1;
        lost = NULL;
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "exit") == 0) return atoi(argv[2]);
    if (argc >= 2 && strcmp(argv[1], "hold") == 0) {
        printf("%d\n", (int)getpid());
        fflush(stdout);
        for (;;) pause();
    }
    fprintf(stderr, "usage: leak | exit N | hold\n");
    return 2;
}

int main(int argc, char **argv) {
    return zygote_serve(argc, argv, leaky_main);
}
