"""The Inspect provider `scripted/<name>`: replies from a Python function, no network, no tokenizer.

Tests and benchmarks need a model that answers at once and says exactly what a case needs.
Inspect's ``mockllm`` counts tokens with tiktoken, which downloads its encoding (not offline);
this provider answers from a function registered with `script` and records every request it
receives, so a test can also assert what the model was asked.

Importing this module registers the provider; `gapscope._registry` does not import it, so it
exists only in processes that ask for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo

Script = Callable[[list[ChatMessage]], "str | ModelOutput"]
"""A model's replies: the conversation so far -> the reply text, or a whole `ModelOutput`."""

SCRIPTS: dict[str, Script] = {}
REQUESTS: dict[str, list[list[ChatMessage]]] = {}
"""Every conversation each scripted model was sent, oldest first."""
CONFIGS: dict[str, list[GenerateConfig]] = {}
"""The generate config of each of those requests (what a provider is asked: ``max_tokens``)."""


def script(name: str, fn: Script) -> str:
    """Register ``fn`` as the replies of model ``scripted/<name>``; returns the model string.

    Registering a name again replaces its script and forgets its recorded requests and
    configs.
    """
    SCRIPTS[name] = fn
    REQUESTS[name] = []
    CONFIGS[name] = []
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
        if model_name not in SCRIPTS:
            raise ValueError(
                f"no script for model scripted/{model_name}: register one with "
                "gapscope.models.scripted.script(name, fn) first"
            )
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        REQUESTS[self.model_name].append(list(input))
        CONFIGS[self.model_name].append(config)
        reply = SCRIPTS[self.model_name](input)
        if isinstance(reply, ModelOutput):  # a script that needs a stop reason says it whole
            return reply
        return ModelOutput.from_content(self.model_name, reply)
