"""The flow in nine languages: every string translated, the language chosen by the browser, the link or the switch."""

import importlib
import re
import shutil
from pathlib import Path

import polib
import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils.functional import Promise

from checks.age import MESSAGE_NO_FACE
from flow.management.commands.flow_messages import CATALOGS, shipped_languages
from sessions_api.state_machine import session_transition
from tests.support.flow import start_path

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
    "sessions_api.digital_id",
    "flow.digital_id",
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
