"""Prompts of language-model policies: golden strings for C_col and C_gen contexts, chat messages,
act read-back (no model needed; the chat template renders with jinja2)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from contexts import BeliefState, Context, generate_grid
from policies import PromptTemplate
from policies.lm.prompts import act_from_output, belief_text, dialogue_history
from simscore import Act
from simscore.errors import InvalidContextError, UnsupportedModelError
from simscore.models.chat_templates import ChatTemplate

INSTRUCTION = (
    "You are a dialogue system that helps the user find a restaurant in Cambridge. "
    "Write the system's next turn: one or two short sentences."
)
GRID_ID = "gen/area=0.6/pricerange=0.0/food=1.0/method=byconstraints"
BELIEF_LINES = (
    "area: centre 0.60\npricerange: not mentioned\nfood: indian 1.00\nname: not mentioned\n"
    "method: byconstraints 1.00\ndiscourse act: none 1.00\nrequested: nothing"
)
HISTORY = ("Welcome!", "Thai food please.", "Which area?", "Phone number?")


@pytest.fixture(scope="module")
def grid_context():
    return generate_grid()[GRID_ID]


@pytest.fixture(scope="module")
def collected():
    belief = BeliefState(slots={"food": {"thai": 0.9}, "area": {"centre": 1.0}}, method={"byname": 1.0},
                         requested={"phone": 1.0}, last_offered="bangkok city", offer_happened=True)
    return Context("col/sim/d1/3", belief, {"source": "col", "dialogue_id": "d1", "turn_index": 3, "history": HISTORY})


def test_plain_prompt_of_a_grid_context_shows_the_belief(grid_context):
    assert PromptTemplate().plain(grid_context) == (
        f"{INSTRUCTION}\n\nThe system's belief about the user's goal:\n{BELIEF_LINES}\nSystem:"
    )


def test_plain_prompt_of_a_collected_context_shows_the_history(collected):
    assert PromptTemplate().plain(collected) == (
        f"{INSTRUCTION}\n\nDialogue so far:\nSystem: Welcome!\nUser: Thai food please.\nSystem: Which area?\n"
        "User: Phone number?\nSystem:"
    )
    # the oldest turns can be left out (a prompt too long for the model)
    assert PromptTemplate().plain(collected, skip_turns=3).endswith("Dialogue so far:\nUser: Phone number?\nSystem:")
    # the same context by its belief
    assert PromptTemplate(source="belief").plain(collected) == (
        f"{INSTRUCTION}\n\nThe system's belief about the user's goal:\narea: centre 1.00\nfood: thai 0.90\n"
        "method: byname 1.00\ndiscourse act: none 1.00\nrequested: phone 1.00\nlast offered: bangkok city\nSystem:"
    )


def test_act_prompts_add_the_act_instruction(collected):
    prompt = PromptTemplate().plain(collected, act_output=True)
    assert prompt.startswith(
        f"{INSTRUCTION} Answer with one dialogue act on one line, written as intent(slot=value,...), for example "
        "hello(), request(food), confirm(area=north), select(pricerange=cheap,pricerange=expensive), "
        'inform(name="the golden wok",food=chinese,area=north), reqmore() or bye().\n\nDialogue so far:\n'
    )
    custom = PromptTemplate(instruction="Reply.", act_instruction="Act!", user_label="Guest", system_label="Bot",
                            history_heading="Chat:")
    assert custom.plain(collected, act_output=True) == (
        "Reply. Act!\n\nChat:\nBot: Welcome!\nGuest: Thai food please.\nBot: Which area?\nGuest: Phone number?\nBot:"
    )


def test_chat_messages_alternate_back_from_the_users_last_turn(collected, grid_context):
    assert PromptTemplate(instruction="Reply.").messages(collected) == [
        {"role": "system", "content": "Reply."},
        {"role": "assistant", "content": "Welcome!"},
        {"role": "user", "content": "Thai food please."},
        {"role": "assistant", "content": "Which area?"},
        {"role": "user", "content": "Phone number?"},
    ]
    odd = SimpleNamespace(id="c", belief=BeliefState(), metadata={"history": ("Thai food.", "Where?", "North.")})
    assert [m["role"] for m in PromptTemplate().messages(odd)] == ["system", "user", "assistant", "user"]
    # without a system role the instruction goes first, into the first user message if there is one
    assert PromptTemplate(instruction="Reply.", system_role=False).messages(odd)[0] == {
        "role": "user", "content": "Reply.\n\nThai food."}
    assert PromptTemplate(instruction="Reply.", system_role=False).messages(collected)[:2] == [
        {"role": "user", "content": "Reply."}, {"role": "assistant", "content": "Welcome!"}]
    assert PromptTemplate(instruction="Reply.").messages(grid_context) == [
        {"role": "system", "content": "Reply."},
        {"role": "user", "content": f"The system's belief about the user's goal:\n{BELIEF_LINES}"},
    ]


#: A chat template as tokenizers carry them: each message tagged with its role, the generation prompt added.
CHAT = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}"


@pytest.mark.extra("text")  # the chat template renders with jinja2 (the text extra brings it)
def test_render_uses_the_chat_template_where_there_is_one(collected):
    tokenizer = SimpleNamespace(chat_template=CHAT, special_tokens_map={})  # what render reads of a tokenizer
    template = PromptTemplate(instruction="Reply.")
    expected = (
        "<system>Reply.<assistant>Welcome!<user>Thai food please.<assistant>Which area?<user>Phone number?<assistant>"
    )
    assert template.render(collected, tokenizer) == expected
    with ChatTemplate(CHAT) as chat:
        assert template.chat(chat) and template.render(collected, chat) == expected
    assert PromptTemplate(instruction="Reply.", use_chat_template=False).render(collected, tokenizer) == (
        template.plain(collected)
    )
    assert template.render(collected, SimpleNamespace(chat_template=None)) == template.plain(collected)
    assert template.render(collected, None) == template.plain(collected)
    with pytest.raises(UnsupportedModelError, match="no chat template"):
        PromptTemplate(use_chat_template=True).render(collected, SimpleNamespace(chat_template=None))


def test_source_choice_and_errors(collected, grid_context):
    assert PromptTemplate().source_of(collected) == "history"
    assert PromptTemplate().source_of(grid_context) == "belief"
    assert PromptTemplate(source="belief").source_of(collected) == "belief"
    with pytest.raises(InvalidContextError, match="has no dialogue history"):
        PromptTemplate(source="history").plain(grid_context)
    with pytest.raises(InvalidContextError, match="no belief state"):
        PromptTemplate().plain(SimpleNamespace(id="x", metadata={}))
    with pytest.raises(InvalidContextError, match="must be a list of strings"):
        dialogue_history(SimpleNamespace(id="x", metadata={"history": "Hello."}))
    with pytest.raises(ValueError, match="source must be one of"):
        PromptTemplate(source="text")
    with pytest.raises(TypeError, match="instruction must be a str"):
        PromptTemplate(instruction=None)


def test_belief_text_lists_the_probable_values_and_the_flags():
    belief = BeliefState(
        slots={"food": {"thai": 0.5, "chinese": 0.2, "indian": 0.15, "italian": 0.1, "french": 0.004},
               "area": {"dontcare": 1.0}},
        method={"byalternatives": 0.7, "byconstraints": 0.3}, discourse_act={"ack": 1.0},
        last_informed_no_venue=True,
    )
    assert belief_text(belief) == (
        "area: dontcare 1.00\nfood: thai 0.50, chinese 0.20, indian 0.15\nmethod: byalternatives 0.70\n"
        "discourse act: ack 1.00\nrequested: nothing\nno venue matched the last request"
    )


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("request(food)", "request(food)"),
        ('  inform(name="the golden wok",food=chinese)  \n\nUser: thanks', 'inform(food=chinese,name="the golden wok")'),
        ("\n\nbye()", "bye()"),
        ("What kind of food would you like?", None),
        ("request(food) and more", None),
        ("Sure.\nrequest(food)", None),  # only the first non-empty line counts
        ("", None),
    ],
)
def test_act_from_output_reads_the_first_line_only(output, expected):
    act = act_from_output(output)
    assert (None if act is None else act) == (None if expected is None else Act.parse(expected))
