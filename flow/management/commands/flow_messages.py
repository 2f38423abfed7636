"""The hosted flow's translation catalogs (flow/locale/): updated from the source, or checked complete.

    manage.py flow_messages           # extract every marked string of the flow into each language's .po
    manage.py flow_messages --check   # exit 1 listing each string missing, untranslated or fuzzy in a language

The flow's strings are the ones marked for translation in its templates (templates/flow/,
templates/age_passes/), its Python (flow/: pages, error pages, the texts its scripts show) and the user
messages the checks, the session services, the wallets and the age passes return (checks/, sessions_api/,
wallets/, age_passes/, marked with gettext_noop, translated where shown).
Django's makemessages does the extraction (GNU gettext: xgettext, msgmerge); after an update,
translate the new entries in every .po and remove their "fuzzy" flags. The .mo files are compiled
by scripts/compile_translations.py (run by scripts/test and scripts/demo).
"""

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import polib
from django.conf import settings
from django.core.management.base import CommandError
from django.core.management.commands import makemessages

CATALOGS = Path(__file__).resolve().parents[2] / "locale"
SOURCES = (
    "flow",
    os.path.join("templates", "flow"),
    "age_passes",
    os.path.join("templates", "age_passes"),
    "checks",
    "sessions_api",
    "wallets",
)


def shipped_languages() -> list[str]:
    """Every language of settings.LANGUAGES but the source language (English), which needs no catalog."""
    return [code for code, _ in settings.LANGUAGES if code != settings.LANGUAGE_CODE]


def catalog_problems(catalogs: Path, languages: list[str]) -> list[str]:
    """One line per string a language lacks (missing, untranslated or fuzzy), or per catalog msgfmt refuses."""
    problems = []
    for language in languages:
        path = catalogs / language / "LC_MESSAGES" / "django.po"
        if not path.exists():
            problems.append(f"{language}: no catalog at {path}")
            continue
        catalog = polib.pofile(str(path))
        problems += [f"{language}: fuzzy: {entry.msgid!r}" for entry in catalog.fuzzy_entries()]
        problems += [
            f"{language}: untranslated: {entry.msgid!r}"
            for entry in catalog.untranslated_entries()
            if "fuzzy" not in entry.flags
        ]
        checked = subprocess.run(["msgfmt", "--check", "-o", os.devnull, str(path)], capture_output=True, text=True)
        if checked.returncode:
            problems.append(f"{language}: msgfmt --check refuses the catalog:\n{checked.stderr.strip()}")
    return problems


class Command(makemessages.Command):
    help = "Update the hosted flow's translation catalogs from the source, or --check that they are complete."

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument(
            "--check",
            action="store_true",
            help="Change nothing; fail if any flow string is untranslated or fuzzy in a language.",
        )
        parser.add_argument("--catalogs", default=str(CATALOGS), help="The locale directory (default: flow/locale).")

    def handle(self, *args, **options):
        languages = shipped_languages()
        catalogs = Path(options["catalogs"]).resolve()
        options.update(
            locale=languages,
            exclude=[],
            all=False,
            domain="django",
            no_obsolete=True,
            add_location="file",
            keep_pot=False,
            extensions=None,
        )
        with contextlib.chdir(settings.BASE_DIR):  # SOURCES are relative to the project
            if not options["check"]:
                self.catalogs = catalogs
                super().handle(*args, **options)
                return
            self._check(catalogs, languages, options, *args)

    def _check(self, catalogs, languages, options, *args):
        with tempfile.TemporaryDirectory() as scratch:
            # Merge the source into copies of the catalogs: what an update would leave to translate.
            self.catalogs = Path(scratch) / "locale"
            if catalogs.exists():
                shutil.copytree(catalogs, self.catalogs)
            super().handle(*args, **{**options, "verbosity": 0})
            problems = catalog_problems(self.catalogs, languages)
        if problems:
            raise CommandError(
                f"{len(problems)} flow string(s) need a translation (run `manage.py flow_messages`, translate, "
                "remove the fuzzy flags):\n" + "\n".join(problems)
            )
        self.stdout.write(f"flow_messages: every flow string is translated in {', '.join(languages)}")

    def write_po_file(self, potfile, locale):
        """As makemessages, without the extraction time in the header: engineers updating the catalogs in
        parallel would otherwise conflict on that line in every language."""
        super().write_po_file(potfile, locale)
        path = Path(potfile).parent / locale / "LC_MESSAGES" / f"{self.domain}.po"
        text = path.read_text(encoding="utf-8")
        path.write_text(re.sub(r'^"POT-Creation-Date: [^"]*"\n', "", text, count=1, flags=re.M), encoding="utf-8")

    def find_files(self, root):
        """Only the flow's sources, all into one catalog (the flow app's)."""
        found = []
        for source in SOURCES:
            found += super().find_files(os.path.join(root, source))
        for translatable in found:
            translatable.locale_dir = str(self.catalogs)
        self.catalogs.mkdir(parents=True, exist_ok=True)
        self.locale_paths = [str(self.catalogs)]
        self.default_locale_path = str(self.catalogs)
        return sorted(found)
