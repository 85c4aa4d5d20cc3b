"""How training and evaluation tools show a prompt: chat templates, with and without special tokens.

verl (``_log_rollout_data``/``_validate``), TRL (``GRPOTrainer._generate_and_score_completions``) and
lm-eval's chat mode log the prompt the model saw: the registered messages rendered by the model's
chat template, then decoded from token ids — usually with ``skip_special_tokens=True``, which drops
the role markers that are special tokens (``<|im_start|>``, ``<|start_header_id|>`` …) and keeps
everything else. So a Qwen2.5 prompt is logged as ``"system\\n…\\nuser\\n<text>\\nassistant\\n"``
and a Llama-3 one as ``"system\\n\\n…user\\n\\n<text>assistant\\n\\n"``.

Each template below is the Jinja template of the model family written out in Python for the
messages modebench registers (an optional system message, then one user message, then the
generation prompt), with the strings that the family's tokenizer marks as special. The stripped
rendering is the full rendering with those strings removed — what a byte-level BPE tokenizer's
``decode(…, skip_special_tokens=True)`` returns. When ``transformers`` is installed, a tokenizer
given by the user renders the same messages with its own template (``tokenizer_renderings``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modebench.contracts import install_hint
from modebench.validation import InputError

__all__ = ["TEMPLATES", "Template", "renderings", "tokenizer_renderings"]

Messages = Sequence[Mapping[str, str]]


@dataclass(frozen=True)
class Template:
    name: str
    render: Callable[[Messages], str]
    special: tuple[str, ...]


def _chatml(default_system: str | None, suffix: str = "") -> Callable[[Messages], str]:
    # Qwen2/2.5/3 (tokenizer_config.json chat_template): a missing system message is replaced by
    # the family's default one (Qwen2: "You are a helpful assistant.", Qwen2.5: "You are Qwen, …";
    # Qwen3: none). Qwen3 with enable_thinking=False appends an empty think block.
    def render(messages: Messages) -> str:
        turns = list(messages)
        if default_system is not None and (not turns or turns[0]["role"] != "system"):
            turns = [{"role": "system", "content": default_system}, *turns]
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in turns)
        return text + "<|im_start|>assistant\n" + suffix

    return render


def _llama3(messages: Messages) -> str:
    # Meta-Llama-3-*-Instruct: each content trimmed, header tokens around the role.
    text = "<|begin_of_text|>"
    for m in messages:
        text += f"<|start_header_id|>{m['role']}<|end_header_id|>\n\n{m['content'].strip()}<|eot_id|>"
    return text + "<|start_header_id|>assistant<|end_header_id|>\n\n"


def _system_and_user(messages: Messages) -> tuple[str | None, str]:
    system = next((m["content"] for m in messages if m["role"] == "system"), None)
    user = [m["content"] for m in messages if m["role"] == "user"]
    return system, user[-1] if user else ""


def _mistral(messages: Messages) -> str:
    # Mistral-7B-Instruct v0.2/v0.3 and Mixtral: the system message is prepended to the last user
    # turn with a blank line.
    system, user = _system_and_user(messages)
    content = f"{system}\n\n{user}" if system else user
    return f"<s>[INST] {content}[/INST]"


def _mistral_v1(messages: Messages) -> str:
    system, user = _system_and_user(messages)
    content = f"{system}\n\n{user}" if system else user
    return f"<s>[INST] {content} [/INST]"


def _gemma(messages: Messages) -> str:
    # Gemma 2/3: no system role; the system text opens the first user turn.
    system, user = _system_and_user(messages)
    content = f"{system}\n\n{user}" if system else user
    return f"<bos><start_of_turn>user\n{content.strip()}<end_of_turn>\n<start_of_turn>model\n"


def _deepseek(think: str) -> Callable[[Messages], str]:
    # DeepSeek-V3 / R1 (and the R1 distills): system text right after BOS, no separators.
    def render(messages: Messages) -> str:
        system, user = _system_and_user(messages)
        return f"<｜begin▁of▁sentence｜>{system or ''}<｜User｜>{user}<｜Assistant｜>{think}"

    return render


def _phi3(messages: Messages) -> str:
    text = "".join(f"<|{m['role']}|>\n{m['content']}<|end|>\n" for m in messages)
    return text + "<|assistant|>\n"


def _phi4(messages: Messages) -> str:
    text = "".join(f"<|im_start|>{m['role']}<|im_sep|>{m['content']}<|im_end|>" for m in messages)
    return text + "<|im_start|>assistant<|im_sep|>"


_CHATML = ("<|im_start|>", "<|im_end|>", "<|endoftext|>")
_LLAMA3 = ("<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>")
_DEEPSEEK = ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>")

TEMPLATES: tuple[Template, ...] = (
    Template("qwen2", _chatml("You are a helpful assistant."), _CHATML),
    Template(
        "qwen2.5",
        _chatml("You are Qwen, created by Alibaba Cloud. You are a helpful assistant."),
        _CHATML,
    ),
    Template("qwen3", _chatml(None), _CHATML),
    Template("qwen3-no-thinking", _chatml(None, "<think>\n\n</think>\n\n"), _CHATML),
    Template("llama3", _llama3, _LLAMA3),
    Template("mistral", _mistral, ("<s>", "</s>", "[INST]", "[/INST]")),
    Template("mistral-v1", _mistral_v1, ("<s>", "</s>")),
    Template("gemma", _gemma, ("<bos>", "<start_of_turn>", "<end_of_turn>")),
    # R1's role markers are added tokens that are not special: skip_special_tokens keeps them.
    Template("deepseek-r1", _deepseek("<think>\n"), _DEEPSEEK),
    Template(
        "deepseek-v3",
        _deepseek(""),
        (*_DEEPSEEK, "<｜User｜>", "<｜Assistant｜>"),
    ),
    Template("phi3", _phi3, ("<|system|>", "<|user|>", "<|assistant|>", "<|end|>", "<|endoftext|>")),
    Template("phi4", _phi4, ("<|im_start|>", "<|im_sep|>", "<|im_end|>", "<|endoftext|>")),
)


def _strip_special(text: str, special: Sequence[str]) -> str:
    for token in special:
        text = text.replace(token, "")
    return text


def renderings(messages: Messages) -> Iterator[tuple[str, str]]:
    """``(rule, text)`` of every shipped rendering of ``messages``: with and without special tokens."""
    for template in TEMPLATES:
        full = template.render(messages)
        yield f"template:{template.name}", full
        yield f"template:{template.name}:skip-special-tokens", _strip_special(full, template.special)


def load_tokenizer(path: str) -> Any:
    """A tokenizer from a local directory (never downloaded: ingest runs offline)."""
    try:
        from transformers import AutoTokenizer  # noqa: PLC0415 - optional extra: tokenizer (transformers)
    except ImportError:
        raise InputError(f"--tokenizer needs transformers: {install_hint('tokenizer')}") from None
    try:
        return AutoTokenizer.from_pretrained(path, local_files_only=True)
    except Exception as exc:  # transformers raises OSError, ValueError, … for a bad directory
        raise InputError(f"{path}: not a readable tokenizer ({' '.join(str(exc).split())})") from None


def tokenizer_renderings(tokenizer: Any, name: str, messages: Messages) -> Iterator[tuple[str, str]]:
    """The tokenizer's own chat template applied to ``messages``, as text and decoded from its ids
    with and without special tokens (how verl and TRL log it)."""
    chat = [dict(m) for m in messages]
    try:
        text = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    except Exception as exc:  # a tokenizer without a chat template raises ValueError
        raise InputError(f"{name}: cannot apply its chat template ({' '.join(str(exc).split())})") from None
    yield f"tokenizer:{name}", text
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    yield f"tokenizer:{name}:decoded", tokenizer.decode(ids, skip_special_tokens=False)
    yield f"tokenizer:{name}:skip-special-tokens", tokenizer.decode(ids, skip_special_tokens=True)
