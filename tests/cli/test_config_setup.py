"""First-run questions and --init answers: flags, prompts, loopback probing."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from minicode.cli.config_setup import Answers, gather, no_config_help, probe_local_servers, run_init
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
    # the per-user file comes first: it works in every project
    assert text.index("minicode --init --user --base-url") < text.index("minicode --init --base-url")
    assert text.index("--init") < text.index(f"or write {tmp_path / 'config' / 'config.toml'} yourself")
    example = text.split("yourself, for example:\n", 1)[1]
    import tomllib

    assert tomllib.loads(example)["model"] == {
        "base_url": "https://api.openai.com/v1", "name": "gpt-4.1", "api_key_env": "OPENAI_API_KEY"
    }
    assert "config.example.toml" not in text


# --- the first-run wizard as a newcomer meets it --------------------------------------------

import http.server  # noqa: E402 - grouped with the tests that use it
import io  # noqa: E402
import threading  # noqa: E402
from typing import Iterator  # noqa: E402

from minicode.cli.config_setup import first_run, list_models  # noqa: E402


@pytest.fixture()
def models_server() -> Iterator[tuple[str, list[bytes]]]:
    """A loopback HTTP server; the test sets the body /models answers with."""
    body: list[bytes] = [b'{"object": "list", "data": [{"id": "qwen3-coder"}, {"id": "llama3"}]}']

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            if self.path != "/v1/models":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body[0])

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # shutdown() waits for the loop to poll its stop flag: every 10 ms, not the default 0.5 s
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", body
    finally:
        server.shutdown()
        server.server_close()


def test_list_models_reads_the_ids(models_server: tuple[str, list[bytes]]) -> None:
    url, _ = models_server
    assert list_models(url) == ["qwen3-coder", "llama3"]


def test_list_models_is_empty_for_garbage_or_no_server(models_server: tuple[str, list[bytes]]) -> None:
    url, body = models_server
    body[0] = b"<html>not json</html>"
    assert list_models(url) == []
    body[0] = b'{"data": "nope"}'
    assert list_models(url) == []
    assert list_models(url.replace("/v1", "/nothing")) == []  # 404
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    assert list_models(f"http://127.0.0.1:{free}/v1") == []


def test_loopback_wizard_offers_the_served_models_and_asks_no_key(models_server: tuple[str, list[bytes]]) -> None:
    url, _ = models_server
    p = Scripted([url, ""])  # take the offered model
    a = gather(base_url=None, model=None, api_key_env=None, prompter=p, probe=lambda: [])
    assert a == Answers(url, "qwen3-coder", api_key="")
    assert p.asked[1][1] == "qwen3-coder"
    assert len(p.asked) == 2  # no key, no variable question
    assert any("qwen3-coder, llama3" in s for s in p.said)
    assert any("empty key is allowed for a loopback server" in s for s in p.said)


def test_remote_wizard_still_asks_for_the_key_and_lists_no_models() -> None:
    listed: list[str] = []

    def models(url: str) -> list[str]:
        listed.append(url)
        return ["x"]

    p = Scripted(["https://api.x.io/v1", "m", "MY_KEY"])
    a = gather(base_url=None, model=None, api_key_env=None, prompter=p, probe=lambda: [], models=models)
    assert a == Answers("https://api.x.io/v1", "m", api_key_env="MY_KEY")
    assert listed == []


def test_wizard_asks_again_for_a_bad_url_and_a_bad_variable_name() -> None:
    p = Scripted(["ftp://x", "https://api.x.io/v1", "m", "not a name", "GOOD"])
    a = gather(base_url=None, model=None, api_key_env=None, prompter=p, probe=lambda: [], models=lambda u: [])
    assert a == Answers("https://api.x.io/v1", "m", api_key_env="GOOD")
    assert any("http:// or https://" in s for s in p.said)


def test_first_run_says_where_and_how_to_abort_and_names_its_origin(tmp_path: Path) -> None:
    home = tmp_path / "home"
    p = Scripted(["http://127.0.0.1:9/v1", "q"])
    path = first_run(tmp_path, {"HOME": str(home)}, prompter=p, out=io.StringIO(), probe=lambda: [],
                     models=lambda u: [])
    assert path == home / ".config" / "minicode" / "config.toml"
    assert str(path) in p.said[0] and any("Ctrl+C aborts" in s for s in p.said)
    text = path.read_text()
    assert "first-run questions" in text and "--init" not in text.splitlines()[0]
    assert "docs/config.md in the minicode repository" in text and "minicode --help" in text


def test_interactive_init_names_its_file_and_checks_flags_before_asking(tmp_path: Path) -> None:
    p = Scripted(["m"])
    with pytest.raises(ConfigError, match="--base-url must be"):
        run_init(tmp_path, base_url="ftp://x", model=None, api_key_env=None, prompter=p, out=io.StringIO())
    assert p.asked == []
    run_init(tmp_path, base_url="http://127.0.0.1:9/v1", model=None, api_key_env=None, prompter=p,
             out=io.StringIO(), models=lambda u: [])
    assert str(tmp_path / "config" / "config.toml") in p.said[0] and "Ctrl+C" in p.said[0]


def test_list_models_goes_straight_to_the_loopback_server(models_server: tuple[str, list[bytes]],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    url, _ = models_server
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # nothing listens there: a proxy used would fail
    assert list_models(url) == ["qwen3-coder", "llama3"]


def test_list_models_gives_up_at_its_timeout() -> None:
    with socket.socket() as listening:  # accepts the connection, never answers
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        started = time.monotonic()
        assert list_models(f"http://127.0.0.1:{listening.getsockname()[1]}/v1", timeout=0.3) == []
        assert time.monotonic() - started < 5
