"""The scripted provider: replies from the registered function, records what it was sent."""

from __future__ import annotations

import asyncio

import pytest
from inspect_ai.model import ChatMessage, ChatMessageUser, ModelOutput, get_model

from gapscope.models.scripted import REQUESTS, script


def test_replies_from_the_script_and_records_each_request() -> None:
    def echo(messages: list[ChatMessage]) -> str:
        return f"heard {messages[-1].text}"

    model = get_model(script("echo", echo), memoize=False)
    first = asyncio.run(model.generate([ChatMessageUser(content="one")]))
    asyncio.run(model.generate([ChatMessageUser(content="two")]))
    assert first.completion == "heard one"
    assert [[m.text for m in request] for request in REQUESTS["echo"]] == [["one"], ["two"]]


def test_a_script_may_return_a_whole_output() -> None:
    cut = ModelOutput.from_content("cut", "half an ans", stop_reason="max_tokens")
    model = get_model(script("cut", lambda _: cut), memoize=False)
    reply = asyncio.run(model.generate([ChatMessageUser(content="go")]))
    assert reply.stop_reason == "max_tokens"
    assert reply.completion == "half an ans"


def test_an_unregistered_name_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="scripted/never-registered"):
        get_model("scripted/never-registered", memoize=False)
