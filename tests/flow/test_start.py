"""GET /flow/start: the verification link is checked (signature, expiry, token, tenant) and swapped for a cookie."""

from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.test import Client

from sessions_api.flow_link import flow_signature
from sessions_api.models import VerificationSession
from sessions_api.timestamps import iso_ms
from tests.factories import session_past_expiry
from tests.support.flow import start_path


def link_params(created: dict) -> dict:
    return {name: values[0] for name, values in parse_qs(urlsplit(created["verificationUrl"]).query).items()}


def get_start(params: dict, client=None):
    return (client or Client()).get("/flow/start?" + urlencode(params))


def resigned(params: dict, session: VerificationSession, **changes) -> dict:
    """A link whose signature is valid for the changed values: what only the holder of the signing key could make."""
    params = {**params, **changes}
    params["signature"] = flow_signature(
        session_id=session.id,
        token=params["token"],
        expires_at=iso_ms(session.expires_at),
        tenant_id=params["tenant_id"],
    )
    return params


def assert_friendly(response, status: int, text: str):
    assert response.status_code == status
    assert response["Content-Type"].startswith("text/html")
    body = response.content.decode()
    assert text in body
    assert "Traceback" not in body and "av_flow" not in response.cookies


def test_a_valid_link_sets_the_flow_cookie_and_redirects_to_a_clean_address(api):
    created = api.create_session()
    client = Client()

    response = client.get(start_path(created["verificationUrl"]))

    assert response.status_code == 303
    assert response["Location"] == "/flow/"
    cookie = response.cookies["av_flow"]
    assert cookie["httponly"] and cookie["secure"]
    assert cookie["samesite"] == "Lax"
    assert cookie["path"] == "/flow/"
    assert 3500 <= int(cookie["max-age"]) <= 3600
    assert created["sessionId"] in cookie.value and created["sessionToken"] not in cookie.value
    page = client.get("/flow/")
    assert page.status_code == 200
    assert "Confirm your age" in page.content.decode()


def test_the_cookie_lasts_only_until_the_session_expires(api, onboarded):
    onboarded.tenant.session_ttl_seconds = 600
    onboarded.tenant.save()

    response = Client().get(start_path(api.create_session()["verificationUrl"]))

    assert 590 <= int(response.cookies["av_flow"]["max-age"]) <= 600


def test_a_link_with_a_missing_parameter_is_incomplete(api):
    params = link_params(api.create_session())
    del params["token"]

    assert_friendly(get_start(params), 400, "This link is incomplete")


def test_a_tampered_signature_is_refused(api):
    params = link_params(api.create_session())
    params["signature"] = params["signature"][:-2] + ("AA" if not params["signature"].endswith("AA") else "BB")

    assert_friendly(get_start(params), 403, "This link is not valid")


def test_an_unknown_session_looks_exactly_like_a_bad_signature(api):
    params = link_params(api.create_session())
    unknown = {**params, "session_id": "ses_01JAAAAAAAAAAAAAAAAAAAAAAA"}
    bad_signature = {**params, "signature": "x" * 43}

    assert get_start(unknown).content == get_start(bad_signature).content


@pytest.mark.parametrize("session_id", ["ses_\x00", "../../etc/passwd", "ses_" + "Z" * 300])
def test_a_malformed_session_id_is_refused_without_an_error(api, session_id):
    params = {**link_params(api.create_session()), "session_id": session_id}

    assert get_start(params).status_code in (400, 403)


def test_a_wrong_token_is_refused_even_with_a_matching_signature(api):
    created = api.create_session()
    session = VerificationSession.objects.get(pk=created["sessionId"])

    response = get_start(resigned(link_params(created), session, token="a" * 43))

    assert_friendly(response, 403, "This link is not valid")


def test_another_tenants_id_is_refused_even_with_a_matching_signature(api):
    created = api.create_session()
    session = VerificationSession.objects.get(pk=created["sessionId"])

    response = get_start(resigned(link_params(created), session, tenant_id="ten_01JAAAAAAAAAAAAAAAAAAAAAAA"))

    assert_friendly(response, 403, "This link is not valid")


def test_an_expired_link_is_gone_and_the_session_is_finalized_as_expired(api):
    created = api.create_session()
    session_past_expiry(created["sessionId"])
    session = VerificationSession.objects.get(pk=created["sessionId"])
    # The expiry is part of what is signed, so the still-valid link is re-signed for the stored value.
    params = resigned(link_params(created), session)

    assert_friendly(get_start(params), 410, "This link has expired")
    body = api.get(f"/v1/sessions/{created['sessionId']}").json()["session"]
    assert (body["status"], body["reason"]) == ("denied", "expired")


def test_the_signature_is_checked_before_the_expiry(api):
    created = api.create_session()
    session_past_expiry(created["sessionId"])
    params = {**link_params(created), "signature": "x" * 43}

    assert_friendly(get_start(params), 403, "This link is not valid")


def test_a_finished_session_cannot_be_started_again(sandbox_api):
    created = sandbox_api.create_session(callback_url="https://shop.example.com/done")
    sandbox_api.post(f"/v1/test/sessions/{created['sessionId']}/advance", {"to": "approved"})

    response = Client().get(start_path(created["verificationUrl"]))

    assert_friendly(response, 410, "This verification is finished")
    assert f'href="https://shop.example.com/done?session_id={created["sessionId"]}"' in response.content.decode()


def test_a_second_link_replaces_the_first_sessions_cookie(api):
    client = Client()
    first, second = api.create_session(), api.create_session()
    client.get(start_path(first["verificationUrl"]))
    client.get(start_path(second["verificationUrl"]))

    client.post("/flow/cancel", {})

    assert VerificationSession.objects.get(pk=second["sessionId"]).status == "denied"
    assert VerificationSession.objects.get(pk=first["sessionId"]).status == "initiated"


def test_start_answers_get_only(api):
    assert Client().post(start_path(api.create_session()["verificationUrl"])).status_code == 405


def test_an_expired_link_offers_the_way_back_to_the_cancel_url(api):
    created = api.create_session(cancel_url="https://shop.example.com/cancel")
    session_past_expiry(created["sessionId"])
    params = resigned(link_params(created), VerificationSession.objects.get(pk=created["sessionId"]))

    response = get_start(params)

    assert_friendly(response, 410, "This link has expired")
    assert f'href="https://shop.example.com/cancel?session_id={created["sessionId"]}"' in response.content.decode()


def test_start_answers_send_no_referrer_as_their_address_holds_the_token(api, sandbox_api):
    # The start URL carries the session token: neither the redirect nor a refusal page (whose stylesheet
    # and links would otherwise be fetched with it as Referer) may pass it on.
    created = api.create_session()
    finished = sandbox_api.create_session(callback_url="https://shop.example.com/done")
    sandbox_api.post(f"/v1/test/sessions/{finished['sessionId']}/advance", {"to": "approved"})
    answers = [
        Client().get(start_path(created["verificationUrl"])),
        get_start({**link_params(created), "signature": "x" * 43}),
        get_start({**link_params(created), "token": ""}),
        Client().get(start_path(finished["verificationUrl"])),
    ]

    assert [response.status_code for response in answers] == [303, 403, 400, 410]
    assert all(response["Referrer-Policy"] == "no-referrer" for response in answers)
    assert all(created["sessionToken"] not in response.get("Location", "") for response in answers)
