"""What the judge client says when a call cannot give a verdict, as phrases (the pages say them
in their language; the grader puts them in its ``judge {error}: {message}``). The values are
scrubbed of secrets by the caller; what the endpoint or the model wrote stays as written."""

from __future__ import annotations

from assay.core.messages import Phrase

NO_ANSWER = Phrase("judge.call.no_answer", "the judge ({model}) did not answer within {seconds} s")
KEY_UNSET = Phrase("judge.call.key_unset", "the judge endpoint {url} refused the key (HTTP {status}{detail}); set "
                                           "ASSAY_JUDGE_API_KEY or OPENAI_API_KEY, or the config's api_key_env")
KEY_WRONG = Phrase("judge.call.key_wrong", "the judge endpoint {url} refused the key (HTTP {status}{detail}); check "
                                           "the key (ASSAY_JUDGE_API_KEY, OPENAI_API_KEY or the config's api_key_env)")
NO_MODEL_THERE = Phrase("judge.call.no_model_there", "the judge endpoint {url} has no model {model} or no chat "
                                                     "completions route (HTTP 404{detail}); check the model name and "
                                                     "the base URL (it usually ends in /v1)")
STATUS = Phrase("judge.call.status", "the judge endpoint {url} answered HTTP {status}{detail}")
WAIT_TOO_LONG = Phrase("judge.call.wait_too_long", "the judge endpoint answered {last} and asked to retry after "
                                                   "{seconds} s (more than {most} s); try again later")
FAILED = Phrase("judge.call.failed", "the judge call failed: {error}")
GAVE_UP = Phrase("judge.call.gave_up", "the judge endpoint still failed after {attempts} attempts; the last was {last}")
LAST_HTTP = Phrase("judge.call.last_http", "HTTP {status}")
LAST_CONNECTION = Phrase("judge.call.last_connection", "a connection error ({error})")
NOT_COMPLETION = Phrase("judge.call.not_completion", "the judge endpoint answered something that is not a chat "
                                                     "completion")
REFUSED = Phrase("judge.call.refused", "the judge refused: {refusal}")
EMPTY = Phrase("judge.call.empty", "the judge returned an empty reply")
CLOSED = Phrase("judge.call.closed", "the judge client is closed")
OWN_LOOP = Phrase("judge.call.own_loop", "judge() was called from the judge's own event loop")
NO_MODEL = Phrase("judge.call.no_model", "no judge model: set config.model or ASSAY_JUDGE_MODEL")
KEY_ENV_UNSET = Phrase("judge.call.key_env_unset", "api_key_env names {name}, which is not set in the environment")
