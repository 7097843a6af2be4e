"""The Inspect AI task behind tests/peers/foreign's fixture logs (make_foreign_runs.sh runs it
for variant a and b). No model answers: a solver writes each sample's answer (variant b changes
some, and fails on one), and the mockllm model stands in for the eval's model."""

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, includes, match, mean, scorer
from inspect_ai.solver import Generate, TaskState, solver

QUESTIONS = [
    ("france", "Capital of France?", "Paris", "Paris", "Paris"),
    ("japan", "Capital of Japan?", "Tokyo", "Tokyo", "Kyoto"),
    ("peru", "Capital of Peru?", "Lima", "Lima", "Lima"),
    ("sum", "2 + 2?", "4", "4", "4"),
    ("product", "3 * 7?", "21", "20", "21"),
    ("planet", "Largest planet?", "Jupiter", "Jupiter", "It is Jupiter"),
    ("sky", "Colour of the sky?", "blue", "blue", "Blue"),
    ("reverse", 'Spell "error" backwards', "rorre", "rorre", None),
    ("prime", "Name a prime", "7", "7", "9"),
    ("china", "中国的首都是?", "北京", "北京", "北京"),
]


@solver
def fixture_answer(variant: str):
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        row = next(q for q in QUESTIONS if q[0] == state.sample_id)
        answer = row[3] if variant == "a" else row[4]
        if answer is None:
            raise RuntimeError("fixture solver: simulated tool failure")
        if variant == "b" and state.sample_id == "prime" and state.epoch == 2:
            answer = "7"  # the changed system is inconsistent across epochs here
        state.output.completion = answer
        return state

    return solve


@scorer(metrics=[mean()])
def brevity():
    async def score(state: TaskState, target: Target) -> Score:
        n = len(state.output.completion)
        return Score(value=1.0 if n <= 6 else 0.5, explanation=f"{n} characters")

    return score


@task
def fixture(variant: str = "a") -> Task:
    return Task(
        dataset=[Sample(id=i, input=q, target=t) for i, q, t, _a, _b in QUESTIONS],
        solver=fixture_answer(variant),
        scorer=[match(), includes(), brevity()],
    )
