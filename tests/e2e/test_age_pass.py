"""Age passes in Debian's Chromium with a virtual authenticator (DevTools' WebAuthn domain): save, use, refuse, delete.

The authenticator is a platform one (internal transport) that keeps discoverable credentials and verifies its
user, as a phone's screen lock would. The first approval is a document approval made through the state machine
(the live document path's OCR is slow on this machine, and what it decides is not what this test is about): the
session's flow is opened in the browser first, the document result is stored by `session_transition` exactly as
the document worker stores it, and the browser then sees the ordinary result page.
"""

import datetime
import json

import pytest
from django.core.management import call_command
from django.utils import timezone
from playwright.sync_api import expect

from age_passes.models import AgePass, AgePassPolicy
from age_passes.services import age_pass_save_right_issue
from flow.age_pass import SAVE_RIGHT_COOKIE
from sessions_api.models import Reason, Status, VerificationSession
from sessions_api.state_machine import Results, session_transition
from tenants.models import Tenant
from tenants.services import tenant_create
from tests.e2e.conftest import Partner
from tests.factories import SETUP

pytestmark = pytest.mark.e2e

USE = "**/flow/age-pass/use"
REPLAY_JS = """async ([url, body]) => {
  const csrf = document.querySelector('[data-age-pass] input[name=csrfmiddlewaretoken]').value;
  const answer = await fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json', 'X-CSRFToken': csrf},
                                   body: body});
  return [answer.status, await answer.json()];
}"""


@pytest.fixture
def authenticator(page):
    """A phone's platform authenticator: resident keys, user verification that succeeds (a screen lock)."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    added = cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
                "automaticPresenceSimulation": True,
            }
        },
    )
    yield cdp, added["authenticatorId"]


@pytest.fixture
def second_shop(live_base_url, transactional_db):
    onboarded = tenant_create(name="Beta Shop", webhooks_enabled=True, actor=SETUP)
    AgePassPolicy.objects.create(tenant=onboarded.tenant, accept_passes=True)
    partner = Partner(live_base_url, onboarded.live_key)
    yield partner
    partner.http.close()


def _save_right_give(page, session_id: str) -> None:
    """The HttpOnly cookie the browser's approving submission would have been given."""
    secret = age_pass_save_right_issue(session=VerificationSession.objects.get(pk=session_id))
    page.context.add_cookies(
        [{"name": SAVE_RIGHT_COOKIE, "value": secret, "url": page.url, "httpOnly": True, "sameSite": "Lax"}]
    )


def _approve_by_document(session_id: str, true_age: int, *, presence: bool = True) -> None:
    """`presence`: the tenant's presence policy was on (head turns passed, the face matched the portrait)."""
    today = timezone.now().date()
    document = {
        "document_kind": "passport",
        "birthdate": today.replace(year=today.year - true_age) - datetime.timedelta(days=40),
        "true_age": true_age,
        "expiry_date": today.replace(year=today.year + 5),
        "liveness_checked": presence,
        "holder_match_score": 0.72 if presence else None,
        "holder_match_passed": True if presence else None,
    }
    liveness = {"is_live": True, "liveness_score": 0.97} if presence else None
    _approve(
        session_id, Reason.DOCUMENT, "a document read by the document worker", document=document, liveness=liveness
    )


def _approve_by_face(session_id: str, *, confidence: float = 0.99, signals=()) -> None:
    age = {"estimated_age": 31.0, "age_confidence": confidence}
    liveness = {"is_live": True, "liveness_score": 0.97, "signals": list(signals)}
    _approve(
        session_id,
        Reason.AGE_ESTIMATION,
        "a selfie analysed by the selfie worker",
        age_estimation=age,
        liveness=liveness,
    )


def _approve(session_id: str, reason: str, cause: str, **results) -> None:
    cause = f"test: {cause}"
    session_transition(session_id=session_id, to=Status.PROCESSING, cause=cause)
    session_transition(
        session_id=session_id,
        to=Status.APPROVED,
        reason=reason,
        cause=cause,
        count_attempt=True,
        results=Results(**results),
    )


def _save_pass(page, created, live_base_url) -> None:
    """The session's result page in this browser, and "Save an age pass" tapped there."""
    page.goto(f"{live_base_url}/flow/result")
    page.get_by_role("button", name="Save an age pass on this device").click()
    expect(page.locator("[data-age-pass][data-saved=true]")).to_be_attached()


def _tap_use(page, created) -> dict:
    """Open the session's first page, tap "Use my age pass"; the service's JSON answer."""
    answers = []

    def keep(route):  # read before the page follows `next` and the body is gone
        response = route.fetch()
        answers.append(response.json())
        route.fulfill(response=response)

    page.route(USE, keep)
    page.goto(created["verificationUrl"])
    with page.expect_response(USE):
        page.get_by_role("button", name="Use my age pass").click()
    page.unroute(USE)
    answer = answers[0]
    if answer.get("next"):  # the page follows it: let it arrive before the test navigates elsewhere
        page.wait_for_url(f"**{answer['next']}")
    return answer


def test_an_age_pass_saved_after_a_document_approves_elsewhere_with_one_tap_and_nothing_links_the_two(
    live_partner, second_shop, onboarded, live_base_url, page, authenticator, screenshot, receiver, celery_worker
):
    AgePassPolicy.objects.create(tenant=onboarded.tenant, offer_saving=True, accept_passes=True)

    # 1. An adult (19) approved by document at the first shop saves a pass on this device.
    first = live_partner.create_session(subject="alice@first-shop", age_limit=18, notification_url=receiver.url())
    page.goto(first["verificationUrl"])
    _save_right_give(page, first["sessionId"])
    _approve_by_document(first["sessionId"], true_age=19)
    page.goto(f"{live_base_url}/flow/result")
    expect(page.get_by_text("Age confirmed")).to_be_visible()
    page.get_by_role("button", name="Save an age pass on this device").click()
    expect(page.locator("[data-age-pass][data-saved=true]")).to_be_attached()
    screenshot(page, "age-pass-saved")
    stored = AgePass.objects.get()
    assert (stored.method, stored.thresholds) == ("document", list(range(10, 20)))
    assert stored.expires_on == stored.proved_on + datetime.timedelta(days=365)
    stored_text = json.dumps([str(getattr(stored, field.name)) for field in AgePass._meta.fields])
    assert (
        "alice" not in stored_text and first["sessionId"] not in stored_text and onboarded.tenant.pk not in stored_text
    )
    first_hook = receiver.wait_for(1)[0]

    # 2. At a second shop, a new session is approved with age_pass after one tap, and its webhook arrives.
    second = second_shop.create_session(subject="customer-77", age_limit=18, notification_url=receiver.url("/b"))
    assert _tap_use(page, second) == {"approved": True, "next": "/flow/result"}
    expect(page.get_by_text("Age confirmed")).to_be_visible()
    screenshot(page, "age-pass-used")
    read = second_shop.get_session(second["sessionId"])
    assert (read["session"]["status"], read["session"]["reason"]) == ("approved", "age_pass")
    # Only what the second shop asked: its limit, not the age band the document proved; the proof's age in a
    # bucket, no day of proof or expiry (the expiry told the first shop's lifetime setting).
    assert read["agePass"] == {"method": "document", "thresholds": [18], "proofAge": "under_1_month"}
    assert read["validateDoc"] is None and read["ageEstimation"] is None and read["ageCredential"] is None
    second_hook = receiver.wait_for(2)[1]
    assert second_hook.path == "/b"

    # 3. The two shops' answers and webhooks carry nothing that links the two sessions.
    first_read = live_partner.get_session(first["sessionId"])
    assert first_read["agePass"] is None  # the first shop is not told a pass was saved
    second_text = json.dumps(read) + second_hook.body.decode()
    for linking in (first["sessionId"], "alice@first-shop", onboarded.tenant.pk, stored.credential_id.hex()):
        assert linking not in second_text
    first_text = json.dumps(first_read) + first_hook.body.decode()
    for linking in (second["sessionId"], "customer-77"):
        assert linking not in first_text
    assert set(json.loads(second_hook.body)["data"]) == {
        "sessionId",
        "subject",
        "status",
        "ageLimit",
        "mode",
        "metadata",
    }
    assert second_hook.headers["webhook-id"] != first_hook.headers["webhook-id"]

    # 4. A pass proved at 19 does not approve a limit-21 session: refused, the reason shown, the flow open.
    over_21 = second_shop.create_session(subject="customer-78", age_limit=21)
    with page.expect_request(USE) as sent:
        refused = _tap_use(page, over_21)
    assert refused["code"] == "limit_not_proved"
    expect(page.get_by_text("does not show that you are at least 21")).to_be_visible()
    assert second_shop.get_session(over_21["sessionId"])["session"]["status"] == "initiated"

    # 5. The same assertion sent again is refused: its challenge was used.
    status, replayed = page.evaluate(REPLAY_JS, ["/flow/age-pass/use", sent.value.post_data])
    assert (status, replayed["code"]) == (200, "challenge_used")

    # 6. An assertion made for one session is refused in another.
    third = second_shop.create_session(subject="customer-79", age_limit=18)
    fourth = second_shop.create_session(subject="customer-80", age_limit=18)
    captured = []

    def capture(route):
        captured.append(route.request.post_data)
        route.abort()

    page.route(USE, capture)
    page.goto(third["verificationUrl"])
    with page.expect_event("requestfailed", lambda request: request.url.endswith("/flow/age-pass/use")):
        page.get_by_role("button", name="Use my age pass").click()
    page.unroute(USE)
    assert len(captured) == 1
    page.goto(fourth["verificationUrl"])
    status, other = page.evaluate(REPLAY_JS, ["/flow/age-pass/use", captured[0]])
    assert (status, other["code"]) == (200, "other_session")
    assert second_shop.get_session(fourth["sessionId"])["session"]["status"] == "initiated"

    # 7. An expired pass is refused with the reason shown (the clock moved on: its expiry day is today).
    today = timezone.now().date()
    AgePass.objects.update(expires_on=today)
    assert _tap_use(page, fourth)["code"] == "expired"
    expect(page.get_by_text("Your age pass has expired")).to_be_visible()
    AgePass.objects.update(expires_on=today + datetime.timedelta(days=365))

    # 8. A pass revoked by the operator (every pass proved by documents) is refused with the reason shown.
    call_command("revoke_age_passes", "document")
    assert _tap_use(page, fourth)["code"] == "revoked"
    expect(page.get_by_text("withdrawn by the service")).to_be_visible()
    assert second_shop.get_session(fourth["sessionId"])["session"]["status"] == "initiated"

    # 9. The user opens their pass with the passkey itself, sees it, deletes it; it no longer works.
    page.goto(f"{live_base_url}/flow/age-pass/")
    page.get_by_role("button", name="Show my age pass").click()
    expect(page.get_by_text("Age limits proved: 10, 11, 12")).to_be_visible()
    expect(page.get_by_text("Withdrawn by the service")).to_be_visible()
    page.get_by_role("button", name="Delete my age pass").click()
    expect(page.locator("[data-age-pass][data-deleted=true]")).to_be_attached()
    screenshot(page, "age-pass-deleted")
    assert not AgePass.objects.exists()
    fifth = second_shop.create_session(subject="customer-81", age_limit=18)
    assert _tap_use(page, fifth)["code"] == "unknown_pass"
    expect(page.get_by_text("not known here")).to_be_visible()
    assert second_shop.get_session(fifth["sessionId"])["session"]["status"] == "initiated"


def test_a_face_pass_proves_only_its_limit_and_a_tenant_can_ask_for_a_document_or_a_recent_proof(
    live_partner, second_shop, onboarded, live_base_url, page, authenticator
):
    AgePassPolicy.objects.create(tenant=onboarded.tenant, offer_saving=True)
    first = live_partner.create_session(subject="bob", age_limit=18)
    page.goto(first["verificationUrl"])
    _save_right_give(page, first["sessionId"])
    _approve_by_face(first["sessionId"])
    _save_pass(page, first, live_base_url)
    assert AgePass.objects.get().thresholds == [18]

    # A face approval at 18 proves 18 only: not 21, and not 16 either (no other limit was decided).
    assert _tap_use(page, second_shop.create_session(subject="c1", age_limit=21))["code"] == "limit_not_proved"
    assert _tap_use(page, second_shop.create_session(subject="c2", age_limit=16))["code"] == "limit_not_proved"

    # The tenant asks for documents only: the face pass is refused, with the reason shown.
    AgePassPolicy.objects.filter(tenant__name="Beta Shop").update(minimum_method="document")
    assert _tap_use(page, second_shop.create_session(subject="c3", age_limit=18))["code"] == "method_not_accepted"
    expect(page.get_by_text("needs a stronger proof")).to_be_visible()

    # The tenant asks for a proof at most 30 days old: a pass proved 31 days ago is refused.
    AgePassPolicy.objects.filter(tenant__name="Beta Shop").update(minimum_method="face", max_proof_age_days=30)
    AgePass.objects.update(proved_on=timezone.now().date() - datetime.timedelta(days=31))
    assert _tap_use(page, second_shop.create_session(subject="c4", age_limit=18))["code"] == "proof_too_old"
    AgePass.objects.update(proved_on=timezone.now().date() - datetime.timedelta(days=30))
    assert _tap_use(page, second_shop.create_session(subject="c5", age_limit=18)) == {
        "approved": True,
        "next": "/flow/result",
    }


FRENCH_MONTHS = "janvier février mars avril mai juin juillet août septembre octobre novembre décembre".split()


def _in_french(day: datetime.date) -> str:
    return f"{day.day} {FRENCH_MONTHS[day.month - 1]} {day.year}"


def test_a_pass_is_saved_and_shown_in_the_page_s_language_with_its_method_and_days(
    live_partner, onboarded, live_base_url, page, authenticator, screenshot
):
    AgePassPolicy.objects.create(tenant=onboarded.tenant, offer_saving=True)
    created = live_partner.create_session(subject="claire", age_limit=18)
    page.goto(created["verificationUrl"])
    _save_right_give(page, created["sessionId"])
    _approve_by_document(created["sessionId"], true_age=19)
    page.goto(f"{live_base_url}/flow/result")
    page.get_by_label("Language").select_option("fr")
    page.get_by_role("button", name="Change language").click()

    expect(page.get_by_text("Âge confirmé")).to_be_visible()
    page.get_by_role("button", name="Enregistrer un pass d’âge sur cet appareil").click()
    today = timezone.now().date()
    expires = _in_french(today + datetime.timedelta(days=365))
    expect(page.get_by_text(f"Votre pass d’âge est enregistré sur cet appareil jusqu’au {expires}.")).to_be_visible()

    page.get_by_role("link", name="Vos pass d’âge").click()
    page.get_by_role("button", name="Afficher mon pass d’âge").click()
    expect(page.get_by_text("Prouvé par : une pièce d’identité")).to_be_visible()
    expect(page.get_by_text(f"Prouvé le : {_in_french(today)}")).to_be_visible()
    expect(page.get_by_text(f"Valable jusqu’au : {expires}")).to_be_visible()
    screenshot(page, "age-pass-shown-in-french")


# A test button that makes one passkey for its own challenge when clicked (the browser wants a user's gesture
# for each), and a function that then sends every passkey made at once.
PASSKEY_BUTTON_JS = """() => {
  const csrf = document.querySelector('[data-age-pass] input[name=csrfmiddlewaretoken]').value;
  window.post = (url, body) => fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json',
                                           'X-CSRFToken': csrf}, body: JSON.stringify(body || {})});
  const b64 = (text) => Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  const url64 = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer)))
    .replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  window.made = [];
  const button = document.createElement('button');
  button.textContent = 'Make a passkey';
  button.addEventListener('click', async () => { try {
    const options = (await (await window.post('/flow/age-pass/save/options')).json()).publicKey;
    const made = await navigator.credentials.create({publicKey: {...options, challenge: b64(options.challenge),
                                                                 user: {...options.user, id: b64(options.user.id)}}});
    window.made.push({id: made.id, rawId: url64(made.rawId), type: made.type, clientExtensionResults: {},
                      response: {clientDataJSON: url64(made.response.clientDataJSON),
                                 attestationObject: url64(made.response.attestationObject)}});
    button.dataset.made = window.made.length;
  } catch (error) { button.dataset.error = String(error); } });
  document.body.prepend(button);
}"""
SEND_ALL_AT_ONCE_JS = """async () => {
  const answers = await Promise.all(window.made.map((credential) => window.post('/flow/age-pass/save', {credential})));
  return Promise.all(answers.map(async (answer) => [answer.status, await answer.json()]));
}"""


def test_six_saves_sent_at_once_after_one_approval_store_one_pass(
    live_partner, onboarded, live_base_url, page, authenticator
):
    AgePassPolicy.objects.create(tenant=onboarded.tenant, offer_saving=True)
    created = live_partner.create_session(subject="carol", age_limit=18)
    page.goto(created["verificationUrl"])
    _save_right_give(page, created["sessionId"])
    _approve_by_document(created["sessionId"], true_age=30)
    page.goto(f"{live_base_url}/flow/result")
    expect(page.get_by_role("button", name="Save an age pass on this device")).to_be_visible()

    page.evaluate(PASSKEY_BUTTON_JS)
    cdp, authenticator_id = authenticator
    button = page.get_by_role("button", name="Make a passkey")
    for made in range(1, 7):  # six passkeys, each for its own challenge, before any is sent
        button.click()
        expect(button).to_have_attribute("data-made", str(made))
        cdp.send("WebAuthn.clearCredentials", {"authenticatorId": authenticator_id})  # it keeps three at most

    answers = page.evaluate(SEND_ALL_AT_ONCE_JS)

    saved = [body for status, body in answers if status == 200 and body.get("saved")]
    assert len(saved) == 1, answers
    assert sorted(status for status, _ in answers) == [200, 409, 409, 409, 409, 409], answers
    assert {body["error"] for status, body in answers if status == 409} == {"already_saved"}
    assert AgePass.objects.count() == 1


def test_a_pass_proved_under_laxer_settings_is_refused_by_a_stricter_tenant_with_the_reason(
    live_partner, second_shop, onboarded, live_base_url, page, authenticator
):
    """A lax tenant's approvals do not become strong passes: each pass keeps the assurance it was proved under."""
    AgePassPolicy.objects.create(tenant=onboarded.tenant, offer_saving=True)
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(
        document_presence_required=False, liveness_flag_only=["replay"]
    )
    strict = Tenant.objects.filter(name="Beta Shop")
    strict.update(age_extra_years=5)
    AgePassPolicy.objects.filter(tenant__name="Beta Shop").update(minimum_method="document")
    cdp, authenticator_id = authenticator

    # A document alone (presence off at the first shop: no head turns, no holder match) makes a document pass...
    lax = live_partner.create_session(subject="dora", age_limit=18)
    page.goto(lax["verificationUrl"])
    _save_right_give(page, lax["sessionId"])
    _approve_by_document(lax["sessionId"], true_age=30, presence=False)
    _save_pass(page, lax, live_base_url)
    # ... refused where presence is on, however strong its method looks.
    refused = _tap_use(page, second_shop.create_session(subject="d1", age_limit=18))
    assert refused["code"] == "presence_not_proved"
    expect(page.get_by_text("asks for a stricter check than the one your age pass was saved after")).to_be_visible()
    strict.update(document_presence_required=False)
    assert _tap_use(page, second_shop.create_session(subject="d2", age_limit=18))["approved"] is True

    # A face approved with no extra years, confidence 0.8 and a replay signal that only flagged there:
    cdp.send("WebAuthn.clearCredentials", {"authenticatorId": authenticator_id})
    AgePass.objects.all().delete()
    face = live_partner.create_session(subject="erik", age_limit=18)
    page.goto(face["verificationUrl"])
    _save_right_give(page, face["sessionId"])
    _approve_by_face(face["sessionId"], confidence=0.8, signals=["replay"])
    _save_pass(page, face, live_base_url)
    AgePassPolicy.objects.filter(tenant__name="Beta Shop").update(minimum_method="face")
    steps = [  # the strict shop's settings, loosened one at a time; the refusal each leaves
        ({}, "extra_years_not_proved"),
        ({"age_extra_years": 0, "min_age_confidence": 0.9}, "confidence_not_proved"),
        ({"min_age_confidence": 0.8}, "signal_not_accepted"),
    ]
    for number, (loosened, code) in enumerate(steps):
        strict.update(**loosened)
        assert _tap_use(page, second_shop.create_session(subject=f"e{number}", age_limit=18))["code"] == code
    strict.update(liveness_flag_only=["replay"])
    assert _tap_use(page, second_shop.create_session(subject="e9", age_limit=18))["approved"] is True
