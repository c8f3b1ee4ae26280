#!/bin/bash
# api_install.sh - the installed library is enough for a program: installs the
# build into a scratch folder (meson install --destdir), compiles
# tests/api/consumer.c with nothing but `pkg-config --cflags --libs ggufkit`
# from there, runs it on a test model, and checks what it prints. Also runs the
# installed ggufkit command, which links the installed libggufkit.so.
#
# usage: api_install.sh BUILD_DIR SOURCE_DIR VERSION [B_SANITIZE]
set -u
build=$1
src=$2
version=$3
# a sanitized library needs its runtime in the program too (meson's b_sanitize)
sanitize=${4:-none}
san_flags=()
[ "$sanitize" != none ] && [ -n "$sanitize" ] && san_flags=(-fsanitize="$sanitize")
status=0
fail() { echo "FAIL: $*"; status=1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
if ! meson install -C "$build" --no-rebuild --destdir "$root" >"$tmp/install.log" 2>&1; then
    cat "$tmp/install.log"
    echo "FAIL: meson install"
    exit 1
fi

pc=$(find "$root" -name ggufkit.pc | head -n 1)
lib=$(find "$root" -name 'libggufkit.so.0' | head -n 1)
exe=$(find "$root" -path '*/bin/ggufkit' | head -n 1)
[ -n "$pc" ] || fail "no ggufkit.pc installed"
[ -n "$lib" ] || fail "no libggufkit.so.0 installed"
[ -n "$exe" ] || fail "no ggufkit installed"
[ $status = 0 ] || exit 1

# The installed headers are the public ones only.
incdir=$(dirname "$(find "$root" -name ggufkit.h | head -n 1)")
headers=$(cd "$incdir" && ls -- *.h | tr '\n' ' ')
[ "$headers" = "ggufkit.h ggufkit_version.h " ] || fail "installed headers: $headers"

# PKG_CONFIG_SYSROOT_DIR moves the .pc file's -I and -L into the scratch root.
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$root
[ "$(pkg-config --modversion ggufkit)" = "$version" ] || fail "pkg-config version $(pkg-config --modversion ggufkit), not $version"
flags=$(pkg-config --cflags --libs ggufkit) || fail "pkg-config --cflags --libs ggufkit"
${CC:-cc} -std=c11 -Wall -Wextra -Werror "${san_flags[@]}" -o "$tmp/consumer" "$src/tests/api/consumer.c" $flags 2>"$tmp/cc.log" ||
    { cat "$tmp/cc.log"; fail "the consumer does not compile from the installed header and .pc ($flags)"; }
[ $status = 0 ] || exit 1

export LD_LIBRARY_PATH=$(dirname "$lib")
# The program resolves libggufkit.so.0 to the installed copy.
loaded=$(ldd "$tmp/consumer" | sed -n 's/.*libggufkit\.so\.0 => \([^ ]*\).*/\1/p')
[ "$loaded" -ef "$lib" ] || fail "consumer loads libggufkit from '$loaded', not $lib"

out=$("$tmp/consumer" "$src/testdata/good/quantized.gguf" "$tmp/out.gguf" 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || fail "consumer exited $rc"
expect() { grep -qxF -- "$1" <<<"$out" || fail "missing line: $1"; }
expect "version: $version"
expect "header version: $version"
expect "model: v3, 2 pairs, 2 tensors, retired 4: yes"
expect 'kv general.architecture: STRING (str, 0 bytes) "test"'
expect "tensor z.weight: F16 0.885742188 -8.20159912e-05 -30.65625 0.00290679932"
expect "memory copy: same"
expect "bad opts size: refused"
expect "rewritten: name=consumer renamed=-7 as float=-7 tensors=2"

# The installed command runs on the installed library.
loaded=$(ldd "$exe" | sed -n 's/.*libggufkit\.so\.0 => \([^ ]*\).*/\1/p')
[ "$loaded" -ef "$lib" ] || fail "installed ggufkit loads libggufkit from '$loaded', not $lib"
[ "$("$exe" --version | head -n 1)" = "ggufkit $version" ] || fail "installed ggufkit --version: $("$exe" --version)"
"$exe" info "$tmp/out.gguf" | grep -q '^name: *consumer$' || fail "installed ggufkit info does not show the edit"

[ $status = 0 ] && echo "ok: a program built from the installed header and ggufkit.pc works"
exit $status
