"""The one reader of the environment: every setting is read here, typed, and recorded for the reference.

`ENV.integer("API_RATE_LIMIT_BURST", 200, "...")` returns the variable's value as an int, its default
when it is unset or empty, and on anything else stops start-up with an error that names the variable,
the form it expects and the value it got (`ConfigurationError`, which `manage.py` prints on one line).
Each call also records the variable (its form, its documented default, its meaning, its section and
whether a production installation sets it), from which `scripts/reference_docs.py` writes
docs/configuration.md and deploy/env.example; a test holds both files to what it would write.
"""

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

# Where a variable belongs in deploy/env.example.
SET = "set"  # a production installation sets it: env.example gives an example value
OPTIONAL = "optional"  # production may set it: env.example shows it commented out, with its default
DEVELOPMENT = "development"  # development and tests only: not in env.example

# What the example environments (deploy/env.example, deploy/compose.env.example) put where a secret goes: a value
# holding one was copied without being replaced. And the shortest secret taken with DEBUG off (`openssl rand -hex 32`
# gives 64 characters; Django's own deployment check asks for 50 of SECRET_KEY).
PLACEHOLDERS = ("change-me", "changeme", "change_me")
SECRET_MIN_LENGTH = 32

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class ConfigurationError(ImproperlyConfigured):
    """A variable of the environment is missing or has a value of the wrong form."""


@dataclass(frozen=True)
class Variable:
    name: str
    form: str  # the accepted form, as the reference and the error message say it
    default: str  # the default as documented ("" for none)
    meaning: str
    section: str
    production: str  # SET, OPTIONAL or DEVELOPMENT
    value: str = ""  # deploy/env.example's value: an example given, else the default as a value ("" if none)


class Environment:
    def __init__(self, environ: Mapping[str, str] | None = None):
        self.environ = os.environ if environ is None else environ
        self.variables: dict[str, Variable] = {}
        self.section = "General"

    # --- the typed readers ---

    def text(self, name, default="", meaning="", **doc) -> str:
        return self.read(name, default, meaning, parse=str, form="text", **doc)

    def integer(self, name, default: int, meaning="", *, minimum: int = 0, **doc) -> int:
        form = "an integer" + (f" of at least {minimum}" if minimum is not None else "")

        def parse(raw: str) -> int:
            value = int(raw.strip())
            if minimum is not None and value < minimum:
                raise ValueError
            return value

        return self.read(name, default, meaning, parse=parse, form=form, **doc)

    def number(self, name, default: float, meaning="", *, minimum: float = 0, **doc) -> float:
        form = "a number such as 0.5" + (f", at least {minimum:g}" if minimum is not None else "")

        def parse(raw: str) -> float:
            value = float(raw.strip())
            if value != value or value in (float("inf"), float("-inf")) or (minimum is not None and value < minimum):
                raise ValueError
            return value

        doc.setdefault("literal", f"{default:g}")
        return self.read(name, float(default), meaning, parse=parse, form=form, **doc)

    def flag(self, name, default: bool, meaning="", **doc) -> bool:
        def parse(raw: str) -> bool:
            word = raw.strip().lower()
            if word not in _TRUE | _FALSE:
                raise ValueError
            return word in _TRUE

        doc.setdefault("shown", "on" if default else "off")
        doc.setdefault("literal", "1" if default else "0")
        return self.read(name, default, meaning, parse=parse, form="1 or 0 (also true/false, yes/no, on/off)", **doc)

    def items(self, name, default="", meaning="", **doc) -> list[str]:
        """A comma-separated list; blanks around and between items are dropped."""

        def parse(raw: str) -> list[str]:
            return [item.strip() for item in raw.split(",") if item.strip()]

        doc.setdefault("literal", default)
        return self.read(name, parse(default), meaning, parse=parse, form="comma-separated list", **doc)

    def choice(self, name, default: str, choices: list[str], meaning="", **doc) -> str:
        def parse(raw: str) -> str:
            if raw.strip() not in choices:
                raise ValueError
            return raw.strip()

        return self.read(name, default, meaning, parse=parse, form="one of " + ", ".join(choices), **doc)

    def url(self, name, default: str, meaning="", *, schemes: tuple[str, ...] = ("http", "https"), **doc) -> str:
        def parse(raw: str) -> str:
            parts = urlsplit(raw.strip())
            if parts.scheme not in schemes or not (parts.netloc or parts.scheme == "unix"):
                raise ValueError
            return raw.strip()

        form = "a URL starting " + " or ".join(f"{scheme}://" for scheme in schemes)
        return self.read(name, default, meaning, parse=parse, form=form, **doc)

    def secret(
        self, name, *, debug: bool, dev_default="", required=True, min_length=SECRET_MIN_LENGTH, meaning="", **doc
    ) -> str:
        """A secret. With DEBUG on a fixed development value stands in for a missing one. With DEBUG off a missing
        one stops start-up (unless not `required`: empty then leaves its feature off), and so does a placeholder of
        the examples or a value shorter than `min_length` (0 where someone else chooses it, as an SMTP password)."""
        if required:
            doc.setdefault("shown", "none (required with DEBUG off)")
        form = f"text, long and random (at least {min_length} characters with DEBUG off)" if min_length else "text"
        value = self.read(name, "", meaning, parse=str, form=form, **doc)
        if debug:
            return value or dev_default
        if value:
            refuse_weak_secret(name, value, min_length=min_length)
        elif required:
            raise ConfigurationError(f"{name} must be set when DEBUG is off ({self.variables[name].form})")
        return value

    # --- the one place a variable is looked up ---

    def read(
        self,
        name: str,
        default,
        meaning: str,
        *,
        parse: Callable[[str], object],
        form: str,
        shown: str | None = None,
        literal: str | None = None,
        production: str = OPTIONAL,
        example: str = "",
        section: str | None = None,
    ):
        """`parse(raw)` of the variable's value, or `default` when it is unset or empty.

        `parse` refuses a value by raising ValueError (or TypeError); the error then names the variable
        and `form`. For the reference: `shown` is the default as documented when `default` itself
        depends on something else (DEBUG, the machine's cores); `literal` the default written as a value;
        `example` a value for deploy/env.example in its stead."""
        if literal is None:
            literal = "" if shown is not None or default is None else str(default)
        if shown is None:
            shown = literal
        self.variables[name] = Variable(
            name=name,
            form=form,
            default=shown,
            meaning=meaning,
            section=section or self.section,
            production=production,
            value=example or literal,
        )
        raw = self.environ.get(name, "")
        if raw.strip() == "":
            return default
        try:
            return parse(raw)
        except (ValueError, TypeError):
            raise ConfigurationError(f"{name} must be {form}; it is {raw!r}") from None


def refuse_weak_secret(name: str, value: str, *, min_length: int = 0, part: str = "") -> None:
    """Stops start-up (DEBUG off) on a secret left as an example's placeholder or too short to be random; `part`
    names the piece of the variable that holds it (the password of a URL). The message never repeats the value."""
    what = f"the {part} in {name}" if part else name
    placeholder = next((word for word in PLACEHOLDERS if word in value.lower()), None)
    if placeholder:
        raise ConfigurationError(
            f"{what} is the placeholder {placeholder!r} of an example environment: with DEBUG off it must be a long "
            "random value of its own (`openssl rand -hex 32`)"
        )
    if len(value) < min_length:
        raise ConfigurationError(
            f"{what} is {len(value)} characters long: with DEBUG off it must be at least {min_length} random "
            "characters (`openssl rand -hex 32`)"
        )


# The process's environment, read by ageverify/settings.py and gunicorn.conf.py.
ENV = Environment()
