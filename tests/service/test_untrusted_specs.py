"""``SpecContext(untrusted=True)``: judge configs from an API caller may not read the server's
files or reach endpoints and key variables the operator did not list; the same configs are
accepted from the operator (an eval file)."""

from __future__ import annotations

import pytest

from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.core.spec import compile_spec

UNTRUSTED = SpecContext(untrusted=True, judge_base_urls=frozenset({"http://127.0.0.1:9/v1"}),
                        judge_key_envs=frozenset({"TEAM_JUDGE_KEY"}))


@pytest.mark.parametrize("spec, field", [
    ({"type": "llm", "config": {"rubric_file": "rubric.md"}}, "config.rubric_file"),
    ({"type": "llm_comparison", "config": {"rubric_file": "/etc/hostname"}}, "config.rubric_file"),
    ({"type": "llm", "config": {"rubric": "r", "base_url": "http://169.254.169.254/v1"}}, "config.base_url"),
    ({"type": "prompt", "config": {"api_key_env": "AWS_SECRET_ACCESS_KEY"}}, "config.api_key_env"),
    ({"type": "panel", "config": {"models": ["m"], "base_url": "http://evil.example/v1"}}, "config.base_url"),
    ({"type": "composite", "config": {"graders": [{"type": "llm", "config": {"rubric": "r", "api_key_env": "HOME"}}]}},
     "config.graders[0].config.api_key_env"),
])
def test_untrusted_judge_configs_are_refused_naming_the_field(spec, field):
    with pytest.raises(SpecError) as raised:
        compile_spec(spec, context=UNTRUSTED)
    assert field in str(raised.value)


def test_allowed_endpoints_and_keys_pass_and_trusted_specs_are_unchanged(tmp_path):
    allowed = {"type": "llm", "config": {"rubric": "r", "base_url": "http://127.0.0.1:9/v1/",
                                         "api_key_env": "TEAM_JUDGE_KEY"}}
    assert compile_spec(allowed, context=UNTRUSTED).config.base_url == "http://127.0.0.1:9/v1/"
    (tmp_path / "rubric.md").write_text("Be kind.")
    trusted = compile_spec({"type": "llm", "config": {"rubric_file": "rubric.md", "base_url": "http://x/v1",
                                                      "api_key_env": "HOME"}}, context=SpecContext(base_dir=tmp_path))
    assert trusted.config.criteria == "Be kind."
