"""``simscore contexts transcripts``: contexts and the logged agent's responses from agent transcripts.

``simscore contexts transcripts FILE --out-contexts C.jsonl --out-responses R.jsonl [--per turn|task]`` reads
OpenAI-style chat transcripts (JSON Lines, one conversation a line) or a τ²-bench results file
(``.json``, or ``--format tau2``) with :mod:`contexts.transcripts` and writes one context per
assistant turn and, in the same contexts, the responses of the agent that was logged (its tool
calls as acts, its text), ready for ``simscore compare`` against another agent's responses. ``--per task`` makes one
context of each conversation instead, the agent's response its trajectory (its calls over the
conversation, in order): two logged agents' trajectories answer the same task, where their
turns answer histories of their own. ``--pair B --out-responses-b FILE`` reads a second agent's
log of the same conversations (the same format and options) and writes the contexts both logs
have, the first's, each marked ``same_history`` (whether the second agent was given the same
history there: :func:`contexts.transcripts.pair_transcripts`), and both agents' responses.
"""

from __future__ import annotations

import argparse
from typing import Any

from simscore.app.cli.args import checks_outputs, input_file, output_file
from simscore.io.untrusted import terminal_text

#: The values of ``--per`` (those of :data:`contexts.transcripts.UNITS`, written here so that
#: building the parser imports nothing of ``contexts``).
UNITS = ("turn", "task")

__all__ = ["add_subcommands", "cmd_transcripts"]


@checks_outputs
def cmd_transcripts(args: argparse.Namespace) -> int:
    """``simscore contexts transcripts``: write the contexts and the logged agent's responses of a transcript file."""
    from contexts.transcripts import pair_transcripts, read_transcripts

    if (args.pair is None) != (args.out_responses_b is None):
        raise ValueError("--pair B and --out-responses-b FILE go together: the second log and where its responses go")
    options = {"kind": args.format, "lists": args.lists, "unit": args.per,
               "reply_intent": None if args.no_reply_intent else args.reply_intent}
    read = read_transcripts(args.file, name=args.name, policy=args.policy, **options)
    contexts, written = read.contexts, [(read.responses, args.out_responses)]
    unpaired = ""
    if args.pair is not None:
        other = read_transcripts(args.pair, **options)
        paired = pair_transcripts(read, other)
        contexts, written = paired.contexts, [(paired.a, args.out_responses), (paired.b, args.out_responses_b)]
        same = sum(1 for c in contexts if c.metadata["same_history"])
        unpaired = (f"paired by id: {same} of the {len(contexts)} contexts with the same history in both logs "
                    f"(metadata same_history); {len(read.contexts) - len(contexts)} of the first log's and "
                    f"{len(other.contexts) - len(contexts)} of the second's have no partner")
    contexts.to_jsonl(args.out_contexts, overwrite=args.force)
    conversations = len({c.metadata["dialogue_id"] for c in contexts})
    print(
        f"wrote {len(contexts)} contexts from {conversations} conversations to {args.out_contexts} "
        f"(content hash {contexts.content_hash[:12]})"
    )
    what = "turns" if args.per == "turn" else "conversations"
    for logged, path in written:
        logged.to_jsonl(path, overwrite=args.force)
        actions = logged.actions()
        calls = sum(1 for act in actions if act is not None and act.intents != (args.reply_intent,))
        several = sum(1 for act in actions if act is not None and len(act.calls) > 1)
        print(
            f"wrote the responses of {terminal_text(logged.policy)!r} to {path}: "
            f"{calls} {what} with tool calls ({several} with several), {len(actions) - calls} without"
        )
    if unpaired:
        print(unpaired)
    return 0


def add_subcommands(sub: Any) -> None:
    """Add ``transcripts`` to the ``simscore contexts`` sub-commands.

    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_subcommands(parser.add_subparsers())
    >>> args = parser.parse_args(["transcripts", "t.jsonl", "--out-contexts", "c.jsonl", "--out-responses", "r.jsonl"])
    >>> args.func is cmd_transcripts, args.lists, args.reply_intent
    (True, 'ordered', 'reply')
    """
    parser = sub.add_parser(
        "transcripts", help="contexts and the logged agent's responses from chat transcripts or tau2-bench results",
    )
    parser.add_argument("file", type=input_file, help="chat transcripts (JSON Lines) or a tau2-bench results file (.json)")
    parser.add_argument("--out-contexts", required=True, type=output_file, metavar="FILE",
                        help="context set to write (JSON Lines): one context per assistant turn")
    parser.add_argument("--out-responses", required=True, type=output_file, metavar="FILE",
                        help="responses file to write: the logged agent's tool calls (as acts) and text per context")
    parser.add_argument("--pair", type=input_file, metavar="B",
                        help="a second agent's log of the same conversations or tasks: write the contexts both have "
                             "(the first log's, with metadata same_history: whether the second was given the same "
                             "history) and both agents' responses there (needs --out-responses-b)")
    parser.add_argument("--out-responses-b", type=output_file, metavar="FILE",
                        help="with --pair: where the second agent's responses go")
    parser.add_argument("--format", choices=("chat", "tau2"),
                        help="the input's kind (default: tau2 for a .json file, chat otherwise)")
    parser.add_argument("--name", help="name of the context set (default: the file name without its suffix)")
    parser.add_argument("--policy", help="policy name of the responses (default: the logged agent's, or the file name)")
    parser.add_argument("--lists", choices=("ordered", "set"), default="ordered",
                        help="list arguments as one slot per position (ordered, default) or as a set of values")
    parser.add_argument("--per", choices=UNITS, default="turn",
                        help="one context per assistant turn (default; the response is the logged reply) or per "
                             "task (a conversation; the response is the agent's calls over it, in order)")
    reply = parser.add_mutually_exclusive_group()
    reply.add_argument("--reply-intent", default="reply", metavar="NAME",
                       help="the act of a reply without tool calls (default reply)")
    reply.add_argument("--no-reply-intent", action="store_true",
                       help="a reply without tool calls has no act (its action measures are then undefined)")
    parser.add_argument("--force", action="store_true", help="replace the output files if they exist (never an input)")
    parser.set_defaults(func=cmd_transcripts)
