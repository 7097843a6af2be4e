"""vally_tool_calls: Vally's tool-calls (microsoft.github.io/vally/reference/graders/tool-calls/)."""

import pytest

from assay.core.errors import SpecError
from assay.core.spec import compile_spec


def call(name, cid, **args):
    return {"type": "tool_call", "name": name, "call_id": cid, "arguments": args}


def result(cid, value, success=True):
    return {"type": "tool_result", "call_id": cid, "result": value, "success": success}


def say(text="..."):
    return {"type": "assistant_message", "content": text}


# step 0: view + validate; step 1: create; step 2: bash npm test
RUN = [say("plan"), call("view", "1", path="src/app.js"), result("1", "code"), call("validate", "2", input={"x": 1}),
       result("2", {"ok": True}), say("now create"), call("create", "3", path="add.test.js"), result("3", "written"),
       say("run tests"), call("bash", "4", command="npm test --silent"), result("4", "All tests pass")]


@pytest.mark.parametrize("config, passed, reason", [
    ({"required": ["create"]}, True, "meet every check"),
    ({"required": ["creat"]}, True, "meet"),                                            # unanchored
    ({"required": ["^creat$"]}, False, "0 matching call(s), need 1"),
    ({"required": ["Create"]}, False, "0 matching"),                                    # case-sensitive
    ({"required": ["(?i)Create"]}, True, "meet"),
    ({"required": [{"name": "bash", "command": "npm test"}]}, True, "meet"),
    ({"required": [{"name": "bash", "command": "^yarn"}]}, False, "0 matching"),
    ({"required": [{"name": "view", "path": r"\.js$"}]}, True, "meet"),
    ({"required": [{"name": "validate", "args": {"input": '"x":1'}}]}, True, "meet"),   # non-text args as JSON
    ({"required": [{"name": "validate", "args": {"missing": "."}}]}, False, "0 matching"),
    ({"required": [{"name": "bash", "result": "(?i)all tests pass"}]}, True, "meet"),
    ({"required": [{"name": "validate", "result": '"ok":true'}]}, True, "meet"),
    ({"required": [{"name": "view", "min_count": 2}]}, False, "1 matching call(s), need 2"),
    ({"required": [{"name": "bash", "final": True}]}, True, "meet"),
    ({"required": [{"name": "create", "final": True}]}, False, "final tool call does not match"),
    ({"required": [{"name": "validate", "at_step": 0}]}, True, "meet"),
    ({"required": [{"name": "create", "at_step": 0}]}, False, "at step 0"),
    ({"required": [{"name": "create", "before_step": 2}]}, True, "meet"),
    ({"required": [{"name": "bash", "before_step": 2}]}, False, "before step 2"),
    ({"disallowed": [{"name": "view", "path": r"secret\.env$"}]}, True, "meet"),
    ({"disallowed": ["view"]}, False, "disallowed view called 1 time(s)"),
    ({"sequence": ["validate", "create"]}, True, "meet"),
    ({"sequence": ["view", "bash"]}, True, "meet"),                                     # others may come between
    ({"sequence": ["create", "validate"]}, False, "sequence broken at step 2: no validate after create"),
    ({"required": ["create"], "disallowed": ["rm"], "sequence": ["view", "create", "bash"]}, True, "meet"),
])
def test_tool_calls(grade, config, passed, reason):
    r = grade({"type": "vally_tool_calls", "config": config}, output="done", transcript=RUN)
    assert r.passed is passed and reason in r.reason, r.reason


def test_recorded_turns_decide_steps(grade):
    spec = {"type": "vally_tool_calls", "config": {"required": [{"name": "create", "at_step": 3}]}}
    r = grade(spec, output="x", transcript=RUN, metadata={"tool_steps": [0, 0, 3, 4]})
    assert r.passed, r.reason


@pytest.mark.parametrize("config, message", [
    ({}, "at least one of required, disallowed, sequence"),
    ({"disallowed": [{"name": "x", "min_count": 2}]}, "min_count is for required entries only"),
    ({"sequence": [{"name": "x", "final": True}]}, "final is for required entries only"),
    ({"sequence": [{"name": "x", "result": "y"}]}, "result is not supported on sequence"),
    ({"required": [{"name": "("}]}, "name"),
    ({"required": [{"command": "x"}]}, "name"),
    ({"required": [{"name": "x", "before_step": 0}]}, "before_step"),
    ({"required": [{"name": "x", "extra": 1}]}, "extra"),
])
def test_bad_configs(config, message):
    with pytest.raises(SpecError, match=message):
        compile_spec({"type": "vally_tool_calls", "config": config})
