"""/model and /think: switched for the rest of the session, recorded, kept on resume; pinned
flags of a run win; a bad name or level changes nothing."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from minicode.agent.approval import AutoApprover
from minicode.config import ModelConfig
from minicode.errors import ConfigError, SessionError
from minicode.session.records import SessionSettings
from tests.agent.conftest import Events
from tests.agent.scripted import ScriptedProvider, text


@dataclass
class Factory:
    """Makes scripted providers named after the model, recording the settings asked for."""

    made: list[ModelConfig] = field(default_factory=list)
    providers: list[ScriptedProvider] = field(default_factory=list)

    def __call__(self, model: ModelConfig) -> ScriptedProvider:
        if model.name == "broken":
            raise ConfigError("model.provider: nope")
        self.made.append(model)
        provider = ScriptedProvider(model=model.name, default=text(f"answer from {model.name}"))
        self.providers.append(provider)
        return provider


async def _task(session, prompt: str) -> None:
    await session.turn(prompt, approver=AutoApprover(), emit=Events().append)


async def test_switching_model_and_thinking_is_recorded_and_kept(open_session) -> None:
    factory = Factory()
    session = await open_session(make_provider=factory)
    assert session.model == "scripted-model" and session.thinking is None
    await _task(session, "one")
    await session.set_model("bigger-model")
    await session.set_thinking("high")
    assert session.model == "bigger-model" and session.thinking == "high"
    assert factory.made[-1].name == "bigger-model" and factory.made[-1].thinking == "high"
    assert factory.providers[0].closed and factory.providers[1].closed  # the replaced ones
    await _task(session, "two")
    assert factory.providers[-1].requests  # the new provider answered
    raw = session._store.path.read_text()
    assert '"type":"settings","model":"bigger-model"' in raw and '"type":"settings","thinking":"high"' in raw
    session._store.close()
    resumed = await open_session(resume=session.id, make_provider=factory)
    assert resumed.model == "bigger-model" and resumed.thinking == "high"
    assert factory.made[-1].name == "bigger-model"


async def test_flags_of_a_run_win_over_the_recorded_settings(open_session) -> None:
    factory = Factory()
    session = await open_session(make_provider=factory)
    await _task(session, "one")
    await session.set_model("recorded-model")
    session._store.close()
    resumed = await open_session(resume=session.id, make_provider=factory, pinned=SessionSettings(model="flag-model"))
    assert resumed.model == "flag-model"


@pytest.mark.parametrize("call", [("set_model", ""), ("set_model", "two words"), ("set_model", "x" * 201),
                                  ("set_thinking", "extreme"), ("set_model", "broken")])
async def test_a_bad_name_or_level_changes_nothing(open_session, call) -> None:
    factory = Factory()
    session = await open_session(make_provider=factory)
    method, value = call
    with pytest.raises(SessionError) as e:
        await getattr(session, method)(value)
    assert e.value.exit_code == 2
    assert session.model == "scripted-model" and session.thinking is None
    assert "settings" not in session._store.path.read_text()


async def test_a_given_provider_cannot_be_switched(open_session) -> None:
    session = await open_session()
    with pytest.raises(SessionError, match="cannot switch"):
        await session.set_model("other")
