"""Training-loop prompt templates of 0.4.0 (``modebench.templates``): a problem rendered into one
chat prompt string.

The registered templates (``qwen_boxed``, ``qwen_level2_countdown``, …) are built from the
domain plug-ins' own prompt templates, so the evaluation prompts and the training prompts cannot
drift apart; the others (digit action codes, math, route, R1, identity) are defined here. The
rendered text is behaviour callers compare byte for byte, checked against 0.4.0 by
``ops/fidelity/surface_vs_040.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from modebench.domains import builtin_plugins
from modebench.domains._prompt_text import BOXED, CONDITIONS
from modebench.domains._protocol import PromptTemplate

CHAT_SURFACES: dict[str, tuple[str, str, str]] = {
    "qwen": ("<|im_start|>system\n", "<|im_end|>\n<|im_start|>user\n", "<|im_end|>\n<|im_start|>assistant\n"),
    "falcon": ("<|system|>\n", "\n<|user|>\n", "\n<|assistant|>\n"),
}

COUNTDOWN_DIGITS_SYSTEM = (
    "Return only three digits and no other text. The given numbers are n1,n2,n3 in dataset order. "
    "Digit 2 selects singleton s: 1=n1, 2=n2, 3=n3; a,b are the other two numbers in their original order. "
    "Digit 3 makes pair: 1=a+b, 2=a*b, 3=a-b, 4=b-a, 5=a/b, 6=b/a. "
    "Digit 1 combines pair and s: 1=pair+s, 2=pair*s, 3=pair-s, 4=s-pair, 5=pair/s, 6=s/pair."
)
GRAPH_DIGITS_SYSTEM = (
    "Return only the requested bare sequence of digits. Do not explain, add punctuation, or use LaTeX."
)
MATH_SYSTEM = "Please reason step by step, and put your final answer within \\boxed{}."
MATH_ROUTE_SYSTEM = (
    "Solve the problem step by step and put the final answer within \\boxed{}. When the answer is computed "
    "from numbers in the problem, end with exactly one compact reverse-Polish program between <route> and "
    "</route>. Start the program with v2. Write copied input numbers and operation words separated only by "
    "spaces. For example, '<route>v2 2 5 mul 1 sub square 1 add</route>' computes (2*5-1)^2+1. Unary "
    "operations are neg abs square cube sqrt factorial percent. Binary operations are add mul sub div pow mod "
    "choose permute gcd lcm min max average. A binary operation consumes the previous two values in "
    "left-to-right order. Copy every numeric input from the problem; never put a computed result, JSON, "
    "equations, labels, or prose inside <route>. If this numeric stack language cannot express the solution, "
    "omit <route> but still give the boxed answer."
)
MATH_ROUTE_JSON_V1_SYSTEM = (
    "Solve the problem step by step and put the final answer within \\boxed{}. After the boxed answer, also "
    "emit exactly one compact <route>JSON</route> block when the computation fits this schema: "
    '{"version":"math-route-v1","steps":[...],"final":"sN"}. Step IDs are contiguous s1,s2,... . A source '
    'step is {"id":"s1","op":"source","value":"a number copied from the problem"}. Other steps contain only '
    "id, op, and earlier args; never write a result field. Allowed ops are neg, abs, square, cube, sqrt, "
    "factorial, percent, add, mul, sub, div, pow, mod, choose, permute, gcd, lcm, min, max, and average. "
    "Every step must contribute to final. If this exact numeric trace language cannot express the solution, "
    "omit the route block but still give the boxed answer."
)
R1_OPENING = (
    "A conversation between User and Assistant. The User asks a question, and the Assistant solves it. The "
    "Assistant first thinks about the reasoning process in the mind and then provides the User with the "
    "answer. The reasoning process is enclosed within <think> </think> and answer is enclosed within <answer> "
    "</answer> tags, respectively, i.e., <think> reasoning process here </think> <answer> answer here "
    "</answer>.\nUser: "
)
R1_CLOSING = "\nAssistant: <think>"

# The digit templates rewrite the frozen problem's closing instruction (exactly one, at the end).
_COUNTDOWN_BOXED = "the expression inside \\boxed{}."
_COUNTDOWN_CODE = "a three-digit canonical action code using the scheme above."
_BOXED_ANSWER = "inside \\boxed{}."
_BARE_DIGITS = "as one bare digit string with no spaces, punctuation, or other text."


def render_chat_prompt(surface: str, system: str, user: str) -> str:
    """One chat prompt string: the surface's system / user / assistant markers around the texts."""
    opening, middle, closing = CHAT_SURFACES[surface]
    return opening + system + middle + user + closing


def _rewrite_ending(question: str, ending: str, replacement: str, error: str) -> str:
    if question.count(ending) != 1 or not question.endswith(ending):
        raise ValueError(error)
    return question[: -len(ending)] + replacement


def _registered() -> dict[str, PromptTemplate]:
    """The plug-ins' templates by name, over every level and condition."""
    found: dict[str, PromptTemplate] = {}
    for found_plugin in builtin_plugins():  # the built-ins: 0.4.0's templates are theirs
        for level in range(1, 6):
            for condition in CONDITIONS:
                template = found_plugin.prompt(level, condition)
                found.setdefault(template.template_name, template)
    return found


_REGISTERED = _registered()


def _from_plugin(surface: str, registered_name: str, name: str) -> Callable[[str], str]:
    template = _REGISTERED[registered_name]

    def apply(question: str) -> str:
        try:
            user = template.user(question)
        except ValueError as exc:
            # The plug-in's message names the registered (qwen) template; a twin names itself.
            raise ValueError(str(exc).replace(registered_name, name, 1)) from None
        return render_chat_prompt(surface, template.system, user)

    return apply


def _system_only(surface: str, system: str) -> Callable[[str], str]:
    def apply(question: str) -> str:
        # Concatenation (not a format string): a non-text question fails as 0.4.0's did.
        return render_chat_prompt(surface, system, question)

    return apply


def _rewriting(surface: str, system: str, ending: str, replacement: str, error: str) -> Callable[[str], str]:
    """A digit template: the problem's closing instruction rewritten, under its own system text."""

    def apply(question: str) -> str:
        return render_chat_prompt(surface, system, _rewrite_ending(question, ending, replacement, error))

    return apply


def _countdown_digits(surface: str, name: str) -> Callable[[str], str]:
    error = f"{name} requires an easy3 Countdown prompt ending in the boxed-expression instruction"
    return _rewriting(surface, COUNTDOWN_DIGITS_SYSTEM, _COUNTDOWN_BOXED, _COUNTDOWN_CODE, error)


def _graph_digits(surface: str, name: str) -> Callable[[str], str]:
    error = f"{name} requires a graph prompt ending in a boxed answer"
    return _rewriting(surface, GRAPH_DIGITS_SYSTEM, _BOXED_ANSWER, _BARE_DIGITS, error)


def _named(name: str, function: Callable[[str], str]) -> Callable[[str], str]:
    function.__name__ = function.__qualname__ = name
    return function


apply_qwen_boxed_template = _named("apply_qwen_boxed_template", _system_only("qwen", BOXED))
apply_falcon_boxed_template = _named("apply_falcon_boxed_template", _system_only("falcon", BOXED))
apply_qwen_countdown_digits_template = _named(
    "apply_qwen_countdown_digits_template", _countdown_digits("qwen", "qwen_countdown_digits")
)
apply_falcon_countdown_digits_template = _named(
    "apply_falcon_countdown_digits_template", _countdown_digits("falcon", "falcon_countdown_digits")
)
apply_qwen_graph_digits_template = _named(
    "apply_qwen_graph_digits_template", _graph_digits("qwen", "qwen_graph_digits")
)
apply_falcon_graph_digits_template = _named(
    "apply_falcon_graph_digits_template", _graph_digits("falcon", "falcon_graph_digits")
)
apply_qwen_pantry_support_mask_template = _named(
    "apply_qwen_pantry_support_mask_template",
    _from_plugin("qwen", "qwen_pantry_support_mask", "qwen_pantry_support_mask"),
)
apply_falcon_pantry_support_mask_template = _named(
    "apply_falcon_pantry_support_mask_template",
    _from_plugin("falcon", "qwen_pantry_support_mask", "falcon_pantry_support_mask"),
)
apply_qwen_math_template = _named("apply_qwen_math_template", _system_only("qwen", MATH_SYSTEM))
apply_falcon_math_template = _named("apply_falcon_math_template", _system_only("falcon", MATH_SYSTEM))
apply_qwen_math_route_template = _named(
    "apply_qwen_math_route_template", _system_only("qwen", MATH_ROUTE_SYSTEM)
)
apply_falcon_math_route_template = _named(
    "apply_falcon_math_route_template", _system_only("falcon", MATH_ROUTE_SYSTEM)
)
#: Defined by 0.4.0 but not listed in its TEMPLATE_FACTORY.
apply_qwen_math_route_json_v1_template = _named(
    "apply_qwen_math_route_json_v1_template", _system_only("qwen", MATH_ROUTE_JSON_V1_SYSTEM)
)
apply_qwen_level2_countdown_template = _named(
    "apply_qwen_level2_countdown_template",
    _from_plugin("qwen", "qwen_level2_countdown", "qwen_level2_countdown"),
)
apply_qwen_level2_python_factors_template = _named(
    "apply_qwen_level2_python_factors_template",
    _from_plugin("qwen", "qwen_level2_python_factors", "qwen_level2_python_factors"),
)
apply_qwen_level3_python_factors_template = _named(
    "apply_qwen_level3_python_factors_template",
    # The neutral condition's Level 3 wording, under the name 0.4.0's trainer used for it.
    _from_plugin("qwen", "qwen_level3_python_factors_neutral_v1", "qwen_level3_python_factors"),
)
apply_qwen_level2_mathir_template = _named(
    "apply_qwen_level2_mathir_template", _from_plugin("qwen", "qwen_level2_mathir", "qwen_level2_mathir")
)
apply_qwen_level2_pantry_template = _named(
    "apply_qwen_level2_pantry_template", _from_plugin("qwen", "qwen_level2_pantry", "qwen_level2_pantry")
)


def apply_r1_template(question: str) -> str:
    return R1_OPENING + question + R1_CLOSING


def apply_no_template(question: str) -> str:
    return question


TEMPLATE_FACTORY: dict[str, Callable[[str], str]] = {
    "qwen_boxed": apply_qwen_boxed_template,
    "qwen_countdown_digits": apply_qwen_countdown_digits_template,
    "qwen_graph_digits": apply_qwen_graph_digits_template,
    "qwen_pantry_support_mask": apply_qwen_pantry_support_mask_template,
    "qwen_math": apply_qwen_math_template,
    "qwen_math_route": apply_qwen_math_route_template,
    "qwen_level2_countdown": apply_qwen_level2_countdown_template,
    "qwen_level2_python_factors": apply_qwen_level2_python_factors_template,
    "qwen_level3_python_factors": apply_qwen_level3_python_factors_template,
    # The neutral condition's system text is the Level 3 one (its name records the condition).
    "qwen_level3_python_factors_neutral_v1": apply_qwen_level3_python_factors_template,
    "qwen_level2_mathir": apply_qwen_level2_mathir_template,
    "qwen_level2_pantry": apply_qwen_level2_pantry_template,
    "falcon_boxed": apply_falcon_boxed_template,
    "falcon_countdown_digits": apply_falcon_countdown_digits_template,
    "falcon_graph_digits": apply_falcon_graph_digits_template,
    "falcon_pantry_support_mask": apply_falcon_pantry_support_mask_template,
    "falcon_math": apply_falcon_math_template,
    "falcon_math_route": apply_falcon_math_route_template,
    "r1": apply_r1_template,
    "no": apply_no_template,
}

PROMPT_TEMPLATE_FAMILY_TWINS: dict[str, str] = {
    "qwen_boxed": "falcon_boxed",
    "qwen_countdown_digits": "falcon_countdown_digits",
    "qwen_graph_digits": "falcon_graph_digits",
    "qwen_pantry_support_mask": "falcon_pantry_support_mask",
    "qwen_math": "falcon_math",
    "qwen_math_route": "falcon_math_route",
}
_ROLE_ORDER = (
    ("boxed", ("qwen_boxed", "falcon_boxed")),
    ("countdown_digits", ("qwen_countdown_digits", "falcon_countdown_digits")),
    ("graph_digits", ("qwen_graph_digits", "falcon_graph_digits")),
    ("pantry_support_mask", ("qwen_pantry_support_mask", "falcon_pantry_support_mask")),
    ("math", ("qwen_math", "falcon_math")),
    ("math_route", ("qwen_math_route",)),
    (
        "boxed",
        (
            "qwen_level2_countdown",
            "qwen_level2_python_factors",
            "qwen_level3_python_factors",
            "qwen_level3_python_factors_neutral_v1",
            "qwen_level2_mathir",
            "qwen_level2_pantry",
        ),
    ),
    ("math_route", ("falcon_math_route",)),
    ("r1", ("r1",)),
    ("no", ("no",)),
)
PROMPT_TEMPLATE_ROLES: dict[str, str] = {name: role for role, names in _ROLE_ORDER for name in names}
CANONICAL_DIGIT_TEMPLATE_ROLES = frozenset({"countdown_digits", "graph_digits", "pantry_support_mask"})
CANONICAL_TASK_PROMPT_TEMPLATES: dict[str, frozenset[str]] = {
    "graph_coloring": frozenset({"qwen_graph_digits", "falcon_graph_digits"}),
    "countdown": frozenset({"qwen_countdown_digits", "falcon_countdown_digits"}),
    "pantry_support_mask": frozenset({"qwen_pantry_support_mask", "falcon_pantry_support_mask"}),
}


def prompt_template_role(prompt_template: str) -> str:
    """The role of a named template (``boxed``, ``countdown_digits``, …); KeyError when unknown."""
    return PROMPT_TEMPLATE_ROLES[prompt_template]


def prompt_template_surface(prompt_template: str) -> str:
    """The chat surface a template name renders on: ``qwen``, ``falcon`` or ``none``."""
    for surface in CHAT_SURFACES:
        if prompt_template.startswith(surface + "_"):
            return surface
    return "none"


def apply_prompt_template_to_example(
    example: dict[str, Any], *, input_key: str, prompt_template: str
) -> dict[str, Any]:
    """A copy of a dataset example with ``input_key`` rendered by the named template."""
    question = example[input_key]
    rendered = TEMPLATE_FACTORY[prompt_template](question)
    return {**example, input_key: rendered}


def collate_eval_prompt_items(
    item_list: list[dict[str, Any]], *, prompt_template: str
) -> tuple[list[str], list[str], list[Any]]:
    """(rendered prompts, raw problems, answers) of evaluation items with ``problem``/``answer``."""
    prompts: list[str] = []
    problems: list[str] = []
    answers: list[Any] = []
    for item in item_list:
        prompts.append(TEMPLATE_FACTORY[prompt_template](item["problem"]))
        problems.append(item["problem"])
        answers.append(item["answer"])
    return prompts, problems, answers


def validate_canonical_prompt_materialization(
    prompt_template: str, raw_questions: Sequence[str], formatted_prompts: Sequence[str]
) -> None:
    """Raise RuntimeError when cached formatted prompts are not this template's rendering of the raw ones."""
    render = TEMPLATE_FACTORY[prompt_template]
    if len(raw_questions) != len(formatted_prompts):
        raise RuntimeError(
            "canonical prompt materialization changed the row count: "
            f"raw={len(raw_questions)} formatted={len(formatted_prompts)}"
        )
    for index, (raw, formatted) in enumerate(zip(raw_questions, formatted_prompts, strict=True)):
        if render(raw) != formatted:
            raise RuntimeError(
                f"canonical {prompt_template} prompt materialization mismatch at row {index}; "
                "stale or foreign template cache detected"
            )


def validate_qwen_countdown_digits_materialization(
    raw_questions: Sequence[str], formatted_prompts: Sequence[str]
) -> None:
    validate_canonical_prompt_materialization("qwen_countdown_digits", raw_questions, formatted_prompts)


def validate_qwen_graph_digits_materialization(
    raw_questions: Sequence[str], formatted_prompts: Sequence[str]
) -> None:
    validate_canonical_prompt_materialization("qwen_graph_digits", raw_questions, formatted_prompts)


def validate_qwen_pantry_support_mask_materialization(
    raw_questions: Sequence[str], formatted_prompts: Sequence[str]
) -> None:
    validate_canonical_prompt_materialization("qwen_pantry_support_mask", raw_questions, formatted_prompts)


def build_response_token_prefix_mask(response_masks: Any, token_counts: Any) -> Any:
    """Select the first ``token_counts[i]`` response tokens of each row of a boolean mask.

    Needs PyTorch (a trainer's own dependency); without it this says how to install it.
    """
    try:
        import torch  # noqa: PLC0415 - optional extra: rl (torch comes with it)
    except ImportError:
        raise ImportError("build_response_token_prefix_mask needs PyTorch: pip install torch") from None
    masks = response_masks.bool()
    positions = torch.cumsum(masks.long(), dim=-1)
    return masks & (positions <= token_counts.long().unsqueeze(-1))
