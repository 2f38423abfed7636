"""The flow in nine languages: every string translated, the language chosen by the browser, the link or the switch."""

import importlib
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils.functional import Promise
from django.utils.translation import get_language_info

from age_passes.models import AgePassPolicy
from checks.age import MESSAGE_NO_FACE
from flow.management.commands.flow_messages import CATALOGS, shipped_languages
from sessions_api.models import Reason, Status
from sessions_api.state_machine import session_transition
from tenants.models import Tenant
from tests.support.flow import approve, open_flow, save_right_give, start_path

ROOT = Path(__file__).resolve().parents[2]
# Modules whose MESSAGE_* constants are shown to the user by the flow (as stored or raised English text).
USER_MESSAGE_MODULES = (
    "checks.age",
    "checks.images",
    "checks.liveness",
    "checks.document",
    "checks.face_match",
    "sessions_api.decision",
    "sessions_api.submission",
    "flow.uploads",
    "flow.texts",
    "wallets.digital_id",
    "flow.digital_id",
    "age_passes.services",
    "flow.age_pass",
)


def test_every_flow_string_is_translated_in_every_shipped_language():
    assert shipped_languages() == ["de", "fr", "es", "it", "nl", "pl", "pt", "ar"]

    call_command("flow_messages", check=True)  # raises CommandError listing what is missing


def test_the_check_names_each_untranslated_fuzzy_or_broken_string(tmp_path):
    catalogs = tmp_path / "locale"
    shutil.copytree(CATALOGS, catalogs)
    german = polib.pofile(str(catalogs / "de/LC_MESSAGES/django.po"))
    german.find("Take a selfie").msgstr = ""
    german.save()
    arabic = polib.pofile(str(catalogs / "ar/LC_MESSAGES/django.po"))
    arabic.find("Turn on the camera").flags.append("fuzzy")
    arabic.find("Attempt %(attempt)s of %(max_attempts)s").msgstr = "المحاولة %(attempt)s"
    arabic.save()

    with pytest.raises(CommandError) as refused:
        call_command("flow_messages", check=True, catalogs=str(catalogs))

    message = str(refused.value)
    assert "de: untranslated: 'Take a selfie'" in message
    assert "ar: fuzzy: 'Turn on the camera'" in message
    assert "ar: msgfmt --check refuses the catalog" in message and "max_attempts" in message


def test_every_user_message_of_the_checks_and_services_is_in_the_catalog():
    german = polib.pofile(str(CATALOGS / "de/LC_MESSAGES/django.po"))
    translated = {entry.msgid: entry.msgstr for entry in german}
    messages = {
        f"{module}.{name}": str(value)
        for module in USER_MESSAGE_MODULES
        for name, value in vars(importlib.import_module(module)).items()
        if name.startswith("MESSAGE_") and isinstance(value, str | Promise)
    }
    assert len(messages) > 20
    missing = {name: text for name, text in messages.items() if not translated.get(text)}
    assert not missing, f"mark these with gettext_noop / gettext_lazy and translate them: {missing}"


def test_the_scripts_take_every_sentence_from_the_page():
    for script in (ROOT / "static/flow").glob("*.js"):
        sentences = re.findall(r'"([A-Z][a-z]+ [^"]*)"', script.read_text())
        assert not sentences, f"{script.name}: put {sentences} in flow/texts.py SCRIPT_TEXTS"


def test_the_browser_language_is_used_and_announced(live_visitor):
    response = live_visitor.client.get("/flow/", HTTP_ACCEPT_LANGUAGE="de-CH,de;q=0.9,en;q=0.5")

    body = response.content.decode()
    assert '<html lang="de" dir="ltr">' in body
    assert "<h1>Bestätigen Sie Ihr Alter</h1>" in body
    assert "mindestens <strong>18&nbsp;Jahre alt</strong>" in body
    assert "Verifizierung abbrechen" in body
    assert response["Content-Language"] == "de"
    assert "Accept-Language" in response["Vary"]


def test_an_unknown_browser_language_gets_english(live_visitor):
    response = live_visitor.client.get("/flow/", HTTP_ACCEPT_LANGUAGE="ja-JP,ja;q=0.9")

    assert '<html lang="en" dir="ltr">' in response.content.decode()
    assert "<h1>Confirm your age</h1>" in response.content.decode()


def test_the_links_locale_wins_over_the_browser_and_arabic_is_right_to_left(api):
    created = api.create_session()
    client = Client(HTTP_ACCEPT_LANGUAGE="de")

    start = client.get(start_path(created["verificationUrl"]) + "&locale=ar-EG")

    assert start.status_code == 303
    assert start.cookies["av_lang"].value == "ar" and start.cookies["av_lang"]["path"] == "/flow/"
    body = client.get("/flow/").content.decode()
    assert '<html lang="ar" dir="rtl">' in body
    assert "<h1>أكّد عمرك</h1>" in body


def test_an_unknown_locale_on_the_link_is_ignored(api):
    created = api.create_session()
    client = Client(HTTP_ACCEPT_LANGUAGE="fr")

    start = client.get(start_path(created["verificationUrl"]) + "&locale=xx")

    assert start.status_code == 303 and "av_lang" not in start.cookies
    assert "<h1>Confirmez votre âge</h1>" in client.get("/flow/").content.decode()


def test_a_refused_link_answers_in_the_links_language(api):
    created = api.create_session()
    link = start_path(created["verificationUrl"]).replace("signature=", "signature=x") + "&locale=pl"

    response = Client().get(link)

    assert response.status_code == 403
    assert "Ten link jest nieprawidłowy" in response.content.decode()


def test_the_language_switch_changes_every_following_page_and_stays_in_the_flow(live_visitor):
    page = live_visitor.client.get("/flow/").content.decode()
    assert 'action="/flow/language"' in page and 'name="next" value="/flow/"' in page
    assert '<option value="nl" lang="nl">Nederlands</option>' in page

    switched = live_visitor.client.get("/flow/language", {"language": "nl", "next": "/flow/selfie"})

    assert switched.status_code == 303 and switched["Location"] == "/flow/selfie"
    assert "<h1>Maak een selfie</h1>" in live_visitor.client.get("/flow/selfie").content.decode()
    away = live_visitor.client.get("/flow/language", {"language": "es", "next": "https://evil.example/flow/"})
    assert away["Location"] == "/flow/"


def test_a_stored_retake_message_is_shown_in_the_pages_language(live_visitor):
    live_visitor.client.get("/flow/selfie")
    session_transition(session_id=live_visitor.session_id, to="processing", cause="test")
    session_transition(
        session_id=live_visitor.session_id, to="initiated", cause="retake: test", message=MESSAGE_NO_FACE
    )

    body = live_visitor.client.get("/flow/selfie", HTTP_ACCEPT_LANGUAGE="es").content.decode()

    assert "<strong>Inténtalo de nuevo.</strong> No hemos encontrado ninguna cara." in body


def test_the_scripts_get_their_words_in_the_pages_language(live_visitor):
    body = live_visitor.client.get("/flow/selfie", HTTP_ACCEPT_LANGUAGE="it").content.decode()

    texts = re.search(r'<script id="flow-texts" type="application/json">(.*?)</script>', body).group(1)
    assert '"cameraStarting": "Avvio della fotocamera\\u2026"' in texts
    assert '"selfieStep": "Passo %(step)s di %(total)s"' in texts


def test_a_refused_link_has_no_language_switch_since_it_would_lose_the_link(api):
    created = api.create_session()

    page = Client().get(start_path(created["verificationUrl"]).replace("signature=", "signature=x")).content.decode()

    assert "This link is not valid" in page and 'action="/flow/language"' not in page


# The templates of every page a user can reach in the flow, the partials they include among them.
FLOW_TEMPLATES = ("flow", "age_passes")
# Attributes a user reads or hears; the scripts' sentences come in data-text-* and the flow-texts JSON.
READ_ATTRIBUTES = ("alt", "title", "aria-label", "placeholder")
# Words a language writes as English does (the selfie page's button, the camera's heading).
SAME_AS_IN_ENGLISH = {"de": {"Start"}, "nl": {"Camera", "Start"}}
ARABIC_LETTER = re.compile("[\u0600-\u06ff]")


# Elements whose text is not words in a language: scripts, styles, and code (an API call shown to a developer).
NOT_WORDS = ("script", "style", "code")


class _PageWords(HTMLParser):
    """What a page shows or reads out: its text outside scripts, styles and code (hidden blocks too, which its
    scripts show), the attributes above, the sentences its scripts show. One entry per piece of text."""

    def __init__(self):
        super().__init__()
        self.words: list[str] = []
        self._not_words = False
        self._script_texts = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in NOT_WORDS:
            self._not_words, self._script_texts = True, attrs.get("id") == "flow-texts"
        read = [value for name, value in attrs.items() if name in READ_ATTRIBUTES or name.startswith("data-text-")]
        self.words += [value for value in read if value]

    def handle_endtag(self, tag):
        if tag in NOT_WORDS:
            self._not_words = self._script_texts = False

    def handle_data(self, data):
        if self._script_texts:
            self.words += json.loads(data).values()
        elif not self._not_words:
            self.words.append(data)


def _words(response) -> set[str]:
    """The pieces of text with a letter in them that the user reads on a page, or in a JSON answer's message."""
    if response["Content-Type"].startswith("application/json"):
        pieces = [response.json()["message"]]
    else:
        parser = _PageWords()
        parser.feed(response.content.decode())
        pieces = parser.words
    return {" ".join(piece.split()) for piece in pieces if any(character.isalpha() for character in piece)}


def _flow_in(language: str, api, sandbox_api) -> dict:
    """Every page of the flow (and the age passes' answers a user reads) as a browser speaking `language` gets them,
    by what the user is doing there."""
    pages = {}

    def browser():
        return Client(HTTP_ACCEPT_LANGUAGE=language)

    def read(what, client, path, post=None, form=None):
        if form is not None:
            pages[what] = client.post(path, form)
        elif post is not None:
            pages[what] = client.post(path, data=json.dumps(post), content_type="application/json")
        else:
            pages[what] = client.get(path)

    visitor = open_flow(api, browser(), callback_url="https://shop.example.com/done")
    read("first page, offering the age pass", visitor.client, "/flow/")
    read("age pass refused: not a passkey's answer", visitor.client, "/flow/age-pass/use", {"credential": {}})
    read("age pass refused: no passkey at all", visitor.client, "/flow/age-pass/use", {"credential": "none"})
    read("selfie", visitor.client, "/flow/selfie")
    session_transition(session_id=visitor.session_id, to=Status.PROCESSING, cause="test")
    read("analysis under way", visitor.client, "/flow/progress")
    session_transition(session_id=visitor.session_id, to=Status.REQUIRES_DOC, cause="test")
    read("document", visitor.client, "/flow/document")
    save_right_give(visitor)
    approve(visitor.session_id)
    read("approved, offering to save an age pass", visitor.client, "/flow/result")

    denied = open_flow(api, browser(), callback_url="https://shop.example.com/done")
    session_transition(session_id=denied.session_id, to=Status.PROCESSING, cause="test")
    session_transition(session_id=denied.session_id, to=Status.DENIED, reason=Reason.LIVENESS_FAILED, cause="test")
    read("denied", denied.client, "/flow/result")

    sandbox = open_flow(sandbox_api, browser())
    read("test mode, with the digital ID", sandbox.client, "/flow/sandbox")
    read("test mode, no outcome chosen", sandbox.client, "/flow/sandbox", form={"outcome": "none of them"})

    anyone = browser()
    read("the user's own age pass", anyone, "/flow/age-pass/")
    read("age pass action refused", anyone, "/flow/age-pass/manage", {"action": "open", "credential": {}})
    read("the SDK's frame", anyone, "/flow/embed?key=pk_test_unknown&origin=https://shop.example.com")
    read("no page here", anyone, "/flow/nowhere")
    return pages


def _listed(problem: str, words_by_page: dict) -> str:
    return "\n".join(f"{what}: {problem}: {word!r}" for what, words in words_by_page.items() for word in words)


@pytest.fixture
def every_offer_on(onboarded):
    """The tenant accepts and offers age passes, and offers digital IDs."""
    AgePassPolicy.objects.create(tenant=onboarded.tenant, offer_saving=True, accept_passes=True)
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(digital_id_enabled=True, digital_id_unsigned_requests=True)


@pytest.mark.parametrize("language", shipped_languages())
def test_every_page_of_the_flow_reads_in_the_language_age_passes_included(language, api, sandbox_api, every_offer_on):
    english, translated = _flow_in("en", api, sandbox_api), _flow_in(language, api, sandbox_api)

    shown = {template.name for response in english.values() for template in response.templates}
    templates = {
        str(path.relative_to(ROOT / "templates"))
        for folder in FLOW_TEMPLATES
        for path in (ROOT / "templates" / folder).glob("*.html")
    }
    assert templates <= shown, f"reach these templates in _flow_in: {sorted(templates - shown)}"
    # Words that read the same in every language: the tenant's name, the languages' own names in the switch.
    same_everywhere = (
        {"Acme Games"}
        | {get_language_info(code)["name_local"] for code, _ in settings.LANGUAGES}
        | SAME_AS_IN_ENGLISH.get(language, set())
    )
    untranslated = {
        what: sorted(_words(response) & _words(english[what]) - same_everywhere)
        for what, response in translated.items()
    }
    assert not any(untranslated.values()), _listed("in English", untranslated)
    direction = "rtl" if language == "ar" else "ltr"
    for what, response in translated.items():
        if not response["Content-Type"].startswith("application/json"):
            assert f'<html lang="{language}" dir="{direction}">' in response.content.decode(), what
    if language == "ar":
        latin = {
            what: sorted(word for word in _words(response) - same_everywhere if not ARABIC_LETTER.search(word))
            for what, response in translated.items()
        }
        assert not any(latin.values()), _listed("not in Arabic", latin)
