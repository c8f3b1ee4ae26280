# convert_card_variants.sh - sourced by test_convert.sh: card_variant ROOT GOLDEN_LLAMA_GQA
# writes checkpoint folders (links to the golden llama-gqa files) whose README.md
# front matter and config.json _name_or_path exercise the reference's model card
# and model id heuristics (Metadata.load); each folder's name matters.
card_variants() {
    local root=$1 g=$2
    mk() {   # mk DIR CARD [NAME_OR_PATH]
        mkdir -p "$root/$1"
        for f in model.safetensors tokenizer.model tokenizer_config.json; do ln -sf "$g/$f" "$root/$1/$f"; done
        if [ -n "${3:-}" ]; then
            sed "s|^{|{\"_name_or_path\": \"$3\",|" "$g/config.json" > "$root/$1/config.json"
        else
            cp "$g/config.json" "$root/$1/config.json"
        fi
        printf -- "$2" > "$root/$1/README.md"
    }
    mk a/Mistral-7B-Instruct-v0.3 '---\nlicense: apache-2.0\nbase_model: mistralai/Mistral-7B-v0.3\ntags:\n- mistral\n- chat\npipeline_tag: text-generation\nlanguage:\n- en\n- no\ndatasets:\n- https://huggingface.co/datasets/foo\n- org/ds-v2\n---\n# card\n'
    mk b/TinyLlama-1.1B-Chat-v1.0 '---\nlicense:\n  - mit\n  - apache-2.0\nbase_model: null\ntags: single\npipeline_tag: text-generation\nlanguage: en\n---\n'
    mk c/x '---\nmodel_name: Fancy Model\nmodel_creator: someone\nmodel_type: llama\nbase_model:\n  - https://huggingface.co/meta-llama/Llama-2-7b-hf\n  - name: Custom\n    organization: Me\n  - 42\n  - ./local/path\ndataset: org/data\nlicense_name: custom\nlicense_link: https://x\nrepo_url: https://github.com/x\n---\n'
    mk d/llama-gqa '---\nlanguage:\n- no\n- en\ntags:\n\t- a\n---\ntext\n'
    mk e/llama-gqa '---\r\nlicense: mit\r\n---\r\n'
    mk f/bloom-7b1-chat '---\n---\n' /abs/path/to/model
    mk g/whatever-v2 '---\nname: Given Name\nsize_label: 7x2B\nversion: v9\ndatasets: []\ntags: []\n---\n' org/Base-13B-Instruct-v1
}
CARD_VARIANTS="a/Mistral-7B-Instruct-v0.3 b/TinyLlama-1.1B-Chat-v1.0 c/x d/llama-gqa e/llama-gqa f/bloom-7b1-chat g/whatever-v2"
