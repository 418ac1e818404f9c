"""``simscore contexts transcripts``: contexts and the logged agent's responses from agent transcripts.

``simscore contexts transcripts FILE --out-contexts C.jsonl --out-responses R.jsonl`` reads
OpenAI-style chat transcripts (JSON Lines, one conversation a line) or a τ²-bench results file
(``.json``, or ``--format tau2``) with :mod:`contexts.transcripts` and writes one context per
assistant turn and, in the same contexts, the responses of the agent that was logged (its tool
calls as acts, its text), ready for ``simscore compare`` against another agent's responses.
"""

from __future__ import annotations

import argparse
from typing import Any

from simscore.app.cli.args import checks_outputs, input_file, output_file
from simscore.untrusted import terminal_text

__all__ = ["add_subcommands", "cmd_transcripts"]


@checks_outputs
def cmd_transcripts(args: argparse.Namespace) -> int:
    """``simscore contexts transcripts``: write the contexts and the logged agent's responses of a transcript file."""
    from contexts.transcripts import read_transcripts

    read = read_transcripts(
        args.file, kind=args.format, name=args.name, policy=args.policy, lists=args.lists,
        reply_intent=None if args.no_reply_intent else args.reply_intent,
    )
    read.contexts.to_jsonl(args.out_contexts, overwrite=args.force)
    read.responses.to_jsonl(args.out_responses, overwrite=args.force)
    conversations = len({c.metadata["dialogue_id"] for c in read.contexts})
    actions = read.responses.actions()
    calls = sum(1 for act in actions if act is not None and act.intents != (args.reply_intent,))
    several = sum(1 for act in actions if act is not None and len(act.calls) > 1)
    print(
        f"wrote {len(read.contexts)} contexts from {conversations} conversations to {args.out_contexts} "
        f"(content hash {read.contexts.content_hash[:12]})"
    )
    print(
        f"wrote the responses of {terminal_text(read.responses.policy)!r} to {args.out_responses}: "
        f"{calls} turns with tool calls ({several} with several), {len(actions) - calls} without"
    )
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
    parser.add_argument("--format", choices=("chat", "tau2"),
                        help="the input's kind (default: tau2 for a .json file, chat otherwise)")
    parser.add_argument("--name", help="name of the context set (default: the file name without its suffix)")
    parser.add_argument("--policy", help="policy name of the responses (default: the logged agent's, or the file name)")
    parser.add_argument("--lists", choices=("ordered", "set"), default="ordered",
                        help="list arguments as one slot per position (ordered, default) or as a set of values")
    parser.add_argument("--reply-intent", default="reply", metavar="NAME",
                        help="the act of a reply without tool calls (default reply)")
    parser.add_argument("--no-reply-intent", action="store_true",
                        help="a reply without tool calls has no act (its action measures are then undefined)")
    parser.add_argument("--force", action="store_true", help="replace the output files if they exist (never an input)")
    parser.set_defaults(func=cmd_transcripts)
