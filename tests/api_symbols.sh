#!/bin/bash
# api_symbols.sh - the command is a user of the library like any other, and
# every export has a user:
#   - the ggufkit binary imports only symbols libggufkit.so exports, and its
#     object files reference no other gk_ symbol (lib/shared, compiled into
#     the command, takes cmd_ names there: lib/shared/names.h);
#   - the binary defines no gk_ function: it holds no copy of library code;
#   - every exported function is called by the command, by the consumer
#     program built from the installed header (tests/api/consumer.c), or is on
#     the header's justified list "Beyond the command";
#   - the tiers are counted: stable and experimental (GGUFKIT_EXPERIMENTAL).
#
# usage: api_symbols.sh LIBGGUFKIT.so GGUFKIT_EXE HEADER CONSUMER.c
set -u
lib=$1
exe=$2
header=$3
consumer=$4
status=0
fail() { echo "FAIL: $*"; status=1; }

exported=$(nm -D --defined-only "$lib" | awk '$3 ~ /^gk_/ {print $3}' | sort -u)
imported=$(nm -D --undefined-only "$exe" | awk '$2 ~ /^gk_/ {print $2}' | sort -u)
[ -n "$imported" ] || fail "$exe imports no gk_ function: does it link libggufkit.so?"
ldd "$exe" | grep -q 'libggufkit\.so\.0 ' || fail "$exe does not link libggufkit.so.0"

internal=$(comm -23 <(echo "$imported") <(echo "$exported"))
[ -z "$internal" ] || fail "the command imports symbols the library does not export:" $internal

# The command's object files (meson's folder beside the binary).
objdir=$(dirname "$exe")/$(basename "$exe").p
if [ -d "$objdir" ]; then
    refs=$(nm -u "$objdir"/*.o | awk '$2 ~ /^gk_/ {print $2}' | sort -u)
    bad=$(comm -23 <(echo "$refs") <(echo "$exported"))
    [ -z "$bad" ] || fail "the command's object files reference internal symbols:" $bad
else
    fail "no object folder $objdir"
fi

# Library code inside the binary: none under a gk_ name.
copied=$(nm --defined-only "$exe" | awk '$2 ~ /^[TtWw]$/ && $3 ~ /^gk_/ {print $3}' | sort -u)
[ -z "$copied" ] || fail "the command defines gk_ functions of its own:" $copied

# Every export has a user.
used_by_consumer=$(grep -o '\bgk_[a-z0-9_]*(' "$consumer" | tr -d '(' | sort -u)
listed=$(sed -n 's/^ \*   \(gk_[a-z0-9_]*\) - .*/\1/p' "$header" | sort -u)
[ -n "$listed" ] || fail "no list \"Beyond the command\" in $header"
unused=$(comm -23 <(echo "$exported") <(sort -u <(echo "$imported") <(echo "$used_by_consumer") <(echo "$listed")))
[ -z "$unused" ] || fail "exported, but neither the command nor the consumer calls them, and the header does not say why:" $unused
stale=$(comm -23 <(echo "$listed") <(echo "$exported"))
[ -z "$stale" ] || fail "listed in \"Beyond the command\" but not exported:" $stale
needless=$(comm -12 <(echo "$listed") <(sort -u <(echo "$imported") <(echo "$used_by_consumer")))
[ -z "$needless" ] || fail "listed in \"Beyond the command\" but called by the command or the consumer:" $needless

# The tiers: GK_API declarations inside and outside #ifdef GGUFKIT_EXPERIMENTAL.
tiers=$(awk '/^#ifdef GGUFKIT_EXPERIMENTAL/ {x = 1} /^#endif \/\* GGUFKIT_EXPERIMENTAL/ {x = 0}
             /^GK_API / {if (x) e++; else s++} END {print s + 0, e + 0}' "$header")
read -r n_stable n_experimental <<<"$tiers"
n=$(wc -l <<<"$exported")
[ $((n_stable + n_experimental)) = "$n" ] || fail "$n exports, but $n_stable stable + $n_experimental experimental declarations"

[ $status = 0 ] && echo "ok: $n exports ($n_stable stable, $n_experimental experimental);" \
    "the command imports $(wc -l <<<"$imported"), the consumer calls $(wc -l <<<"$used_by_consumer")," \
    "$(wc -l <<<"$listed") are listed beyond the command"
exit $status
