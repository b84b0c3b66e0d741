"""Shared fixtures: a scripted Inspect model provider that needs no network or tokenizer.

Inspect's ``mockllm`` counts tokens with tiktoken, which downloads its encoding; this provider
answers from a Python function instead and records every request it receives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

Script = Callable[[list[ChatMessage]], "str | ModelOutput"]
SCRIPTS: dict[str, Script] = {}
REQUESTS: dict[str, list[list[ChatMessage]]] = {}


def script(name: str, fn: Script) -> str:
    """Register ``fn`` as the replies of model ``scripted/<name>``; returns the model string."""
    SCRIPTS[name] = fn
    REQUESTS[name] = []
    return f"scripted/{name}"


@modelapi(name="scripted")
def _scripted() -> type[ModelAPI]:
    return ScriptedAPI


class ScriptedAPI(ModelAPI):
    """Replies with ``SCRIPTS[model_name](messages)``."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        REQUESTS[self.model_name].append(list(input))
        reply = SCRIPTS[self.model_name](input)
        if isinstance(reply, ModelOutput):  # a script that needs a stop reason says it whole
            return reply
        return ModelOutput.from_content(self.model_name, reply)
