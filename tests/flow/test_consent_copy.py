"""What the flow's pages promise is what happens next, for every age limit, in every language (issue 26).

The consent page is read for each age limit 10-21, in English and each shipped language, with the face path
on and off for the limit and the tenant's presence policy on and off: its `data-path` / `data-step` markers
name the path, and the page carries the translated sentences of exactly the steps that follow. A front-camera
capture follows whenever the face path is on (the selfie) or the presence policy asks for head turns with the
document; the page then never says that no picture of the face is taken.
"""

import re

import pytest
from django.utils import translation

from flow.management.commands.flow_messages import shipped_languages
from tenants.models import Tenant
from tests.support.flow import open_flow

LIMITS = range(10, 22)
LANGUAGES = ["en", *shipped_languages()]
SELFIE = [
    "A short selfie with head turns.",
    "Your phone's front camera takes a few pictures while you turn your head as the page asks. This shows that a "
    "live person is present.",
    "Meanwhile the screen changes colour a few times: the light on your face is part of the check.",
    "Only if needed, an ID document.",
]
SELFIE_REUSED = (
    "Your face from the selfie is then compared with the document's photo: you do not turn your head a second time."
)
DOCUMENT_FIRST = [
    "A photo of your ID document.",
    "Estimating an age from a face is not accurate enough at this age to tell who is old enough, so we read your "
    "date of birth from your passport, ID card or driving licence.",
]
HEAD_TURNS_AFTER_DOCUMENT = [
    "Then, head turns in front of your front camera.",
    "Your camera takes a few pictures while you turn your head as the page asks. This shows that you are present "
    "and that the document's photo is of you. No age is estimated from your face.",
    "Meanwhile the screen changes colour a few times: the light on your face is part of the check.",
]
FACE_NUMBERS_KEPT = (
    "While this check is open, and only to compare your face with your document's photo, we also keep 128 numbers "
    "describing your face, from your head turns or from the document's photo: encrypted, never a picture. They are "
    "erased the moment the check ends."
)


def shown(sentence: str, language: str) -> str:
    """The sentence as the page shows it in `language` ({% translate %} does not escape its text)."""
    with translation.override(language):
        return translation.gettext(sentence)


def steps_of(page: str) -> list[str]:
    return re.findall(r'<li data-step="([a-z-]+)"', page)


@pytest.mark.parametrize("presence", [True, False], ids=["presence-on", "presence-off"])
@pytest.mark.parametrize("face_path", [True, False], ids=["face-path-on", "face-path-off"])
def test_the_consent_page_says_what_follows_at_every_age_limit_in_every_language(
    api, onboarded, age_policy_file, face_path, presence
):
    age_policy_file({limit: float(limit + 10) if face_path else None for limit in LIMITS})
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(document_presence_required=presence)
    capture_follows = face_path or presence
    expected_steps = (
        ["selfie", "estimate", "document-if-needed"] if face_path else ["document", *(["head-turns"] * presence)]
    )
    present = (
        SELFIE + [SELFIE_REUSED] * presence if face_path else DOCUMENT_FIRST + HEAD_TURNS_AFTER_DOCUMENT * presence
    )
    absent = {*SELFIE, SELFIE_REUSED, *DOCUMENT_FIRST, *HEAD_TURNS_AFTER_DOCUMENT} - set(present)
    for limit in LIMITS:
        visitor = open_flow(api, age_limit=limit)
        for language in LANGUAGES:
            response = visitor.client.get("/flow/", HTTP_ACCEPT_LANGUAGE=language)
            page = response.content.decode()
            where = f"limit {limit}, {language}"
            assert response["Content-Language"] == language, where
            assert f'data-path="{"selfie-first" if face_path else "document-first"}"' in page, where
            assert f'data-presence="{"on" if presence else "off"}"' in page, where
            assert steps_of(page) == expected_steps, where
            for sentence in present:
                assert shown(sentence, language) in page, f"{where}: missing {sentence!r}"
            for sentence in absent:
                assert shown(sentence, language) not in page, f"{where}: says {sentence!r}"
            assert (shown(FACE_NUMBERS_KEPT, language) in page) is presence, where
            if capture_follows:  # the selfie, or the head turns with the document: never "no selfie"
                assert {"selfie", "head-turns"} & set(steps_of(page)) and "no selfie" not in page.lower(), where
            if face_path:
                assert 'href="/flow/selfie"' in page and 'action="/flow/no-camera"' not in page, where
            else:
                assert 'action="/flow/no-camera"' in page and 'href="/flow/selfie"' not in page, where


def test_every_language_has_its_own_words_for_the_paths():
    """No shipped language shows a path's sentences in English (a catalog entry copied, not translated)."""
    for language in shipped_languages():
        for sentence in [*SELFIE, SELFIE_REUSED, *DOCUMENT_FIRST, *HEAD_TURNS_AFTER_DOCUMENT, FACE_NUMBERS_KEPT]:
            with translation.override(language):
                assert translation.gettext(sentence) != sentence, f"{language}: {sentence!r}"


def test_the_document_first_page_says_the_head_turns_follow_in_every_language(api, age_policy_file):
    age_policy_file({18: None})
    visitor = open_flow(api, age_limit=18)
    visitor.client.post("/flow/no-camera")
    then = (
        "Then you turn your head as the page asks, in front of your phone's front camera: this shows that you are "
        "here and that the document's photo is of you."
    )

    for language in LANGUAGES:
        page = visitor.client.get("/flow/document", HTTP_ACCEPT_LANGUAGE=language).content.decode()
        assert 'data-picture="needed"' in page and 'data-head-turns="after-document"' in page, language
        assert shown(then, language) in page and 'name="challenge"' in page, language
