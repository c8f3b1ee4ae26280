/*
 * main.c - the `ggufkit` command: finds the subcommand in the dispatch table
 * and runs it. Global options (before the command): --help, --version.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "options.h"

static const cmd_entry commands[] = {
    { "info", cmd_info, "summary of a GGUF file: version, layout, architecture, sizes" },
    { "dump", cmd_dump, "list metadata and tensors (--json: gguf_dump.py's layout)" },
    { "verify", cmd_verify, "validate files fully and report every finding" },
    { "repack", cmd_repack, "rewrite a file through the writer (--alignment N)" },
    { "quantize", cmd_quantize, "quantize tensors to a block format (llama-quantize compatible)" },
    { "split", cmd_split, "split a model into llama-gguf-split shards (by tensors or size)" },
    { "merge", cmd_merge, "merge a shard set back into one file" },
    { "endian", cmd_endian, "convert a file to big- or little-endian (header, metadata, tensors)" },
    { "synth", cmd_synth, "write a deterministic synthetic llama-shaped model" },
    { "edit", cmd_edit, "edit metadata: set, delete, rename, patch (in place when it fits)" },
    { "hash", cmd_hash, "per-tensor and whole-model digests (llama-gguf-hash compatible), --check" },
    { "index", cmd_index, "catalogue GGUF files (folders, .zst, archives) in a SQLite database" },
    { "export", cmd_export, "write a GGUF back as a Hugging Face folder (safetensors, config, tokenizer)" },
    { "convert", cmd_convert, "convert a Hugging Face checkpoint to GGUF (convert_hf_to_gguf.py compatible)" },
    { "diff", cmd_diff, "compare models: metadata, tensor directory, per-tensor error of a quantization" },
};

static void print_usage(FILE *out) {
    fprintf(out, "usage: ggufkit <command> [options] ...\n\n"
                 "Read, check, rewrite and convert GGUF model files.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nA model to read may be a URL: http(s)://... or hf://OWNER/REPO/PATH[@REVISION] (HF_TOKEN\n"
                 "is sent to the hub). Every command also takes --header 'NAME: VALUE' (sent with each\n"
                 "request to the URL's host) and --stats (requests and bytes fetched, on standard error).\n"
                 "\n`ggufkit <command> --help` describes a command. `ggufkit --version` prints the version.\n"
                 "Exit status: 0 success, 1 invalid input or failure, 2 usage error.\n");
}

int main(int argc, char **argv) {
    cmd_heap_setup();
    signal(SIGXFSZ, SIG_IGN);   /* a file size limit becomes a write error (EFBIG), cleaned up */
    /* Standard output redirected to a file is an output: never read as an input.
     * (Standard error is left alone: a refusal would be written into the file.) */
    gk_inputs_forbid_fd(STDOUT_FILENO, "standard output");
    enum { OPT_VERSION = 1 };
    static const cmd_option options[] = {
        { OPT_VERSION, "--version", "-V", CMD_OPT_FLAG, NULL },
        { 0 },
    };
    static const cmd_optspec spec = { NULL, options, CMD_OPTS_STOP_AT_ARG, NULL };   /* its help: print_usage below */
    cmd_opts p;
    /* only argv[1] may be a global option: the words after it are the command's
     * (a command given, the walk is not started: GGUFKIT_LIST_OPTIONS lists its table) */
    cmd_opts_init(&p, &spec, argc < 2 ? argc : 2, argv);
    switch (argc >= 2 && argv[1][0] != '-' ? CMD_OPTS_ARG : cmd_opts_next(&p)) {
    case CMD_OPTS_EXIT: return p.rc;
    case CMD_OPTS_END:
        print_usage(stderr);
        return GK_EXIT_USAGE;
    case CMD_OPTS_HELP:
        print_usage(stdout);
        return GK_EXIT_OK;
    case OPT_VERSION:
        printf("ggufkit %s\n", gk_version());
        printf("kernels: %s\n", gk_kernels_name());
        return GK_EXIT_OK;
    default: break;
    }
    if (strcmp(argv[1], "help") == 0) {
        print_usage(stdout);
        return GK_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) {
            int rc = commands[i].run(argc - 1, argv + 1);
            if (cmd_remote_stats_wanted()) {
                uint64_t requests, bytes;
                gk_remote_stats(&requests, &bytes);
                fprintf(stderr, "ggufkit: remote: %llu requests, %llu bytes fetched\n", (unsigned long long)requests,
                        (unsigned long long)bytes);
            }
            return rc;
        }
    fprintf(stderr, "ggufkit: unknown command '%s'\n\n", argv[1]);
    print_usage(stderr);
    return GK_EXIT_USAGE;
}
