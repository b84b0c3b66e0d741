"""A tiny random Llama checkpoint with a word-level tokenizer and a chat template.

Built in-process so model tests need no download and no embedded GGUF; small enough
(2 layers, hidden size 32) that a forward pass takes about a millisecond.
"""

from __future__ import annotations

from pathlib import Path

import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

SPECIAL = ["<pad>", "<s>", "<|im_end|>", "<|im_start|>"]
WORDS = ["system", "user", "assistant", *(f"w{i}" for i in range(60))]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|> {{ m['role'] }} {{ m['content'] }} <|im_end|> "
    "{% endfor %}{% if add_generation_prompt %}<|im_start|> assistant {% endif %}"
)
EOS_ID = 2


def build_tiny_checkpoint(
    directory: Path, seed: int = 0, *, hidden_size: int = 32, layers: int = 2
) -> Path:
    """Write a random Llama (2 layers, hidden 32 unless told) and its tokenizer; return it."""
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
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        bos_token_id=1,
        eos_token_id=EOS_ID,
        pad_token_id=0,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config)
    with torch.no_grad():
        # Random weights with std 0.02 give near-flat logits; sharpen them so greedy
        # decoding is robust to float noise, and keep EOS unlikely so replies are long.
        model.lm_head.weight.mul_(50.0)
        model.lm_head.weight[EOS_ID].zero_()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
