"""The README's shell blocks as steps a docs test runs: each command, and the answer printed under it.

A block is a fenced `sh` block. A step is one command (continued by a trailing backslash or an open
quote), the comment lines before it, and its printed answer: the comment lines right after it that
start with `# {` (continued by lines starting with `#  `), `# verified` or `# Receiving`. `answer_mismatches` holds
a real answer to that printed one: every key shown exists, and the values that do not vary between
runs (status, reason, code, ...) are equal.
"""

import json
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
REPO = README.parent

# Values that stay the same from one run to the next; every other printed value (and any with "...")
# only shows the key.
STABLE_KEYS = {
    "status",
    "reason",
    "mode",
    "subject",
    "ageLimit",
    "code",
    "title",
    "detail",
    "field",
    "type",
    "trueAge",
    "isLive",
    "event",
    "callbackUrl",
    "cancelUrl",
    "notificationUrl",
    "nextCursor",
}
_PAIR = re.compile(r'"(\w+)":\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|null|true|false)')


@dataclass
class Step:
    command: str
    printed: str = ""  # the answer printed under it, comment marks removed
    comment: str = ""  # the comment lines before it


@dataclass
class Block:
    heading: str  # the section it is in
    text: str
    steps: list[Step] = field(default_factory=list)

    @property
    def first_command(self) -> str:
        return self.steps[0].command if self.steps else ""


def _complete(command: str) -> bool:
    try:
        shlex.split(command, comments=True)
    except ValueError:  # an open quote: the command goes on
        return False
    return not command.endswith("\\")


def _steps(text: str) -> list[Step]:
    steps, comment, pending, in_answer = [], [], "", False
    for line in text.splitlines():
        stripped = line.strip()
        if pending:
            pending += "\n" + line
            if _complete(pending):
                steps.append(Step(pending, comment="\n".join(comment)))
                pending, comment = "", []
            continue
        if stripped.startswith("#"):
            body = stripped[1:]
            if steps and (body.startswith((" {", " verified", " Receiving")) and not steps[-1].printed and not comment):
                steps[-1].printed, in_answer = body.strip(), True
            elif in_answer and body.startswith("  "):
                steps[-1].printed += " " + body.strip()
            else:
                in_answer = False
                comment.append(body.strip())
            continue
        in_answer = False
        if not stripped:
            continue
        if _complete(line):
            steps.append(Step(line, comment="\n".join(comment)))
            comment = []
        else:
            pending = line
    return steps


def readme_blocks(path: Path = README) -> list[Block]:
    """The fenced `sh` blocks of the README (or of another Markdown page, docs/containers.md for one)."""
    blocks, heading = [], ""
    lines = path.read_text().splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("#") and not line.startswith("#!"):
            heading = line.lstrip("#").strip()
        if line.strip() == "```sh":
            end = lines.index("```", index + 1)
            text = "\n".join(lines[index + 1 : end])
            blocks.append(Block(heading, text, _steps(text)))
            index = end
        index += 1
    return blocks


def printed_pairs(printed: str) -> list[tuple[str, object]]:
    """The `"key": value` pairs of a printed answer, values as JSON reads them."""
    return [(key, json.loads(value)) for key, value in _PAIR.findall(printed)]


def _flatten(value, into: dict) -> dict:
    if isinstance(value, dict):
        for key, item in value.items():
            into.setdefault(key, []).append(item)
            _flatten(item, into)
    elif isinstance(value, list):
        for item in value:
            _flatten(item, into)
    return into


def answer_mismatches(printed: str, answer) -> list[str]:
    """What the printed answer shows that the real `answer` (parsed JSON) does not have."""
    actual = _flatten(answer, {})
    problems = []
    for key, value in printed_pairs(printed):
        if key not in actual:
            problems.append(f"no {key!r} in the answer")
        elif key in STABLE_KEYS and not (isinstance(value, str) and "..." in value) and value not in actual[key]:
            problems.append(f"{key!r} is {actual[key]!r}, the README prints {value!r}")
    return problems


def run(command: str, *, env: dict, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


def run_curl(command: str, *, env: dict) -> tuple[int, object]:
    """Runs a README curl command as printed (plus `-w` to learn the status); returns (status, parsed body)."""
    result = run(command + " -w '\\n%{http_code}'", env=env)
    assert result.returncode == 0, (command, result.stderr)
    body, _, status = result.stdout.rpartition("\n")
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = body
    return int(status), parsed


def readme_python_blocks() -> list[str]:
    """The README's fenced `python` blocks, in order."""
    return re.findall(r"^```python\n(.*?)^```$", README.read_text(), flags=re.MULTILINE | re.DOTALL)
