"""First-run questions and --init answers: flags, prompts, loopback probing."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from minicode.cli.setup import Answers, gather, no_config_help, probe_local_servers, run_init
from minicode.errors import ConfigError


class Scripted:
    """A Prompter answering from a list; a missing answer behaves like EOF."""

    def __init__(self, answers: list[str], secret: str = "") -> None:
        self.answers, self.secret, self.said, self.asked = list(answers), secret, [], []

    def say(self, text: str) -> None:
        self.said.append(text)

    def ask(self, question: str, default: str = "") -> str:
        self.asked.append((question, default))
        if not self.answers:
            raise ConfigError("setup cancelled")
        return self.answers.pop(0).strip() or default

    def ask_secret(self, question: str) -> str:
        return self.secret


def test_flags_complete_need_no_questions() -> None:
    a = gather(base_url="https://x/v1", model="m", api_key_env="K", prompter=None)
    assert a == Answers("https://x/v1", "m", api_key_env="K")


def test_missing_flags_without_terminal_are_named() -> None:
    with pytest.raises(ConfigError) as e:
        gather(base_url=None, model=None, api_key_env=None, prompter=None)
    assert "--base-url URL" in str(e.value) and "--model NAME" in str(e.value)


def test_prompts_offer_a_found_local_server() -> None:
    p = Scripted(["", "llama3", ""])
    a = gather(base_url=None, model=None, api_key_env=None, prompter=p,
               probe=lambda: [("Ollama", "http://127.0.0.1:11434/v1")])
    assert a == Answers("http://127.0.0.1:11434/v1", "llama3", api_key="")
    assert p.asked[0][1] == "http://127.0.0.1:11434/v1"
    assert any("Ollama" in s for s in p.said)


def test_remote_endpoint_requires_key_or_variable() -> None:
    p = Scripted(["", "gpt-4.1", "", ""])  # empty answers take the defaults
    a = gather(base_url=None, model=None, api_key_env=None, prompter=p, probe=lambda: [])
    assert a == Answers("https://api.openai.com/v1", "gpt-4.1", api_key_env="OPENAI_API_KEY")


def test_typed_key_is_kept_as_key() -> None:
    a = gather(base_url="https://x/v1", model=None, api_key_env=None, prompter=Scripted(["m"], secret="sk-1"))
    assert a == Answers("https://x/v1", "m", api_key="sk-1")


def test_model_is_asked_again_until_given() -> None:
    p = Scripted(["", " ", "m2"])
    a = gather(base_url="https://x/v1", model=None, api_key_env="K", prompter=p)
    assert a.model == "m2" and len(p.asked) == 3


def test_eof_cancels() -> None:
    with pytest.raises(ConfigError, match="cancelled"):
        gather(base_url=None, model=None, api_key_env=None, prompter=Scripted([]), probe=lambda: [])


def test_probe_finds_a_listening_loopback_port() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        found = probe_local_servers([("Test", port, f"http://127.0.0.1:{port}/v1")], timeout=1.0)
    assert found == [("Test", f"http://127.0.0.1:{port}/v1")]
    # The same port, now closed, answers nothing.
    assert probe_local_servers([("Test", port, "u")], timeout=0.2) == []


def test_run_init_refuses_existing_file_before_asking(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.toml").write_text("x")
    p = Scripted(["never asked"])
    with pytest.raises(ConfigError, match="refusing to overwrite"):
        run_init(tmp_path, base_url=None, model=None, api_key_env=None, prompter=p, out=None)  # type: ignore[arg-type]
    assert p.asked == []


def test_no_config_help_offers_init_then_an_inline_example(tmp_path: Path) -> None:
    text = no_config_help(tmp_path, tmp_path, [tmp_path / "a.toml"])
    assert "minicode --init --base-url" in text  # no -C when the workspace is the cwd
    assert text.index("--init") < text.index(f"or write {tmp_path / 'config' / 'config.toml'} yourself")
    example = text.split("yourself, for example:\n", 1)[1]
    import tomllib

    assert tomllib.loads(example)["model"] == {
        "base_url": "https://api.openai.com/v1", "name": "gpt-4.1", "api_key_env": "OPENAI_API_KEY"
    }
    assert "config.example.toml" not in text
