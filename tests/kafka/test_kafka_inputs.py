"""Inputs people get wrong, and secrets: one clear line, no traceback, nothing leaked.

These need no broker (the unreachable one is the point), so they are not marked ``kafka``.
"""

from __future__ import annotations

import socket

import pytest
from kafkakit import run_cli
from lagassign.kafka.config import build_config, from_env, load_properties, redact
from lagassign.kafka.errors import GroupsFileError, KafkaConfigError
from lagassign.kafka.groupsfile import load_groups_file, parse_groups


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _one_line_error(result, *needles: str) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lagassign: error: "), result.stderr
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in lines[0]
    return lines[0]


def test_unreachable_broker_is_one_line_after_bounded_retries(tmp_path) -> None:
    server = f"127.0.0.1:{_free_port()}"
    result = run_cli(
        "snapshot",
        "--bootstrap-server",
        server,
        "--timeout",
        "1",
        "--out",
        str(tmp_path / "s"),
        "--config",
        "sasl.password=do-not-print",
        timeout=60,
    )
    line = _one_line_error(result, "cannot reach Kafka", server, "within 1s")
    assert "do-not-print" not in line
    assert not (tmp_path / "s").exists()


def test_bad_setting_is_one_line_without_the_secret(tmp_path) -> None:
    result = run_cli(
        "snapshot",
        "--bootstrap-server",
        "127.0.0.1:1",
        "--config",
        "no.such.setting=1",
        "--out",
        str(tmp_path),
    )
    _one_line_error(result, "no.such.setting")
    result = run_cli(
        "snapshot", "--bootstrap-server", "127.0.0.1:1", "--config", "nonsense", "--out", str(tmp_path)
    )
    _one_line_error(result, "expected KEY=VALUE")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--groups", "orders-(["], "not a valid regex"),
        (["--groups-file", "/no/such/groups.yaml"], "cannot read groups file"),
    ],
)
def test_bad_regex_and_missing_groups_file(tmp_path, args, needle) -> None:
    result = run_cli("snapshot", "--bootstrap-server", "127.0.0.1:1", *args, "--out", str(tmp_path))
    _one_line_error(result, needle)


def test_bad_plan_file_is_one_line(tmp_path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text('{"group": "g", "strategy": "lag", "assignment": {"a": [["t", 0]], "b": [["t", 0]]}}')
    result = run_cli("publish", str(plan), "--export-only", "--export", str(tmp_path / "out.json"))
    _one_line_error(result, "given to both a and b")


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("groups: [{group: g, instances: [a]}]", "without 'topics'"),
        ("groups: [{group: g, topics: [t]}]", "'instances' must be"),
        ("groups: [{group: g, topics: [t], instances: [a, a]}]", "listed twice"),
        (
            "groups:\n- group: g\n  instances:\n    a: [t]\n    b: [t]\n    a: [u]\n",
            "'a' is listed twice .* line 6",
        ),
        (
            "groups: [{group: g, topics: [t], instances: [a], auto_offset_reset: sometimes}]",
            "auto_offset_reset",
        ),
        ("groups: [{group: g, topics: [t], instances: [a], colour: red}]", "unknown key"),
        (
            "- {group: g, topics: [t], instances: [a]}\n- {group: g, topics: [t], instances: [b]}",
            "declared twice",
        ),
        ("groups: [{group: g, topics: [t], instances: [a]}", "line"),
    ],
)
def test_groups_file_errors_name_the_problem(tmp_path, text, needle) -> None:
    path = tmp_path / "groups.yaml"
    path.write_text(text)
    with pytest.raises(GroupsFileError, match=needle):
        load_groups_file(path)


def test_groups_file_forms() -> None:
    [a, b] = parse_groups(
        {
            "groups": [
                {"group": "a", "topics": ["t"], "instances": ["w1", "w0"], "auto_offset_reset": "Earliest"},
                {"group": "b", "topics": "t", "instances": {"x": ["u", "t"], "y": None}},
            ]
        }
    )
    assert a.instances == {"w0": ("t",), "w1": ("t",)} and a.auto_offset_reset == "earliest"
    assert b.instances == {"x": ("t", "u"), "y": ("t",)} and b.topics == ["t", "u"]


def test_settings_precedence_and_redaction(tmp_path) -> None:
    props = tmp_path / "client.properties"
    props.write_text("! comment\nbootstrap.servers = a:1\nclient.id: from-file\nsasl.password=file\n")
    assert load_properties(props)["client.id"] == "from-file"
    env = {"LAGASSIGN_KAFKA_CLIENT_ID": "from-env", "LAGASSIGN_KAFKA_LOG__LEVEL": "3", "OTHER": "x"}
    assert from_env(env) == {"client.id": "from-env", "log_level": "3"}
    conf = build_config("b:2", ["sasl.password=flag", "security.protocol=SASL_SSL"], props, env)
    assert conf["bootstrap.servers"] == "b:2" and conf["client.id"] == "from-env"
    assert conf["sasl.password"] == "flag"
    shown = redact(
        {
            **conf,
            "ssl.key.pem": "PEM",
            "ssl.key.password": "k",
            "ssl.key.location": "/k.pem",
            "sasl.oauthbearer.client.secret": "s",
            "sasl.username": "u",
            "logger": object(),
        }
    )
    assert shown["sasl.password"] == shown["ssl.key.pem"] == shown["ssl.key.password"] == "***"
    assert shown["sasl.oauthbearer.client.secret"] == "***"
    assert (shown["ssl.key.location"], shown["sasl.username"], shown["logger"]) == ("/k.pem", "u", "<object>")
    with pytest.raises(KafkaConfigError, match="no bootstrap server"):
        build_config(None, [], None, {})
