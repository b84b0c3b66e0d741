"""Tiny random checkpoints with a word-level tokenizer and a chat template.

Built in-process so model tests need no download and no embedded GGUF; small enough
(2-4 layers, hidden size 32) that a forward pass takes about a millisecond. Two
architectures: a Llama (full attention everywhere) and a Gemma 3 whose interleaved
sliding-window layers have a window of a few tokens, so a short conversation already
outgrows it — the case the KV-cache reuse must get right.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import (
    Gemma3ForCausalLM,
    Gemma3TextConfig,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedTokenizerFast,
)

SPECIAL = ["<pad>", "<s>", "<|im_end|>", "<|im_start|>"]
WORDS = ["system", "user", "assistant", *(f"w{i}" for i in range(60))]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|> {{ m['role'] }} {{ m['content'] }} <|im_end|> "
    "{% endfor %}{% if add_generation_prompt %}<|im_start|> assistant {% endif %}"
)
EOS_ID = 2
TINY_SLIDING_WINDOW = 6
"""Tokens a sliding-window layer of the tiny Gemma 3 sees (itself included)."""


def _tiny_tokenizer() -> tuple[PreTrainedTokenizerFast, int]:
    vocab = {token: index for index, token in enumerate(SPECIAL + WORDS)}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<pad>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=backend,
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="<|im_end|>",
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer, len(vocab)


def tiny_model(
    architecture: str,
    vocab_size: int,
    hidden_size: int,
    layers: int,
    *,
    tied: bool = False,
    head_dim: int = 8,
) -> Any:
    """A random tiny ``llama`` or ``gemma3`` (always its 4 alternating layers; ``head_dim``
    is the Gemma's), output head tied to the embedding if ``tied``."""
    shared: dict[str, Any] = {
        "vocab_size": vocab_size,
        "hidden_size": hidden_size,
        "intermediate_size": 2 * hidden_size,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 1024,
        "bos_token_id": 1,
        "eos_token_id": EOS_ID,
        "pad_token_id": 0,
        "tie_word_embeddings": tied,
    }
    if architecture == "llama":
        return LlamaForCausalLM(LlamaConfig(num_hidden_layers=layers, **shared))
    if architecture == "gemma3":
        config = Gemma3TextConfig(
            num_hidden_layers=4,
            head_dim=head_dim,
            query_pre_attn_scalar=head_dim,
            sliding_window=TINY_SLIDING_WINDOW,
            layer_types=["sliding_attention", "full_attention"] * 2,
            **shared,
        )
        return Gemma3ForCausalLM(config)
    raise ValueError(f"unknown tiny architecture {architecture!r}")


def build_tiny_checkpoint(
    directory: Path,
    seed: int = 0,
    architecture: str = "llama",
    *,
    hidden_size: int = 32,
    layers: int = 2,
    head_dim: int = 8,
) -> Path:
    """Write a random tiny model (`llama` or `gemma3`; hidden 32, 2 Llama layers unless told;
    the Gemma always has its 4 alternating layers, heads ``head_dim`` wide) and its
    tokenizer; return the dir."""
    tokenizer, vocab_size = _tiny_tokenizer()
    torch.manual_seed(seed)
    model = tiny_model(architecture, vocab_size, hidden_size, layers, head_dim=head_dim)
    with torch.no_grad():
        # Random weights with std 0.02 give near-flat logits; sharpen them so greedy
        # decoding is robust to float noise, and keep EOS unlikely so replies are long.
        model.lm_head.weight.mul_(50.0)
        model.lm_head.weight[EOS_ID].zero_()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
