"""The Branding page: name, logo (type, size, decoded), accent colour (contrast), privacy link, as the flow shows it."""

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

from tenants.branding import LOGO_MAX_BYTES, contrast_ratio
from tests.factories import SETUP
from tests.support.api_client import ApiClient
from tests.support.flow import open_flow


def image_file(fmt="PNG", size=(300, 100), name="logo.png", colour=(200, 30, 30)):
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format=fmt)
    return SimpleUploadedFile(name, buffer.getvalue(), content_type=f"image/{fmt.lower()}")


def save(dashboard, **fields):
    form = {"display_name": "", "accent_color": "", "privacy_notice_url": "", **fields}
    return dashboard.post("/dashboard/branding/", form)


def field_errors(response) -> str:
    return " ".join(response.content.decode().split("av-field-error")[1:])


def test_wcag_contrast_ratio_matches_the_reference_values():
    assert round(contrast_ratio("#000000", "#ffffff"), 2) == 21.0
    assert round(contrast_ratio("#1d4ed8", "#ffffff"), 2) == 6.70
    assert round(contrast_ratio("#777777", "#ffffff"), 2) == 4.48


def test_branding_saved_in_the_dashboard_is_what_the_flow_shows(dashboard, onboarded, api):
    response = save(
        dashboard,
        display_name="Acme Arcade",
        accent_color="#7A1FA2",
        privacy_notice_url="https://acme.example/privacy",
        logo=image_file("JPEG", (1200, 400), "logo.jpg"),
    )
    assert response.status_code == 302, field_errors(response)
    page = dashboard.get("/dashboard/branding/").content.decode()
    assert "Branding saved" in page and 'value="Acme Arcade"' in page and 'id="current-logo"' in page
    assert '<label for="id_privacy_notice_url">Privacy notice URL</label>' in page

    visitor = open_flow(api)
    consent = visitor.client.get("/flow/").content.decode()

    assert "Acme Arcade asks you to confirm" in consent and "Acme Games" not in consent
    assert 'href="https://acme.example/privacy" target="_blank" rel="noopener noreferrer"' in consent
    assert "Privacy notice of Acme Arcade" in consent
    logo_url = consent.split('class="tenant-logo" src="')[1].split('"')[0]
    assert 'alt="Acme Arcade" width="480" height="160"' in consent  # scaled into 480x160, proportions kept
    logo = visitor.client.get(logo_url)
    assert logo["Content-Type"] == "image/png" and "immutable" in logo["Cache-Control"]
    assert Image.open(io.BytesIO(logo.getvalue())).size == (480, 160)  # re-encoded PNG, not the uploaded JPEG
    theme_url = consent.split('<link rel="stylesheet" href="/flow/brand/')[1].split('"')[0]
    theme = visitor.client.get("/flow/brand/" + theme_url)
    assert theme["Content-Type"].startswith("text/css")
    assert (
        theme.content.decode().strip() == ":root { --brand: #7a1fa2; --brand-dark: #5c177a; --brand-light: #c39ad5; }"
    )


def test_a_colour_without_enough_contrast_is_refused_with_its_ratio(dashboard, onboarded):
    response = save(dashboard, accent_color="#f59e0b", display_name="Kept?")

    assert response.status_code == 400
    assert "#f59e0b has a contrast of 1.95:1" in field_errors(response) and "4.5:1" in field_errors(response)
    assert not hasattr(onboarded.tenant, "branding") or onboarded.tenant.branding.display_name == ""


@pytest.mark.parametrize(
    "upload, message",
    [
        (
            SimpleUploadedFile(
                "logo.svg",
                b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
                content_type="image/svg+xml",
            ),
            "SVG logos are not accepted",
        ),
        (
            SimpleUploadedFile("logo.png", b"\x89PNG\r\n\x1a\n" + b"not really a png" * 10, content_type="image/png"),
            "could not be read as an image",
        ),
        (image_file("GIF", name="logo.gif"), "is a GIF image"),
        (image_file("PNG", size=(5000, 20)), "each side must be 16 to 4096 pixels"),
        (SimpleUploadedFile("big.png", b"\0" * (LOGO_MAX_BYTES + 1), content_type="image/png"), "at most 512 KB"),
    ],
)
def test_a_logo_that_is_not_a_small_png_jpeg_or_webp_is_refused(dashboard, onboarded, upload, message):
    response = save(dashboard, logo=upload)

    assert response.status_code == 400
    assert message in field_errors(response)


def test_a_truncated_image_is_refused_after_decoding(dashboard, onboarded):
    whole = image_file("WEBP", size=(400, 200), name="logo.webp").read()

    response = save(
        dashboard, logo=SimpleUploadedFile("logo.webp", whole[: len(whole) // 2], content_type="image/webp")
    )

    assert response.status_code == 400 and "could not be read as an image" in field_errors(response)


def test_a_privacy_link_must_be_https(dashboard, onboarded):
    response = save(dashboard, privacy_notice_url="http://acme.example/privacy")

    assert response.status_code == 400 and "https://" in field_errors(response)


def test_the_logo_can_be_removed_and_the_flow_falls_back_to_the_name(dashboard, onboarded, api):
    save(dashboard, logo=image_file())
    save(dashboard, remove_logo="on")

    consent = open_flow(api).client.get("/flow/").content.decode()

    assert 'class="tenant-logo"' not in consent and "for Acme Games" in consent


def test_another_tenants_branding_is_never_shown(dashboard, onboarded, rival, api):
    save(dashboard, display_name="Acme Arcade", accent_color="#1d4ed8", logo=image_file())

    rival_consent = open_flow(ApiClient(rival.live_key)).client.get("/flow/").content.decode()

    assert "Rival Inc" in rival_consent and "Acme Arcade" not in rival_consent and "tenant-logo" not in rival_consent
    assert dashboard.get(f"/flow/brand/{rival.tenant.id}/logo.png").status_code == 404


def test_each_branding_change_is_in_the_audit_log_with_old_and_new_values(dashboard, onboarded, staff_user):
    from tenants.models import AuditLogEntry

    save(dashboard, display_name="Acme", accent_color="#1d4ed8", logo=image_file())
    save(dashboard, display_name="Acme Play", accent_color="#1d4ed8")  # logo kept, colour unchanged
    save(dashboard, display_name="Acme Play", accent_color="#1d4ed8")  # nothing changed: nothing recorded
    save(dashboard, display_name="Acme Play", accent_color="#1d4ed8", remove_logo="on")
    save(dashboard, display_name="", accent_color="#ffff00")  # refused (contrast): nothing recorded

    entries = list(AuditLogEntry.objects.exclude(actor_label=SETUP.label).order_by("id"))
    assert [(entry.action, entry.actor_id) for entry in entries] == [("branding.changed", staff_user.pk)] * 3
    assert [entry.extra for entry in entries] == [
        {"display name": "(none) → Acme", "accent colour": "(none) → #1d4ed8", "logo": "new (300×100)"},
        {"display name": "Acme → Acme Play"},
        {"logo": "removed"},
    ]
    page = dashboard.get("/dashboard/audit-log/").content.decode()
    assert "Branding changed" in page and "Acme → Acme Play" in page
