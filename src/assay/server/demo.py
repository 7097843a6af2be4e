"""The demo workspace of ``assay serve --demo`` (``make serve``): a first look that is not empty.

A ``demo`` user and a token to sign in with; the specification's example evaluators (a length
check in Python, a keyword check in Node.js), an evaluator made from the regex preset; a small
Chinese dataset (made on ``/datasets`` and uploaded as a JSONL file, as the pages do); a task
grading it with those evaluators and weights; and one finished run. Everything
is made through the service's own public API once the server answers (so it is made exactly
as a user would make it, and a run is graded by the real worker), and only when the demo user
has no task yet: a second start keeps what is there.

With ``assay[local-judge]`` installed, ``assay serve --demo`` also starts the local toy judge
(``assay judge serve-local``) and ``seed_toy_judge`` keeps an LLM evaluator pointed at it,
named as a toy, so an LLM evaluator can be tried in the editor without a key. The judge's port
changes with each start: the evaluator's address is brought up to date every time.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import httpx2 as httpx
import orjson

from assay.store import Database, upgrade
from assay.store.users import create_token, create_user, get_user

DEMO_USER = "demo"
LENGTH_PY = '''# 长度检查：回答至少 10 个字符，且不超过 200 个字符
def evaluate(input, output, expected, metadata):
    n = len(output.strip())
    if n < 10:
        return {"passed": False, "score": n / 10, "reason": f"回答太短：{n} 个字符"}
    if n > 200:
        return {"passed": False, "score": 0.5, "reason": f"回答太长：{n} 个字符"}
    return {"passed": True, "score": 1.0, "reason": f"长度合适：{n} 个字符"}
'''
KEYWORDS_JS = '''// 关键词检查：回答须包含 metadata.keywords 中的每个关键词
module.exports = async function evaluate(input, output, expected, metadata) {
  const keywords = (metadata && metadata.keywords) || [];
  const missing = keywords.filter((k) => !output.includes(k));
  const score = keywords.length ? (keywords.length - missing.length) / keywords.length : 1;
  return { passed: missing.length === 0, score,
    reason: missing.length ? `缺少关键词：${missing.join('、')}` : '关键词齐全' };
};
'''
DATASET_FILE = "客服问答.jsonl"
ROWS: list[dict[str, Any]] = [
    {"id": "q01", "input": "我的订单什么时候发货？", "output": "您好，订单 AB-1024 已于今天下午发货，预计两天内送达。",
     "expected": "订单已发货", "metadata": {"keywords": ["发货", "送达"]}},
    {"id": "q02", "input": "怎么申请退款？", "output": "在“我的订单”里点“申请退款”，填写原因后提交即可。",
     "expected": "在订单页申请退款", "metadata": {"keywords": ["退款", "提交"]}},
    {"id": "q03", "input": "可以开发票吗？", "output": "可以。", "expected": "可以在订单页申请电子发票",
     "metadata": {"keywords": ["发票"]}},
    {"id": "q04", "input": "会员有什么权益？", "output": "会员享受免运费、专属客服和生日礼券。",
     "expected": "免运费和专属客服", "metadata": {"keywords": ["免运费", "客服"]}},
    {"id": "q05", "input": "商品坏了怎么办？", "output": "很抱歉给您带来不便，请上传照片，我们会在 24 小时内为您换新。",
     "expected": "上传照片后换新", "metadata": {"keywords": ["照片", "换新"]}},
    {"id": "q06", "input": "你们几点下班？", "output": "客服每天 9:00 到 21:00 在线。", "expected": "9:00 到 21:00",
     "metadata": {"keywords": ["9:00", "21:00"]}},
    {"id": "q07", "input": "订单号在哪里看？", "output": "请在“我的订单”查看，订单号形如 AB-1234。",
     "expected": "在我的订单查看", "metadata": {"keywords": ["我的订单"]}},
    {"id": "q08", "input": "能改收货地址吗？", "output": "不行。", "expected": "发货前可以修改收货地址",
     "metadata": {"keywords": ["地址"]}},
]

TOY_JUDGE = "玩具评审（本地小模型）"
TOY_JUDGE_DESCRIPTION = ("演示用的玩具 LLM 评审：本机的 SmolLM2-135M 小模型（assay judge serve-local），"
                         "按首词 yes/no 的概率判定（scoring: logprobs）。只供试用，不可用于真实评测。")
TOY_RUBRIC = "回答是否正确地回应了用户的问题？ Does the answer correctly address the user's question?"

log = logging.getLogger("assay.serve")


def demo_token(database_url: str) -> str:
    """A new token of the demo user (made, an admin, on the first start)."""
    database = Database(database_url)
    try:
        upgrade(database)
        with database.session() as session:
            if get_user(session, DEMO_USER) is None:
                create_user(session, DEMO_USER, is_admin=True)
            return create_token(session, DEMO_USER, "demo").secret
    finally:
        database.dispose()


def seed(base_url: str, token: str, timeout_s: float = 60.0) -> bool:
    """Fill the workspace through the API at ``base_url`` once it answers; False when the demo
    user already had tasks (nothing is made twice)."""
    deadline = time.monotonic() + timeout_s
    with httpx.Client(base_url=base_url + "/api/v1", headers={"Authorization": f"Bearer {token}"},
                      timeout=30) as api:
        while True:
            try:
                if api.get(base_url + "/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server at {base_url} did not answer within {timeout_s:.0f} s")
            time.sleep(0.2)
        if api.get("/tasks", params={"owner": "me", "limit": 1}).json()["data"]:
            return False

        def made(path: str, body: dict[str, Any]) -> dict[str, Any]:
            response = api.post(path, json=body)
            response.raise_for_status()
            data: dict[str, Any] = response.json()["data"]
            return data

        length = made("/evaluators", {"name": "长度检查", "description": "回答长度在 10 到 200 个字符之间（Python）",
                                      "type": "code", "config": {"language": "python", "code": LENGTH_PY}})
        keywords = made("/evaluators", {"name": "关键词检查",
                                        "description": "回答包含样本 metadata 里的关键词（Node.js）", "type": "code",
                                        "config": {"language": "nodejs", "code": KEYWORDS_JS}})
        made("/evaluators", {"name": "订单号格式", "description": "由“正则匹配”预置而来：订单号形如 AB-1234",
                             "type": "preset", "config": {"presetType": "regex",
                                                          "params": {"pattern": "[A-Z]{2}-\\d{4}"}}})
        dataset = made("/datasets", {"name": "客服问答", "description": "演示：八个中文客服问题和回答"})
        uploaded = api.post(f"/datasets/{dataset['id']}/versions", params={"filename": DATASET_FILE},
                            content=b"".join(orjson.dumps(row) + b"\n" for row in ROWS))
        uploaded.raise_for_status()
        task = made("/tasks", {"name": "客服回答质量", "description": "演示：一个小小的中文客服数据集",
                               "evaluators": [{"evaluatorId": length["id"], "weight": 1},
                                              {"evaluatorId": keywords["id"], "weight": 2}],
                               "datasetId": dataset["id"]})
        made(f"/tasks/{task['id']}/runs", {})
        return True


def seed_toy_judge(base_url: str, token: str, judge_url: str, model: str) -> dict[str, Any]:
    """Make the toy LLM evaluator, or point the one made on an earlier start at ``judge_url``."""
    config = {"rubric": TOY_RUBRIC, "scoring": "logprobs", "model": model, "base_url": judge_url}
    with httpx.Client(base_url=base_url + "/api/v1", headers={"Authorization": f"Bearer {token}"},
                      timeout=30) as api:
        found = api.get("/evaluators", params={"type": "llm", "limit": 100}).json()["data"]
        items = found["items"] if isinstance(found, dict) else found
        mine = next((e for e in items if e["name"] == TOY_JUDGE), None)
        if mine is None:
            response = api.post("/evaluators", json={"name": TOY_JUDGE, "description": TOY_JUDGE_DESCRIPTION,
                                                     "type": "llm", "config": config})
        else:
            response = api.put(f"/evaluators/{mine['id']}", json={"config": config})
        response.raise_for_status()
        made: dict[str, Any] = response.json()["data"]
        return made


def seed_in_background(base_url: str, token: str, judge: tuple[str, str] | None = None) -> threading.Thread:
    """``seed`` (and, given the local judge's ``(url, model)``, ``seed_toy_judge``) on a daemon
    thread, so the server can start while it waits for it."""
    def run() -> None:
        try:
            seed(base_url, token)
            if judge is not None:
                seed_toy_judge(base_url, token, *judge)
        except Exception as exc:  # the server goes on without a demo, and says why
            log.warning("assay serve --demo: the demo workspace could not be made: %s", exc)

    thread = threading.Thread(target=run, name="assay-demo-seed", daemon=True)
    thread.start()
    return thread
