"""What operators and tenants do with passes: revoke by method, purge expired ones, the sandbox's age_pass reason."""

import datetime

from django.core.management import call_command
from django.utils import timezone

from age_passes.models import AgePass, AgePassChallenge, AgePassPolicy, AgePassSaveRight


def _pass(method: str, *, expires_in_days: int = 300) -> AgePass:
    today = timezone.now().date()
    return AgePass.objects.create(
        credential_id=method.encode() + str(expires_in_days).encode(),
        public_key=b"cose",
        method=method,
        thresholds=[18],
        proved_on=today,
        expires_on=today + datetime.timedelta(days=expires_in_days),
    )


def test_revoking_a_method_withdraws_every_pass_it_proved_and_no_other(db, capsys):
    faces = [_pass("face"), _pass("face", expires_in_days=10)]
    document = _pass("document")

    call_command("revoke_age_passes", "face")

    assert "revoked 2 age passes proved by face" in capsys.readouterr().out
    assert all(AgePass.objects.get(pk=p.pk).revoked_at is not None for p in faces)
    assert AgePass.objects.get(pk=document.pk).revoked_at is None


def test_the_purge_deletes_expired_passes_old_challenges_and_old_rights_to_save_only(db, capsys):
    expired = _pass("face", expires_in_days=0)
    valid = _pass("document", expires_in_days=1)
    AgePassChallenge.objects.create(
        challenge=b"old", purpose="use", expires_at=timezone.now() - datetime.timedelta(days=2)
    )
    AgePassChallenge.objects.create(challenge=b"new", purpose="use", expires_at=timezone.now())
    for session_id, hours_ago in (("ses_old", 25), ("ses_new", 1)):
        AgePassSaveRight.objects.create(
            session_id=session_id,
            secret_digest="0" * 64,
            issued_at=timezone.now() - datetime.timedelta(hours=hours_ago),
        )

    call_command("purge_age_passes")

    assert "deleted 1 expired age passes" in capsys.readouterr().out
    assert list(AgePass.objects.values_list("pk", flat=True)) == [valid.pk]
    assert not AgePass.objects.filter(pk=expired.pk).exists()
    assert list(AgePassChallenge.objects.values_list("challenge", flat=True)) == [b"new"]
    assert list(AgePassSaveRight.objects.values_list("session_id", flat=True)) == ["ses_new"]


def test_the_sandbox_reaches_age_pass_with_its_result(sandbox_api):
    session = sandbox_api.create_session(age_limit=18)
    advanced = sandbox_api.post(
        f"/v1/test/sessions/{session['sessionId']}/advance", {"to": "approved", "reason": "age_pass"}
    )
    assert advanced.status_code == 200, advanced.content

    read = sandbox_api.get(f"/v1/sessions/{session['sessionId']}").json()
    assert (read["session"]["status"], read["session"]["reason"]) == ("approved", "age_pass")
    assert read["agePass"] == {"method": "document", "thresholds": [18], "proofAge": "under_1_month"}
    assert read["validateDoc"] is None


def test_every_result_key_is_present_and_null_before_a_decision(api):
    session = api.create_session()
    read = api.get(f"/v1/sessions/{session['sessionId']}").json()
    assert read["agePass"] is None


def test_an_operator_revokes_a_method_from_the_admin(admin_client):
    face, document = _pass("face"), _pass("document")

    response = admin_client.post(
        "/admin/age_passes/agepass/",
        {"action": "revoke_by_method", "_selected_action": [face.pk]},
        follow=True,
    )

    assert "1 age passes proved by Face (age estimation with liveness) revoked." in response.content.decode()
    assert AgePass.objects.get(pk=face.pk).revoked_at is not None
    assert AgePass.objects.get(pk=document.pk).revoked_at is None
    listing = admin_client.get("/admin/age_passes/agepass/").content.decode()
    assert "face" in listing and "subject" not in listing.lower()


def test_an_operator_sets_a_tenants_policy_in_the_admin(admin_client, onboarded):
    form = {"tenant": onboarded.tenant.pk, "accept_passes": "on", "minimum_method": "document", "lifetime_days": "30"}

    added = admin_client.post("/admin/age_passes/agepasspolicy/add/", form)
    refused = admin_client.post("/admin/age_passes/agepasspolicy/add/", {**form, "max_proof_age_days": "0"})

    assert added.status_code == 302
    policy = AgePassPolicy.objects.get(tenant=onboarded.tenant)
    assert (policy.accept_passes, policy.offer_saving, policy.minimum_method, policy.lifetime_days) == (
        True,
        False,
        "document",
        30,
    )
    assert refused.status_code == 200 and "greater than or equal to 1" in refused.content.decode()
