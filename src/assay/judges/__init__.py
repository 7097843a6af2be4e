"""LLM judge clients: the real ``JudgeClient`` over OpenAI-compatible chat endpoints, its
reply cache and its price table. Graders never import this package; they receive a client
through ``Resources.judge_client``."""

from assay.judges.cache import JudgeCache, cache_key
from assay.judges.client import OpenAIJudgeClient
from assay.judges.prices import Price, cost_usd, load_prices

__all__ = ["JudgeCache", "OpenAIJudgeClient", "Price", "cache_key", "cost_usd", "load_prices"]
