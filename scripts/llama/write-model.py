#!/usr/bin/env python3
"""Write a GGUF of Qwen3's architecture with random weights and the real Qwen3 tokenizer.

Run inside the Debian root that setup.sh builds (python3-gguf and python3-numpy). The engine's
tokenization, chat template, KV cache and prefix reuse are the real code paths; only the text
it generates is noise, which is all a cache benchmark needs.
"""
import argparse
import json
import sys
from pathlib import Path

import numpy as np
import gguf

# Qwen3-0.6B's published shape; "tiny" keeps its vocabulary and head layout at a fraction of the size.
SHAPES = {
    "tiny": dict(n_embd=256, n_layer=4, n_head=4, n_head_kv=2, head_dim=64, n_ff=768),
    "qwen3-0.6b": dict(n_embd=1024, n_layer=28, n_head=16, n_head_kv=8, head_dim=128, n_ff=3072),
}
N_VOCAB = 151936  # Qwen3 pads its 151,669 tokens to this
CONTEXT = 40960


def tokenizer_arrays(tokenizer_dir: Path):
    tok = json.loads((tokenizer_dir / "tokenizer.json").read_text(encoding="utf-8"))
    config = json.loads((tokenizer_dir / "tokenizer_config.json").read_text(encoding="utf-8"))
    by_id = {i: t for t, i in tok["model"]["vocab"].items()}
    added = {a["id"]: a for a in tok["added_tokens"]}
    tokens, types = [], []
    for i in range(N_VOCAB):
        if i in added:
            tokens.append(added[i]["content"])
            types.append(gguf.TokenType.CONTROL if added[i]["special"] else gguf.TokenType.USER_DEFINED)
        elif i in by_id:
            tokens.append(by_id[i])
            types.append(gguf.TokenType.NORMAL)
        else:
            tokens.append(f"[PAD{i}]")
            types.append(gguf.TokenType.UNUSED)
    merges = [m if isinstance(m, str) else " ".join(m) for m in tok["model"]["merges"]]
    ids = {a["content"]: a["id"] for a in tok["added_tokens"]}
    return tokens, types, merges, config["chat_template"], ids


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--tokenizer-dir", required=True, type=Path)
    p.add_argument("--shape", required=True, choices=sorted(SHAPES))
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    s = SHAPES[args.shape]
    tokens, types, merges, template, ids = tokenizer_arrays(args.tokenizer_dir)

    partial = args.out.with_name(args.out.name + ".partial")
    w = gguf.GGUFWriter(str(partial), "qwen3")
    w.add_name(f"forkcache-random-{args.shape}")
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_context_length(CONTEXT)
    w.add_embedding_length(s["n_embd"])
    w.add_block_count(s["n_layer"])
    w.add_feed_forward_length(s["n_ff"])
    w.add_head_count(s["n_head"])
    w.add_head_count_kv(s["n_head_kv"])
    w.add_key_length(s["head_dim"])
    w.add_value_length(s["head_dim"])
    w.add_rope_freq_base(1_000_000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_eos_token_id(ids["<|im_end|>"])
    w.add_pad_token_id(ids["<|endoftext|>"])
    w.add_bos_token_id(ids["<|endoftext|>"])
    w.add_add_bos_token(False)
    w.add_chat_template(template)

    rng = np.random.default_rng(args.seed)

    def dense(rows: int, cols: int) -> np.ndarray:
        # small weights keep the activations finite through every layer
        return (rng.standard_normal((rows, cols), dtype=np.float32) * 0.02).astype(np.float16)

    def ones(n: int) -> np.ndarray:
        return np.ones(n, dtype=np.float32)

    e, hd = s["n_embd"], s["head_dim"]
    q, kv = s["n_head"] * hd, s["n_head_kv"] * hd
    w.add_tensor("token_embd.weight", dense(N_VOCAB, e))  # tied: Qwen3-0.6B has no separate output matrix
    w.add_tensor("output_norm.weight", ones(e))
    for i in range(s["n_layer"]):
        b = f"blk.{i}"
        w.add_tensor(f"{b}.attn_norm.weight", ones(e))
        w.add_tensor(f"{b}.attn_q.weight", dense(q, e))
        w.add_tensor(f"{b}.attn_k.weight", dense(kv, e))
        w.add_tensor(f"{b}.attn_v.weight", dense(kv, e))
        w.add_tensor(f"{b}.attn_output.weight", dense(e, q))
        w.add_tensor(f"{b}.attn_q_norm.weight", ones(hd))
        w.add_tensor(f"{b}.attn_k_norm.weight", ones(hd))
        w.add_tensor(f"{b}.ffn_norm.weight", ones(e))
        w.add_tensor(f"{b}.ffn_gate.weight", dense(s["n_ff"], e))
        w.add_tensor(f"{b}.ffn_up.weight", dense(s["n_ff"], e))
        w.add_tensor(f"{b}.ffn_down.weight", dense(e, s["n_ff"]))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    partial.rename(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
