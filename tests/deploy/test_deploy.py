"""deploy/ checked with what runs here (no docker, kubectl or promtool): every YAML parses;
the compose file and the Kubernetes manifests have the essentials and refer to things that
exist (services, volumes, ConfigMaps, Secrets and their keys, container ports); every
``tacocat`` command in them parses with the real CLI parser; the alert rules have what
promtool requires; and every metric named in the alert rules and the Grafana dashboard is one
the code exports."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tacocat.cli import build_parser
from tacocat.server.metrics import exported_metric_names
from tacocat.worker.metrics import WORKER_METRICS
from tacocat.worker.sandbox._cgroups import V2_CONTROLLERS

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
K8S = DEPLOY / "k8s"

API_VERSIONS = {
    "ConfigMap": "v1", "Secret": "v1", "Service": "v1", "Deployment": "apps/v1",
    "StatefulSet": "apps/v1", "ScaledObject": "keda.sh/v1alpha1",
    "TriggerAuthentication": "keda.sh/v1alpha1",
    "HorizontalPodAutoscaler": "autoscaling/v2",
}
DURATION = re.compile(r"^(\d+(ms|s|m|h|d|w|y))+$")
PROMQL_WORDS = {
    "sum", "by", "without", "rate", "increase", "and", "or", "unless", "on", "ignoring",
    "vector", "clamp_min", "absent", "histogram_quantile", "count", "max", "min", "avg",
    "le", "bool", "group_left", "group_right", "label_values", "irate", "topk", "offset",
}
BUILTIN_METRICS = {"up"}


def exported() -> set[str]:
    """Every series name the code exports (histograms with their suffixes)."""
    names: set[str] = set()
    for name, kind in {**exported_metric_names(), **WORKER_METRICS}.items():
        names.add(name)
        if kind == "histogram":
            names |= {name + "_bucket", name + "_count", name + "_sum"}
    return names


def metric_names(expr: str) -> set[str]:
    """The metric names an expression refers to (identifiers outside {...} and strings that
    are neither PromQL words nor label names before a comparison)."""
    stripped = re.sub(r'"[^"]*"|\'[^\']*\'', '""', expr)
    stripped = re.sub(r"\{[^}]*\}", "", stripped)
    stripped = re.sub(r"\[[^\]]*\]", "", stripped)
    stripped = re.sub(r"\b(by|without|on|ignoring)\s*\([^)]*\)", "", stripped)
    words = set(re.findall(r"\b[a-zA-Z_:][a-zA-Z0-9_:]*\b", stripped))
    return {w for w in words if w not in PROMQL_WORDS and not re.fullmatch(r"\d+e?\d*", w)}


def yaml_files() -> list[Path]:
    return sorted([*DEPLOY.rglob("*.yaml"), *DEPLOY.rglob("*.yml")])


def load_all(path: Path) -> list[Any]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]


def check_tacocat_command(argv: list[str], where: str) -> argparse.Namespace:
    """Parse ``argv`` (without the leading ``tacocat``) with the real CLI parser."""
    args = [re.sub(r"\$\((\w+)\)", "INFO", a) if "LOG_LEVEL" in a else a for a in argv]
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return build_parser().parse_args(args)
    except SystemExit:
        pytest.fail(f"{where}: `tacocat {' '.join(argv)}` does not parse: {err.getvalue()}")


# -- all files ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", yaml_files(), ids=lambda p: str(p.relative_to(DEPLOY)))
def test_every_yaml_file_parses(path: Path) -> None:
    assert load_all(path), f"{path} is empty"


def test_the_expected_files_exist() -> None:
    for name in ("compose.yaml", "Dockerfile", "prometheus/prometheus.yml",
                 "prometheus/alerts.yml", "grafana/dashboards/tacocat.json",
                 "grafana/provisioning/datasources/prometheus.yaml",
                 "grafana/provisioning/dashboards/tacocat.yaml", "k8s/server.yaml",
                 "k8s/worker.yaml", "k8s/redis.yaml", "k8s/config.yaml"):
        assert (DEPLOY / name).is_file(), name


# -- compose -----------------------------------------------------------------------------------


def compose() -> dict[str, Any]:
    (doc,) = load_all(DEPLOY / "compose.yaml")
    assert isinstance(doc, dict)
    return doc


def test_compose_has_redis_with_aof_server_workers_prometheus_grafana() -> None:
    doc = compose()
    services = doc["services"]
    assert {"redis", "server", "worker", "prometheus", "grafana"} <= set(services)
    for name, service in services.items():
        assert isinstance(service.get("image"), str) and service["image"], name
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if source.startswith("."):
                assert (DEPLOY / source).exists(), f"{name} mounts missing {source}"
            else:
                assert source in doc.get("volumes", {}), f"{name}: undeclared volume {source}"
        for dep in service.get("depends_on", []):
            assert dep in services, f"{name} depends on unknown {dep}"
    redis = " ".join(services["redis"]["command"])
    assert "--appendonly yes" in redis and "noeviction" in redis
    assert "redis-data:/data" in services["redis"]["volumes"]
    # Scalable: no fixed container name or host port on the workers.
    worker = services["worker"]
    assert "container_name" not in worker and "ports" not in worker
    assert worker["deploy"]["replicas"] >= 1
    for name in ("server", "worker"):
        assert services[name]["environment"]["REDIS_URL"].startswith("redis://redis:")


@pytest.mark.parametrize("service", ["server", "worker"])
def test_compose_tacocat_commands_parse(service: str) -> None:
    command = compose()["services"][service]["command"]
    args = check_tacocat_command(command, f"compose {service}")
    assert args.command == service.replace("server", "serve")
    if service == "worker":
        assert args.metrics_port == 9100 and args.metrics_host == "0.0.0.0"
    else:
        assert args.host == "0.0.0.0" and args.web_port == 8080


def test_compose_mounts_match_prometheus_and_grafana_config() -> None:
    services = compose()["services"]
    prom = " ".join(services["prometheus"]["volumes"])
    (config,) = load_all(DEPLOY / "prometheus/prometheus.yml")
    for rules in config["rule_files"]:
        assert f":{rules}:" in prom, rules
    (provider,) = load_all(DEPLOY / "grafana/provisioning/dashboards/tacocat.yaml")
    path = provider["providers"][0]["options"]["path"]
    assert f"./grafana/dashboards:{path}" in " ".join(services["grafana"]["volumes"])
    targets = {t for job in config["scrape_configs"]
               for sc in job.get("static_configs", []) for t in sc["targets"]}
    assert "server:8080" in targets
    workers = [job for job in config["scrape_configs"] if job["job_name"] == "tacocat-worker"]
    assert workers and workers[0]["dns_sd_configs"][0]["port"] == 9100


# -- Kubernetes --------------------------------------------------------------------------------


def manifests() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in sorted(K8S.glob("*.yaml")):
        docs += load_all(path)
    return docs


def containers(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from doc["spec"]["template"]["spec"]["containers"]


def test_manifests_have_the_essentials() -> None:
    docs = manifests()
    kinds = {(d["kind"], d["metadata"]["name"]) for d in docs}
    assert {("Deployment", "tacocat-server"), ("Service", "tacocat-server"),
            ("Deployment", "tacocat-worker"), ("StatefulSet", "tacocat-redis"),
            ("ScaledObject", "tacocat-worker"), ("ConfigMap", "tacocat-config"),
            ("Secret", "tacocat-redis")} <= kinds
    for doc in docs:
        kind = doc["kind"]
        assert doc["apiVersion"] == API_VERSIONS[kind], kind
        assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", doc["metadata"]["name"])
        if kind in ("ConfigMap", "Secret"):
            data = doc.get("data") or doc.get("stringData") or {}
            assert data and all(isinstance(v, str) for v in data.values()), kind
        else:
            assert isinstance(doc["spec"], dict), kind
        if kind in ("Deployment", "StatefulSet"):
            selector = doc["spec"]["selector"]["matchLabels"]
            labels = doc["spec"]["template"]["metadata"]["labels"]
            assert selector.items() <= labels.items(), doc["metadata"]["name"]
            for container in containers(doc):
                assert container["name"] and container["image"], doc["metadata"]["name"]


def test_references_resolve() -> None:
    docs = manifests()
    by_kind: dict[str, dict[str, dict[str, Any]]] = {}
    for doc in docs:
        by_kind.setdefault(doc["kind"], {})[doc["metadata"]["name"]] = doc

    def keys(kind: str, name: str) -> set[str]:
        doc = by_kind[kind][name]
        return set(doc.get("data") or {}) | set(doc.get("stringData") or {})

    workloads = [*by_kind["Deployment"].values(), *by_kind["StatefulSet"].values()]
    for doc in workloads:
        for container in containers(doc):
            for source in container.get("envFrom", []):
                assert source["configMapRef"]["name"] in by_kind["ConfigMap"]
            env_names = set()
            for source in container.get("envFrom", []):
                env_names |= keys("ConfigMap", source["configMapRef"]["name"])
            for var in container.get("env", []):
                env_names.add(var["name"])
                ref = var.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    assert ref["key"] in keys("Secret", ref["name"]), ref
            for arg in [*container.get("command", []), *container.get("args", [])]:
                for name in re.findall(r"\$\((\w+)\)", arg):
                    assert name in env_names, f"{arg}: ${name} is not in the environment"
    for service in by_kind["Service"].values():
        selected = [w for w in workloads if service["spec"]["selector"].items()
                    <= w["spec"]["template"]["metadata"]["labels"].items()]
        assert selected, f"service {service['metadata']['name']} selects nothing"
        ports = {p["name"] for w in selected for c in containers(w) for p in c.get("ports", [])}
        for port in service["spec"]["ports"]:
            assert port["targetPort"] in ports, port
    for scaled in by_kind["ScaledObject"].values():
        assert scaled["spec"]["scaleTargetRef"]["name"] in by_kind["Deployment"]
        for trigger in scaled["spec"]["triggers"]:
            assert trigger["type"] == "redis"
            assert trigger["metadata"]["listName"] == "rq:queue:tacocat-matches"
            auth = trigger["authenticationRef"]["name"]
            for ref in by_kind["TriggerAuthentication"][auth]["spec"]["secretTargetRef"]:
                assert ref["key"] in keys("Secret", ref["name"]), ref
    redis = by_kind["StatefulSet"]["tacocat-redis"]
    assert redis["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] in {
        m["name"] for c in containers(redis) for m in c.get("volumeMounts", [])}
    assert "--appendonly" in next(containers(redis))["command"]


@pytest.mark.parametrize("name", ["tacocat-server", "tacocat-worker"])
def test_k8s_tacocat_commands_parse(name: str) -> None:
    (deployment,) = [d for d in manifests() if d["kind"] == "Deployment"
                     and d["metadata"]["name"] == name]
    (container,) = containers(deployment)
    if name == "tacocat-worker":  # a shell first remounts the pod's cgroup (test below)
        assert container["command"][:2] == ["sh", "-c"] and container["command"][-1] == "--"
        assert 'exec tacocat "$@"' in container["command"][2]
    else:
        assert container["command"] == ["tacocat"]
    args = check_tacocat_command(container["args"], name)
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    port = int(annotations["prometheus.io/port"])
    assert port == (args.web_port if args.command == "serve" else args.metrics_port)
    assert port in {p["containerPort"] for p in container["ports"]}


# -- Prometheus rules and the dashboard ----------------------------------------------------------


def rules() -> list[dict[str, Any]]:
    (doc,) = load_all(DEPLOY / "prometheus/alerts.yml")
    return [rule for group in doc["groups"] for rule in group["rules"]]


def test_alert_rules_are_complete() -> None:
    found = rules()
    names = [r["alert"] for r in found]
    assert len(names) == len(set(names))
    for rule in found:
        assert set(rule) == {"alert", "expr", "for", "labels", "annotations"}, rule["alert"]
        assert re.fullmatch(r"[A-Z][A-Za-z0-9]+", rule["alert"])
        assert DURATION.match(rule["for"]), rule["for"]
        assert rule["labels"]["severity"] in {"warning", "critical"}
        assert {"summary", "description"} <= set(rule["annotations"])
        expr = rule["expr"]
        assert expr.count("(") == expr.count(")") and expr.count("{") == expr.count("}")
    text = " ".join(r["expr"] for r in found)
    for needed in ("tacocat_queue_oldest_age_seconds", "tacocat_workers",
                   "tacocat_forfeits_total", "tacocat_redis_up"):
        assert needed in text, f"no alert on {needed}"


def test_alert_rules_and_dashboard_refer_only_to_exported_metrics() -> None:
    known = exported() | BUILTIN_METRICS
    for rule in rules():
        unknown = metric_names(rule["expr"]) - known
        assert not unknown, f"{rule['alert']}: unknown metrics {unknown}"
    dashboard = json.loads((DEPLOY / "grafana/dashboards/tacocat.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    # label_values(METRIC, LABEL): only the metric is a metric
    exprs += [v["query"]["query"].split(",")[0].removeprefix("label_values(")
              for v in dashboard["templating"]["list"]]
    assert len(exprs) > 10
    used: set[str] = set()
    for expr in exprs:
        names = metric_names(expr.replace("$ladder", "x"))
        used |= names
        assert not names - known, f"{expr}: unknown metrics {names - known}"
    # The dashboard shows every family the code exports (bar the scrape-error counter).
    families = {n for n in exported_metric_names() | WORKER_METRICS
                if n != "tacocat_metrics_scrape_errors_total"}
    shown = {n.removesuffix("_bucket") for n in used}
    assert families <= shown, f"not on the dashboard: {families - shown}"


def test_dashboard_is_provisioned_against_the_datasource() -> None:
    dashboard = json.loads((DEPLOY / "grafana/dashboards/tacocat.json").read_text())
    (datasources,) = load_all(DEPLOY / "grafana/provisioning/datasources/prometheus.yaml")
    uid = datasources["datasources"][0]["uid"]
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids)) and dashboard["uid"] and dashboard["title"]
    for panel in dashboard["panels"]:
        assert panel["datasource"]["uid"] == uid
        assert set(panel["gridPos"]) == {"x", "y", "w", "h"}
        assert all(t["refId"] and t["expr"] for t in panel["targets"])


def test_the_metric_name_extractor() -> None:
    assert metric_names('sum by (le) (rate(a_b_bucket{x="y"}[5m])) > 0.5 and on() up') \
        == {"a_b_bucket", "up"}


# -- what the worker's sandbox needs from its host (docs/SECURITY.md, "Hosts") -----------------


REMOUNT = "mount -o remount,rw /sys/fs/cgroup && exec tacocat"


def test_compose_worker_gets_what_worker_check_requires() -> None:
    """A cgroup namespace of its own, made writable (CAP_SYS_ADMIN, not privileged), root
    in the container (bots as uids of their own), seccomp and AppArmor out of bwrap's way."""
    worker = compose()["services"]["worker"]
    assert worker["cgroup"] == "private"
    assert worker["cap_add"] == ["SYS_ADMIN"] and not worker.get("privileged")
    assert {"seccomp=unconfined", "apparmor=unconfined"} <= set(worker["security_opt"])
    assert str(worker["user"]) == "0"
    assert REMOUNT in worker["entrypoint"][2] and worker["entrypoint"][:2] == ["sh", "-c"]
    server = compose()["services"]["server"]
    assert "user" not in server and "cap_add" not in server  # the image's uid 10001


def test_k8s_worker_gets_what_worker_check_requires() -> None:
    (deployment,) = [d for d in manifests() if d["kind"] == "Deployment"
                     and d["metadata"]["name"] == "tacocat-worker"]
    (container,) = containers(deployment)
    context = container["securityContext"]
    assert context["runAsUser"] == 0 and context["privileged"] is False
    assert context["capabilities"]["add"] == ["SYS_ADMIN"]
    assert context["seccompProfile"]["type"] == "Unconfined"
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations["container.apparmor.security.beta.kubernetes.io/worker"] == "unconfined"
    assert REMOUNT in container["command"][2]


def test_the_image_has_the_sandbox_runtimes() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    install = next(line for line in dockerfile.splitlines() if "apt-get install" in line)
    for package in ("bubblewrap", "util-linux", "mount"):
        assert package in install.split(), package


def test_systemd_unit_delegates_every_controller_a_bot_needs() -> None:
    unit = (DEPLOY / "systemd/tacocat-worker.service").read_text()
    service: dict[str, str] = {}
    section = ""
    for line in unit.splitlines():
        if line.startswith("["):
            section = line.strip("[]")
        elif "=" in line and not line.startswith("#") and section == "Service":
            key, _, value = line.partition("=")
            service[key] = value
    assert set(V2_CONTROLLERS) <= set(service["Delegate"].split()), service["Delegate"]
    assert service["User"] not in ("", "root")  # the non-root delegated worker
    assert service["KillMode"] == "control-group"  # a stop takes every bot along
    argv = service["ExecStart"].split()
    assert argv[0].endswith("/tacocat")
    check_tacocat_command(argv[1:], "systemd unit")
