/*
 * serve_ggufkit.c - ggufkit_zygote: the fork server running the ggufkit
 * command's code (cmd/main.c compiled with its main renamed ggufkit_cli_main).
 * Usage: ggufkit_zygote SOCKET PATH/TO/ggufkit
 */
#include "zygote.h"

int ggufkit_cli_main(int argc, char **argv);

int main(int argc, char **argv) {
    return zygote_serve(argc, argv, ggufkit_cli_main);
}
