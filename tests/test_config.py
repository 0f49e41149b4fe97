"""Configuration: search order, strict schema, key resolution, --init writer (SPEC 2).

Every error case runs through `main()` so it is pinned end to end: exit 2, the message
names the file and the key, and the secret string never appears.
"""

from __future__ import annotations

import os
import stat
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import minicode.cli.frontends.plain
from minicode.cli.main import main
from minicode.config import (
    DEFAULT_CONTEXT_WINDOW,
    NoConfigError,
    apply_overrides,
    find_config,
    is_loopback_url,
    load_config,
)
from minicode.config_writer import write_starter_config
from minicode.errors import ConfigError

SECRET = "sk-SECRET-do-not-print-4711"
GOOD = '[model]\nbase_url = "https://api.example.com/v1"\nname = "gpt-x"\napi_key = "%s"\n' % SECRET


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    (w / "config").mkdir(parents=True)
    return w


@pytest.fixture()
def frontend(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Replace the plain frontend with a recorder (the real one is built elsewhere)."""
    calls: list[dict[str, Any]] = []

    def run(options: Any, config: Any, workspace: Path, mode: str, piped: Any, env: Any) -> int:
        calls.append({"config": config, "mode": mode, "piped": piped, "workspace": workspace})
        return 0

    fake = types.ModuleType("minicode.cli.frontends.plain.frontend")
    fake.run = run  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "minicode.cli.frontends.plain.frontend", fake)
    monkeypatch.setattr(minicode.cli.frontends.plain, "frontend", fake, raising=False)
    return calls


def write(ws: Path, text: str) -> Path:
    path = ws / "config" / "config.toml"
    path.write_text(text)
    return path


# --- every error case of SPEC 2, through main() -------------------------------------------

M = '[model]\nbase_url = "https://api.example.com/v1"\nname = "gpt-x"\n'
ERRORS = [
    ("unknown table", M + f'api_key = "{SECRET}"\n[extra]\nx = 1\n', "extra"),
    ("unknown model key", M + f'api_key = "{SECRET}"\ntemperature = 0.2\n', "temperature"),
    ("unknown langfuse key", GOOD + '[langfuse]\npublic_key = "p"\nsecret_key = "s"\nregion = "eu"\n', "region"),
    ("model not a table", f'model = "{SECRET}"\n', "model"),
    ("missing model table", '[langfuse]\npublic_key = "p"\nsecret_key = "s"\n', "[model]"),
    ("missing base_url", f'[model]\nname = "x"\napi_key = "{SECRET}"\n', "base_url"),
    ("missing name", f'[model]\nbase_url = "https://a.b/v1"\napi_key = "{SECRET}"\n', "name"),
    ("missing key", M, "api_key"),
    ("both keys", M + f'api_key = "{SECRET}"\napi_key_env = "MC_TEST_KEY"\n', "api_key_env"),
    ("base_url wrong type", f'[model]\nbase_url = 5\nname = "x"\napi_key = "{SECRET}"\n', "base_url"),
    ("api_key wrong type", M + "api_key = 4711\n", "api_key"),
    ("bool is not int", M + f'api_key = "{SECRET}"\ncontext_window = true\n', "context_window"),
    ("float is not int", M + f'api_key = "{SECRET}"\ncontext_window = 1.5\n', "context_window"),
    ("zero context", M + f'api_key = "{SECRET}"\ncontext_window = 0\n', "context_window"),
    ("negative context", M + f'api_key = "{SECRET}"\ncontext_window = -3\n', "context_window"),
    ("bad thinking", M + f'api_key = "{SECRET}"\nthinking = "extreme"\n', "thinking"),
    ("thinking wrong type", M + f'api_key = "{SECRET}"\nthinking = 2\n', "thinking"),
    ("other provider", M + f'api_key = "{SECRET}"\nprovider = "anthropic"\n', "provider"),
    ("empty key remote", M + 'api_key = ""\n', "api_key"),
    ("unset key var", M + 'api_key_env = "MC_TEST_UNSET_VAR"\n', "MC_TEST_UNSET_VAR"),
    ("empty key var", M + 'api_key_env = "MC_TEST_EMPTY_VAR"\n', "MC_TEST_EMPTY_VAR"),
    ("bad var name", M + 'api_key_env = "not a name"\n', "api_key_env"),
    ("not http", f'[model]\nbase_url = "ftp://x/v1"\nname = "x"\napi_key = "{SECRET}"\n', "base_url"),
    ("empty name", f'[model]\nbase_url = "https://a.b/v1"\nname = " "\napi_key = "{SECRET}"\n', "name"),
    ("port out of range", f'[model]\nbase_url = "http://a.b:99999/v1"\nname = "x"\napi_key = "{SECRET}"\n',
     "[model].base_url has an invalid port"),
    ("port not a number", f'[model]\nbase_url = "http://a.b:8x/v1"\nname = "x"\napi_key = "{SECRET}"\n',
     "[model].base_url has an invalid port"),
    ("base_url with a query", f'[model]\nbase_url = "https://a.b/v1?api-version=1"\nname = "x"\napi_key = "{SECRET}"\n',
     "[model].base_url must not have a query (?…) or a fragment (#…)"),
    ("base_url with a fragment", f'[model]\nbase_url = "https://a.b/v1#x"\nname = "x"\napi_key = "{SECRET}"\n',
     "[model].base_url must not have a query"),
    ("base_url with an empty query", f'[model]\nbase_url = "https://a.b/v1?"\nname = "x"\napi_key = "{SECRET}"\n',
     "[model].base_url must not have a query"),
    ("base_url host with an empty label", f'[model]\nbase_url = "http://a..b:9/v1"\nname = "x"\napi_key = "{SECRET}"\n',
     "[model].base_url has an invalid host name (a..b)"),
    ("base_url host label too long", f'[model]\nbase_url = "https://{"a" * 64}.com/v1"\nname = "x"\napi_key = "{SECRET}"\n',
     "[model].base_url has an invalid host name"),
    ("base_url host a lone dot", f'[model]\nbase_url = "https://./v1"\nname = "x"\napi_key = "{SECRET}"\n',
     "[model].base_url has an invalid host name"),
    ("base_url with a space inside", f'[model]\nbase_url = "http://a.b/my v1"\nname = "x"\napi_key = "{SECRET}"\n',
     "[model].base_url has a space or an invisible character (U+0020) at position 14"),
    ("base_url with a non-breaking space", f'[model]\nbase_url = "http://a\u00a0b/v1"\nname = "x"\napi_key = "{SECRET}"\n',
     "[model].base_url has a space or an invisible character (U+00A0)"),
    ("base_url with a control character", f'[model]\nbase_url = "http://a.b/v1\\u0001"\nname = "x"\napi_key = "{SECRET}"\n',
     "(U+0001)"),
    ("base_url port zero", f'[model]\nbase_url = "http://a.b:0/v1"\nname = "x"\napi_key = "{SECRET}"\n',
     "[model].base_url has an invalid port"),
    ("base_url half an IPv6 address", f'[model]\nbase_url = "http://[::1/v1"\nname = "x"\napi_key = "{SECRET}"\n',
     "[model].base_url is not a URL"),
    ("base_url not an IPv4 address", f'[model]\nbase_url = "http://1.2.3.256/v1"\nname = "x"\napi_key = "{SECRET}"\n',
     "[model].base_url has an invalid host name (1.2.3.256): not an IPv4 address"),
    ("base_url a name IDNA refuses", f'[model]\nbase_url = "https://h\u2024x.com/v1"\nname = "x"\napi_key = "{SECRET}"\n',
     "not a valid international name"),
    ("base_url a broken encoded name", f'[model]\nbase_url = "https://xn--zz.com/v1"\nname = "x"\napi_key = "{SECRET}"\n',
     "not a valid international name"),
    ("key with a non-breaking space", M + f'api_key = "{SECRET}\u00a0x"\n',
     "[model].api_key: the key has a character that is not printable ASCII at position 28"),
    ("key with a typographic quote", M + f'api_key = "\u201c{SECRET}\u201d"\n', "not printable ASCII at position 1"),
    ("key var with a control character", M + 'api_key_env = "MC_TEST_ODD_KEY"\n',
     "[model].api_key_env MC_TEST_ODD_KEY: the key has a character that is not printable ASCII"),
    ("langfuse no secret", GOOD + '[langfuse]\npublic_key = "p"\n', "secret_key"),
    ("langfuse wrong type", GOOD + '[langfuse]\npublic_key = "p"\nsecret_key = 1\n', "secret_key"),
    ("task not a table", GOOD + 'task = ["pytest"]\n', "task"),
    ("unknown task key", GOOD + '[task]\nverify = ["pytest"]\n', "verify"),
    ("checks not an array", GOOD + '[task]\nchecks = "pytest"\n', "[task].checks"),
    ("check not a string", GOOD + '[task]\nchecks = ["pytest", 3]\n', "item 2"),
    ("empty check", GOOD + '[task]\nchecks = ["  "]\n', "[task].checks item 1"),
    ("check timeout zero", GOOD + '[task]\ncheck_timeout = 0\n', "check_timeout"),
    ("check timeout too long", GOOD + '[task]\ncheck_timeout = 601\n', "check_timeout"),
    ("check timeout float", GOOD + '[task]\ncheck_timeout = 2.5\n', "check_timeout"),
    ("invalid toml quoting the secret", f'[model]\napi_key = "{SECRET}\n', "line 2"),
    ("invalid toml unterminated table", f'[model\napi_key = "{SECRET}"\n', "line 1"),
]


@pytest.mark.parametrize("text,key", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_each_config_error_exits_2_naming_file_and_key_without_secret(
    home: Path, ws: Path, frontend: list[dict[str, Any]], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, text: str, key: str,
) -> None:
    monkeypatch.setenv("MC_TEST_EMPTY_VAR", "")
    monkeypatch.setenv("MC_TEST_KEY", SECRET)
    monkeypatch.setenv("MC_TEST_ODD_KEY", SECRET + "\x7f")
    monkeypatch.delenv("MC_TEST_UNSET_VAR", raising=False)
    path = write(ws, text)
    assert main(["-C", str(ws), "do it"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("minicode: error: ")
    assert str(path) in err
    assert key in err
    assert SECRET not in err
    assert frontend == []  # nothing ran


def test_invalid_utf8_is_an_error(home: Path, ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = ws / "config" / "config.toml"
    path.write_bytes(b'[model]\nname = "\xff\xfe"\n')
    assert main(["-C", str(ws), "x"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "UTF-8" in err


def test_a_byte_order_mark_is_named(home: Path, ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = ws / "config" / "config.toml"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.encode())  # "UTF-8 with BOM", as Notepad saves it
    assert main(["-C", str(ws), "x"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "byte-order mark (BOM)" in err and "without BOM" in err


def test_directory_in_place_of_file_is_an_error_not_skipped(
    home: Path, ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / "config" / "config.toml").mkdir()
    _user_config(home, GOOD)  # a valid later file must not mask the problem
    assert main(["-C", str(ws), "x"]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_broken_symlink_is_an_error_not_skipped(home: Path, ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / "config" / "config.toml").symlink_to(ws / "nowhere.toml")
    _user_config(home, GOOD)
    assert main(["-C", str(ws), "x"]) == 2
    err = capsys.readouterr().err
    assert "broken symbolic link" in err and str(ws / "config" / "config.toml") in err


def test_unreadable_file_is_an_error_not_skipped(
    home: Path, ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(ws, GOOD)
    _user_config(home, GOOD)
    if os.geteuid() == 0:  # root reads anything: simulate the EACCES the OS would give
        real_open = Path.open

        def deny(self: Path, *a: Any, **k: Any) -> Any:
            if self == path:
                raise PermissionError(13, "Permission denied", str(self))
            return real_open(self, *a, **k)

        monkeypatch.setattr(Path, "open", deny)
    else:
        path.chmod(0)
    assert main(["-C", str(ws), "x"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "cannot read" in err


def test_invalid_toml_message_has_position_not_the_line(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(f'[model]\nname = "x"\napi_key = {SECRET}\n')
    with pytest.raises(ConfigError) as e:
        load_config(tmp_path, path, {})
    assert str(e.value) == f"{path}: invalid TOML at line 3, column 11"
    assert e.value.__cause__ is None  # tomllib's own text (which may quote input) is dropped


# --- search order ----------------------------------------------------------------------


def _user_config(home: Path, text: str) -> Path:
    p = home / ".config" / "minicode" / "config.toml"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def _named(name: str) -> str:
    return f'[model]\nbase_url = "http://localhost:1/v1"\nname = "{name}"\napi_key = ""\n'


def test_search_order_explicit_then_workspace_then_user(tmp_path: Path, ws: Path) -> None:
    home = tmp_path / "h"
    env = {"HOME": str(home)}
    user = _user_config(home, _named("user"))
    assert load_config(ws, None, env).model.name == "user"
    assert load_config(ws, None, env).path == user
    write(ws, _named("workspace"))
    assert load_config(ws, None, env).model.name == "workspace"
    explicit = tmp_path / "explicit.toml"
    explicit.write_text(_named("explicit"))
    cfg = load_config(ws, explicit, env)
    assert (cfg.model.name, cfg.path) == ("explicit", explicit)


def test_xdg_config_home_replaces_dot_config(tmp_path: Path, ws: Path) -> None:
    home, xdg = tmp_path / "h", tmp_path / "xdg"
    _user_config(home, _named("home"))
    (xdg / "minicode").mkdir(parents=True)
    (xdg / "minicode" / "config.toml").write_text(_named("xdg"))
    assert load_config(ws, None, {"HOME": str(home), "XDG_CONFIG_HOME": str(xdg)}).model.name == "xdg"
    # A relative XDG_CONFIG_HOME is invalid per the XDG spec and ignored.
    assert load_config(ws, None, {"HOME": str(home), "XDG_CONFIG_HOME": "rel"}).model.name == "home"


def test_invalid_workspace_file_is_not_masked_by_user_file(tmp_path: Path, ws: Path) -> None:
    home = tmp_path / "h"
    _user_config(home, _named("user"))
    write(ws, "[model]\nname = 1\n")
    with pytest.raises(ConfigError, match="name"):
        load_config(ws, None, {"HOME": str(home)})


def test_missing_explicit_file_is_an_error(tmp_path: Path, ws: Path) -> None:
    write(ws, _named("workspace"))
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(ws, tmp_path / "absent.toml", {})


def test_no_config_anywhere_lists_searched_paths(tmp_path: Path, ws: Path) -> None:
    with pytest.raises(NoConfigError) as e:
        load_config(ws, None, {"HOME": str(tmp_path / "h")})
    assert e.value.searched == (
        ws / "config" / "config.toml",
        tmp_path / "h" / ".config" / "minicode" / "config.toml",
    )
    assert find_config(ws, None, {}) is None


# --- keys, loopback, values -------------------------------------------------------------


def test_key_from_environment_variable(tmp_path: Path, ws: Path) -> None:
    write(ws, M + 'api_key_env = "MY_KEY"\nthinking = "high"\ncontext_window = 1000\n')
    cfg = load_config(ws, None, {"MY_KEY": SECRET})
    assert cfg.model.api_key == SECRET
    assert cfg.model.api_key_env == "MY_KEY"
    assert (cfg.model.thinking, cfg.model.context_window) == ("high", 1000)
    assert SECRET not in repr(cfg)


def test_defaults(ws: Path) -> None:
    write(ws, GOOD)
    cfg = load_config(ws, None, {})
    assert cfg.model.provider == "openai"
    assert cfg.model.context_window is None  # not set: asked of the server (else the default)
    assert cfg.model.thinking is None
    assert cfg.langfuse is None


def test_langfuse_table(ws: Path) -> None:
    write(ws, GOOD + '[langfuse]\npublic_key = "pk"\nsecret_key = "sk"\n')
    lf = load_config(ws, None, {}).langfuse
    assert lf is not None and (lf.public_key, lf.secret_key, lf.host) == ("pk", "sk", "https://cloud.langfuse.com")


@pytest.mark.parametrize("url", ["http://127.0.0.1:11434/v1", "http://127.9.9.9/v1", "http://[::1]:8080/v1",
                                 "http://localhost:8080/v1", "https://LOCALHOST/v1"])
def test_empty_key_allowed_for_loopback(ws: Path, url: str) -> None:
    write(ws, f'[model]\nbase_url = "{url}"\nname = "m"\napi_key = ""\n')
    assert load_config(ws, None, {}).model.api_key == ""
    write(ws, f'[model]\nbase_url = "{url}"\nname = "m"\napi_key_env = "EMPTY"\n')
    assert load_config(ws, None, {"EMPTY": ""}).model.api_key == ""


@pytest.mark.parametrize("url", ["http://10.0.0.1/v1", "http://localhost.evil.com/v1", "http://128.0.0.1/v1",
                                 "https://api.openai.com/v1", "http://0.0.0.0/v1"])
def test_empty_key_rejected_for_non_loopback(ws: Path, url: str) -> None:
    assert not is_loopback_url(url)
    write(ws, f'[model]\nbase_url = "{url}"\nname = "m"\napi_key = ""\n')
    with pytest.raises(ConfigError, match="loopback"):
        load_config(ws, None, {})


def test_overrides(ws: Path) -> None:
    write(ws, GOOD)
    cfg = apply_overrides(load_config(ws, None, {}), model="other", thinking="max")
    assert (cfg.model.name, cfg.model.thinking, cfg.model.api_key) == ("other", "max", SECRET)
    with pytest.raises(ConfigError, match="--think"):
        apply_overrides(cfg, thinking="huge")


# --- the starter writer -----------------------------------------------------------------


def test_write_starter_config_is_0600_and_loadable(tmp_path: Path) -> None:
    old = os.umask(0)  # even a permissive umask must not widen the mode
    try:
        path = write_starter_config(tmp_path / "a" / "b" / "config.toml", base_url="https://x.io/v1",
                                    model="m1", api_key=SECRET)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    cfg = load_config(tmp_path, path, {})
    assert (cfg.model.base_url, cfg.model.name, cfg.model.api_key) == ("https://x.io/v1", "m1", SECRET)


def test_write_starter_config_with_variable(tmp_path: Path) -> None:
    path = write_starter_config(tmp_path / "c.toml", base_url="https://x.io/v1", model="m", api_key_env="K")
    assert 'api_key_env = "K"' in path.read_text()
    assert load_config(tmp_path, path, {"K": "v"}).model.api_key == "v"


def test_write_starter_config_refuses_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("keep me")
    with pytest.raises(ConfigError, match=r"refusing to overwrite it \(edit it, or move it away and run --init again\)"):
        write_starter_config(path, base_url="https://x.io/v1", model="m", api_key_env="K")
    assert path.read_text() == "keep me"
    link = tmp_path / "link.toml"
    link.symlink_to(tmp_path / "target.toml")
    with pytest.raises(ConfigError, match="refusing to overwrite"):
        write_starter_config(link, base_url="https://x.io/v1", model="m", api_key_env="K")
    assert not (tmp_path / "target.toml").exists()


@pytest.mark.parametrize("kwargs,match", [
    ({"api_key": "k", "api_key_env": "K"}, "exactly one"),
    ({}, "exactly one"),
    ({"api_key_env": "1BAD"}, "variable name"),
    ({"api_key": ""}, "loopback"),
])
def test_write_starter_config_validates_before_writing(tmp_path: Path, kwargs: dict[str, str], match: str) -> None:
    path = tmp_path / "c.toml"
    with pytest.raises(ConfigError, match=match):
        write_starter_config(path, base_url="https://x.io/v1", model="m", **kwargs)
    assert not path.exists()


# --- committed files --------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]


def test_example_config_is_valid(tmp_path: Path) -> None:
    cfg = load_config(tmp_path, ROOT / "config" / "config.example.toml", {"OPENAI_API_KEY": SECRET})
    assert (cfg.model.api_key_env, cfg.model.api_key) == ("OPENAI_API_KEY", SECRET)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        load_config(tmp_path, ROOT / "config" / "config.example.toml", {})


def test_gitignore_keeps_secrets_and_sessions_out() -> None:
    lines = (ROOT / ".gitignore").read_text().splitlines()
    assert "config/config.toml" in lines
    assert ".minicode/sessions/" in lines
    assert "config/config.example.toml" not in lines


def test_starter_header_names_its_origin_and_where_keys_are_described(tmp_path: Path) -> None:
    path = write_starter_config(tmp_path / "c.toml", base_url="https://x.io/v1", model="m", api_key_env="K",
                                origin="the test")
    head = path.read_text().splitlines()[:2]
    assert head[0] == "# minicode configuration, written by the test."
    assert "minicode --help" in head[1] and "docs/config.md in the minicode repository" in head[1]


def test_unset_key_variable_says_how_to_set_it(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[model]\nbase_url = "https://x.io/v1"\nname = "m"\napi_key_env = "MY_VAR"\n')
    with pytest.raises(ConfigError) as e:
        load_config(tmp_path, path, {})
    assert "export MY_VAR=…" in str(e.value)


def test_task_checks_load_strip_and_merge_with_check_flags(ws: Path) -> None:
    path = write(ws, GOOD + '[task]\nchecks = [" pytest -q ", "ruff check ."]\ncheck_timeout = 300\n')
    config = load_config(ws, path, {})
    assert config.task.checks == ("pytest -q", "ruff check .")
    assert config.task.check_timeout == 300
    merged = apply_overrides(config, checks=("mypy", "pytest -q"))
    assert merged.task.checks == ("pytest -q", "ruff check .", "mypy")  # file first, each once
    with pytest.raises(ConfigError, match="--check"):
        apply_overrides(config, checks=(" ",))


def test_task_defaults_without_the_table(ws: Path) -> None:
    config = load_config(ws, write(ws, GOOD), {})
    assert config.task.checks == () and config.task.check_timeout == 120


@pytest.mark.parametrize("url", ["http://localhost.:8080/v1", "http://[::1]:8080/v1", "https://bücher.example/v1",
                                 f"https://{'a' * 63}.example/v1", "http://127.0.0.1:9/v1", "http://my_service:80/v1",
                                 "HTTPS://API.Example.COM/v1", "https://xn--bcher-kva.example/v1",
                                 "http://10.0.0.1:65535/v1", "https://stra\u00dfe.de/v1"])
def test_every_host_name_the_resolver_takes_is_a_valid_base_url(url: str) -> None:
    from minicode.config import check_base_url

    check_base_url(url)  # no ConfigError
