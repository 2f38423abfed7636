"""The code blocks of the README and of every page of docs/, as a docs test runs them.

A block is a fenced block with a language (`sh`, `python`, `html`, `js`, ...); an unlabelled or `text`
block is printed output, not something to run. A shell block is made of steps: one command (continued
by a trailing backslash or an open quote), the comment lines before it, and its printed answer: the
comment lines right after it that start with `# {` (continued by lines starting with `#  `), `# verified`
or `# Receiving`; any comment lines right after a command are also kept as `after`. `answer_mismatches`
holds a real answer to that printed one: every key shown exists, and the values that do not vary between
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
OUTPUT_LANGUAGES = {"", "text"}


def pages() -> list[Path]:
    """The README, then every page of the documentation site."""
    return [README, *sorted((REPO / "docs").glob("**/*.md"))]


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
    after: list[str] = field(default_factory=list)  # the comment lines right after it, comment marks removed


@dataclass
class Block:
    page: str  # its file, relative to the repository
    heading: str  # the section it is in
    language: str
    text: str
    steps: list[Step] = field(default_factory=list)

    @property
    def first_command(self) -> str:
        """A shell block's first command; another block's first line."""
        if self.language == "sh":
            return self.steps[0].command if self.steps else ""
        return next((line.strip() for line in self.text.splitlines() if line.strip()), "")


def _complete(command: str) -> bool:
    try:
        shlex.split(command, comments=True)
    except ValueError:  # an open quote: the command goes on
        return False
    return not command.endswith("\\")


def _steps(text: str) -> list[Step]:
    steps, comment, pending, in_answer, after = [], [], "", False, None
    for line in text.splitlines():
        stripped = line.strip()
        if after is not None and stripped.startswith("#") and not pending:
            after.append(stripped[1:].strip())
        elif not pending:
            after = None
        if pending:
            pending += "\n" + line
            if _complete(pending):
                steps.append(Step(pending, comment="\n".join(comment)))
                pending, comment, after = "", [], steps[-1].after
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
            comment, after = [], steps[-1].after
        else:
            pending = line
    return steps


def page_blocks(page: Path) -> list[Block]:
    """The blocks to run of one page (output blocks left out)."""
    blocks, heading = [], ""
    lines = page.read_text().splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("#") and not line.startswith("#!"):
            heading = line.lstrip("#").strip()
        if line.startswith("```"):
            language = line[3:].strip()
            end = lines.index("```", index + 1)
            text = "\n".join(lines[index + 1 : end])
            if language not in OUTPUT_LANGUAGES:
                steps = _steps(text) if language == "sh" else []
                blocks.append(Block(str(page.relative_to(REPO)), heading, language, text, steps))
            index = end
        index += 1
    return blocks


def doc_blocks() -> list[Block]:
    """Every block to run, of the README and of every page of docs/."""
    return [block for page in pages() for block in page_blocks(page)]


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
            problems.append(f"{key!r} is {actual[key]!r}, the docs print {value!r}")
    return problems


def run(command: str, *, env: dict, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


def run_curl(command: str, *, env: dict) -> tuple[int, object]:
    """Runs a documented curl command as printed (plus `-w` to learn the status); returns (status, parsed body)."""
    result = run(command + " -w '\\n%{http_code}'", env=env)
    assert result.returncode == 0, (command, result.stderr)
    body, _, status = result.stdout.rpartition("\n")
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = body
    return int(status), parsed


def python_blocks(page: str) -> list[str]:
    """The fenced `python` blocks of a page (relative to the repository), in order."""
    return [block.text + "\n" for block in page_blocks(REPO / page) if block.language == "python"]
