#!/usr/bin/env bash
# test_convert_qwen3moe.sh - CLI tests of `ggufkit convert` on Qwen3MoeForCausalLM.
#
# usage: test_convert_qwen3moe.sh PATH/TO/ggufkit
#
# No reference output exists for Qwen3-MoE: tests/convert/qwen3moe.py makes a
# small seeded checkpoint (BF16 and F16, tensors in a shuffled order, a
# tokenizer.json) and checks the conversion against the reference's rules:
# tensor names, shapes, types and bytes (experts merged into 3-D tensors bit
# for bit; or stacked already, gate_up_proj split into gate and up), the
# qwen3moe.* keys and their order. Q4_K_M equals `quantize` of the
# f32 conversion. Refusals, exit 1 and no output: a missing expert (named), a
# dense feed-forward tensor (QWEN3MOE has none), no tokenizer.json.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"

if [ ! -x "$BIN" ]; then echo "FAIL: $BIN is not an executable"; exit 1; fi
Q=$HERE/../convert/qwen3moe.py
M=$TMP/Qwen3-Tiny-MoE

python3 "$Q" make "$M" 7 BF16
for t in bf16 f32; do
    expect_exit 0 "BF16 checkpoint to $t" "$BIN" convert --vocab-pre qwen2 "$M" "$TMP/o-$t.gguf" "$t"
    expect_exit 0 "BF16 to $t: tensors and keys by the reference's rules" python3 "$Q" check "$BIN" "$TMP/o-$t.gguf" "$M" "$t"
done
expect_exit 0 "Q4_K_M" "$BIN" convert --vocab-pre qwen2 "$M" "$TMP/q.gguf" Q4_K_M
expect_exit 0 "quantize of the f32 conversion" "$BIN" quantize "$TMP/o-f32.gguf" "$TMP/q2.gguf" Q4_K_M
expect_same_file "Q4_K_M = quantize of the f32 conversion" "$TMP/q.gguf" "$TMP/q2.gguf"
expect_exit 0 "at 1 thread" "$BIN" convert --threads 1 --vocab-pre qwen2 "$M" "$TMP/o1.gguf" bf16
expect_same_file "the same bytes at 1 thread" "$TMP/o1.gguf" "$TMP/o-bf16.gguf"

F=$TMP/f16/Qwen3-Tiny-MoE
python3 "$Q" make "$F" 11 F16
expect_exit 0 "F16 checkpoint to f16" "$BIN" convert --vocab-pre qwen2 "$F" "$TMP/o-f16.gguf" f16
expect_exit 0 "F16 to f16: tensors and keys by the reference's rules" python3 "$Q" check "$BIN" "$TMP/o-f16.gguf" "$F" f16

X=$TMP/fused/Qwen3-Tiny-MoE
python3 "$Q" make "$X" 5 BF16 fused
for t in bf16 f32; do
    expect_exit 0 "stacked experts to $t" "$BIN" convert --vocab-pre qwen2 "$X" "$TMP/x-$t.gguf" "$t"
    expect_exit 0 "stacked experts to $t: gate_up split, tensors and keys" python3 "$Q" check "$BIN" "$TMP/x-$t.gguf" "$X" "$t"
done
cp -r "$X" "$TMP/odd"
python3 - "$X/model.safetensors" "$TMP/odd/model.safetensors" <<'PY'
import json, struct, sys
data = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", data[:8])[0]
h = json.loads(data[8:8 + n])
odd = "model.layers.1.mlp.experts.gate_up_proj"
body, off = [], 0
for name, t in sorted(h.items(), key=lambda kv: kv[1]["data_offsets"][0]):
    a, b = t["data_offsets"]
    raw = data[8 + n + a:8 + n + b]
    if name == odd:   # an odd middle dimension
        t["shape"] = [4, 63, 64]
        raw = raw[:4 * 63 * 64 * 2]
    t["data_offsets"] = [off, off + len(raw)]
    body.append(raw)
    off += len(raw)
text = json.dumps(h).encode()
text += b" " * (-len(text) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(text)) + text + b"".join(body))
PY
# refusals: a checkpoint edited with st_edit.py / by removing a file
refuse() {
    local name=$1 dir=$2
    shift 2
    rm -f "$TMP/out.gguf"
    expect_exit 1 "$name: exit 1" "$BIN" convert --vocab-pre qwen2 "$dir" "$TMP/out.gguf" f16
    for text in "$@"; do expect_grep "$name: message" "$TMP/err" "$text"; done
    expect_absent "$name: no output" "$TMP/out.gguf"
}
cp -r "$M" "$TMP/dense"
python3 "$HERE/st_edit.py" "$M/model.safetensors" "$TMP/dense/model.safetensors" model.layers.0.mlp.gate_proj.weight BF16 96x64
refuse "a dense feed-forward tensor" "$TMP/dense" "model.layers.0.mlp.gate_proj.weight" "Qwen3MoeForCausalLM"
cp -r "$M" "$TMP/few"
python3 - "$TMP/few/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["num_experts"] = 5; json.dump(c, open(sys.argv[1], "w"))
PY
refuse "an expert missing" "$TMP/few" "experts are missing"
refuse "a gate_up_proj of an odd middle dimension" "$TMP/odd" "model.layers.1.mlp.experts.gate_up_proj" "2 x n_ff"
cp -r "$M" "$TMP/notok"
rm "$TMP/notok/tokenizer.json"
refuse "no tokenizer.json" "$TMP/notok" "tokenizer.json"

finish
