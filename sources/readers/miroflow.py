"""MiroFlow task results and task logs: MCP tool calls written as XML inside assistant text.

    {"message_history": [
       {"role": "system", "content": [{"type": "text", "text": "In this environment you ..."}]},
       {"role": "user", "content": "Is Spain oa country of Europe?\\n\\nYour task is to ..."},
       {"role": "assistant", "content": "Plan: ...\\n<use_mcp_tool>\\n<server_name>tool-searching
          </server_name>\\n<tool_name>google_search</tool_name>\\n<arguments>\\n{\\n  \\"q\\":
          \\"Is Spain in Europe? ...\\", ...}\\n</arguments>\\n</use_mcp_tool>"},
       {"role": "user", "content": [{"type": "text",
          "text": "{\\n  \\"searchParameters\\": {...},\\n  \\"organic\\": [...]}"}]},
       ...], "summary": "Final report: ...", "final_boxed_answer": "Yes"}

Action = the `<use_mcp_tool>` block exactly as the agent wrote it (server, tool and JSON
arguments); observation = the next user message, which MiroFlow fills with the tool result.
observation_format is "search_results" when that result is search-engine JSON (`organic`,
`searchParameters`, `knowledgeGraph`) or comes from a search tool, "page_text" for scraped pages
and other tool text, "text" for MiroFlow's own "Tool call to X on Y failed." errors (is_error
True; otherwise None, since tools report failures only in free text). action_kind is "search"
for tools named *search*, "open" for scrape/fetch/browse/page tools, else "tool_call".

MiroFlow runs all blocks of one assistant message and joins their results into one user
message, so an assistant message with several blocks is one turn (blocks joined by a blank line,
tool names comma-joined). The final assistant message (no tool call) is metadata["final_response"],
other user messages that answer no call (MiroFlow's closing "summarize" instruction) are
metadata["user_followups"], and turns whose result MiroFlow replaced by its "Tool result is
omitted" placeholder are listed in metadata["omitted_observation_turns"] (and those MiroFlow cut
at its length limit, ending "... [Result truncated]", in "truncated_observation_turns").

Three layouts are read:
  * the task result (the fixture): top-level `message_history`, `summary`, `final_boxed_answer`
    -> one trajectory at "$";
  * the full task log: `main_agent_message_history` {system_prompt, message_history} and
    `sub_agent_message_history_sessions` {session id: {...}} -> one trajectory for the main agent
    ("$.main_agent_message_history") and one per sub-agent session
    ("$.sub_agent_message_history_sessions.<id>"), linked through metadata (agent, session_id,
    parent_position). A sub-agent is its own episode with its own task (the subtask it was given);
    in the main agent it shows up as one tool call whose observation is the sub-agent's answer.
  * a message history written on its own as a bare list -> one trajectory at "$". When its
    assistant messages carry OpenAI-style `tool_calls` (named `<server>-<tool>`) answered by
    `role: tool` messages, they are paired as in chat_messages, one turn per call, with the
    kinds above (the server names are those the system prompt lists); otherwise it is read like
    `message_history`. A `developer` message is system prompt in every layout.
outcome comes from `judge_result` (CORRECT -> success, INCORRECT / NOT_ATTEMPTED -> failure)
where present; the task result carries no verdict, so it is "unknown".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from sources.readers.base import Reader, as_text, load_json
from sources.readers.chat_messages import ChatFormatError, convert_messages
from sources.readers.pairing import exchanges, unanswered_reason
from sources.schema import Quarantine, Trajectory, Turn

_BLOCK = re.compile(
    r"<use_mcp_tool>\s*<server_name>(.*?)</server_name>\s*<tool_name>(.*?)</tool_name>\s*"
    r"<arguments>(.*?)</arguments>\s*</use_mcp_tool>",
    re.DOTALL,
)
_FAILED = re.compile(r"^Tool call to \S+ on \S+ failed\.")
OMITTED_PREFIX = "Tool result is omitted"  # MiroFlow's placeholder when old results are dropped
TRUNCATED_SUFFIX = "... [Result truncated]"  # MiroFlow cuts results at TOOL_RESULT_MAX_LENGTH
SEARCH_KEYS = ("organic", "searchParameters", "knowledgeGraph")
OPEN_WORDS = ("scrape", "fetch", "browse", "page", "visit", "read")
JUDGE_OUTCOMES = {"CORRECT": "success", "INCORRECT": "failure", "NOT_ATTEMPTED": "failure"}
_BARE_LIST = re.compile(r'\[\s*\{\s*"role"\s*:')
_SERVER_NAME = re.compile(r"^## Server name: (\S+)\s*$", re.MULTILINE)
HISTORY_KEYS = ("message_history", "main_agent_message_history",
                "sub_agent_message_history_sessions", "step_logs")


def _action_kind(server: str, tool: str) -> str:
    if server.startswith("agent-"):
        return "tool_call"  # a sub-agent call, whatever its tool is named
    lowered = tool.lower()
    if "search" in lowered:
        return "search"
    if any(word in lowered for word in OPEN_WORDS):
        return "open"
    return "tool_call"


def _observation_format(text: str, servers: list[str], tools: list[str]) -> str:
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            value = json.loads(stripped)
        except ValueError:
            value = None
        if isinstance(value, dict) and any(key in value for key in SEARCH_KEYS):
            return "search_results"
    if any(s.startswith("agent-") for s in servers):
        return "text"
    if all("search" in tool.lower() for tool in tools):
        return "search_results"
    return "page_text"


def _as_miroflow_turn(turn: Turn, servers: list[str]) -> Turn:
    """A chat tool-call turn with MiroFlow's kinds: the call is named `<server>-<tool>`, the
    servers being those the system prompt lists."""
    name = turn.tool_name or ""
    server = max((s for s in servers if name.startswith(f"{s}-")), key=len, default="")
    tool = name[len(server) + 1:] if server else name
    failed = bool(_FAILED.match(turn.observation))
    return replace(
        turn,
        action_kind=_action_kind(server, tool),
        observation_format="text" if failed else _observation_format(turn.observation, [server],
                                                                     [tool]),
        is_error=True if failed else turn.is_error,
    )


class MiroFlowReader(Reader):
    """MiroFlow task results / logs: one turn per assistant message with `<use_mcp_tool>`."""

    name: ClassVar[str] = "miroflow"
    domain: ClassVar[str] = "search"
    description: ClassVar[str] = (
        "action = the `<use_mcp_tool>` block(s) of an assistant message; observation = the next "
        "user message (search JSON -> search_results, scraped page -> page_text)"
    )

    def sniff(self, path: Path, head: str) -> bool:
        if "use_mcp_tool" not in head:  # first: one scan rules out most other formats' heads
            return False
        has_history = '"message_history"' in head or '"main_agent_message_history"' in head
        return has_history or bool(_BARE_LIST.match(head))  # or a history written on its own

    def read(self, path: Path) -> Iterator[Trajectory | Quarantine]:
        source = str(path)
        document = load_json(path)
        if isinstance(document, list):
            yield from self._bare_history(source, document)
            return
        if not isinstance(document, dict):
            yield Quarantine(source, "$", f"expected an object, got {type(document).__name__}")
            return
        metadata = {k: v for k, v in document.items() if k not in HISTORY_KEYS}
        outcome = JUDGE_OUTCOMES.get(str(document.get("judge_result", "")).strip().upper(),
                                     "unknown")
        if "message_history" in document:
            yield from self._history(source, "$", document["message_history"], None, outcome,
                                     metadata)
            return
        if "main_agent_message_history" not in document:
            yield Quarantine(source, "$", "no message_history or main_agent_message_history")
            return
        main_position = "$.main_agent_message_history"
        sessions = document.get("sub_agent_message_history_sessions") or {}
        if not isinstance(sessions, dict):
            yield Quarantine(source, "$.sub_agent_message_history_sessions",
                             f"must be object, got {type(sessions).__name__}")
            sessions = {}
        main = document["main_agent_message_history"]
        if not isinstance(main, dict):
            yield Quarantine(source, main_position, f"must be object, got {type(main).__name__}")
        else:
            main_meta = dict(metadata, agent="main", sub_agent_sessions=list(sessions))
            yield from self._history(source, main_position, main.get("message_history"),
                                     main.get("system_prompt"), outcome, main_meta)
        for session_id, session in sessions.items():
            position = f"$.sub_agent_message_history_sessions.{session_id}"
            if not isinstance(session, dict):
                yield Quarantine(source, position, f"must be object, got {type(session).__name__}")
                continue
            sub_meta = {"agent": "sub", "session_id": session_id, "parent_position": main_position}
            for key in ("task_id",):
                if key in document:
                    sub_meta[key] = document[key]
            yield from self._history(source, position, session.get("message_history"),
                                     session.get("system_prompt"), "unknown", sub_meta)

    def _bare_history(self, source: str, messages: list) -> Iterator[Trajectory | Quarantine]:
        """A message history written as a bare list: `<use_mcp_tool>` text as in the task log,
        or OpenAI-style `tool_calls` answered by `role: tool` messages (named server-tool)."""
        if not any(isinstance(m, dict) and m.get("tool_calls") for m in messages):
            yield from self._history(source, "$", messages, None, "unknown",
                                     {"layout": "message list"}, key="")
            return
        try:
            chat = convert_messages(messages, "$", key="")
        except ChatFormatError as error:
            yield Quarantine(source, error.position, error.reason)
            return
        servers = _SERVER_NAME.findall(chat.system_prompt or "")
        turns = [_as_miroflow_turn(turn, servers) for turn in chat.turns]
        metadata = {"layout": "message list", **chat.metadata}
        if chat.problems:
            metadata["n_quarantined_messages"] = len(chat.problems)
        yield Trajectory(task=chat.task, turns=turns, position="$", outcome="unknown",
                         system_prompt=chat.system_prompt, metadata=metadata)
        for where, reason in chat.problems:
            yield Quarantine(source, where, reason)

    def _history(self, source: str, position: str, history: Any, system_prompt: Any,
                 outcome: str, metadata: dict[str, Any], key: str = ".message_history",
                 ) -> Iterator[Trajectory | Quarantine]:
        """One message history -> one Trajectory (plus quarantines for broken steps); `key` is
        where the list sits under `position`."""
        if not isinstance(history, list):
            yield Quarantine(source, f"{position}{key}",
                             f"must be list, got {type(history).__name__}")
            return
        system_parts = [as_text(system_prompt)] if isinstance(system_prompt, str) else []
        task: str | None = None
        turns: list[Turn] = []
        problems: list[tuple[str, str]] = []
        omitted: list[int] = []
        truncated: list[int] = []
        final_response: str | None = None
        n_text_only = 0
        followups: list[str] = []
        for step in exchanges(history, _is_call):
            message, where = step.message, f"{position}{key}[{step.index}]"
            if not isinstance(message, dict) or not isinstance(message.get("role"), str):
                problems.append((where, "message must be an object with a role"))
                continue
            role, text = message["role"], as_text(message.get("content"))
            blocks = list(_BLOCK.finditer(text)) if step.is_call else []
            if role in ("system", "developer"):
                system_parts.append(text)
            elif role == "user":
                if task is None:
                    task = text
                else:
                    followups.append(text)  # e.g. MiroFlow's closing "summarize" instruction
            elif role != "assistant":
                problems.append((where, f"unknown role {role!r}"))
            elif not step.is_call:
                if step.index == len(history) - 1:
                    final_response = text
                else:
                    n_text_only += 1  # talk without a call: the agent's thought
            elif not blocks:
                # The tool result (if any) answers a call we cannot read: dropped with it.
                problems.append((where, "unparsable <use_mcp_tool> block (dropped with its tool "
                                        "result)"))
            elif step.reply is None:
                tools = [block.group(2).strip() for block in blocks]
                problems.append((where, unanswered_reason(",".join(dict.fromkeys(tools)))))
            else:
                turns.append(self._blocks_turn(blocks, as_text(step.reply.get("content")),
                                               omitted, truncated, len(turns)))
        metadata = dict(metadata)
        if final_response is not None:
            metadata["final_response"] = final_response
        if n_text_only:
            metadata["n_assistant_text_only"] = n_text_only
        if followups:
            metadata["user_followups"] = followups
        if omitted:
            metadata["omitted_observation_turns"] = omitted
        if truncated:
            metadata["truncated_observation_turns"] = truncated
        if problems:
            metadata["n_quarantined_messages"] = len(problems)
        yield Trajectory(task=task or "", turns=turns, position=position, outcome=outcome,
                         system_prompt="\n\n".join(system_parts) if system_parts else None,
                         metadata=metadata)
        for where, reason in problems:
            yield Quarantine(source, where, reason)

    @staticmethod
    def _blocks_turn(blocks: list[re.Match[str]], observation: str, omitted: list[int],
                     truncated: list[int], number: int) -> Turn:
        """One turn for the `<use_mcp_tool>` blocks of an assistant message (MiroFlow runs them
        all and answers with one user message); notes an omitted or truncated result."""
        servers = [block.group(1).strip() for block in blocks]
        tools = [block.group(2).strip() for block in blocks]
        failed = bool(_FAILED.match(observation))
        if observation.startswith(OMITTED_PREFIX):
            omitted.append(number)
        if observation.endswith(TRUNCATED_SUFFIX):
            truncated.append(number)
        return Turn(
            action="\n\n".join(block.group(0) for block in blocks),
            observation=observation,
            action_kind=_action_kind(servers[0], tools[0]) if len(blocks) == 1 else "tool_call",
            observation_format="text" if failed
            else _observation_format(observation, servers, tools),
            tool_name=",".join(dict.fromkeys(tools)),
            is_error=True if failed else None,
        )


def _is_call(message: Any) -> bool:
    """An assistant message with a `<use_mcp_tool>` block (read or not): the next user message is
    its tool result."""
    return (isinstance(message, dict) and message.get("role") == "assistant"
            and "<use_mcp_tool>" in as_text(message.get("content")))
