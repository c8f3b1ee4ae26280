#!/usr/bin/env bash
# test_options.sh - the one option parser of every subcommand (cmd/options.c):
# for every option in every subcommand's table, --opt=VALUE reads as --opt VALUE
# (and a short name as its long one), a flag refuses a value and a valued option
# its absence, a typo is answered with the nearest option, and the table agrees
# with the --help text both ways. A few real runs check that both spellings give
# the same bytes. Usage: test_options.sh PATH/TO/ggufkit
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"

CMDS="info dump verify repack convert export quantize synth split merge endian edit index hash diff"

# Options the help texts name that belong to another tool or subcommand (zstd
# --long=31, convert_hf_to_gguf.py --outtype, `ggufkit edit --in-place`, `split
# --clone`, `dump --json`): not in the command's own table.
declare -A FOREIGN=(
    [info]="--long" [dump]="--long" [verify]="--long" [repack]="--in-place"
    [convert]="--outtype" [merge]="--clone" [edit]="--json"
)

# Runs from an empty folder, so that a value taken for a path names nothing.
WORK=$TMP/work
mkdir -p "$WORK"
cd "$WORK" || exit 1

# The table of command $1 (GGUFKIT_LIST_OPTIONS): "NAME SHORT KIND PLACEHOLDER" lines.
table() { GGUFKIT_LIST_OPTIONS=1 "$BIN" "$@" | tr '\t' ' '; }

# Runs ggufkit with the given arguments; output in $TMP/o.N, $TMP/e.N, status in $TMP/r.N.
capture() {
    local n=$1
    shift
    "$BIN" "$@" >"$TMP/o.$n" 2>"$TMP/e.$n"
    echo $? >"$TMP/r.$n"
}
same_run() {   # NAME: runs 1 and 2 gave the same status, output and messages
    if cmp -s "$TMP/r.1" "$TMP/r.2" && cmp -s "$TMP/o.1" "$TMP/o.2" && cmp -s "$TMP/e.1" "$TMP/e.2"; then ok
    else
        bad "$1: the two spellings differ (exit $(cat "$TMP/r.1") / $(cat "$TMP/r.2"))"
        sed 's/^/    1: /' "$TMP/e.1" | head -2
        sed 's/^/    2: /' "$TMP/e.2" | head -2
    fi
}
not_refused() {   # NAME FILE: FILE holds no refusal of the option's spelling
    if grep -qE "unknown option|takes no value|needs a value" "$2"; then
        bad "$1: refused: $(head -1 "$2")"
    else ok; fi
}

# --- the command's own options ------------------------------------------------
expect_exit 2 "ggufkit --verison" "$BIN" --verison
expect_grep "did you mean --version" "$TMP/err" "unknown option '--verison' (did you mean --version?)"
expect_exit 2 "ggufkit --version=1" "$BIN" --version=1
expect_grep "--version takes no value" "$TMP/err" "option '--version' takes no value"
expect_exit 0 "ggufkit -V" "$BIN" -V
expect_grep "-V prints the version" "$TMP/out" "ggufkit "
expect_exit 0 "ggufkit --help" "$BIN" --help
expect_grep "--help names the commands" "$TMP/out" "commands:"
if [[ $(table) == "--version -V flag -" ]]; then ok; else bad "the command's table: '$(table)'"; fi

n_options=0
for cmd in $CMDS; do
    table "$cmd" >"$TMP/table" || bad "$cmd: GGUFKIT_LIST_OPTIONS failed"
    "$BIN" "$cmd" --help >"$TMP/help" 2>&1 || bad "$cmd --help failed"
    if [[ -s $TMP/table ]]; then ok; else bad "$cmd: empty option table"; fi

    # --- the table against the help, both ways ---------------------------------
    # every option word of the help (a dash at a word's start) ...
    grep -oE -- '(^|[^A-Za-z0-9_-])--?[a-zA-Z][a-zA-Z0-9-]*' "$TMP/help" | sed -E 's/^[^-]*//' |
        sort -u >"$TMP/help_words"
    awk '{ if ($1 != "-") print $1; if ($2 != "-") print $2 }' "$TMP/table" | sort -u >"$TMP/table_words"
    # ... is in the table, is -h/--help, or is another tool's
    while read -r w; do
        case " -h --help ${FOREIGN[$cmd]:-} " in *" $w "*) continue ;; esac
        if grep -qxF -- "$w" "$TMP/table_words"; then ok
        else bad "$cmd: the help names $w, which the table lacks"; fi
    done <"$TMP/help_words"
    # and every option of the table is in the help
    while read -r w; do
        if grep -qxF -- "$w" "$TMP/help_words"; then ok
        else bad "$cmd: the table's $w is not in --help"; fi
    done <"$TMP/table_words"

    # --- each option: its spellings ----------------------------------------------
    while read -r name short kind placeholder; do
        n_options=$((n_options + 1))
        long=$name
        [[ $long == - ]] && long=""
        case $kind in
        flag)
            if [[ -n $long ]]; then
                expect_exit 2 "$cmd $long=1" "$BIN" "$cmd" "$long=1"
                expect_grep "$cmd $long=1 is refused" "$TMP/err" "option '$long' takes no value (got '$long=1')"
            fi
            ;;
        value)
            if [[ -n $long ]]; then
                capture 1 "$cmd" "$long=1"
                capture 2 "$cmd" "$long" 1
                same_run "$cmd $long=1 / $long 1"
                not_refused "$cmd $long=1" "$TMP/e.1"
            fi
            if [[ $short != - ]]; then
                capture 1 "$cmd" "$short" 1
                if [[ -n $long ]]; then
                    capture 2 "$cmd" "$long" 1
                    same_run "$cmd $short 1 / $long 1"
                fi
                not_refused "$cmd $short 1" "$TMP/e.1"
            fi
            # without its value (the last word): refused, naming what it needs
            expect_exit 2 "$cmd ${long:-$short} (no value)" "$BIN" "$cmd" "${long:-$short}"
            expect_grep "$cmd ${long:-$short} needs a value" "$TMP/err" \
                "option '${long:-$short}' needs a value: ${long:-$short} $placeholder"
            ;;
        optional)
            capture 1 "$cmd" "$long=$placeholder"
            not_refused "$cmd $long=$placeholder" "$TMP/e.1"
            capture 1 "$cmd" "$long"
            not_refused "$cmd $long" "$TMP/e.1"
            ;;
        *) bad "$cmd: $name has kind '$kind'" ;;
        esac

        # --- a typo: the last letter doubled, answered with the option ---------------
        if [[ -n $long && ${#long} -ge 5 ]]; then
            typo=$long${long: -1}
            expect_exit 2 "$cmd $typo" "$BIN" "$cmd" "$typo"
            expect_grep "$cmd $typo: did you mean $long" "$TMP/err" \
                "unknown option '$typo' (did you mean $long?)"
            # also with a value attached: the name is what is compared
            expect_exit 2 "$cmd $typo=1" "$BIN" "$cmd" "$typo=1"
            expect_grep "$cmd $typo=1: did you mean $long" "$TMP/err" "(did you mean $long?)"
        fi
    done <"$TMP/table"

    # --- nothing close: no suggestion ---------------------------------------------
    expect_exit 2 "$cmd --zzzzzzzzzz" "$BIN" "$cmd" --zzzzzzzzzz
    expect_grep "$cmd --zzzzzzzzzz is unknown" "$TMP/err" "ggufkit $cmd: unknown option '--zzzzzzzzzz'"
    if grep -q "did you mean" "$TMP/err"; then bad "$cmd: a suggestion for --zzzzzzzzzz"; else ok; fi
    # --help=x is no help
    expect_exit 2 "$cmd --help=1" "$BIN" "$cmd" --help=1
done
if (( n_options >= 90 )); then ok "$n_options options in the tables"
else bad "only $n_options options in the tables"; fi

# --- the spellings give the same results ------------------------------------------
m=$TMP/m.gguf
expect_exit 0 "synth --seed 3 --layers 1" "$BIN" synth --seed 3 --layers 1 "$m"
expect_exit 0 "synth --seed=3 --layers=1" "$BIN" synth --seed=3 --layers=1 "$TMP/m2.gguf"
expect_same_file "synth: = and space" "$m" "$TMP/m2.gguf"
expect_exit 0 "synth --seed=4" "$BIN" synth --seed=4 --layers=1 "$TMP/m4.gguf"
if cmp -s "$m" "$TMP/m4.gguf"; then bad "synth --seed=4 ignored its value"; else ok; fi

expect_exit 0 "endian --to=big" "$BIN" endian --to=big "$m" "$TMP/be1.gguf"
expect_exit 0 "endian --to big" "$BIN" endian --to big "$m" "$TMP/be2.gguf"
expect_same_file "endian: = and space" "$TMP/be1.gguf" "$TMP/be2.gguf"
if cmp -s "$m" "$TMP/be1.gguf"; then bad "endian --to=big wrote the little-endian file"; else ok; fi

mkdir -p "$TMP/s1" "$TMP/s2"
expect_exit 0 "split --split-max-tensors=4" "$BIN" split --split-max-tensors=4 "$m" "$TMP/s1/p"
expect_exit 0 "split --split-max-tensors 4" "$BIN" split "$m" "$TMP/s2/p" --split-max-tensors 4
for f in "$TMP"/s1/*; do expect_same_file "split shard ${f##*/}" "$f" "$TMP/s2/${f##*/}"; done
[[ $(ls "$TMP/s1" | wc -l) -gt 1 ]] && ok || bad "split --split-max-tensors=4 wrote one shard"

expect_exit 0 "quantize --threads=2" "$BIN" quantize --threads=2 "$m" "$TMP/q1.gguf" Q8_0
expect_exit 0 "quantize -t 2" "$BIN" quantize -t 2 "$m" "$TMP/q2.gguf" Q8_0
expect_same_file "quantize: --threads=2 and -t 2" "$TMP/q1.gguf" "$TMP/q2.gguf"
expect_exit 0 "quantize --tensor-type=... --dry-run" "$BIN" quantize --dry-run --tensor-type=attn_v=q8_0 "$m" "$TMP/q3.gguf" Q4_0
cp "$TMP/out" "$TMP/plan1"
expect_exit 0 "quantize --tensor-type ... --dry-run" "$BIN" quantize --dry-run --tensor-type attn_v=q8_0 "$m" "$TMP/q3.gguf" Q4_0
expect_same_file "quantize plan: = and space" "$TMP/plan1" "$TMP/out"

expect_exit 0 "edit --set=..." "$BIN" edit --set=general.name=opts -o "$TMP/e1.gguf" "$m"
expect_exit 0 "edit --set ..." "$BIN" edit "$m" -o "$TMP/e2.gguf" --set general.name=opts
expect_same_file "edit: = and space" "$TMP/e1.gguf" "$TMP/e2.gguf"
expect_exit 0 "dump names the value" "$BIN" dump "$TMP/e1.gguf"
expect_grep "edit --set=: the value" "$TMP/out" '"opts"'

expect_exit 0 "hash --check=MANIFEST" sh -c '"$1" hash "$2" >"$3" && "$1" hash --check="$3" "$2"' _ "$BIN" "$m" "$TMP/man"
expect_grep "hash --check=: verified" "$TMP/out" "Success"

expect_exit 0 "index --db=... -j 1" "$BIN" index --db="$TMP/i.sqlite" -j 1 --json "$m"
expect_grep "index --db=: the database named" "$TMP/out" "$TMP/i.sqlite"

# --- each command's own rules stay -------------------------------------------------
# verify and hash: options before the files (a later word is a file)
expect_exit 1 "verify FILE --json: --json is a file" "$BIN" verify "$m" --json
expect_exit 1 "hash FILE --json: --json is a file" "$BIN" hash "$m" --json
# `--` ends the options where it did
expect_exit 0 "info -- FILE" "$BIN" info -- "$m"
expect_exit 2 "split -- is no option" "$BIN" split -- --split-max-tensors 4 "$m" "$TMP/s3"
# quantize: a negative number is THREADS, not an option
expect_exit 0 "quantize IN OUT TYPE -1" "$BIN" quantize "$m" "$TMP/q4.gguf" Q8_0 -1
# synth: - is no output, also after the options
expect_exit 2 "synth -" "$BIN" synth -
expect_grep "synth - says why" "$TMP/err" "no output to stdout"
# edit: --in-place=VALUE takes auto only
expect_exit 2 "edit --in-place=sometimes" "$BIN" edit --in-place=sometimes "$m"
expect_grep "edit --in-place=sometimes says why" "$TMP/err" "--in-place=auto"

finish "$n_options options"
