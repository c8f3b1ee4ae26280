#!/bin/bash
# lib_exports.sh - the shared library's interface: its soname is versioned
# (libggufkit.so.0), it exports only gk_ functions, and every function the
# public header marks GK_API is among them.
#
# usage: lib_exports.sh LIBGGUFKIT.so HEADER
set -u
lib=$1
header=$2
status=0
fail() { echo "FAIL: $*"; status=1; }

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libggufkit.so.0" ] || fail "soname is '$soname', not libggufkit.so.0"

exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort -u)
[ -n "$exported" ] || fail "exports nothing"
others=$(grep -v '^gk_' <<<"$exported")
[ -z "$others" ] || fail "exports symbols without the gk_ prefix:" $others

# GK_API declarations start a line: "GK_API TYPE NAME(".
declared=$(sed -n 's/^GK_API .*\b\(gk_[a-z0-9_]*\)(.*/\1/p' "$header" | sort -u)
[ -n "$declared" ] || fail "no GK_API declaration found in $header"
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
[ -z "$missing" ] || fail "declared GK_API but not exported:" $missing
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
[ -z "$extra" ] || fail "exported but not declared GK_API in the header:" $extra

n=$(wc -l <<<"$exported")
[ $status = 0 ] && echo "ok: $soname exports $n gk_ functions, all declared GK_API"
exit $status
