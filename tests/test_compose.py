"""The wiring of docker-compose.yml, checked without a Docker engine.

Services, pinned image tags, the shared Airflow environment and its connections, the database
URLs, the shared data volume, 127.0.0.1-only host ports and the Dockerfiles. `docker compose
config -q` runs too where the compose plugin is installed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker-compose.yml"

AIRFLOW_SERVICES = ("airflow-apiserver", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer")
SERVICES = ("kafka", "postgres", "airflow-init", *AIRFLOW_SERVICES, "spark-master", "spark-worker")
DATA_DIR = "/opt/lagassign-data"


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


@pytest.fixture(scope="module")
def services(compose) -> dict:
    return compose["services"]


def _interpolate(value: str) -> str:
    """Compose's ${VAR:-default} / ${VAR} with no variable set: the default, or empty."""
    return re.sub(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::?-([^}]*))?\}", lambda m: m.group(1) or "", value)


def _env(service: dict) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: _interpolate(str(v)) for k, v in env.items()}


def _container_port(port: str | int) -> int:
    return int(str(port).split("/")[0].rsplit(":", 1)[-1])


def _mounts(service: dict) -> dict[str, str]:
    """target -> source of the service's volumes (short syntax)."""
    out = {}
    for vol in service.get("volumes", []):
        source, target = vol.split(":")[:2]
        out[target] = source
    return out


def _from_lines(dockerfile: Path) -> list[str]:
    return re.findall(r"^FROM\s+(\S+)", dockerfile.read_text(), flags=re.MULTILINE)


def test_the_services_exist(services):
    missing = [name for name in SERVICES if name not in services]
    assert not missing, f"services missing from docker-compose.yml: {missing}"


def test_every_image_tag_is_pinned(services):
    for name, svc in services.items():
        image = svc.get("image")
        assert image, f"{name} has no image (a built one needs a name:tag too)"
        _repo, sep, tag = image.rpartition(":")
        assert sep and "/" not in tag and tag, f"{name}: image {image!r} has no tag"
        assert tag != "latest", f"{name}: image {image!r} is not pinned"


def test_dockerfiles_exist_and_their_bases_are_pinned(services):
    for name, svc in services.items():
        if "build" not in svc:
            continue
        dockerfile = ROOT / svc["build"].get("context", ".") / svc["build"]["dockerfile"]
        assert dockerfile.is_file(), f"{name}: {dockerfile} does not exist"
        for base in _from_lines(dockerfile):
            assert ":" in base and not base.endswith(":latest"), f"{dockerfile.name}: FROM {base} not pinned"


def test_the_airflow_image_is_the_pinned_airflow_version(services):
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    pipeline = pyproject["project"]["optional-dependencies"]["pipeline"]
    pins = [d for d in pipeline if d.startswith("apache-airflow==")]
    version = pins[0].split("==")[1]
    svc = services["airflow-scheduler"]
    bases = _from_lines(ROOT / svc["build"]["dockerfile"])
    airflow_bases = [b for b in bases if b.startswith("apache/airflow:")]
    assert airflow_bases == [f"apache/airflow:{version}-python3.11"], bases
    dockerfile = (ROOT / svc["build"]["dockerfile"]).read_text()
    assert "[kafka,pipeline]" in dockerfile and "requirements.lock" in dockerfile
    assert "asyncpg" in dockerfile  # Airflow 3's async engine on PostgreSQL


def test_the_spark_image_matches_the_drivers_pyspark(services):
    lock = (ROOT / "requirements.lock").read_text()
    pyspark = re.search(r"^pyspark==(\S+)$", lock, flags=re.MULTILINE).group(1)
    dockerfile = ROOT / services["spark-worker"]["build"]["dockerfile"]
    text = dockerfile.read_text()
    assert "requirements.lock" in text and f"'{pyspark}'" in text
    assert any(b.startswith("python:3.11") for b in _from_lines(dockerfile))  # the driver's Python minor
    for lib in ("numpy", "pandas", "pyarrow"):
        assert lib in text


def test_airflow_services_share_the_environment_anchor(compose, services):
    shared = {k: _interpolate(str(v)) for k, v in compose["x-airflow-env"].items()}
    for name in ("airflow-init", *AIRFLOW_SERVICES):
        env = _env(services[name])
        differing = {k for k, v in shared.items() if env.get(k) != v}
        assert not differing, f"{name} lacks or overrides {sorted(differing)}"
    assert shared["AIRFLOW__CORE__EXECUTOR"] == "LocalExecutor"
    assert shared["AIRFLOW__CORE__LOAD_EXAMPLES"] == "False"


def test_spark_connection_points_at_the_master(compose, services):
    conn = json.loads(_interpolate(compose["x-airflow-env"]["AIRFLOW_CONN_SPARK_DEFAULT"]))
    assert conn["conn_type"] == "spark"
    # What the provider's SparkSubmitHook builds: host when it holds a URL, then :port.
    master = f"{conn['host']}:{conn['port']}"
    url = urlsplit(master)
    assert url.scheme == "spark" and url.hostname == "spark-master" and url.port == 7077
    master_svc = services[url.hostname]
    assert "7077" in master_svc["command"]
    assert 7077 in {_container_port(p) for p in master_svc.get("expose", [])}
    worker_cmd = services["spark-worker"]["command"]
    assert "spark://spark-master:7077" in worker_cmd


def test_kafka_connection_names_the_kafka_listener(compose, services):
    conn = json.loads(_interpolate(compose["x-airflow-env"]["AIRFLOW_CONN_LAGASSIGN_KAFKA"]))
    host, port = conn["extra"]["bootstrap.servers"].rsplit(":", 1)
    assert host in services
    advertised = _env(services[host])["KAFKA_ADVERTISED_LISTENERS"].split(",")
    assert f"PLAINTEXT://{host}:{port}" in advertised
    listeners = _env(services[host])["KAFKA_LISTENERS"].split(",")
    assert f"PLAINTEXT://:{port}" in listeners
    # and one listener for the host, published on 127.0.0.1
    host_listener = next(a for a in advertised if "localhost" in a)
    host_port = int(host_listener.rsplit(":", 1)[1])
    assert f"127.0.0.1:{host_port}:{host_port}" in services[host]["ports"]
    assert _env(services[host])["KAFKA_PROCESS_ROLES"] == "broker,controller"  # KRaft


def test_kafka_is_the_release_the_tests_run(services):
    """The compose broker is the Apache Kafka release of the tests' broker (kafka4)."""

    import brokerctl

    assert services["kafka"]["image"] == f"apache/kafka:{brokerctl.KAFKA4_VERSION}"


def test_database_urls_point_at_postgres(compose, services):
    env = compose["x-airflow-env"]
    airflow_url = urlsplit(env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"])
    store_url = urlsplit(env["LAGASSIGN_DB_URL"])
    for url in (airflow_url, store_url):
        assert url.scheme.startswith("postgresql") and url.hostname == "postgres"
        assert url.hostname in services
    assert airflow_url.scheme == "postgresql+psycopg2"
    pg_env = _env(services["postgres"])
    assert airflow_url.path == f"/{pg_env['POSTGRES_DB']}"
    assert airflow_url.username == pg_env["POSTGRES_USER"]
    # the audit store's database comes from the init script mounted into postgres
    init_dir = next(
        src for tgt, src in _mounts(services["postgres"]).items() if tgt == "/docker-entrypoint-initdb.d"
    )
    sql = "\n".join(p.read_text() for p in sorted((ROOT / init_dir).glob("*.sql")))
    assert f"CREATE DATABASE {store_url.path.lstrip('/')}" in sql
    assert f"PASSWORD '{store_url.password}'" in sql


def test_the_base_dir_is_shared_by_airflow_and_the_spark_workers(compose, services):
    assert compose["x-airflow-env"]["LAGASSIGN_BASE_DIR"] == DATA_DIR
    sources = set()
    for name in (*AIRFLOW_SERVICES, "spark-worker"):
        mounts = _mounts(services[name])
        assert DATA_DIR in mounts, f"{name} does not mount {DATA_DIR}"
        sources.add(mounts[DATA_DIR])
    assert len(sources) == 1 and next(iter(sources)) in compose["volumes"], sources


def test_dags_and_plugins_are_mounted_where_airflow_looks(compose, services):
    env = compose["x-airflow-env"]
    for name in AIRFLOW_SERVICES:
        mounts = _mounts(services[name])
        assert mounts[env["AIRFLOW__CORE__DAGS_FOLDER"]] == "./dags"
        assert mounts[env["AIRFLOW__CORE__PLUGINS_FOLDER"]] == "./plugins"


def test_host_ports_bind_to_localhost_only(services):
    for name, svc in services.items():
        for port in svc.get("ports", []):
            assert isinstance(port, str) and port.startswith("127.0.0.1:"), f"{name}: {port!r}"
    assert "127.0.0.1:8080:8080" in services["airflow-apiserver"]["ports"]


def test_startup_order(services):
    for name in AIRFLOW_SERVICES:
        deps = services[name]["depends_on"]
        assert deps["postgres"]["condition"] == "service_healthy"
        assert deps["airflow-init"]["condition"] == "service_completed_successfully"
    assert "db migrate" in "\n".join(services["airflow-init"]["command"])
    assert services["spark-worker"]["depends_on"]["spark-master"]["condition"] == "service_healthy"
    for name in ("kafka", "postgres", "spark-master", *AIRFLOW_SERVICES):
        assert "healthcheck" in services[name], f"{name} has no healthcheck"


def _compose_available() -> str | None:
    if shutil.which("docker") is None:
        return "no docker client"
    try:
        result = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"docker compose version failed: {exc}"
    if result.returncode != 0:
        return f"docker compose is not available: {(result.stderr or result.stdout).strip()[:200]}"
    return None


def test_docker_compose_config_accepts_the_file():
    reason = _compose_available()
    if reason:
        pytest.skip(reason)
    result = subprocess.run(
        ["docker", "compose", "-f", str(COMPOSE), "config", "-q"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
