"""A tiny Qwen2 model written as a real GGUF file (gguf's own writer), for the GGUF loading paths.

The tokenizer is a byte-level BPE trained on the given corpus with Qwen2's split rule — the rule a
file that declares ``tokenizer.ggml.pre = qwen2`` is read back with — so the model read from the
file and the model it was written from tokenise and score a text identically.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

CORPUS = ["The cat sat on the mat. Dogs bark at night, and 42 owls answer! 猫坐在垫子上。狗在夜里叫，猫头鹰回答。"] * 20
TEXT = "The cat sat. 猫坐在垫子上，狗在夜里叫。Dogs bark 123 times!\n\nOwls answer at night. 😀 ok."

_NAMES = {
    "input_layernorm.weight": "attn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight", "self_attn.q_proj.bias": "attn_q.bias",
    "self_attn.k_proj.weight": "attn_k.weight", "self_attn.k_proj.bias": "attn_k.bias",
    "self_attn.v_proj.weight": "attn_v.weight", "self_attn.v_proj.bias": "attn_v.bias",
    "self_attn.o_proj.weight": "attn_output.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight", "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
}


def tiny_qwen2(corpus: list[str], *, vocab_size: int = 400, hidden: int = 32, layers: int = 2, seed: int = 0):
    """``(model, tokenizer)``: a random Qwen2 and a byte-level BPE with Qwen2's pre-tokenizer."""
    import torch
    import transformers
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tk.train_from_iterator(corpus, trainer=trainer)
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|endoftext|>",
                                               pad_token="<|endoftext|>")
    cfg = transformers.Qwen2Config(
        vocab_size=tk.get_vocab_size(), hidden_size=hidden, intermediate_size=2 * hidden,
        num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=4096, tie_word_embeddings=True, rms_norm_eps=1e-6, rope_theta=1e6,
    )
    torch.manual_seed(seed)
    model = transformers.Qwen2ForCausalLM(cfg).eval()
    with torch.no_grad():
        model.get_input_embeddings().weight.normal_(0.0, 0.3)  # scores that vary between texts
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.normal_(0.0, 0.1)  # a file that drops the biases would be caught
    return model, tok


def write_gguf(model, tok, path: str | Path, *, name: str = "tiny-qwen2") -> Path:
    """Write ``model`` and ``tok`` as a GGUF file (float32 tensors, llama.cpp's qwen2 names)."""
    import gguf

    cfg = model.config
    w = gguf.GGUFWriter(str(path), "qwen2")
    w.add_name(name)
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_rope_freq_base(float(getattr(cfg, "rope_theta", None) or cfg.rope_parameters["rope_theta"]))
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    spec = json.loads(tok.backend_tokenizer.to_str())
    vocab = spec["model"]["vocab"]
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
    eos = vocab["<|endoftext|>"]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(tokens)
    w.add_token_types([3 if i == eos else 1 for i in range(len(tokens))])  # 3: control
    w.add_token_merges(merges)
    w.add_eos_token_id(eos)
    w.add_bos_token_id(eos)
    w.add_pad_token_id(eos)
    w.add_add_bos_token(False)
    sd = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    w.add_tensor("token_embd.weight", sd["model.embed_tokens.weight"])
    for i in range(cfg.num_hidden_layers):
        for hf, gg in _NAMES.items():
            w.add_tensor(f"blk.{i}.{gg}", np.ascontiguousarray(sd[f"model.layers.{i}.{hf}"]))
    w.add_tensor("output_norm.weight", sd["model.norm.weight"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return Path(path)


def tiny_gguf(folder: str | Path):
    """``(model, tokenizer, path)``: :func:`tiny_qwen2` on :data:`CORPUS`, written to
    ``folder/tiny-qwen.gguf``."""
    model, tok = tiny_qwen2(CORPUS)
    return model, tok, write_gguf(model, tok, Path(folder) / "tiny-qwen.gguf")
