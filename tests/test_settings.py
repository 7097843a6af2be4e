"""Settings: every ASSAY_* variable parsed one way, in one place."""

import pytest

from assay.core.errors import AssayError
from assay.settings import Settings


@pytest.mark.parametrize("value, expected", [("1", True), ("true", True), ("YES", True), ("on", True),
                                             ("0", False), ("", False), ("no", False), ("off", False)])
def test_flags_parse_one_way(value, expected):
    assert Settings.from_env({"ASSAY_SANDBOX_ALLOW_WEAK": value}).sandbox_allow_weak is expected


@pytest.mark.parametrize("env, message", [
    ({"ASSAY_SANDBOX_ALLOW_WEAK": "sure"}, "ASSAY_SANDBOX_ALLOW_WEAK='sure'"),
    ({"ASSAY_CODE_TIMEOUT_MAX_MS": "1e4"}, "whole number"),
    ({"ASSAY_CODE_TIMEOUT_MAX_MS": "0"}, "at least 1"),
])
def test_bad_values_name_the_variable(env, message):
    with pytest.raises(AssayError, match=message):
        Settings.from_env(env)


def test_defaults_and_values():
    assert Settings.from_env({"ASSAY_JUDGE_CACHE": "off"}) == Settings()
    s = Settings.from_env({"ASSAY_CODE_TIMEOUT_MAX_MS": "1500", "ASSAY_NODE": "/opt/node", "ASSAY_DEBUG": "1"})
    assert (s.code_timeout_max_ms, s.node_binary, s.debug) == (1500, "/opt/node", True)


def test_judge_settings_and_the_key_never_shown():
    s = Settings.from_env({"OPENAI_API_KEY": "sk-secret", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
                           "ASSAY_JUDGE_BASE_URL": "http://127.0.0.1:8/v1", "XDG_CACHE_HOME": "/c"})
    assert s.judge_api_key == "sk-secret" and s.judge_base_url == "http://127.0.0.1:8/v1"
    assert s.judge_cache == "/c/assay/judge-cache.sqlite" and s.judge_concurrency == 32
    assert "sk-secret" not in repr(s) and "sk-secret" not in str(s)
    with pytest.raises(AssayError, match="ASSAY_JUDGE_CONCURRENCY"):
        Settings.from_env({"ASSAY_JUDGE_CONCURRENCY": "many"})


def test_only_settings_reads_the_environment():
    """Every read of the environment under src/assay goes through ``Settings`` (``from_env``, then
    ``Settings.environ`` passed down); ``assay serve --workers`` writes one variable for its processes."""
    import re
    from pathlib import Path

    import assay

    root = Path(assay.__file__).parent
    reads = re.compile(r"os\.environ(?!\[\"ASSAY_DATABASE_URL\"\] = )|getenv|os\.environb")
    found = [f"{path.relative_to(root)}:{n}" for path in root.rglob("*.py") if path.name != "settings.py"
             and "node_modules" not in path.parts
             for n, line in enumerate(path.read_text().splitlines(), 1) if reads.search(line)]
    assert found == []
